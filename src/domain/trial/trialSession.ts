// The matched sim/real trial session as a pure reducer (DESIGN §3, §6;
// docs/TRIALS.md). For an admitted qualification pair:
//   1. the pair: admitted, under the current contract, its binding stored, its clip loaded, the
//      robot link a real robot — else the session is refused (a `refusal` trace event);
//   2. the pair's calibration: resumed, stored (`--calibration`) or captured from the still robot,
//      refused when the robot is not standing at the clip's start; settled and stored, its id
//      completes the matched parent trace's identity;
//   3. the simulation branch, once (resumed sessions skip it); infrastructure errors retried;
//   4. the real trials, each: a human-gated reset (after the first, and after any trip), a fresh
//      start-pose check against the pair's calibration, the gate's episode, the operator's
//      confirmation, the interlock armed, the gate's `prepare`, the robot's run with the gate's
//      `start` asked at the robot's start check and again at the write; a trip ends the trial with
//      the trip's outcome; only infrastructure errors are retried;
//   5. done: the result, or stopped early with the reason (a later session resumes).
//
// Every refusal and every trip is an event in, and its trace and progress are effects out. The
// safety gate (src/domain/safety) stays the authority on motion: this reducer emits `start` only
// when the gate allowed `start` at the start check and again at the transmit, and no trip was
// heard since. The driver (src/services/trial/matchedTrialRunner.ts) executes the effects.

import { isRetryableOutcome, type EpisodeOutcome } from '../backend/backend';
import { REFUSAL_CODES, type GateTrip, type Refusal, type RefusalCode } from '../safety/safetyTypes';
import {
  calibrationCheckProblem,
  checkTrialCount,
  countsAsFinished,
  isSafetyStop,
  MAX_INFRA_RETRIES,
  MAX_RESET_ATTEMPTS,
  startPoseProblems,
  tripEnd,
} from './trialChecks';
import type {
  MatchedContext,
  OpenTrial,
  RealTrialSummary,
  ResumeFacts,
  SessionBase,
  SessionProgress,
  SimSummary,
  TrialBook,
  TrialSessionEffect,
  TrialSessionEvent,
  TrialSessionResult,
  TrialSessionState,
  TrialSessionStep,
  TrialStep,
} from './trialSessionTypes';
import { trialNumber } from './trialNumber';
import { describeAfterClip, type AfterClipVerdict } from './afterClipWatch';

export function initialTrialSession(trials: number): TrialSessionState {
  return { phase: 'resolving_pair', trials: checkTrialCount(trials), abort: null, gateTrip: null };
}

/** True once the session can take no further step (done, refused or failed). */
export function isSessionOver(s: TrialSessionState): boolean {
  return s.phase === 'done' || s.phase === 'refused' || s.phase === 'failed';
}

const base = (s: SessionBase): SessionBase => ({ trials: s.trials, abort: s.abort, gateTrip: s.gateTrip });
const progress = (event: SessionProgress): TrialSessionEffect => ({ type: 'progress', event });
const messages = (reasons: readonly Refusal[]): string => reasons.map((r) => r.message).join('; ');
/** The text a refused start check or write answers the robot with (never empty: an empty answer still refuses). */
const refusalText = (reasons: readonly Refusal[]): string => messages(reasons) || 'refused by the safety gate';
const ignored = (s: TrialSessionState, e: TrialSessionEvent): TrialSessionStep => ({
  state: s,
  effects: [
    {
      type: 'log',
      line: `trial session: ${e.type} ignored in phase ${s.phase}${s.phase === 'trials' ? ` (${s.trial.step})` : ''}`,
    },
  ],
});

/** A refusal of the runner's own (not the gate's) as the console shows it. */
function runnerRefusal(message: string, code: RefusalCode): Refusal {
  return { code, condition: REFUSAL_CODES[code], message, values: {} };
}

/** One step of the session. Pure: returns a new state (or the same object when nothing changed). */
export function reduceTrialSession(state: TrialSessionState, event: TrialSessionEvent): TrialSessionStep {
  if (event.type === 'trip') return onTrip(state, event.trip);
  if (event.type === 'operator_abort') return onAbort(state, event.intervention);
  switch (state.phase) {
    case 'resolving_pair':
      return event.type === 'pair_resolved' ? onPairResolved(state, event) : ignored(state, event);
    case 'loading_clip':
      return event.type === 'clip_loaded' ? onClipLoaded(state, event) : ignored(state, event);
    case 'pair_calibration':
      return event.type === 'pair_calibration' ? onPairCalibration(state, event) : ignored(state, event);
    case 'storing_calibration':
      if (event.type !== 'pair_calibration_stored') return ignored(state, event);
      return {
        state: {
          ...base(state),
          phase: 'opening_pair',
          pair: state.pair,
          calibrationId: event.calibrationId,
          resumed: false,
        },
        effects: [{ type: 'open_matched_pair', calibrationId: event.calibrationId, resumed: false }],
      };
    case 'opening_pair':
      return event.type === 'matched_pair_opened' ? onMatchedPairOpened(state, event) : ignored(state, event);
    case 'simulating':
      return event.type === 'sim_ended' ? onSimEnded(state, event) : ignored(state, event);
    case 'trials':
      return onTrialEvent(state, event);
    case 'done':
    case 'refused':
    case 'failed':
      return ignored(state, event);
  }
}

