// Test helpers for the trial session reducer's tests (src/domain/trial): a scripted world that
// answers the session's requests the way the driver's parts would (the campaign, the gate, the
// robot, the interlock, the operator), with trips and operator stops at scripted moments and —
// for the adversarial runs — events a confused or lying part might send (a gate that allows
// after a trip, answers for another run, answers out of order, duplicates). Every step is logged
// (event in, effects out, state before and after) so the properties can judge the whole history.
//
// The world is a model, not the gate: its "gate" keeps just enough (the trip latch, the open
// episode and whether it moves) to answer like SafetyGate would — unless told to lie.
import fc from 'fast-check';
import type { EpisodeOutcome } from '../../src/domain/backend/backend';
import { EPISODE_OUTCOMES } from '../../src/domain/episode/episodeOutcome';
import type { AfterClipVerdict } from '../../src/domain/trial/afterClipWatch';
import type { StartResiduals } from '../../src/domain/calibration/residuals';
import type { GateTrip, Refusal, TripCause } from '../../src/domain/safety';
import {
  initialTrialSession,
  isRequestEffect,
  isSessionOver,
  reduceTrialSession,
  type CalibrationDifference,
  type StoredEpisode,
  type TrialSessionEffect,
  type TrialSessionEvent,
  type TrialSessionResult,
  type TrialSessionState,
  type TrialSessionStep,
} from '../../src/domain/trial';

export type Reducer = (s: TrialSessionState, e: TrialSessionEvent) => TrialSessionStep;
export const realReducer: Reducer = reduceTrialSession;

export const PAIR_ID = 'qual-0001';

/** A robot measured at the pair's start pose when the operator answers a reset. */
export const AT_START_POSE: CalibrationDifference = {
  maxJointDiffRad: 0.004,
  joint: 'left_knee_joint',
  attitudeDiffRad: 0.002,
  jointsOut: [],
};
export const CONTRACT = 'mb-metrics/1';
export const BINDING = 'builtin@pd1';
export const CLIP = 'ub_wave_right';

// ---------------------------------------------------------------------------------------------
// Scripts

export type InterjectionKind = 'abort' | 'intervention' | Exclude<TripCause, 'backend_stop' | 'operator_stop'>;

/** How the world answers one attempt of a real trial (from its start-pose check to its end). */
export interface AttemptScript {
  startPose: 'ok' | 'not_still' | 'far';
  confirm: boolean;
  arm: boolean;
  /** The gate allows prepare / start at the check / the write (a truthful gate refuses all after a trip). */
  prepare: boolean;
  start: boolean;
  transmit: boolean;
  /** The robot's answer to the prepare: acknowledged, refused (run rejects), failed (ends infrastructure_error). */
  robot: 'ack' | 'refuse' | 'fail';
  recording: boolean;
  /** A trip between the prepare ack and the start check, between the grant and the write, or while the clip runs. */
  tripBeforeStart: InterjectionKind | null;
  tripBeforeWrite: InterjectionKind | null;
  tripDuringRun: InterjectionKind | null;
  /** The robot's end of the run when nothing tripped. */
  end: EpisodeOutcome;
  hardFailure: boolean;
  /** What the robot did after a completed clip (null: not watched). */
  afterClip: AfterClipVerdict | null;
  recordError: boolean;
  frames: number;
}

export interface WorldScript {
  trials: number;
  admitted: boolean;
  contractOk: boolean;
  bindingStored: boolean;
  realRobot: boolean;
  calibration: 'capture' | 'stored' | 'missing';
  pairCalibration: 'ok' | 'not_still' | 'bad_pose';
  /** Simulation branch outcomes, per attempt (then `completed`). */
  sim: EpisodeOutcome[];
  /** Per trial index, its attempts in order (the last one repeats). */
  attempts: AttemptScript[][];
  /** The operator's answers to reset prompts, in order (then a note). */
  resets: (string | null)[];
  /** The measured pose at each reset answer, in order (then at the start pose); null: no lowstate. */
  resetPoses?: (CalibrationDifference | null)[];
  /** The gate's answers to resets of a trip, in order (then accepted). */
  gateResets: boolean[];
  /** Before the n-th top-level event: a trip or an operator stop. */
  interjections: { at: number; kind: InterjectionKind }[];
  /** A lying gate: allows prepare/start/transmit as scripted even when tripped or for another run. */
  lie: boolean;
  /** Adversarial extra events: before the n-th top-level event, one of these. */
  noise: { at: number; kind: NoiseKind }[];
}

