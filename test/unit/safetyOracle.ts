// Test helpers for the safety gate's property tests: a generator of random operator/robot
// histories, a harness that plays them into any gate-shaped object, and an independent oracle
// that judges every step from the raw input history alone. The oracle shares no code with
// src/domain/safety (only the config numbers): it is DESIGN §6 and docs/SAFETY_GATE.md written
// out plainly, so a bug in the gate's own helpers cannot hide in both.
import fc from 'fast-check';
import type { EpisodeOutcome } from '../../src/domain/backend/backend';
import type {
  CommandDecision,
  GateEffects,
  GateEvent,
  MotionDecision,
  MotionKind,
  SafetyGateConfig,
} from '../../src/domain/safety';

// ---------------------------------------------------------------------------------------------
// What the harness can drive

export interface GateLike {
  handle(event: GateEvent): GateEffects;
  requestMotion(kind: MotionKind, nowMs: number): MotionDecision;
  requestCommand(command: string, nowMs: number): CommandDecision;
  snapshot(): unknown;
}

/** The limits the property tests run with: DESIGN's link/interlock limits, short calibration/confirmation lives so random histories cross them. */
export const PROPERTY_CONFIG: SafetyGateConfig = {
  interlockFreshMs: 100,
  linkFreshMs: 50,
  interlockLostMs: 100,
  linkLostMs: 100,
  calibrationMaxAgeMs: 2000,
  confirmationTtlMs: 1000,
};

// ---------------------------------------------------------------------------------------------
// Abstract steps (generated) → concrete inputs (materialised while playing)

type RunRef = 'current' | 'fresh' | 'old';

type AbstractEvent =
  | { type: 'lowstate' }
  | { type: 'interlock_status'; status: 'SAFE' | 'ARMED' | 'ESTOP' | 'LOST' }
  | { type: 'estop' }
  | { type: 'interlock_lost' }
  | { type: 'link_lost' }
  | { type: 'operator_stop'; intervention: boolean }
  | { type: 'admission'; pairId: string; admitted: boolean; contractId: string; bindingKey: string }
  | { type: 'episode_start'; run: RunRef; pick: number; pairId: string; contractId: string; bindingKey: string }
  | { type: 'episode_end'; run: RunRef; pick: number; outcome: EpisodeOutcome }
  | { type: 'calibration'; run: RunRef; pick: number; agoMs: number }
  | { type: 'operator_confirm'; run: RunRef; pick: number }
  | { type: 'operator_reset' }
  | { type: 'tick' };

export type Step =
  | { op: 'event'; dt: number; ev: AbstractEvent }
  /** `primed`: an ARMED status and a lowstate arrive at the same instant, just before the request. */
  | { op: 'motion'; dt: number; kind: MotionKind; primed: boolean }
  /**
   * The orchestrator's usual preamble: (if `reset`: fresh statuses and the operator's reset,)
   * the end of the latest episode, admission of a pair, a fresh episode for it, its calibration,
   * the operator's confirmation.
   */
  | { op: 'setup'; dt: number; pairId: string; gaps: number[]; agoMs: number; reset: boolean }
  | { op: 'command'; dt: number; command: 'stop' | 'damp' | 'reset' }
  | { op: 'malformed'; dt: number; which: number };

export type Input =
  | { op: 'event'; atMs: number; event: GateEvent }
  | { op: 'malformed'; atMs: number; event: unknown }
  | { op: 'motion'; atMs: number; kind: MotionKind }
  | { op: 'command'; atMs: number; command: 'stop' | 'damp' | 'reset' };

const pair = fc.constantFrom('p1', 'p2');
const contract = fc.oneof(
  { weight: 5, arbitrary: fc.constant('mb-metrics/1') },
  { weight: 1, arbitrary: fc.constant('mb-metrics/1+custom-0123456789ab') },
);
const binding = fc.oneof(
  { weight: 5, arbitrary: fc.constant('builtin@pd1') },
  { weight: 1, arbitrary: fc.constant('builtin@pd2') },
);
const runRef = (wCurrent: number): fc.Arbitrary<RunRef> =>
  fc.oneof(
    { weight: wCurrent, arbitrary: fc.constant<RunRef>('current') },
    { weight: 1, arbitrary: fc.constant<RunRef>('fresh') },
    { weight: 1, arbitrary: fc.constant<RunRef>('old') },
  );
