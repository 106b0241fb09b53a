// The safety gate (DESIGN §6): a deterministic state machine between the console
// and the real robot. It is told everything that matters (interlock, robot link, admission,
// episode, calibration, operator confirmation, stops, resets) as timestamped events and answers
// whether a motion command may be sent now. Stop and damp are never gated.
//
//   reduceGate(state, input, config) → { state, effects, decision? }   pure, never mutates
//   SafetyGate                                                         a small holder around it
//
// Rules (docs/SAFETY_GATE.md has the long form):
// - Inputs carry their own time (console monotonic ms). An input earlier than the last accepted
//   one, a non-finite time or a malformed event is rejected with a problem and changes nothing;
//   a motion request with such a time is refused. Nothing throws.
// - Motion (prepare, start, hold) is allowed only when: not tripped; interlock ARMED with a status
//   ≤ 100 ms old; last lowstate < 50 ms old; an episode is open; its pair admitted under the
//   episode's current contract id and binding key; the latest calibration is for this episode's
//   run and fresh; the operator confirmed this run after that calibration, not expired, not used.
//   An allowed `start` uses the confirmation up (one-shot).
// - Trips: e-stop (EV ESTOP or status ESTOP), interlock lost, robot link lost, operator stop, an
//   episode end reported with a safety outcome, and — while the robot moves — a watchdog: no
//   interlock status for > 100 ms or no lowstate for > 100 ms. A trip emits [stop, damp] once,
//   ends the open episode with its outcome, forgets calibration and confirmation, and latches:
//   every motion is refused until the operator's reset is accepted (interlock status and lowstate
//   seen after the trip, fresh, interlock not ESTOP), and then every condition must hold again.
// - Every refused request, every reset (accepted or refused) and every trip is a trace event
//   with a reason.

import type { Problem } from '../backend/backend';
import { EPISODE_OUTCOMES, type EpisodeOutcome } from '../episode/episodeOutcome';
import { runIdProblem } from '../trace/ids';
import {
  formatDuration,
  freshnessRefusals,
  motionRefusals,
  refusal,
  resetRefusals,
  TRIP_OUTCOMES,
  tripCauseText,
  tripOutcome,
} from './safetyConditions';
import {
  DEFAULT_SAFETY_GATE_CONFIG,
  GATE_EVENT_TYPES,
  INTERLOCK_STATUSES,
  MOTION_KINDS,
  SAFETY_LIMIT_MAXIMA,
  STOP_KINDS,
  type CommandDecision,
  type GateEffects,
  type GateEvent,
  type GateState,
  type MotionDecision,
  type MotionKind,
  type Refusal,
  type SafetyGateConfig,
  type StopKind,
  type TripCause,
} from './safetyTypes';

export type GateInput =
  | { kind: 'event'; event: GateEvent }
  /** A motion command the console wants to send (or `reset`, which a robot refuses). */
  | { kind: 'request'; command: MotionKind | 'reset'; atMs: number }
  /**
   * A motion command granted earlier (by a `request`) is about to be written to the robot now,
   * for episode `runId`. Between a grant and the write there may be awaits (the robot's prepare
   * ack, opening the episode's recording); anything can trip meanwhile. The transport asks this
   * synchronously, with nothing awaited between the answer and the write: the command goes out
   * only if the gate has not tripped, the episode it was granted for is still open and moving
   * (granted), and the interlock and robot link are still fresh at this instant.
   */
  | { kind: 'transmit'; command: MotionKind; runId: string; atMs: number };

export interface GateStepResult {
  state: GateState;
  effects: GateEffects;
  /** For requests. */
  decision?: MotionDecision;
}

export function initialGateState(): GateState {
  return {
    clockMs: null,
    seq: 0,
    interlock: null,
    lowstate: null,
    admissions: {},
    episode: null,
    usedRunIds: [],
    calibration: null,
    confirmation: null,
    tripped: null,
    lastResetAtMs: null,
  };
}