export type NoiseKind =
  | 'duplicate'
  | 'transmit_allowed'
  | 'start_allowed'
  | 'recording_opened'
  | 'run_ended'
  | 'foreign_run'
  | 'confirm'
  | 'episode_finished'
  | 'random';

const GOOD_ATTEMPT: AttemptScript = {
  startPose: 'ok',
  confirm: true,
  arm: true,
  prepare: true,
  start: true,
  transmit: true,
  robot: 'ack',
  recording: true,
  tripBeforeStart: null,
  tripBeforeWrite: null,
  tripDuringRun: null,
  end: 'completed',
  hardFailure: false,
  afterClip: null,
  recordError: false,
  frames: 200,
};

export function goodScript(trials = 3): WorldScript {
  return {
    trials,
    admitted: true,
    contractOk: true,
    bindingStored: true,
    realRobot: true,
    calibration: 'capture',
    pairCalibration: 'ok',
    sim: [],
    attempts: Array.from({ length: trials }, () => [GOOD_ATTEMPT]),
    resets: [],
    gateResets: [],
    interjections: [],
    lie: false,
    noise: [],
  };
}

export const attempt = (over: Partial<AttemptScript> = {}): AttemptScript => ({ ...GOOD_ATTEMPT, ...over });

// ---------------------------------------------------------------------------------------------
// Generators

const TRIP_KINDS: InterjectionKind[] = ['estop', 'interlock_lost', 'interlock_disarmed', 'link_lost'];
const tripKindArb = fc.constantFrom(...TRIP_KINDS, 'abort' as const, 'intervention' as const);
/** `arb` with probability ≈ p, else null. */
const maybe = <T>(arb: fc.Arbitrary<T>, p = 0.15): fc.Arbitrary<T | null> =>
  fc.oneof(
    { weight: Math.round(p * 100), arbitrary: arb },
    { weight: 100 - Math.round(p * 100), arbitrary: fc.constant(null) },
  );
/** True with probability ≈ p (weights, not a biased double: fast-check biases numbers toward their bounds). */
const mostly = (p = 0.85): fc.Arbitrary<boolean> =>
  fc.oneof(
    { weight: Math.round(p * 100), arbitrary: fc.constant(true) },
    { weight: 100 - Math.round(p * 100), arbitrary: fc.constant(false) },
  );

/** What the robot did after a completed clip: fell, stood, or not known. */
export const afterClipArb: fc.Arbitrary<AfterClipVerdict> = fc.oneof(
  fc.record({
    kind: fc.constant('fell' as const),
    atS: fc.double({ min: 0, max: 3, noNaN: true }),
    tiltRad: fc.double({ min: 0.6, max: 3.1, noNaN: true }),
    watchedS: fc.constant(1),
    frames: fc.integer({ min: 1, max: 1500 }),
  }),
  fc.record({
    kind: fc.constant('upright' as const),
    watchedS: fc.double({ min: 1, max: 3, noNaN: true }),
    maxTiltRad: fc.double({ min: 0, max: 0.5, noNaN: true }),
    still: fc.boolean(),
    frames: fc.integer({ min: 1, max: 1500 }),
  }),
  fc.record({
    kind: fc.constant('unknown' as const),
    reason: fc.constant('the lowstate stopped before the watch could decide'),
    watchedS: fc.double({ min: 0, max: 3, noNaN: true }),
    maxTiltRad: fc.constant(null),
    frames: fc.integer({ min: 0, max: 10 }),
  }),
);