// ---------------------------------------------------------------------------------------------
// Any time: the gate's trips, the operator's stop

function onTrip(s: TrialSessionState, trip: GateTrip): TrialSessionStep {
  const text = `${trip.reason} (${trip.cause})`;
  const effects: TrialSessionEffect[] = [
    { type: 'stop', runId: trip.runId, outcome: trip.outcome, reason: text, by: 'gate' },
    { type: 'damp', runId: trip.runId, reason: text, by: 'gate' },
    progress({ type: 'trip', trip }),
    { type: 'log', line: `safety: TRIP ${trip.cause}: ${trip.reason}` },
  ];
  // The gate latches its first trip until a reset is accepted; so does the session's view of it.
  const gateTrip = s.gateTrip ?? trip;
  if (s.phase !== 'trials') return { state: { ...s, gateTrip }, effects };
  const t = s.trial;
  const names = trip.runId !== null && 'runId' in t && t.runId === trip.runId && t.trip === null;
  return { state: { ...s, gateTrip, trial: names ? { ...t, trip } : t }, effects };
}

function onAbort(s: TrialSessionState, intervention: boolean): TrialSessionStep {
  if (s.abort !== null) return { state: s, effects: [] };
  const next = { ...s, abort: { intervention } } as TrialSessionState;
  // Once the trials began the robot is in the session's hands whatever the step: ramping to the
  // start pose, tracking, or holding (or standing on a standing controller) between trials. The
  // stop goes to the gate in every step (a trip: stop and damp at once, as the robot side's own
  // stop does from any state); the session then stops at its next decision.
  if (s.phase !== 'trials') return { state: next, effects: [] };
  const runId = s.trial.step === 'running' ? s.trial.runId : null;
  return {
    state: next,
    effects: [
      {
        type: 'operator_stop',
        runId,
        intervention,
        reason: intervention ? 'the operator stopped for a human intervention' : 'the operator pressed stop',
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// 1. The pair

function refuseSession(
  s: SessionBase,
  qualificationTraceId: string,
  message: string,
  reasons: string[] = [],
): TrialSessionStep {
  return {
    state: { ...base(s), phase: 'refused', message, reasons },
    effects: [
      {
        type: 'record_event',
        event: { kind: 'refusal', reason: message, parentTraceId: qualificationTraceId, detail: { reasons } },
      },
      { type: 'refuse_session', message, reasons },
    ],
  };
}

function onPairResolved(
  s: Extract<TrialSessionState, { phase: 'resolving_pair' }>,
  e: Extract<TrialSessionEvent, { type: 'pair_resolved' }>,
): TrialSessionStep {
  const q = e.qualificationTraceId;
  if (!e.admitted)
    return refuseSession(
      s,
      q,
      `pair ${e.pairId} (${e.clipName} × ${e.pairBindingKey}) is not admitted: ${e.reasons.join('; ')}`,
      e.reasons,
    );
  if (e.contractId !== e.currentContractId)
    return refuseSession(
      s,
      q,
      `pair ${e.pairId} was admitted under ${e.contractId}, not the current contract ${e.currentContractId}`,
    );
  if (e.bindingKey === null)
    return refuseSession(s, q, `binding ${e.pairBindingKey} of pair ${e.pairId} is not stored in the campaign`);
  const plan =
    e.requestedCalibrationId !== null
      ? ({ source: 'stored', calibrationId: e.requestedCalibrationId } as const)
      : e.matched !== null
        ? ({ source: 'resume', ...e.matched } as const)
        : ({ source: 'capture' } as const);
  return {
    state: {
      ...base(s),
      phase: 'loading_clip',
      pair: { pairId: e.pairId, qualificationTraceId: q, contractId: e.contractId, bindingKey: e.bindingKey },
      admissionReasons: e.reasons,
      plan,
    },
    effects: [{ type: 'load_clip' }],
  };
}

function onClipLoaded(
  s: Extract<TrialSessionState, { phase: 'loading_clip' }>,
  e: Extract<TrialSessionEvent, { type: 'clip_loaded' }>,
): TrialSessionStep {
  if (e.executionDomain !== 'real_robot')
    return refuseSession(
      s,
      s.pair.qualificationTraceId,
      `${e.backendName} is a ${e.executionDomain} backend; real-robot trials need a robot (or motionbench emulate-robot)`,
    );
  const pair = { ...s.pair, clipName: e.clipName };
  const effects: TrialSessionEffect[] = [
    {
      type: 'open_gate',
      admission: {
        pairId: pair.pairId,
        admitted: true,
        contractId: pair.contractId,
        bindingKey: pair.bindingKey,
        reasons: s.admissionReasons,
      },
    },
  ];
  const plan = s.plan;
  switch (plan.source) {
    case 'resume':
      // The most advanced matched pair of this qualification pair, as listed.
      effects.push(
        { type: 'log', line: `resuming matched pair ${plan.parentTraceId} (calibration ${plan.calibrationId})` },
        { type: 'open_matched_pair', calibrationId: plan.calibrationId, resumed: true },
      );
      return {
        state: { ...base(s), phase: 'opening_pair', pair, calibrationId: plan.calibrationId, resumed: true },
        effects,
      };
    case 'stored':
      effects.push({ type: 'load_calibration', calibrationId: plan.calibrationId });
      return { state: { ...base(s), phase: 'pair_calibration', pair, plan }, effects };
    case 'capture':
      effects.push(
        progress({
          type: 'phase',
          phase: 'calibrating',
          trialIndex: null,
          message: 'hold the robot still: capturing its start state',
        }),
        { type: 'capture_calibration' },
      );
      return { state: { ...base(s), phase: 'pair_calibration', pair, plan }, effects };
  }
}

// ---------------------------------------------------------------------------------------------
// 2. The pair's calibration

function onPairCalibration(
  s: Extract<TrialSessionState, { phase: 'pair_calibration' }>,
  e: Extract<TrialSessionEvent, { type: 'pair_calibration' }>,
): TrialSessionStep {
  const q = s.pair.qualificationTraceId;
  const r = e.result;
  switch (r.kind) {
    case 'not_stored':
      if (s.plan.source !== 'stored') return ignored(s, e);
      return refuseSession(s, q, `calibration ${s.plan.calibrationId} is not stored in this campaign`);
    case 'not_captured':
      return refuseSession(s, q, r.message, r.reasons);
    case 'ready': {
      const problems = startPoseProblems(r.startResiduals);
      if (problems.length > 0)
        return refuseSession(s, q, `the robot is not standing at the clip's start: ${problems.join('; ')}`, problems);
      return {
        state: { ...base(s), phase: 'storing_calibration', pair: s.pair },
        effects: [{ type: 'store_calibration' }],
      };
    }
  }
}

function onMatchedPairOpened(
  s: Extract<TrialSessionState, { phase: 'opening_pair' }>,
  e: Extract<TrialSessionEvent, { type: 'matched_pair_opened' }>,
): TrialSessionStep {
  const pair: MatchedContext = { ...s.pair, calibrationId: s.calibrationId, parentTraceId: e.parentTraceId };
  // Resume: finished trials count (any outcome but infrastructure_error), the rest are run.
  const real: RealTrialSummary[] = e.realEpisodes.flatMap((x) =>
    countsAsFinished(x.outcome)
      ? [
          {
            runId: x.runId,
            trialIndex: x.trialIndex,
            outcome: x.outcome,
            reason: x.reason,
            frames: x.frames,
            resumed: true,
          },
        ]
      : [],
  );
  // A trip that left no episode behind (the link lost after the prepare ack) sent damp all the
  // same, and the robot may be down: a resumed session starts with a human reset then too.
  const trippedSinceReset =
    e.lastStopEventId !== null && (e.lastResetEventId === null || e.lastResetEventId < e.lastStopEventId);
  const resume: ResumeFacts = { real, needsReset: trippedSinceReset || e.anyRealEpisode };
  // The simulation branch runs once: its first counting episode is the branch.
  const simDone = e.simEpisodes.find((x) => countsAsFinished(x.outcome));
  if (simDone !== undefined && countsAsFinished(simDone.outcome)) {
    const effects: TrialSessionEffect[] = [
      progress({
        type: 'episode_end',
        runId: simDone.runId,
        domain: 'simulation',
        trialIndex: null,
        outcome: simDone.outcome,
        reason: simDone.reason,
        frames: simDone.frames,
        resumed: true,
      }),
    ];
    return enterTrials(s, pair, { runId: simDone.runId, outcome: simDone.outcome, resumed: true }, resume, effects);
  }
  return {
    state: { ...base(s), phase: 'simulating', pair, attempt: 0, resume },
    effects: [
      progress({
        type: 'phase',
        phase: 'simulating',
        trialIndex: null,
        message: `simulation branch: ${pair.clipName} from the calibrated start`,
      }),
      { type: 'run_sim_branch', attempt: 0 },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// 3. The simulation branch

function onSimEnded(
  s: Extract<TrialSessionState, { phase: 'simulating' }>,
  e: Extract<TrialSessionEvent, { type: 'sim_ended' }>,
): TrialSessionStep {
  const effects: TrialSessionEffect[] = [
    progress({
      type: 'episode_end',
      runId: e.runId,
      domain: 'simulation',
      trialIndex: null,
      outcome: e.outcome,
      reason: e.reason,
      frames: e.frames,
      resumed: false,
    }),
  ];
  if (isRetryableOutcome(e.outcome) && s.attempt < MAX_INFRA_RETRIES) {
    effects.push({ type: 'run_sim_branch', attempt: s.attempt + 1 });
    return { state: { ...s, attempt: s.attempt + 1 }, effects };
  }
  return enterTrials(s, s.pair, { runId: e.runId, outcome: e.outcome, resumed: false }, s.resume, effects);
}

// ---------------------------------------------------------------------------------------------
// 4. The real trials

type TrialsState = Extract<TrialSessionState, { phase: 'trials' }>;

function enterTrials(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  resume: ResumeFacts,
  effects: TrialSessionEffect[],
): TrialSessionStep {
  for (const t of resume.real)
    effects.push(
      progress({
        type: 'episode_end',
        runId: t.runId,
        domain: 'real_robot',
        trialIndex: t.trialIndex,
        outcome: t.outcome,
        reason: t.reason,
        frames: t.frames,
        resumed: true,
      }),
    );
  const book: TrialBook = {
    real: resume.real,
    lastOutcome: resume.real.length > 0 ? resume.real[resume.real.length - 1].outcome : null,
    needsReset: resume.needsReset,
    infraRetries: 0,
    resetAttempts: 0,
  };
  return nextTrial(base(s), pair, sim, book, effects);
}

function stopped(why: string): TrialSessionEffect {
  return progress({ type: 'phase', phase: 'stopped', trialIndex: null, message: why });
}

/**
 * The session is over. `stoppedEarly`: why it stopped early (its `stopped` progress is already
 * in `effects`, where the runner reported it), or null when every trial it could run ran.
 */
function finish(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  book: TrialBook,
  effects: TrialSessionEffect[],
  stoppedEarly: string | null,
): TrialSessionStep {
  const remaining = s.trials - new Set(book.real.map((r) => r.trialIndex)).size;
  if (stoppedEarly === null)
    effects.push(
      progress({
        type: 'phase',
        phase: 'done',
        trialIndex: null,
        message: `matched pair done: 1 simulation + ${book.real.length} real trials`,
      }),
    );
  const result: TrialSessionResult = {
    pairId: pair.pairId,
    parentTraceId: pair.parentTraceId,
    calibrationId: pair.calibrationId,
    sim,
    real: [...book.real].sort((a, b) => a.trialIndex - b.trialIndex),
    remaining,
    stoppedEarly,
  };
  effects.push({ type: 'done', result });
  return { state: { ...base(s), phase: 'done', result }, effects };
}

/** Stops the session now: the `stopped` progress, then the end. */
function stopNow(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  book: TrialBook,
  effects: TrialSessionEffect[],
  why: string,
): TrialSessionStep {
  effects.push(stopped(why));
  return finish(s, pair, sim, book, effects, why);
}

/** The next trial to run (the lowest index not finished), from its reset on; or the end. */
function nextTrial(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  book: TrialBook,
  effects: TrialSessionEffect[],
): TrialSessionStep {
  const doneIdx = new Set(book.real.map((r) => r.trialIndex));
  let index = 0;
  while (doneIdx.has(index)) index++;
  if (index >= s.trials) return finish(s, pair, sim, book, effects, null);
  if (s.abort !== null) return stopNow(s, pair, sim, book, effects, 'stopped by the operator');

  // a. human-gated reset
  const trip = s.gateTrip;
  if (book.needsReset || trip !== null) {
    if (book.resetAttempts + 1 > MAX_RESET_ATTEMPTS)
      return stopNow(
        s,
        pair,
        sim,
        book,
        effects,
        `trial ${trialNumber(index)}: the robot was not ready after ${MAX_RESET_ATTEMPTS} resets`,
      );
    effects.push(
      progress({
        type: 'phase',
        phase: 'waiting_reset',
        trialIndex: index,
        message: `put the robot back at its start pose for trial ${trialNumber(index)} of ${s.trials}`,
      }),
      { type: 'prompt_reset', trialIndex: index, afterOutcome: book.lastOutcome, tripped: trip !== null },
    );
    return {
      state: {
        ...s,
        phase: 'trials',
        pair,
        sim,
        book: { ...book, resetAttempts: book.resetAttempts + 1 },
        trial: { step: 'awaiting_reset', index, tripped: trip !== null },
      },
      effects,
    };
  }
  return checkStartPose(s, pair, sim, book, index, effects);
}

function checkStartPose(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  book: TrialBook,
  index: number,
  effects: TrialSessionEffect[],
): TrialSessionStep {
  effects.push(
    progress({
      type: 'phase',
      phase: 'checking_calibration',
      trialIndex: index,
      message: 'hold still: checking the start pose against the pair calibration',
    }),
    { type: 'check_start_pose', trialIndex: index },
  );
  return { state: { ...s, phase: 'trials', pair, sim, book, trial: { step: 'checking_start_pose', index } }, effects };
}

/** A refusal of the runner's own for a trial: traced on the matched pair and shown. */
function refuseTrial(
  pair: MatchedContext,
  runId: string,
  index: number,
  reasons: string[],
  why: string,
  code: RefusalCode,
): TrialSessionEffect[] {
  return [
    {
      type: 'record_event',
      event: {
        kind: 'refusal',
        reason: why,
        parentTraceId: pair.parentTraceId,
        detail: { run_id: runId, trial_index: index, reasons },
      },
    },
    progress({ type: 'refusal', runId, reasons: reasons.map((r) => runnerRefusal(r, code)) }),
  ];
}

/**
 * Closes the gate's episode of a trial that never started (not confirmed, not armed, prepare or
 * start refused, the robot did not run it) with an outcome that is not a safety end: the gate
 * takes estop, link_lost, intervention and aborted_by_operator as the robot side stopping — a
 * trip, which sends stop and damp, and a damped G1 standing idle collapses. A trial a trip named
 * ends with the trip's outcome (the trip closed the gate's episode already).
 */
function endUnstarted(t: OpenTrial, reason: string): TrialSessionEffect {
  const end = t.trip ? tripEnd(t.trip) : { outcome: 'infrastructure_error' as const, reason };
  return { type: 'end_episode', runId: t.runId, ...end };
}

/** The end's reason with what the robot did after the clip, when it was watched. */
function withAfterClip(
  end: { outcome: EpisodeOutcome; reason: string },
  after: AfterClipVerdict | null,
): { outcome: EpisodeOutcome; reason: string } {
  return after ? { ...end, reason: `${end.reason}; ${describeAfterClip(after)}` } : end;
}

function runEndReason(r: Extract<TrialSessionEvent, { type: 'run_ended' }>['result']): {
  outcome: EpisodeOutcome;
  reason: string;
} {
  return r.kind === 'ended'
    ? { outcome: r.outcome, reason: r.reason }
    : { outcome: 'infrastructure_error', reason: `the robot did not run the clip: ${r.message}` };
}

function onTrialEvent(s: TrialsState, e: TrialSessionEvent): TrialSessionStep {
  const { pair, sim, book } = s;
  const b = base(s);
  const t = s.trial;
  const at = (trial: TrialStep, effects: TrialSessionEffect[], nextBook: TrialBook = book): TrialSessionStep => ({
    state: { ...s, book: nextBook, trial },
    effects,
  });
  const sameRun = 'runId' in e && 'runId' in t && e.runId === t.runId;

  switch (t.step) {
    case 'awaiting_reset': {
      if (e.type !== 'reset_answered') break;
      if (e.note === null) {
        const why =
          s.abort !== null
            ? 'stopped by the operator'
            : t.tripped && s.gateTrip !== null
              ? `the safety gate tripped (${s.gateTrip.cause}): the session does not resume by itself; run it again after the reset`
              : 'the operator did not confirm the reset';
        return stopNow(b, pair, sim, book, [], why);
      }
      // The measured pose decides, not the note: a robot still lying down is not reset.
      const poseProblem =
        e.pose === null
          ? 'not at the start pose: no lowstate from the robot to check it against'
          : calibrationCheckProblem(e.pose);
      if (poseProblem !== null)
        return nextTrial(b, pair, sim, book, [
          {
            type: 'record_event',
            event: {
              kind: 'refusal',
              reason: `reset not accepted: ${poseProblem}`,
              parentTraceId: pair.parentTraceId,
              detail: { trial_index: t.index, note: e.note, reasons: [poseProblem] },
            },
          },
          progress({ type: 'refusal', runId: null, reasons: [runnerRefusal(poseProblem, 'no_calibration')] }),
        ]);
      if (t.tripped)
        return at({ step: 'resetting_gate', index: t.index, note: e.note }, [{ type: 'reset_gate', note: e.note }]);
      const effects: TrialSessionEffect[] = [
        {
          type: 'record_event',
          event: {
            kind: 'human_reset',
            reason: e.note,
            parentTraceId: pair.parentTraceId,
            detail: {
              trial_index: t.index,
              after_outcome: book.lastOutcome,
              max_joint_diff_rad: e.pose!.maxJointDiffRad,
              attitude_diff_rad: e.pose!.attitudeDiffRad,
            },
          },
        },
      ];
      return checkStartPose(b, pair, sim, { ...book, needsReset: false }, t.index, effects);
    }

    case 'resetting_gate': {
      if (e.type !== 'gate_reset') break;
      if (!e.accepted)
        return nextTrial(b, pair, sim, book, [progress({ type: 'refusal', runId: null, reasons: e.reasons })]);
      return checkStartPose({ ...b, gateTrip: null }, pair, sim, { ...book, needsReset: false }, t.index, []);
    }

    case 'checking_start_pose': {
      if (e.type !== 'start_pose_checked') break;
      if (!e.ok) {
        const effects = refuseTrial(pair, e.runId, t.index, e.reasons, e.message, 'no_calibration');
        return nextTrial(b, pair, sim, { ...book, needsReset: true }, effects);
      }
      const problem = calibrationCheckProblem(e.difference);
      if (problem !== null) {
        const effects = refuseTrial(pair, e.runId, t.index, [problem], 'not at the start pose', 'no_calibration');
        return nextTrial(b, pair, sim, { ...book, needsReset: true }, effects);
      }
      return at(
        { step: 'opening', index: t.index, runId: e.runId, check: e.difference, trip: null },
        [{ type: 'open_trial', runId: e.runId, trialIndex: t.index }],
        { ...book, resetAttempts: 0 },
      );
    }

    case 'opening': {
      if (e.type !== 'trial_opened' || !sameRun) break;
      const open: OpenTrial = {
        index: t.index,
        runId: t.runId,
        check: t.check,
        freshCalibrationId: e.freshCalibrationId,
        trip: t.trip,
      };
      return at({ step: 'confirming', ...open }, [
        progress({
          type: 'phase',
          phase: 'waiting_confirmation',
          trialIndex: t.index,
          message: `confirm trial ${trialNumber(t.index)} of ${s.trials}: ${pair.clipName} × ${pair.bindingKey}`,
        }),
        {
          type: 'ask_confirmation',
          runId: t.runId,
          trialIndex: t.index,
          trials: s.trials,
          calibrationCheck: { maxJointDiffRad: t.check.maxJointDiffRad, attitudeDiffRad: t.check.attitudeDiffRad },
        },
      ]);
    }

    case 'confirming': {
      if (e.type !== 'confirmation' || !sameRun) break;
      const { step: _step, ...open } = t;
      if (!e.confirmed || s.abort !== null) {
        const effects = [
          ...refuseTrial(
            pair,
            t.runId,
            t.index,
            ['the operator did not confirm the trial'],
            'not confirmed by the operator',
            'no_confirmation',
          ),
          endUnstarted(open, 'not confirmed'),
        ];
        return stopNow(b, pair, sim, book, effects, 'the operator did not confirm the trial');
      }
      return at({ step: 'arming', ...open }, [
        { type: 'confirm_to_gate', runId: t.runId },
        { type: 'arm_interlock', runId: t.runId },
      ]);
    }

    case 'arming': {
      if (e.type !== 'interlock_armed' || !sameRun) break;
      const { step: _step, ...open } = t;
      if (!e.ok) {
        const effects = [
          ...refuseTrial(
            pair,
            t.runId,
            t.index,
            [`the interlock did not arm (${e.reason}): ${e.detail}`],
            'interlock not armed',
            'interlock_not_armed',
          ),
          endUnstarted(open, 'interlock not armed'),
        ];
        return stopNow(b, pair, sim, book, effects, `the interlock did not arm: ${e.detail}`);
      }
      if (s.abort !== null) {
        // The operator stopped while the interlock armed: nothing is leased or asked.
        const effects: TrialSessionEffect[] = [endUnstarted(open, 'stopped by the operator')];
        return releaseThen(b, pair, sim, book, effects, t.runId, ['stopped by the operator']);
      }
      return at({ step: 'preparing', ...open }, [{ type: 'prepare', runId: t.runId }]);
    }

    case 'preparing': {
      if (e.type !== 'prepare_decided' || !sameRun) break;
      const { step: _step, ...open } = t;
      if (!e.allowed) {
        const effects: TrialSessionEffect[] = [
          progress({ type: 'refusal', runId: t.runId, reasons: e.reasons }),
          endUnstarted(open, 'prepare refused'),
        ];
        return releaseThen(b, pair, sim, book, effects, t.runId, [
          `prepare refused by the safety gate: ${messages(e.reasons)}`,
        ]);
      }
      if (s.abort !== null) {
        // The operator stopped while the robot was being leased: the prepare is not sent.
        const effects: TrialSessionEffect[] = [endUnstarted(open, 'stopped by the operator')];
        return releaseThen(b, pair, sim, book, effects, t.runId, ['stopped by the operator']);
      }
      return at({ step: 'running', start: { stage: 'not_asked' }, ...open }, [
        progress({
          type: 'phase',
          phase: 'running',
          trialIndex: t.index,
          message: `trial ${trialNumber(t.index)} of ${s.trials} running`,
        }),
        { type: 'run_trial', runId: t.runId, trialIndex: t.index },
      ]);
    }

    case 'running':
      return sameRun ? onRunning(s, t, e) : ignored(s, e);

    case 'finishing': {
      if (e.type !== 'episode_finished' || !sameRun) break;
      const effects: TrialSessionEffect[] = [
        progress({
          type: 'episode_end',
          runId: t.runId,
          domain: 'real_robot',
          trialIndex: t.index,
          outcome: t.outcome,
          reason: t.reason,
          frames: e.frames,
          resumed: false,
        }),
      ];
      const stops: string[] = [];
      let next: TrialBook = { ...book, lastOutcome: t.outcome, needsReset: true };
      if (isRetryableOutcome(t.outcome)) {
        next = { ...next, infraRetries: book.infraRetries + 1 };
        if (next.infraRetries > MAX_INFRA_RETRIES)
          stops.push(
            `trial ${trialNumber(t.index)} failed ${next.infraRetries} times with infrastructure errors: ${t.reason}`,
          );
      } else {
        const done: RealTrialSummary = {
          runId: t.runId,
          trialIndex: t.index,
          outcome: t.outcome,
          reason: t.reason,
          frames: e.frames,
          resumed: false,
        };
        next = { ...next, real: [...book.real, done], infraRetries: 0 };
      }
      // The start was granted, then refused at the write: the episode is recorded (its recording
      // was open) with what ended it, and the session stops for the operator.
      if (t.notSent !== null) stops.push(`start not sent: ${messages(t.notSent)}`);
      return releaseThen(b, pair, sim, next, effects, t.runId, stops);
    }
  }
  return ignored(s, e);
}

/**
 * The end of a trial that held the robot: the reasons the session stops (each a `stopped`
 * progress, in order; the last one is the result's), the lease released and the interlock
 * disarmed, then the next trial or the end.
 */
function releaseThen(
  s: SessionBase,
  pair: MatchedContext,
  sim: SimSummary,
  book: TrialBook,
  effects: TrialSessionEffect[],
  runId: string,
  stops: string[],
): TrialSessionStep {
  for (const why of stops) effects.push(stopped(why));
  effects.push({ type: 'release_robot', runId });
  if (stops.length === 0) return nextTrial(s, pair, sim, book, effects);
  return finish(s, pair, sim, book, effects, stops[stops.length - 1]);
}

function onRunning(s: TrialsState, t: Extract<TrialStep, { step: 'running' }>, e: TrialSessionEvent): TrialSessionStep {
  const at = (start: typeof t.start, effects: TrialSessionEffect[]): TrialSessionStep => ({
    state: { ...s, trial: { ...t, start } },
    effects,
  });
  const heardTrip = t.trip ?? s.gateTrip;
  const tripRefusal = (trip: GateTrip): Refusal => ({
    code: 'tripped',
    condition: REFUSAL_CODES.tripped,
    message: `the session heard a trip (${trip.cause}: ${trip.reason}); nothing that moves the robot is sent after a trip`,
    values: { cause: trip.cause, runId: trip.runId },
  });
  switch (e.type) {
    case 'start_decided': {
      if (t.start.stage !== 'not_asked') break;
      const reasons = !e.allowed ? e.reasons : heardTrip !== null ? [tripRefusal(heardTrip)] : [];
      if (reasons.length > 0 || !e.allowed)
        return at({ stage: 'refused', reasons }, [
          progress({ type: 'refusal', runId: t.runId, reasons }),
          { type: 'answer_start_check', runId: t.runId, answer: refusalText(reasons) },
        ]);
      return at({ stage: 'granted' }, [
        {
          type: 'open_recording',
          runId: t.runId,
          trialIndex: t.index,
          calibrationId: s.pair.calibrationId,
          freshCalibrationId: t.freshCalibrationId,
          calibrationCheck: t.check,
        },
      ]);
    }
    case 'recording_opened':
      if (t.start.stage !== 'granted') break;
      return at({ stage: 'recording' }, [{ type: 'answer_start_check', runId: t.runId, answer: true }]);
    case 'recording_failed':
      if (t.start.stage !== 'granted') break;
      return at({ stage: 'record_failed', message: e.message }, [
        { type: 'answer_start_check', runId: t.runId, answer: `the episode could not be recorded: ${e.message}` },
      ]);
    case 'transmit_decided': {
      // Only a start the session granted at the start check, with its recording open, is written.
      const reasons: Refusal[] = !e.allowed
        ? e.reasons
        : heardTrip !== null
          ? [tripRefusal(heardTrip)]
          : t.start.stage !== 'recording'
            ? [
                {
                  code: 'not_granted',
                  condition: REFUSAL_CODES.not_granted,
                  message: `the session did not grant start for episode ${t.runId} (${t.start.stage})`,
                  values: { runId: t.runId, stage: t.start.stage },
                },
              ]
            : [];
      if (reasons.length === 0) return at({ stage: 'sent' }, [{ type: 'start', runId: t.runId }]);
      const effects: TrialSessionEffect[] = [
        progress({ type: 'refusal', runId: t.runId, reasons }),
        { type: 'withhold_start', runId: t.runId, message: refusalText(reasons) },
      ];
      // Refused at the write with the recording open: recorded, and the session stops after it.
      if (t.start.stage === 'recording') return at({ stage: 'not_sent', reasons }, effects);
      return { state: s, effects };
    }
    case 'run_ended':
      return onRunEnded(s, t, e);
    default:
      break;
  }
  return ignored(s, e);
}

function onRunEnded(
  s: TrialsState,
  t: Extract<TrialStep, { step: 'running' }>,
  e: Extract<TrialSessionEvent, { type: 'run_ended' }>,
): TrialSessionStep {
  const { pair, sim, book } = s;
  const b = base(s);
  const { step: _step, start, ...open } = t;
  const recorded = start.stage === 'recording' || start.stage === 'sent' || start.stage === 'not_sent';
  if (!recorded) {
    // Nothing started: a refused start (a refusal, already traced by the gate), or a robot that
    // refused or failed the prepare, or a recorder that could not open (retried).
    if (start.stage === 'refused') {
      const why = `start refused by the safety gate: ${messages(start.reasons)}`;
      return releaseThen(b, pair, sim, book, [endUnstarted(open, 'start refused')], t.runId, [why]);
    }
    const why =
      start.stage === 'record_failed'
        ? `the episode could not be recorded: ${start.message}`
        : e.recordError !== null
          ? `the episode could not be recorded: ${e.recordError}`
          : runEndReason(e.result).reason;
    const infraRetries = book.infraRetries + 1;
    const effects: TrialSessionEffect[] = [
      {
        type: 'record_event',
        event: {
          kind: 'problem',
          reason: `trial ${trialNumber(t.index)} did not start: ${why}`,
          parentTraceId: pair.parentTraceId,
          detail: { run_id: t.runId, trial_index: t.index },
        },
      },
      endUnstarted(open, why),
    ];
    const stops =
      infraRetries > MAX_INFRA_RETRIES
        ? [`trial ${trialNumber(t.index)} did not start ${infraRetries} times: ${why}`]
        : [];
    return releaseThen(b, pair, sim, { ...book, infraRetries }, effects, t.runId, stops);
  }

  // The recorded trial: a trip that named it decides its outcome; else a hard failure the live
  // metrics saw, or a fall after the clip's end, turns a completed run into hard_failure; else
  // the robot's end, with what the robot did after the clip.
  const completed = e.result.kind === 'ended' && e.result.outcome === 'completed';
  const end = t.trip
    ? tripEnd(t.trip)
    : completed && e.hardFailure !== null
      ? { outcome: 'hard_failure' as const, reason: `hard failure: ${e.hardFailure}` }
      : completed && e.afterClip?.kind === 'fell'
        ? { outcome: 'hard_failure' as const, reason: `hard failure after the clip: ${describeAfterClip(e.afterClip)}` }
        : withAfterClip(runEndReason(e.result), completed ? e.afterClip : null);
  const effects: TrialSessionEffect[] = [{ type: 'end_episode', runId: t.runId, ...end }];
  if (isSafetyStop(end.outcome))
    effects.push({
      type: 'record_stop_requested',
      runId: t.runId,
      reason: `${end.outcome}: ${end.reason}`,
      detail: { outcome: end.outcome, trip: t.trip },
    });
  if (e.recordError !== null) {
    effects.push({ type: 'release_robot', runId: t.runId }, { type: 'fail', runId: t.runId, message: e.recordError });
    return { state: { ...b, phase: 'failed', message: e.recordError }, effects };
  }
  effects.push({ type: 'finish_episode', runId: t.runId, trialIndex: t.index, ...end });
  return {
    state: {
      ...s,
      trial: { step: 'finishing', ...open, ...end, notSent: start.stage === 'not_sent' ? start.reasons : null },
    },
    effects,
  };
}