/** The config with defaults filled in; throws RangeError for a non-positive value or one looser than DESIGN allows. */
export function resolveGateConfig(partial: Partial<SafetyGateConfig> = {}): SafetyGateConfig {
  const c: SafetyGateConfig = { ...DEFAULT_SAFETY_GATE_CONFIG, ...partial };
  for (const [k, v] of Object.entries(c) as [keyof SafetyGateConfig, number][]) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new RangeError(`safety gate config ${k} must be a positive finite number of ms, got ${String(v)}`);
  }
  for (const [k, max] of Object.entries(SAFETY_LIMIT_MAXIMA) as [keyof typeof SAFETY_LIMIT_MAXIMA, number][]) {
    if (c[k] > max)
      throw new RangeError(`safety gate config ${k} = ${c[k]} ms is looser than DESIGN §6 allows (at most ${max} ms)`);
  }
  return c;
}

export function isMotionCommand(command: string): command is MotionKind {
  return (MOTION_KINDS as readonly string[]).includes(command);
}

export function isStopCommand(command: string): command is StopKind {
  return (STOP_KINDS as readonly string[]).includes(command);
}

// ---------------------------------------------------------------------------------------------

function emptyEffects(): GateEffects {
  return { actions: [], trip: null, episodeOutcome: null, reset: null, trace: [], problems: [] };
}