export const attemptArb: fc.Arbitrary<AttemptScript> = fc.record({
  startPose: fc.constantFrom<AttemptScript['startPose']>('ok', 'ok', 'ok', 'ok', 'ok', 'not_still', 'far'),
  confirm: mostly(0.92),
  arm: mostly(0.92),
  prepare: mostly(0.9),
  start: mostly(0.9),
  transmit: mostly(0.9),
  robot: fc.constantFrom<AttemptScript['robot']>('ack', 'ack', 'ack', 'ack', 'ack', 'ack', 'refuse', 'fail'),
  recording: mostly(0.93),
  tripBeforeStart: maybe(tripKindArb, 0.08),
  tripBeforeWrite: maybe(tripKindArb, 0.08),
  tripDuringRun: maybe(tripKindArb, 0.2),
  end: fc.constantFrom<EpisodeOutcome>(...EPISODE_OUTCOMES, 'completed', 'completed', 'completed'),
  hardFailure: mostly(0.15),
  afterClip: maybe(afterClipArb, 0.2),
  recordError: mostly(0.04),
  frames: fc.integer({ min: 0, max: 600 }),
});

const noiseKindArb = fc.constantFrom<NoiseKind>(
  'duplicate',
  'transmit_allowed',
  'start_allowed',
  'recording_opened',
  'run_ended',
  'foreign_run',
  'confirm',
  'episode_finished',
  'random',
);

/** Any world: refusals, retries, trips, operator stops; adversarial when `adversarial`. */
export function worldArb(adversarial: boolean): fc.Arbitrary<WorldScript> {
  return fc.integer({ min: 1, max: 4 }).chain((trials) =>
    fc.record({
      trials: fc.constant(trials),
      admitted: mostly(0.95),
      contractOk: mostly(0.97),
      bindingStored: mostly(0.97),
      realRobot: mostly(0.97),
      calibration: fc.oneof(
        { weight: 15, arbitrary: fc.constant<WorldScript['calibration']>('capture') },
        { weight: 4, arbitrary: fc.constant<WorldScript['calibration']>('stored') },
        { weight: 1, arbitrary: fc.constant<WorldScript['calibration']>('missing') },
      ),
      pairCalibration: fc.oneof(
        { weight: 18, arbitrary: fc.constant<WorldScript['pairCalibration']>('ok') },
        { weight: 1, arbitrary: fc.constant<WorldScript['pairCalibration']>('not_still') },
        { weight: 1, arbitrary: fc.constant<WorldScript['pairCalibration']>('bad_pose') },
      ),
      sim: fc.array(fc.constantFrom<EpisodeOutcome>('infrastructure_error', 'completed', 'hard_failure'), {
        maxLength: 4,
      }),
      attempts: fc.array(
        fc.oneof(
          { weight: 9, arbitrary: fc.array(attemptArb, { minLength: 1, maxLength: 5 }) },
          // a flaky robot: every recorded run ends infrastructure_error (the retries run out)
          { weight: 1, arbitrary: fc.constant<AttemptScript[]>([attempt({ end: 'infrastructure_error' })]) },
        ),
        { minLength: trials, maxLength: trials },
      ),
      resets: fc.array(maybe(fc.constantFrom('put back', 'robot standing again'), 0.92), { maxLength: 12 }),
      gateResets: fc.array(mostly(0.85), { maxLength: 6 }),
      interjections: fc.array(fc.record({ at: fc.integer({ min: 0, max: 120 }), kind: tripKindArb }), {
        maxLength: 3,
      }),
      lie: adversarial ? mostly(0.5) : fc.constant(false),
      noise: adversarial
        ? fc.array(fc.record({ at: fc.integer({ min: 0, max: 150 }), kind: noiseKindArb }), { maxLength: 12 })
        : fc.constant([]),
    }),
  );
}

/**
 * A world where every trial ends up counting (no refusal, no early stop): per trial up to two
 * infrastructure failures (the robot refuses or fails the prepare, or the run ends
 * infrastructure_error), at most one failed start-pose check, then an attempt that counts — run
 * to its end, a hard failure, or a trip while it runs. The simulation branch fails at most twice.
 */