const pick = fc.nat({ max: 1000 });

/**
 * Mostly small steps (the gate lives at 50 Hz … 500 Hz), some across the 50/100 ms limits, a few
 * long pauses (fewer in calm histories); halves of ms hit the limits exactly, and many inputs
 * share a timestamp (order, not time, then decides).
 */
const forwardDtFor = (faults: number) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constant(0) },
    { weight: 50, arbitrary: fc.integer({ min: 0, max: 30 }).map((h) => h / 2) },
    { weight: 25, arbitrary: fc.integer({ min: 30, max: 240 }).map((h) => h / 2) },
    { weight: faults === 0 ? 2 : 8, arbitrary: fc.integer({ min: 121, max: 1500 }) },
    { weight: faults === 0 ? 1 : 2, arbitrary: fc.integer({ min: 1501, max: 6000 }) },
  );
const backwardDt = fc.integer({ min: 1, max: 1000 }).map((h) => -h / 2);

/**
 * Events, with `faults` weighting the trip causes (e-stops, losses, operator stops, safety
 * outcomes): 0 gives calm histories where motion is often allowed and only the watchdog trips.
 */
const abstractEvent = (faults: number): fc.Arbitrary<AbstractEvent> =>
  fc.oneof(
    { weight: 70, arbitrary: fc.constant<AbstractEvent>({ type: 'lowstate' }) },
    {
      weight: 50,
      arbitrary: fc
        .oneof(
          { weight: 200, arbitrary: fc.constant('ARMED' as const) },
          { weight: 20, arbitrary: fc.constant('SAFE' as const) },
          { weight: faults, arbitrary: fc.constant('ESTOP' as const) },
          { weight: faults, arbitrary: fc.constant('LOST' as const) },
        )
        .map((status): AbstractEvent => ({ type: 'interlock_status', status })),
    },
    { weight: faults, arbitrary: fc.constant<AbstractEvent>({ type: 'estop' }) },
    { weight: faults, arbitrary: fc.constant<AbstractEvent>({ type: 'interlock_lost' }) },
    { weight: faults, arbitrary: fc.constant<AbstractEvent>({ type: 'link_lost' }) },
    {
      weight: faults,
      arbitrary: fc.boolean().map((intervention): AbstractEvent => ({ type: 'operator_stop', intervention })),
    },
    {
      weight: 15,
      arbitrary: fc
        .record({
          pairId: pair,
          admitted: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
          contractId: contract,
          bindingKey: binding,
        })
        .map((a): AbstractEvent => ({ type: 'admission', ...a })),
    },
    {
      weight: 15,
      arbitrary: fc
        .record({
          run: fc.oneof(
            { weight: 6, arbitrary: fc.constant<RunRef>('fresh') },
            { weight: 1, arbitrary: fc.constant<RunRef>('old') },
            { weight: 1, arbitrary: fc.constant<RunRef>('current') },
          ),
          pick,
          pairId: pair,
          contractId: contract,
          bindingKey: binding,
        })
        .map((e): AbstractEvent => ({ type: 'episode_start', ...e })),
    },
    {
      weight: 10,
      arbitrary: fc
        .record({
          run: runRef(6),
          pick,
          outcome: fc.oneof(
            {
              weight: 20,
              arbitrary: fc.constantFrom<EpisodeOutcome>('completed', 'hard_failure', 'infrastructure_error'),
            },
            {
              weight: faults,
              arbitrary: fc.constantFrom<EpisodeOutcome>('estop', 'link_lost', 'intervention', 'aborted_by_operator'),
            },
          ),
        })
        .map((e): AbstractEvent => ({ type: 'episode_end', ...e })),
    },
    {
      weight: 20,
      arbitrary: fc
        .record({
          run: runRef(8),
          pick,
          agoMs: fc.oneof(
            { weight: 4, arbitrary: fc.integer({ min: 0, max: 400 }) },
            { weight: 1, arbitrary: fc.integer({ min: 0, max: 3000 }) },
          ),
        })
        .map((e): AbstractEvent => ({ type: 'calibration', ...e })),
    },
    {
      weight: 20,
      arbitrary: fc.record({ run: runRef(8), pick }).map((e): AbstractEvent => ({ type: 'operator_confirm', ...e })),
    },
    { weight: 15, arbitrary: fc.constant<AbstractEvent>({ type: 'operator_reset' }) },
    { weight: 10, arbitrary: fc.constant<AbstractEvent>({ type: 'tick' }) },
  );