function problem(
  fx: GateEffects,
  atMs: number,
  code: string,
  message: string,
  severity: Problem['severity'] = 'warn',
): void {
  fx.problems.push({ severity, code, message, atMs });
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;

/** Why an event is malformed, or null. Checks the shape a caller outside TypeScript might get wrong. */
export function gateEventProblem(e: unknown): string | null {
  if (typeof e !== 'object' || e === null) return 'event is not an object';
  const ev = e as Record<string, unknown>;
  if (!(GATE_EVENT_TYPES as readonly unknown[]).includes(ev.type))
    return `unknown event type ${JSON.stringify(ev.type)}`;
  if (!isFiniteNumber(ev.atMs)) return `${String(ev.type)}: atMs must be a finite number, got ${String(ev.atMs)}`;
  const runId = (): string | null =>
    typeof ev.runId === 'string' ? runIdProblem(ev.runId) : `${String(ev.type)}: runId must be a string`;
  switch (ev.type) {
    case 'interlock_status':
      return (INTERLOCK_STATUSES as readonly unknown[]).includes(ev.status)
        ? null
        : `interlock_status: unknown status ${JSON.stringify(ev.status)}`;
    case 'admission':
      if (!isText(ev.pairId) || !isText(ev.contractId) || !isText(ev.bindingKey))
        return 'admission: pairId, contractId and bindingKey must be non-empty strings';
      if (typeof ev.admitted !== 'boolean') return 'admission: admitted must be true or false';
      if (ev.reasons !== undefined && !(Array.isArray(ev.reasons) && ev.reasons.every((r) => typeof r === 'string')))
        return 'admission: reasons must be strings';
      return null;
    case 'episode_start':
      if (!isText(ev.pairId) || !isText(ev.contractId) || !isText(ev.bindingKey))
        return 'episode_start: pairId, contractId and bindingKey must be non-empty strings';
      return runId();
    case 'episode_end':
      if (!(EPISODE_OUTCOMES as readonly unknown[]).includes(ev.outcome))
        return `episode_end: unknown outcome ${JSON.stringify(ev.outcome)}`;
      return runId();
    case 'calibration':
      if (!isFiniteNumber(ev.capturedAtMs)) return 'calibration: capturedAtMs must be a finite number';
      if (ev.capturedAtMs > ev.atMs)
        return `calibration: captured at ${ev.capturedAtMs} ms, after it was reported (${ev.atMs} ms)`;
      return runId();
    case 'operator_confirm':
      return runId();
    default:
      return null;
  }
}

function trip(
  s: GateState,
  fx: GateEffects,
  cause: TripCause,
  atMs: number,
  reason: string,
  outcome: EpisodeOutcome,
): GateState {
  if (s.tripped !== null) {
    problem(
      fx,
      atMs,
      'already_tripped',
      `${tripCauseText(cause)} while already tripped (${reason}); stop and damp were sent at the trip`,
      'info',
    );
    return s;
  }
  const runId = s.episode?.runId ?? null;
  const text = `${tripCauseText(cause)}: ${reason}`;
  fx.actions.push({ command: 'stop', reason: text, atMs }, { command: 'damp', reason: text, atMs });
  fx.trip = { cause, atMs, reason, runId, outcome };
  if (runId !== null) fx.episodeOutcome = { runId, outcome, reason: text };
  fx.trace.push({
    kind: 'stop_requested',
    reason: `trip (${text}); sent stop and damp${runId !== null ? `; episode ${runId} ends ${outcome}` : ''}`,
    atMs,
    runId,
    detail: { cause, outcome, actions: ['stop', 'damp'] },
  });
  return {
    ...s,
    tripped: { cause, atMs, seq: s.seq, reason, runId, outcome },
    episode: null,
    calibration: null,
    confirmation: null,
  };
}

/** Deadman while the robot moves: a silent interlock or robot link trips. */
function watchdog(s: GateState, fx: GateEffects, nowMs: number, cfg: SafetyGateConfig): GateState {
  if (s.tripped !== null || s.episode === null || !s.episode.moving) return s;
  const il = s.interlock;
  if (il === null || nowMs - il.atMs > cfg.interlockLostMs) {
    const reason =
      il === null
        ? 'no interlock status'
        : `no interlock status for ${formatDuration(nowMs - il.atMs)} (limit ${formatDuration(cfg.interlockLostMs)})`;
    return trip(s, fx, 'interlock_lost', nowMs, reason, tripOutcome('interlock_lost'));
  }
  const ls = s.lowstate;
  if (ls === null || nowMs - ls.atMs > cfg.linkLostMs) {
    const reason =
      ls === null
        ? 'no lowstate'
        : `no lowstate for ${formatDuration(nowMs - ls.atMs)} (limit ${formatDuration(cfg.linkLostMs)})`;
    return trip(s, fx, 'link_lost', nowMs, reason, tripOutcome('link_lost'));
  }
  return s;
}

function applyEvent(s: GateState, e: GateEvent, fx: GateEffects, cfg: SafetyGateConfig): GateState {
  const t = e.atMs;
  switch (e.type) {
    case 'tick':
      return s;
    case 'lowstate':
      return { ...s, lowstate: { atMs: t, seq: s.seq } };
    case 'interlock_status':
      if (e.status === 'LOST')
        return trip(
          { ...s, interlock: null },
          fx,
          'interlock_lost',
          t,
          'the interlock reported LOST',
          tripOutcome('interlock_lost'),
        );
      if (e.status === 'ESTOP') {
        const next: GateState = { ...s, interlock: { status: 'ESTOP', atMs: t, seq: s.seq } };
        // The box repeats ST ESTOP every heartbeat while the e-stop is held: only the first trips.
        return s.tripped !== null
          ? next
          : trip(next, fx, 'estop', t, 'the interlock reports ESTOP', tripOutcome('estop'));
      }
      if (e.status === 'SAFE' && s.tripped === null && s.episode !== null && s.episode.moving) {
        // Disarmed at the box (key switch, dead-man released) while moving: stop at once.
        const next: GateState = { ...s, interlock: { status: 'SAFE', atMs: t, seq: s.seq } };
        return trip(
          next,
          fx,
          'interlock_disarmed',
          t,
          'the interlock went SAFE (disarmed) while the robot was moving',
          tripOutcome('interlock_disarmed'),
        );
      }
      return { ...s, interlock: { status: e.status, atMs: t, seq: s.seq } };
    case 'estop':
      return trip(s, fx, 'estop', t, e.reason ?? 'e-stop pressed (EV ESTOP)', tripOutcome('estop'));
    case 'interlock_lost':
      return trip(
        { ...s, interlock: null },
        fx,
        'interlock_lost',
        t,
        e.reason ?? 'the interlock link is gone',
        tripOutcome('interlock_lost'),
      );
    case 'link_lost':
      return trip(
        { ...s, lowstate: null },
        fx,
        'link_lost',
        t,
        e.reason ?? 'the robot link is gone',
        tripOutcome('link_lost'),
      );
    case 'operator_stop': {
      const intervention = e.intervention === true;
      const reason =
        e.reason ??
        (intervention ? 'the operator stopped the robot for an intervention' : 'the operator stopped the robot');
      return trip(s, fx, 'operator_stop', t, reason, tripOutcome('operator_stop', intervention));
    }
    case 'admission':
      return {
        ...s,
        admissions: {
          ...s.admissions,
          [e.pairId]: {
            admitted: e.admitted,
            contractId: e.contractId,
            bindingKey: e.bindingKey,
            reasons: [...(e.reasons ?? [])],
            atMs: t,
          },
        },
      };
    case 'episode_start':
      if (s.tripped !== null) {
        problem(
          fx,
          t,
          'ignored_while_tripped',
          `episode ${e.runId} not opened: the gate is tripped (${tripCauseText(s.tripped.cause)}); the operator must acknowledge the trip first`,
        );
        return s;
      }
      if (s.episode !== null) {
        problem(
          fx,
          t,
          'episode_already_open',
          `episode ${e.runId} not opened: episode ${s.episode.runId} is still open`,
        );
        return s;
      }
      if (s.usedRunIds.includes(e.runId)) {
        problem(fx, t, 'run_id_reused', `episode ${e.runId} not opened: run id ${e.runId} already named an episode`);
        return s;
      }
      return {
        ...s,
        episode: {
          runId: e.runId,
          pairId: e.pairId,
          contractId: e.contractId,
          bindingKey: e.bindingKey,
          openedAtMs: t,
          moving: false,
        },
        usedRunIds: [...s.usedRunIds, e.runId],
      };
    case 'episode_end':
      if (s.episode === null || s.episode.runId !== e.runId) {
        const known = s.usedRunIds.includes(e.runId);
        problem(
          fx,
          t,
          known ? 'episode_already_closed' : 'no_such_episode',
          known ? `episode ${e.runId} had already ended` : `episode_end for ${e.runId}, which is not open`,
          known ? 'info' : 'warn',
        );
        return s;
      }
      if (TRIP_OUTCOMES.includes(e.outcome)) {
        return trip(
          s,
          fx,
          'backend_stop',
          t,
          e.reason ?? `the robot ended episode ${e.runId} with ${e.outcome}`,
          e.outcome,
        );
      }
      return { ...s, episode: null };
    case 'calibration':
      if (s.tripped !== null) {
        problem(
          fx,
          t,
          'ignored_while_tripped',
          `calibration for run ${e.runId} ignored: the gate is tripped; calibrate after the operator's reset`,
        );
        return s;
      }
      if (s.lastResetAtMs !== null && e.capturedAtMs < s.lastResetAtMs) {
        problem(
          fx,
          t,
          'calibration_before_reset',
          `calibration for run ${e.runId} ignored: captured ${formatDuration(s.lastResetAtMs - e.capturedAtMs)} before the last reset`,
        );
        return s;
      }
      return {
        ...s,
        calibration: {
          runId: e.runId,
          capturedAtMs: e.capturedAtMs,
          atMs: t,
          seq: s.seq,
          calibrationId: e.calibrationId ?? null,
        },
      };
    case 'operator_confirm':
      if (s.tripped !== null) {
        problem(
          fx,
          t,
          'ignored_while_tripped',
          `confirmation of run ${e.runId} ignored: the gate is tripped; confirm after the operator's reset`,
        );
        return s;
      }
      return { ...s, confirmation: { runId: e.runId, atMs: t, seq: s.seq, usedAtMs: null } };
    case 'operator_reset': {
      const reasons = resetRefusals(s, t, cfg);
      const who = e.operator ? `operator ${e.operator}` : 'the operator';
      const note = e.note ? `: ${e.note}` : '';
      if (reasons.length > 0) {
        fx.reset = { accepted: false, reasons };
        fx.trace.push({
          kind: 'refusal',
          reason: `reset refused: ${reasons.map((r) => r.message).join('; ')}`,
          atMs: t,
          runId: s.tripped?.runId ?? s.episode?.runId ?? null,
          detail: {
            request: 'reset',
            codes: reasons.map((r) => r.code),
            refusals: reasons,
            operator: e.operator ?? null,
            note: e.note ?? null,
          },
        });
        return s;
      }
      const tr = s.tripped!;
      fx.reset = { accepted: true };
      fx.trace.push({
        kind: 'human_reset',
        reason: `${who} acknowledged the ${tripCauseText(tr.cause)} trip of ${formatDuration(t - tr.atMs)} ago (${tr.reason})${note}`,
        atMs: t,
        runId: tr.runId,
        detail: {
          cause: tr.cause,
          trippedAtMs: tr.atMs,
          outcome: tr.outcome,
          operator: e.operator ?? null,
          note: e.note ?? null,
        },
      });
      return { ...s, tripped: null, lastResetAtMs: t };
    }
  }
}

function refuse(
  s: GateState,
  fx: GateEffects,
  command: MotionKind | 'reset',
  atMs: number,
  reasons: Refusal[],
): MotionDecision {
  const runId = s.episode?.runId ?? null;
  fx.trace.push({
    kind: 'refusal',
    reason: `${command} refused: ${reasons.map((r) => r.message).join('; ')}`,
    atMs,
    runId,
    detail: { command, codes: reasons.map((r) => r.code), refusals: reasons },
  });
  return { allowed: false, command, reasons, effects: fx };
}

/** One step of the gate. Pure: returns a new state (or the same object when nothing changed). */
export function reduceGate(state: GateState, input: GateInput, config: SafetyGateConfig): GateStepResult {
  const fx = emptyEffects();
  if (input.kind === 'event') {
    const bad = gateEventProblem(input.event);
    const at = state.clockMs ?? 0;
    if (bad !== null) {
      problem(fx, at, 'bad_event', `event ignored: ${bad}`);
      return { state, effects: fx };
    }
    const e = input.event;
    if (state.clockMs !== null && e.atMs < state.clockMs) {
      problem(
        fx,
        at,
        'clock_backwards',
        `${e.type} ignored: its time ${e.atMs} ms is ${formatDuration(state.clockMs - e.atMs)} earlier than the gate's clock (${state.clockMs} ms)`,
      );
      return { state, effects: fx };
    }
    let s: GateState = { ...state, clockMs: e.atMs, seq: state.seq + 1 };
    // The deadman is judged at a tick (and at every motion request), not at each input: inputs of
    // different sources reach the gate in the order their channels happen to be read, so after a
    // stall of the gate's own loop the first input of one source would find the other source's
    // last input as old as the stall — a silence of the gate's loop, not of the box or the link.
    // The driver ticks after the turn's inputs are read (gateDriver.ts).
    if (e.type === 'tick') s = watchdog(s, fx, e.atMs, config);
    s = applyEvent(s, e, fx, config);
    return { state: s, effects: fx };
  }

  const { command, atMs } = input;
  if (!isFiniteNumber(atMs) || (state.clockMs !== null && atMs < state.clockMs)) {
    const at = state.clockMs ?? 0;
    const message = !isFiniteNumber(atMs)
      ? `request time ${String(atMs)} is not a finite number`
      : `request time ${atMs} ms is ${formatDuration(state.clockMs! - atMs)} earlier than the gate's clock (${state.clockMs} ms)`;
    problem(fx, at, 'clock_backwards', `${command} refused: ${message}`);
    const decision = refuse(state, fx, command, at, [
      refusal('clock_backwards', message, { requestMs: isFiniteNumber(atMs) ? atMs : null, clockMs: state.clockMs }),
    ]);
    return { state, effects: fx, decision };
  }
  if (input.kind === 'transmit') return transmitStep(state, input, fx, config);
  if (!isMotionCommand(command)) {
    const decision = refuse(state, fx, command, atMs, [
      refusal(
        'not_a_robot_command',
        command === 'reset'
          ? 'reset puts a simulator in an exact state; a real robot has no reset'
          : `unknown command ${JSON.stringify(command)}`,
        { command },
      ),
    ]);
    return { state, effects: fx, decision };
  }
  let s: GateState = { ...state, clockMs: atMs, seq: state.seq + 1 };
  s = watchdog(s, fx, atMs, config);
  const reasons = motionRefusals(s, atMs, config);
  if (reasons.length > 0) return { state: s, effects: fx, decision: refuse(s, fx, command, atMs, reasons) };
  const ep = s.episode!;
  s = { ...s, episode: { ...ep, moving: true } };
  if (command === 'start') s = { ...s, confirmation: { ...s.confirmation!, usedAtMs: atMs } };
  return { state: s, effects: fx, decision: { allowed: true, command, runId: ep.runId, effects: fx } };
}

/** Every reason a granted command may not be written now (empty: it may). */
export function transmitRefusals(s: GateState, runId: string, nowMs: number, cfg: SafetyGateConfig): Refusal[] {
  const out: Refusal[] = [];
  const t = s.tripped;
  if (t !== null) {
    out.push(
      refusal(
        'tripped',
        `tripped ${formatDuration(nowMs - t.atMs)} ago by ${tripCauseText(t.cause)} (${t.reason}); nothing that moves the robot is sent after a trip`,
        {
          cause: t.cause,
          trippedAtMs: t.atMs,
          runId: t.runId,
        },
      ),
    );
  }
  const ep = s.episode;
  if (ep === null || ep.runId !== runId) {
    out.push(
      refusal(
        'not_granted',
        ep === null ? `episode ${runId} is no longer open` : `episode ${runId} is not the open episode (${ep.runId})`,
        { runId, openRunId: ep?.runId ?? null },
      ),
    );
  } else if (!ep.moving) {
    out.push(refusal('not_granted', `no motion was granted for episode ${runId}`, { runId }));
  }
  // The freshness conditions of a request, again at the instant of the write.
  out.push(...freshnessRefusals(s, nowMs, cfg));
  return out;
}

function transmitStep(
  state: GateState,
  input: Extract<GateInput, { kind: 'transmit' }>,
  fx: GateEffects,
  config: SafetyGateConfig,
): GateStepResult {
  const { command, runId, atMs } = input;
  let s: GateState = { ...state, clockMs: atMs, seq: state.seq + 1 };
  s = watchdog(s, fx, atMs, config);
  const reasons = !isMotionCommand(command)
    ? [refusal('not_a_robot_command', `unknown command ${JSON.stringify(command)}`, { command: String(command) })]
    : transmitRefusals(s, runId, atMs, config);
  if (reasons.length === 0) return { state: s, effects: fx, decision: { allowed: true, command, runId, effects: fx } };
  fx.trace.push({
    kind: 'refusal',
    reason: `${String(command)} not sent: ${reasons.map((r) => r.message).join('; ')}`,
    atMs,
    runId,
    detail: { command, stage: 'transmit', codes: reasons.map((r) => r.code), refusals: reasons },
  });
  return { state: s, effects: fx, decision: { allowed: false, command, reasons, effects: fx } };
}

/** What a motion request would be told at `nowMs`, without changing anything (for status lights). */
export function previewMotion(state: GateState, nowMs: number, config: SafetyGateConfig): Refusal[] {
  if (!isFiniteNumber(nowMs) || (state.clockMs !== null && nowMs < state.clockMs)) {
    return [
      refusal('clock_backwards', `time ${String(nowMs)} is earlier than the gate's clock (${state.clockMs} ms)`, {
        requestMs: isFiniteNumber(nowMs) ? nowMs : null,
        clockMs: state.clockMs,
      }),
    ];
  }
  return motionRefusals(state, nowMs, config);
}

/**
 * The gate as an object: feed it events, ask it before sending any command to the real robot,
 * execute the actions it returns at once, and write its trace events and problems.
 */
export class SafetyGate {
  readonly config: SafetyGateConfig;
  private state: GateState = initialGateState();

  constructor(config: Partial<SafetyGateConfig> = {}) {
    this.config = resolveGateConfig(config);
  }

  handle(event: GateEvent): GateEffects {
    const r = reduceGate(this.state, { kind: 'event', event }, this.config);
    this.state = r.state;
    return r.effects;
  }

  /** May this motion command be sent now? An allowed `start` uses up the operator's confirmation. */
  requestMotion(kind: MotionKind, nowMs: number): MotionDecision {
    const r = reduceGate(this.state, { kind: 'request', command: kind, atMs: nowMs }, this.config);
    this.state = r.state;
    return r.decision!;
  }

  /**
   * The last check before a granted motion command is written (see GateInput `transmit`): ask it
   * synchronously and write only on `allowed`, with nothing awaited in between.
   */
  transmit(kind: MotionKind, runId: string, nowMs: number): MotionDecision {
    const r = reduceGate(this.state, { kind: 'transmit', command: kind, runId, atMs: nowMs }, this.config);
    this.state = r.state;
    return r.decision!;
  }

  /**
   * Any `g1-bridge/1` command: stop and damp are allowed at once, whatever the state or the time
   * (no state is read or changed); prepare, start and hold go through requestMotion; reset (a
   * simulator command) and anything else are refused.
   */
  requestCommand(command: string, nowMs: number): CommandDecision {
    if (isStopCommand(command)) return { allowed: true, command, effects: emptyEffects() };
    const r = reduceGate(this.state, { kind: 'request', command: command as MotionKind, atMs: nowMs }, this.config);
    this.state = r.state;
    return r.decision!;
  }

  preview(nowMs: number): Refusal[] {
    return previewMotion(this.state, nowMs, this.config);
  }

  /** The current state (do not modify it: the reducer never does, and neither may callers). */
  snapshot(): Readonly<GateState> {
    return this.state;
  }
}