export const resumableWorldArb: fc.Arbitrary<WorldScript> = fc.integer({ min: 1, max: 4 }).chain((trials) => {
  const infraAttempt = fc.oneof(
    fc.constant(attempt({ robot: 'refuse' })),
    fc.constant(attempt({ robot: 'fail' })),
    fc.constant(attempt({ end: 'infrastructure_error' })),
    fc.constant(attempt({ recording: false })),
  );
  const countingAttempt = fc.record({
    end: fc.constantFrom<EpisodeOutcome>('completed', 'completed', 'hard_failure', 'estop', 'intervention'),
    hardFailure: mostly(0.2),
    afterClip: maybe(afterClipArb, 0.2),
    tripDuringRun: maybe(fc.constantFrom<InterjectionKind>(...TRIP_KINDS), 0.3),
    frames: fc.integer({ min: 2, max: 600 }),
  });
  const trialAttempts = fc
    .tuple(
      fc.boolean(),
      fc.array(infraAttempt, { maxLength: 2 }),
      countingAttempt,
      fc.constantFrom<AttemptScript['startPose']>('not_still', 'far'),
    )
    .map(([poseFails, infra, last, pose]) => [
      ...(poseFails ? [attempt({ startPose: pose })] : []),
      ...infra,
      attempt(last),
    ]);
  return fc.record({
    trials: fc.constant(trials),
    admitted: fc.constant(true),
    contractOk: fc.constant(true),
    bindingStored: fc.constant(true),
    realRobot: fc.constant(true),
    calibration: fc.constant<WorldScript['calibration']>('capture'),
    pairCalibration: fc.constant<WorldScript['pairCalibration']>('ok'),
    sim: fc.array(fc.constant<EpisodeOutcome>('infrastructure_error'), { maxLength: 2 }),
    attempts: fc.array(trialAttempts, { minLength: trials, maxLength: trials }),
    resets: fc.constant([]),
    gateResets: fc.constant([]),
    interjections: fc.constant([]),
    lie: fc.constant(false),
    noise: fc.constant([]),
  });
});

// ---------------------------------------------------------------------------------------------
// The campaign as the world keeps it (what a resumed session reads back)

export interface WorldStore {
  matched: { parentTraceId: string; calibrationId: string } | null;
  sim: StoredEpisode[];
  real: { episode: StoredEpisode; status: 'running' | 'finished' }[];
  events: { id: number; kind: 'stop_requested' | 'human_reset' }[];
  nextEventId: number;
}

export const emptyStore = (): WorldStore => ({ matched: null, sim: [], real: [], events: [], nextEventId: 1 });

function cloneStore(s: WorldStore): WorldStore {
  return {
    matched: s.matched ? { ...s.matched } : null,
    sim: s.sim.map((e) => ({ ...e })),
    real: s.real.map((r) => ({ episode: { ...r.episode }, status: r.status })),
    events: s.events.map((e) => ({ ...e })),
    nextEventId: s.nextEventId,
  };
}

// ---------------------------------------------------------------------------------------------
// Playing

export interface LogEntry {
  /** Index of the top-level event this step belongs to (nested steps share it). */
  top: number;
  depth: number;
  event: TrialSessionEvent;
  before: TrialSessionState;
  after: TrialSessionState;
  effects: TrialSessionEffect[];
  threw: unknown;
}

export interface PlayResult {
  log: LogEntry[];
  state: TrialSessionState;
  result: TrialSessionResult | null;
  store: WorldStore;
  /** Top-level events dispatched. */
  topSteps: number;
  /** The session asked for something the world did not answer (a stall), or the step limit was hit. */
  stalled: boolean;
  /** Every trip the world's gate made: (the trip, the top-level step). */
  trips: GateTrip[];
  threw: unknown;
}

const refusalOf = (code: Refusal['code'], message: string): Refusal => ({
  code,
  condition: code === 'tripped' ? 'trip' : code === 'link_stale' ? 'link' : 'episode',
  message,
  values: {},
});

const GOOD_RESIDUALS: StartResiduals = {
  jointRad: [],
  maxAbsJointRad: 0.01,
  maxAbsJoint: 'left_hip_pitch_joint',
  rmsJointRad: 0.005,
  rollRad: 0.01,
  pitchRad: -0.02,
  headingRad: null,
  rootPosM: null,
};

function tripOutcomeOf(kind: InterjectionKind): EpisodeOutcome {
  switch (kind) {
    case 'estop':
    case 'interlock_disarmed':
      return 'estop';
    case 'interlock_lost':
    case 'link_lost':
      return 'link_lost';
    case 'abort':
      return 'aborted_by_operator';
    case 'intervention':
      return 'intervention';
  }
}

/**
 * Plays a session in the world. `cutAt`: the process is killed before that top-level event (the
 * store keeps what was written; an open recording stays `running`). `store`: the campaign a
 * resumed session starts from.
 */