export const stepArb = (faults: number): fc.Arbitrary<Step> => {
  const forwardDt = forwardDtFor(faults);
  return fc.oneof(
    {
      weight: 50,
      arbitrary: fc.record({ dt: forwardDt, ev: abstractEvent(faults) }).map((s): Step => ({ op: 'event', ...s })),
    },
    {
      weight: 12,
      arbitrary: fc
        .record({ dt: forwardDt, kind: fc.constantFrom<MotionKind>('prepare', 'start', 'hold'), primed: fc.boolean() })
        .map((s): Step => ({ op: 'motion', ...s })),
    },
    {
      weight: 4,
      arbitrary: fc
        .record({
          dt: forwardDt,
          pairId: pair,
          gaps: fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 3, maxLength: 3 }),
          agoMs: fc.integer({ min: 0, max: 300 }),
          reset: fc.boolean(),
        })
        .map((s): Step => ({ op: 'setup', ...s })),
    },
    {
      weight: 3,
      arbitrary: fc
        .record({
          dt: fc.oneof(forwardDt, backwardDt),
          command: fc.constantFrom<'stop' | 'damp' | 'reset'>('stop', 'damp', 'stop', 'damp', 'reset'),
        })
        .map((s): Step => ({ op: 'command', ...s })),
    },
    // the same steps with time going backwards
    {
      weight: 2,
      arbitrary: fc.record({ dt: backwardDt, ev: abstractEvent(faults) }).map((s): Step => ({ op: 'event', ...s })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          dt: backwardDt,
          kind: fc.constantFrom<MotionKind>('prepare', 'start', 'hold'),
          primed: fc.constant(false),
        })
        .map((s): Step => ({ op: 'motion', ...s })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({ dt: fc.oneof(forwardDt, backwardDt), which: fc.nat({ max: 9 }) })
        .map((s): Step => ({ op: 'malformed', ...s })),
    },
  );
};

/** A history: a start time and up to 120 steps, with a fault level per history (none, rare, frequent). */
export const scenarioArb: fc.Arbitrary<Scenario> = fc.constantFrom(0, 1, 4).chain((faults) =>
  fc.record({
    t0: fc.integer({ min: 0, max: 2_000_000_000 }),
    steps: fc.array(stepArb(faults), { minLength: 1, maxLength: 120, size: 'max' }),
  }),
);
export type Scenario = { t0: number; steps: Step[] };

const MALFORMED = (atMs: number): unknown[] => [
  null,
  { type: 'teleport', atMs },
  { type: 'lowstate', atMs: Number.NaN },
  { type: 'lowstate', atMs: Number.POSITIVE_INFINITY },
  { type: 'interlock_status', atMs, status: 'MAYBE' },
  { type: 'episode_start', atMs, runId: '../etc', pairId: 'p1', contractId: 'mb-metrics/1', bindingKey: 'builtin@pd1' },
  { type: 'calibration', atMs, runId: 'r1', capturedAtMs: atMs + 5 },
  { type: 'admission', atMs, pairId: 'p1', admitted: 'yes', contractId: 'mb-metrics/1', bindingKey: 'builtin@pd1' },
  { type: 'episode_end', atMs, runId: 'r1', outcome: 'exploded' },
  'ESTOP',
];

/**
 * Turns abstract steps into concrete inputs. Run references are resolved from the raw input
 * history only: `current` is the run id of the latest episode_start input (whether or not the
 * gate accepted it), `fresh` a never-used id, `old` one of the ids used before.
 */