export function play(
  script: WorldScript,
  reducer: Reducer = realReducer,
  opts: { cutAt?: number; store?: WorldStore; maxSteps?: number } = {},
): PlayResult {
  const store = opts.store ? cloneStore(opts.store) : emptyStore();
  const resumedFrom = opts.store ?? null;
  const log: LogEntry[] = [];
  const trips: GateTrip[] = [];
  let state: TrialSessionState;
  try {
    state = initialTrialSession(script.trials);
  } catch (err) {
    return {
      log,
      state: {
        phase: 'refused',
        trials: script.trials,
        abort: null,
        gateTrip: null,
        message: String(err),
        reasons: [],
      },
      result: null,
      store,
      topSteps: 0,
      stalled: false,
      trips,
      threw: err,
    };
  }
  let result: TrialSessionResult | null = null;
  let threw: unknown = null;
  let top = 0;
  let depth = 0;
  let runCounter = 0;
  let simCounter = 0;
  const attemptIdx = new Map<number, number>();
  const resets = [...script.resets];
  const resetPoses = [...(script.resetPoses ?? [])];
  const gateResets = [...script.gateResets];
  // The world's gate
  let gateOpen = false;
  let tripped: GateTrip | null = null;
  let episode: { runId: string; moving: boolean } | null = null;
  // The trial in progress (what the robot does)
  let current: { runId: string; index: number; script: AttemptScript } | null = null;
  const queue: (TrialSessionEvent | { marker: 'trip'; kind: InterjectionKind })[] = [];
  let lastEvent: TrialSessionEvent | null = null;

  const addEvent = (kind: 'stop_requested' | 'human_reset'): void => {
    store.events.push({ id: store.nextEventId++, kind });
  };

  const dispatch = (event: TrialSessionEvent): void => {
    const before = state;
    let step: TrialSessionStep;
    try {
      step = reducer(state, event);
    } catch (err) {
      log.push({ top, depth, event, before, after: before, effects: [], threw: err });
      threw = err;
      return;
    }
    state = step.state;
    log.push({ top, depth, event, before, after: state, effects: step.effects, threw: null });
    depth++;
    for (const fx of step.effects) apply(fx);
    depth--;
  };

  const gateTrip = (cause: TripCause, outcome: EpisodeOutcome, reason: string): void => {
    if (!gateOpen || tripped !== null) return;
    const t: GateTrip = { cause, atMs: top, reason, runId: episode?.runId ?? null, outcome };
    tripped = t;
    episode = null;
    trips.push(t);
    addEvent('stop_requested');
    dispatch({ type: 'trip', trip: t });
  };

  const interject = (kind: InterjectionKind): void => {
    if (kind === 'abort' || kind === 'intervention') {
      dispatch({ type: 'operator_abort', intervention: kind === 'intervention' });
      return;
    }
    const cause: TripCause = kind;
    gateTrip(cause, tripOutcomeOf(kind), `scripted ${kind}`);
  };

  const allowed = (scripted: boolean, runId: string, needMoving: boolean): boolean =>
    script.lie
      ? scripted
      : scripted && tripped === null && episode !== null && episode.runId === runId && (!needMoving || episode.moving);
  const refusals = (runId: string): Refusal[] =>
    tripped !== null
      ? [refusalOf('tripped', `tripped by ${tripped.cause}`)]
      : episode === null || episode.runId !== runId
        ? [refusalOf('no_episode', 'no episode is open')]
        : [refusalOf('link_stale', 'robot link stale: last lowstate 70 ms ago (limit 50 ms)')];

  const realEpisode = (runId: string) => store.real.find((r) => r.episode.runId === runId);

  const apply = (fx: TrialSessionEffect): void => {
    if (!isRequestEffect(fx)) {
      switch (fx.type) {
        case 'record_event':
          if (fx.event.kind === 'human_reset') addEvent('human_reset');
          return;
        case 'open_gate':
          gateOpen = true;
          return;
        case 'end_episode':
          if (episode !== null && episode.runId === fx.runId) {
            if (
              tripped === null &&
              (['estop', 'link_lost', 'intervention', 'aborted_by_operator'] as EpisodeOutcome[]).includes(fx.outcome)
            )
              gateTrip('backend_stop', fx.outcome, fx.reason);
            else episode = null;
          }
          return;
        case 'operator_stop':
          gateTrip('operator_stop', fx.intervention ? 'intervention' : 'aborted_by_operator', fx.reason);
          return;
        case 'answer_start_check': {
          const c = current;
          if (c === null || c.runId !== fx.runId) return;
          if (fx.answer === true) {
            if (c.script.tripBeforeWrite) queue.push({ marker: 'trip', kind: c.script.tripBeforeWrite });
            queue.push({
              type: 'transmit_decided',
              runId: c.runId,
              allowed: allowed(c.script.transmit, c.runId, true),
              reasons: allowed(c.script.transmit, c.runId, true) ? [] : refusals(c.runId),
            });
          } else {
            queue.push({
              type: 'run_ended',
              runId: c.runId,
              result: { kind: 'threw', message: `start refused: ${fx.answer}` },
              hardFailure: null,
              afterClip: null,
              recordError: null,
            });
          }
          return;
        }
        case 'start': {
          const c = current;
          if (c === null || c.runId !== fx.runId) return;
          if (c.script.tripDuringRun) queue.push({ marker: 'trip', kind: c.script.tripDuringRun });
          queue.push({
            type: 'run_ended',
            runId: c.runId,
            result: { kind: 'ended', outcome: c.script.end, reason: `robot ended ${c.script.end}` },
            hardFailure: c.script.hardFailure ? 'pelvis below 0.3 m' : null,
            afterClip: c.script.end === 'completed' ? c.script.afterClip : null,
            recordError: c.script.recordError ? 'disk full' : null,
          });
          return;
        }
        case 'withhold_start': {
          const c = current;
          if (c === null || c.runId !== fx.runId) return;
          queue.push({
            type: 'run_ended',
            runId: c.runId,
            result: { kind: 'ended', outcome: 'aborted_by_operator', reason: `start not sent: ${fx.message}` },
            hardFailure: null,
            afterClip: null,
            recordError: null,
          });
          return;
        }
        case 'done':
          result = fx.result;
          return;
        default:
          return;
      }
    }
    switch (fx.type) {
      case 'load_clip':
        queue.push({
          type: 'clip_loaded',
          clipName: CLIP,
          executionDomain: script.realRobot ? 'real_robot' : 'simulation',
          backendName: script.realRobot ? 'g1' : 'embedded MuJoCo',
        });
        return;
      case 'load_calibration':
      case 'capture_calibration': {
        if (fx.type === 'load_calibration' && script.calibration === 'missing') {
          queue.push({ type: 'pair_calibration', result: { kind: 'not_stored' } });
          return;
        }
        queue.push({
          type: 'pair_calibration',
          result:
            script.pairCalibration === 'not_still'
              ? { kind: 'not_captured', message: 'calibration refused: not still', reasons: ['gyro 0.2 rad/s'] }
              : {
                  kind: 'ready',
                  startResiduals:
                    script.pairCalibration === 'bad_pose' ? { ...GOOD_RESIDUALS, rollRad: 1.2 } : GOOD_RESIDUALS,
                },
        });
        return;
      }
      case 'store_calibration':
        queue.push({ type: 'pair_calibration_stored', calibrationId: 'cal-pair-1' });
        return;
      case 'open_matched_pair': {
        store.matched ??= { parentTraceId: 'matched-1', calibrationId: fx.calibrationId };
        queue.push({
          type: 'matched_pair_opened',
          parentTraceId: store.matched.parentTraceId,
          simEpisodes: store.sim.map((e) => ({ ...e })),
          realEpisodes: store.real.filter((r) => r.status === 'finished').map((r) => ({ ...r.episode })),
          anyRealEpisode: store.real.length > 0,
          lastStopEventId: store.events.filter((e) => e.kind === 'stop_requested').at(-1)?.id ?? null,
          lastResetEventId: store.events.filter((e) => e.kind === 'human_reset').at(-1)?.id ?? null,
        });
        return;
      }
      case 'run_sim_branch': {
        const outcome = script.sim[fx.attempt] ?? 'completed';
        const runId = `sim-${++simCounter}`;
        store.sim.push({ runId, trialIndex: -1, outcome, reason: `sim ${outcome}`, frames: 250 });
        queue.push({ type: 'sim_ended', runId, outcome, reason: `sim ${outcome}`, frames: 250 });
        return;
      }
      case 'prompt_reset':
        queue.push({
          type: 'reset_answered',
          note: resets.length > 0 ? (resets.shift() ?? null) : 'reset by the test',
          pose: resetPoses.length > 0 ? (resetPoses.shift() ?? null) : AT_START_POSE,
        });
        return;
      case 'reset_gate': {
        const accept = gateResets.length > 0 ? gateResets.shift() === true : true;
        if (tripped !== null && accept) {
          tripped = null;
          addEvent('human_reset');
          queue.push({ type: 'gate_reset', accepted: true });
        } else
          queue.push({
            type: 'gate_reset',
            accepted: false,
            reasons: [
              tripped === null
                ? refusalOf('not_tripped', 'nothing to reset')
                : refusalOf('link_stale', 'no lowstate since the trip'),
            ],
          });
        return;
      }
      case 'check_start_pose': {
        const k = fx.trialIndex;
        const n = attemptIdx.get(k) ?? 0;
        attemptIdx.set(k, n + 1);
        const list = script.attempts[k] ?? [GOOD_ATTEMPT];
        const s = list[Math.min(n, list.length - 1)];
        const runId = `real-${k}-${++runCounter}`;
        current = { runId, index: k, script: s };
        if (s.startPose === 'not_still')
          queue.push({
            type: 'start_pose_checked',
            runId,
            ok: false,
            message: 'calibration refused: not still',
            reasons: ['gyro 0.2 rad/s'],
          });
        else
          queue.push({
            type: 'start_pose_checked',
            runId,
            ok: true,
            difference: {
              maxJointDiffRad: s.startPose === 'far' ? 0.2 : 0.01,
              joint: 'left_knee_joint',
              attitudeDiffRad: 0.005,
              jointsOut: s.startPose === 'far' ? [{ joint: 'left_knee_joint', diffRad: 0.2 }] : [],
            },
          });
        return;
      }
      case 'open_trial':
        if (tripped === null && episode === null) episode = { runId: fx.runId, moving: false };
        queue.push({ type: 'trial_opened', runId: fx.runId, freshCalibrationId: `cal-${fx.runId}` });
        return;
      case 'ask_confirmation':
        queue.push({ type: 'confirmation', runId: fx.runId, confirmed: current?.script.confirm ?? true });
        return;
      case 'arm_interlock':
        queue.push(
          current?.script.arm === false
            ? { type: 'interlock_armed', runId: fx.runId, ok: false, reason: 'not_safe', detail: 'box in ESTOP' }
            : { type: 'interlock_armed', runId: fx.runId, ok: true },
        );
        return;
      case 'prepare': {
        const ok = allowed(current?.script.prepare ?? true, fx.runId, false);
        if (ok && episode !== null && episode.runId === fx.runId) episode = { ...episode, moving: true };
        queue.push({ type: 'prepare_decided', runId: fx.runId, allowed: ok, reasons: ok ? [] : refusals(fx.runId) });
        return;
      }
      case 'run_trial': {
        const c = current;
        if (c === null || c.runId !== fx.runId) return;
        if (c.script.robot === 'refuse') {
          queue.push({
            type: 'run_ended',
            runId: c.runId,
            result: { kind: 'threw', message: 'prepare refused by the robot' },
            hardFailure: null,
            afterClip: null,
            recordError: null,
          });
          return;
        }
        if (c.script.robot === 'fail') {
          queue.push({
            type: 'run_ended',
            runId: c.runId,
            result: { kind: 'ended', outcome: 'infrastructure_error', reason: 'controller fault while preparing' },
            hardFailure: null,
            afterClip: null,
            recordError: null,
          });
          return;
        }
        if (c.script.tripBeforeStart) queue.push({ marker: 'trip', kind: c.script.tripBeforeStart });
        // Decided when it is dispatched (a trip queued before it must count).
        queue.push({ type: 'start_decided', runId: c.runId, allowed: true, reasons: [] });
        return;
      }
      case 'open_recording':
        if (current?.script.recording === false)
          queue.push({ type: 'recording_failed', runId: fx.runId, message: 'cannot create the MCAP file' });
        else {
          store.real.push({
            episode: { runId: fx.runId, trialIndex: fx.trialIndex, outcome: null, reason: '', frames: 0 },
            status: 'running',
          });
          queue.push({ type: 'recording_opened', runId: fx.runId });
        }
        return;
      case 'finish_episode': {
        const r = realEpisode(fx.runId);
        const frames = current?.runId === fx.runId ? current.script.frames : 0;
        if (r) {
          r.episode = { ...r.episode, outcome: fx.outcome, reason: fx.reason, frames };
          r.status = 'finished';
        }
        queue.push({ type: 'episode_finished', runId: fx.runId, frames });
        return;
      }
    }
  };

  /** The gate's answer to the start check, at the moment it is asked. */
  const decideStart = (e: Extract<TrialSessionEvent, { type: 'start_decided' }>): TrialSessionEvent => {
    const ok = allowed(current?.runId === e.runId ? current.script.start : true, e.runId, true);
    return { ...e, allowed: ok, reasons: ok ? [] : refusals(e.runId) };
  };

  const noise = (kind: NoiseKind): TrialSessionEvent | null => {
    const runId = current?.runId ?? 'real-x-0';
    switch (kind) {
      case 'duplicate':
        return lastEvent;
      case 'transmit_allowed':
        return { type: 'transmit_decided', runId, allowed: true, reasons: [] };
      case 'start_allowed':
        return { type: 'start_decided', runId, allowed: true, reasons: [] };
      case 'recording_opened':
        return { type: 'recording_opened', runId };
      case 'run_ended':
        return {
          type: 'run_ended',
          runId,
          result: { kind: 'ended', outcome: 'completed', reason: 'early' },
          hardFailure: null,
          afterClip: null,
          recordError: null,
        };
      case 'foreign_run':
        return { type: 'transmit_decided', runId: 'real-foreign-1', allowed: true, reasons: [] };
      case 'confirm':
        return { type: 'confirmation', runId, confirmed: true };
      case 'episode_finished':
        return { type: 'episode_finished', runId, frames: 3 };
      case 'random':
        return { type: 'interlock_armed', runId, ok: true };
    }
  };

  queue.push({
    type: 'pair_resolved',
    pairId: PAIR_ID,
    qualificationTraceId: PAIR_ID,
    admitted: script.admitted,
    reasons: script.admitted ? [] : ['MPJPE-l 212 mm above the admission limit'],
    clipName: CLIP,
    pairBindingKey: BINDING,
    contractId: script.contractOk ? CONTRACT : 'mb-metrics/0',
    currentContractId: CONTRACT,
    bindingKey: script.bindingStored ? BINDING : null,
    requestedCalibrationId: script.calibration === 'capture' ? null : 'cal-given',
    matched: resumedFrom?.matched ?? null,
  });

  const maxSteps = opts.maxSteps ?? 2000;
  let stalled = false;
  while (threw === null) {
    if (opts.cutAt !== undefined && top >= opts.cutAt) break;
    if (isSessionOver(state)) break;
    for (const i of script.interjections) if (i.at === top) interject(i.kind);
    for (const n of script.noise) {
      if (n.at !== top) continue;
      const ev = noise(n.kind);
      if (ev) dispatch(ev);
    }
    const item = queue.shift();
    if (item === undefined) {
      stalled = !isSessionOver(state);
      break;
    }
    if ('marker' in item) interject(item.kind);
    else {
      const ev = item.type === 'start_decided' ? decideStart(item) : item;
      lastEvent = ev;
      dispatch(ev);
    }
    top++;
    if (top > maxSteps) {
      stalled = true;
      break;
    }
  }
  return { log, state, result, store, topSteps: top, stalled, trips, threw };
}

// ---------------------------------------------------------------------------------------------
// Reading a history

export const effectsOf = <T extends TrialSessionEffect['type']>(
  log: readonly LogEntry[],
  type: T,
): { entry: LogEntry; index: number; effect: Extract<TrialSessionEffect, { type: T }> }[] =>
  log.flatMap((entry, index) =>
    entry.effects
      .filter((e): e is Extract<TrialSessionEffect, { type: T }> => e.type === type)
      .map((effect) => ({ entry, index, effect })),
  );

/** Every effect of a history in order, nested steps' effects where they ran. */
export function allEffects(log: readonly LogEntry[]): TrialSessionEffect[] {
  return log.flatMap((l) => l.effects);
}