export function materialise(sc: Scenario): Input[] {
  const out: Input[] = [];
  let t = sc.t0;
  let counter = 0;
  const started: string[] = [];
  const resolve = (ref: RunRef, pickN: number): string => {
    if (ref === 'fresh') return `r${++counter}`;
    if (started.length === 0) return 'r0';
    if (ref === 'current') return started[started.length - 1];
    return started[pickN % started.length];
  };
  for (const st of sc.steps) {
    t += st.dt;
    switch (st.op) {
      case 'motion':
        if (st.primed) {
          out.push({ op: 'event', atMs: t, event: { type: 'interlock_status', atMs: t, status: 'ARMED' } });
          out.push({ op: 'event', atMs: t, event: { type: 'lowstate', atMs: t } });
        }
        out.push({ op: 'motion', atMs: t, kind: st.kind });
        break;
      case 'setup': {
        const c = 'mb-metrics/1';
        const b = 'builtin@pd1';
        if (st.reset) {
          out.push({ op: 'event', atMs: t, event: { type: 'interlock_status', atMs: t, status: 'ARMED' } });
          out.push({ op: 'event', atMs: t, event: { type: 'lowstate', atMs: t } });
          out.push({
            op: 'event',
            atMs: t,
            event: { type: 'operator_reset', atMs: t, note: 'robot back on its feet' },
          });
        }
        if (started.length > 0)
          out.push({
            op: 'event',
            atMs: t,
            event: { type: 'episode_end', atMs: t, runId: started[started.length - 1], outcome: 'completed' },
          });
        out.push({
          op: 'event',
          atMs: t,
          event: {
            type: 'admission',
            atMs: t,
            pairId: st.pairId,
            admitted: true,
            contractId: c,
            bindingKey: b,
            reasons: [],
          },
        });
        const runId = resolve('fresh', 0);
        started.push(runId);
        t += st.gaps[0];
        out.push({
          op: 'event',
          atMs: t,
          event: { type: 'episode_start', atMs: t, runId, pairId: st.pairId, contractId: c, bindingKey: b },
        });
        t += st.gaps[1];
        out.push({ op: 'event', atMs: t, event: { type: 'calibration', atMs: t, runId, capturedAtMs: t - st.agoMs } });
        t += st.gaps[2];
        out.push({ op: 'event', atMs: t, event: { type: 'operator_confirm', atMs: t, runId } });
        break;
      }
      case 'command':
        out.push({ op: 'command', atMs: t, command: st.command });
        break;
      case 'malformed':
        out.push({ op: 'malformed', atMs: t, event: MALFORMED(t)[st.which] });
        break;
      case 'event': {
        const ev = st.ev;
        let event: GateEvent;
        switch (ev.type) {
          case 'episode_start': {
            const runId = resolve(ev.run, ev.pick);
            started.push(runId);
            event = {
              type: 'episode_start',
              atMs: t,
              runId,
              pairId: ev.pairId,
              contractId: ev.contractId,
              bindingKey: ev.bindingKey,
            };
            break;
          }
          case 'episode_end':
            event = { type: 'episode_end', atMs: t, runId: resolve(ev.run, ev.pick), outcome: ev.outcome };
            break;
          case 'calibration':
            event = { type: 'calibration', atMs: t, runId: resolve(ev.run, ev.pick), capturedAtMs: t - ev.agoMs };
            break;
          case 'operator_confirm':
            event = { type: 'operator_confirm', atMs: t, runId: resolve(ev.run, ev.pick) };
            break;
          case 'operator_stop':
            event = { type: 'operator_stop', atMs: t, intervention: ev.intervention };
            break;
          case 'admission':
            event = {
              type: 'admission',
              atMs: t,
              pairId: ev.pairId,
              admitted: ev.admitted,
              contractId: ev.contractId,
              bindingKey: ev.bindingKey,
              reasons: ev.admitted ? [] : ['SR 0.9 < 1'],
            };
            break;
          case 'interlock_status':
            event = { type: 'interlock_status', atMs: t, status: ev.status };
            break;
          default:
            event = { type: ev.type, atMs: t } as GateEvent;
        }
        out.push({ op: 'event', atMs: t, event });
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Playing inputs into a gate

export interface PlayRecord {
  input: Input;
  before: unknown;
  after: unknown;
  effects: GateEffects | null;
  decision: CommandDecision | null;
  threw: unknown;
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function play(inputs: Input[], gate: GateLike): PlayRecord[] {
  const recs: PlayRecord[] = [];
  for (const input of inputs) {
    const before = clone(gate.snapshot());
    let effects: GateEffects | null = null;
    let decision: CommandDecision | null = null;
    let threw: unknown = null;
    try {
      if (input.op === 'event' || input.op === 'malformed') effects = gate.handle(input.event as GateEvent);
      else if (input.op === 'motion') {
        decision = gate.requestMotion(input.kind, input.atMs);
        effects = decision.effects;
      } else {
        decision = gate.requestCommand(input.command, input.atMs);
        effects = decision.effects;
      }
    } catch (e) {
      threw = e;
    }
    recs.push({ input, before, after: clone(gate.snapshot()), effects, decision, threw });
  }
  return recs;
}

// ---------------------------------------------------------------------------------------------
// The oracle

export interface Verdict {
  /** The input's time was accepted (not earlier than the last accepted input) and it was well formed. */
  accepted: boolean;
  /** Motion requests and `reset` commands: the codes of every failing condition (empty = allowed). */
  failing: string[] | null;
  /** A trip happened on this input: the outcome and the episode it ended (null: none open). */
  trip: { outcome: EpisodeOutcome; runId: string | null } | null;
  /** operator_reset events: whether the reset is accepted. */
  resetAccepted: boolean | null;
  /** Tripped before this input (a latch is on). */
  trippedBefore: boolean;
  /** The run of the episode open when a motion request was judged (after any watchdog trip). */
  openRun: string | null;
}

const SAFETY_OUTCOMES: EpisodeOutcome[] = ['estop', 'link_lost', 'intervention', 'aborted_by_operator'];

/**
 * Judges every input of a history. Written from DESIGN §6 and docs/SAFETY_GATE.md, with plain
 * variables; consults nothing from the gate.
 */
export function judge(inputs: Input[], cfg: SafetyGateConfig): Verdict[] {
  const verdicts: Verdict[] = [];
  let lastTime: number | null = null;
  let index = 0; // position of the input among accepted ones
  // interlock box
  let boxStatus: string | null = null;
  let boxAt = 0;
  let boxIndex = -1;
  // robot link
  let frameAt: number | null = null;
  let frameIndex = -1;
  // pairs
  const admissions: Record<string, { admitted: boolean; contractId: string; bindingKey: string }> = {};
  // episodes
  let open: { runId: string; pairId: string; contractId: string; bindingKey: string; moving: boolean } | null = null;
  const everOpened: string[] = [];
  let cal: { runId: string; capturedAtMs: number; index: number } | null = null;
  let conf: { runId: string; atMs: number; index: number; usedAt: number | null } | null = null;
  // latch
  let latch: { index: number } | null = null;
  let lastResetAt: number | null = null;

  for (const input of inputs) {
    const v: Verdict = {
      accepted: false,
      failing: null,
      trip: null,
      resetAccepted: null,
      trippedBefore: latch !== null,
      openRun: null,
    };
    verdicts.push(v);

    if (input.op === 'command' && (input.command === 'stop' || input.command === 'damp')) {
      v.accepted = true;
      continue; // never gated, changes nothing
    }
    const timeOk = Number.isFinite(input.atMs) && (lastTime === null || input.atMs >= lastTime);
    if (input.op === 'malformed') continue; // rejected whatever its time
    if (input.op === 'command') {
      // reset: refused; nothing changes, the clock does not advance
      v.failing = timeOk ? ['not_a_robot_command'] : ['clock_backwards'];
      continue;
    }
    if (!timeOk) {
      if (input.op === 'motion') v.failing = ['clock_backwards'];
      continue;
    }
    v.accepted = true;
    const t = input.atMs;
    lastTime = t;
    index += 1;

    const doTrip = (outcome: EpisodeOutcome): void => {
      if (latch !== null) return;
      v.trip = { outcome, runId: open ? open.runId : null };
      latch = { index };
      open = null;
      cal = null;
      conf = null;
    };

    // Deadman: only while the robot moves, judged at a tick or a motion request (not at each input).
    const judges = input.op === 'motion' || (input.op === 'event' && input.event.type === 'tick');
    if (judges && latch === null && open !== null && open.moving) {
      if (boxStatus === null || t - boxAt > cfg.interlockLostMs) doTrip('link_lost');
      else if (frameAt === null || t - frameAt > cfg.linkLostMs) doTrip('link_lost');
    }

    if (input.op === 'motion') {
      const failing: string[] = [];
      if (latch !== null) failing.push('tripped');
      if (boxStatus === null) failing.push('interlock_unknown');
      else {
        if (t - boxAt > cfg.interlockFreshMs) failing.push('interlock_stale');
        if (boxStatus !== 'ARMED') failing.push('interlock_not_armed');
      }
      if (frameAt === null) failing.push('link_unknown');
      else if (!(t - frameAt < cfg.linkFreshMs)) failing.push('link_stale');
      const ep = open as {
        runId: string;
        pairId: string;
        contractId: string;
        bindingKey: string;
        moving: boolean;
      } | null;
      v.openRun = ep ? ep.runId : null;
      if (ep === null) failing.push('no_episode');
      else {
        const a = admissions[ep.pairId];
        if (!a || !a.admitted) failing.push('not_admitted');
        else {
          if (a.contractId !== ep.contractId) failing.push('admission_contract_mismatch');
          if (a.bindingKey !== ep.bindingKey) failing.push('admission_binding_mismatch');
        }
        const c = cal as { runId: string; capturedAtMs: number; index: number } | null;
        if (c === null) failing.push('no_calibration');
        else if (c.runId !== ep.runId) failing.push('calibration_other_run');
        else if (t - c.capturedAtMs > cfg.calibrationMaxAgeMs) failing.push('calibration_stale');
        const k = conf as { runId: string; atMs: number; index: number; usedAt: number | null } | null;
        if (k === null) failing.push('no_confirmation');
        else if (k.runId !== ep.runId) failing.push('confirmation_other_run');
        else {
          if (k.usedAt !== null) failing.push('confirmation_used');
          if (c !== null && k.index < c.index) failing.push('confirmation_before_calibration');
          if (t - k.atMs > cfg.confirmationTtlMs) failing.push('confirmation_expired');
        }
      }
      v.failing = failing;
      if (failing.length === 0) {
        ep!.moving = true;
        if (input.kind === 'start') conf!.usedAt = t;
      }
      continue;
    }

    const e = input.event;
    switch (e.type) {
      case 'lowstate':
        frameAt = t;
        frameIndex = index;
        break;
      case 'interlock_status':
        if (e.status === 'LOST') {
          boxStatus = null;
          doTrip('link_lost');
        } else {
          boxStatus = e.status;
          boxAt = t;
          boxIndex = index;
          if (e.status === 'ESTOP') doTrip('estop');
          // DESIGN §6 lists the trips; a box that leaves ARMED while the robot moves is one (an e-stop in effect).
          else if (e.status === 'SAFE' && open !== null && open.moving) doTrip('estop');
        }
        break;
      case 'estop':
        doTrip('estop');
        break;
      case 'interlock_lost':
        boxStatus = null;
        doTrip('link_lost');
        break;
      case 'link_lost':
        frameAt = null;
        doTrip('link_lost');
        break;
      case 'operator_stop':
        doTrip(e.intervention ? 'intervention' : 'aborted_by_operator');
        break;
      case 'admission':
        admissions[e.pairId] = { admitted: e.admitted, contractId: e.contractId, bindingKey: e.bindingKey };
        break;
      case 'episode_start':
        if (latch === null && open === null && !everOpened.includes(e.runId)) {
          open = {
            runId: e.runId,
            pairId: e.pairId,
            contractId: e.contractId,
            bindingKey: e.bindingKey,
            moving: false,
          };
          everOpened.push(e.runId);
        }
        break;
      case 'episode_end':
        if (open !== null && open.runId === e.runId) {
          if (SAFETY_OUTCOMES.includes(e.outcome)) doTrip(e.outcome);
          else open = null;
        }
        break;
      case 'calibration':
        if (latch === null && !(lastResetAt !== null && e.capturedAtMs < lastResetAt))
          cal = { runId: e.runId, capturedAtMs: e.capturedAtMs, index };
        break;
      case 'operator_confirm':
        if (latch === null) conf = { runId: e.runId, atMs: t, index, usedAt: null };
        break;
      case 'operator_reset': {
        const l = latch as { index: number } | null;
        const ok =
          l !== null &&
          boxStatus !== null &&
          boxIndex > l.index &&
          t - boxAt <= cfg.interlockFreshMs &&
          boxStatus !== 'ESTOP' &&
          frameAt !== null &&
          frameIndex > l.index &&
          t - frameAt < cfg.linkFreshMs;
        v.resetAccepted = ok;
        if (ok) {
          latch = null;
          lastResetAt = t;
        }
        break;
      }
      case 'tick':
        break;
    }
  }
  return verdicts;
}
