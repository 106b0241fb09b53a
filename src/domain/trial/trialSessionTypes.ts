// Types of the matched trial session as a pure reducer (docs/TRIALS.md):
//
//   reduceTrialSession(state, event) → { state, effects }
//
// Events are what the session is told: the answers to its requests (the pair resolved, a
// calibration captured, the simulation branch ended, the operator's answers, the gate's decisions,
// the robot's run ended…) and what happens meanwhile (a gate trip, the operator's stop). Effects
// are data: what the driver (src/services/trial/matchedTrialRunner.ts) is to do, in order. At
// most one effect of a step is a request (its answer is the next event); the others are done at
// once. The state is a discriminated union by `phase` (and by `step` inside the real trials).

import type { EpisodeOutcome } from '../backend/backend';
import type { AfterClipVerdict } from './afterClipWatch';
import type { StartResiduals } from '../calibration/residuals';
import type { GateTrip, Refusal } from '../safety/safetyTypes';
import type { NewTraceEvent } from '../trace/records';
import type { CalibrationDifference } from './trialChecks';

// ---------------------------------------------------------------------------------------------
// Progress (what the console and the CLI are shown; the driver adds the 50 Hz `live` readings and
// the `stillness` of a capture, which are not the session's decisions)

export type TrialPhase =
  | 'calibrating'
  | 'simulating'
  | 'waiting_reset'
  | 'checking_calibration'
  | 'waiting_confirmation'
  | 'running'
  | 'done'
  | 'stopped';

export type SessionProgress =
  | { type: 'phase'; phase: TrialPhase; trialIndex: number | null; message: string }
  | { type: 'refusal'; runId: string | null; reasons: Refusal[] }
  | { type: 'trip'; trip: GateTrip }
  /**
   * An episode of the pair ended. `resumed`: it ended in an earlier session of this matched pair
   * and is reported once, at the start of the resumed session, so the operator sees the pair's
   * whole history (the simulation branch is never run twice).
   */
  | {
      type: 'episode_end';
      runId: string;
      domain: 'simulation' | 'real_robot';
      trialIndex: number | null;
      outcome: EpisodeOutcome;
      reason: string;
      frames: number;
      resumed: boolean;
    };

// ---------------------------------------------------------------------------------------------
// Events

/** A finished episode of the matched pair as stored (resume: the driver reads them from the campaign). */
export interface StoredEpisode {
  runId: string;
  /** Real trials: the rollout index (-1 when the record has none). */
  trialIndex: number;
  outcome: EpisodeOutcome | null;
  reason: string;
  frames: number;
}

/** The pair's calibration as found or captured, bound to the clip. */
export type PairCalibrationResult =
  | { kind: 'ready'; startResiduals: StartResiduals }
  /** `--calibration <id>` names no stored calibration. */
  | { kind: 'not_stored' }
  /** The capture gave up (not still, no state, cancelled). */
  | { kind: 'not_captured'; message: string; reasons: string[] };

/** What the robot's run of the clip (lease.run) came back with. */
export type RunResult = { kind: 'ended'; outcome: EpisodeOutcome; reason: string } | { kind: 'threw'; message: string };

export type TrialSessionEvent =
  /** The qualification pair `--pair` names, with its latest decision and what the campaign has of it. */
  | {
      type: 'pair_resolved';
      pairId: string;
      /** The qualification parent trace (the pair's id; refusals are traced on it). */
      qualificationTraceId: string;
      admitted: boolean;
      reasons: string[];
      clipName: string;
      /** The pair's binding key (id@version) as listed; for messages. */
      pairBindingKey: string;
      /** The contract the pair was admitted under, and the one in force now. */
      contractId: string;
      currentContractId: string;
      /** bindingKey(binding) of the stored binding, or null when the campaign does not hold it. */
      bindingKey: string | null;
      /** `--calibration <id>`, or null. */
      requestedCalibrationId: string | null;
      /** The most advanced matched pair already started for this pair, if any (resumed unless a calibration is given). */
      matched: { parentTraceId: string; calibrationId: string } | null;
    }
  /** The pair's clip is loaded (checked against the qualified reference); what the robot link declares. */
  | { type: 'clip_loaded'; clipName: string; executionDomain: string; backendName: string }
  | { type: 'pair_calibration'; result: PairCalibrationResult }
  /** The pair's calibration is settled and stored under this content id. */
  | { type: 'pair_calibration_stored'; calibrationId: string }
  /** The matched parent trace exists (found by identity or created); what the campaign holds of it. */
  | {
      type: 'matched_pair_opened';
      parentTraceId: string;
      /** Finished episodes of the simulation branch, in store order. */
      simEpisodes: StoredEpisode[];
      /** Finished episodes of the real branch, in store order. */
      realEpisodes: StoredEpisode[];
      /** Any real episode, finished or not (a crash leaves an interrupted one). */
      anyRealEpisode: boolean;
      /** Ids of the matched pair's last `stop_requested` and `human_reset` trace events. */
      lastStopEventId: number | null;
      lastResetEventId: number | null;
    }
  | { type: 'sim_ended'; runId: string; outcome: EpisodeOutcome; reason: string; frames: number }
  /**
   * The operator's answer to a reset prompt: a note, or null to give up; with the robot's newest
   * measured pose against the pair's calibration at that moment (null: no lowstate to check) —
   * the note alone does not put the robot back.
   */
  | { type: 'reset_answered'; note: string | null; pose: CalibrationDifference | null }
  /** The gate's answer to the operator's reset of a trip. */
  | { type: 'gate_reset'; accepted: true }
  | { type: 'gate_reset'; accepted: false; reasons: Refusal[] }
  /** The fresh stillness capture of a trial; `runId` is the run id the trial would have. */
  | { type: 'start_pose_checked'; runId: string; ok: false; message: string; reasons: string[] }
  | { type: 'start_pose_checked'; runId: string; ok: true; difference: CalibrationDifference }
  /** The fresh calibration is stored; the gate has the episode and the calibration for this run. */
  | { type: 'trial_opened'; runId: string; freshCalibrationId: string }
  | { type: 'confirmation'; runId: string; confirmed: boolean }
  | { type: 'interlock_armed'; runId: string; ok: true }
  | { type: 'interlock_armed'; runId: string; ok: false; reason: string; detail: string }
  /** The robot is leased and the gate answered `prepare`. */
  | { type: 'prepare_decided'; runId: string; allowed: boolean; reasons: Refusal[] }
  /** The robot acknowledged the prepare (RunRequest.beforeStart) and the gate answered `start`. */
  | { type: 'start_decided'; runId: string; allowed: boolean; reasons: Refusal[] }
  | { type: 'recording_opened'; runId: string }
  | { type: 'recording_failed'; runId: string; message: string }
  /** The gate's last check right before the start is written (RunRequest.mayTransmit, synchronous). */
  | { type: 'transmit_decided'; runId: string; allowed: boolean; reasons: Refusal[] }
  /**
   * The robot's run ended. `hardFailure`: the live metrics' first hard failure (text), if any;
   * `afterClip`: what the robot did after a completed clip (afterClipWatch.ts), null when not
   * watched; `recordError`: the recording failed while frames came in.
   */
  | {
      type: 'run_ended';
      runId: string;
      result: RunResult;
      hardFailure: string | null;
      afterClip: AfterClipVerdict | null;
      recordError: string | null;
    }
  | { type: 'episode_finished'; runId: string; frames: number }
  /** The safety gate tripped (it has sent stop and damp already). Any time. */
  | { type: 'trip'; trip: GateTrip }
  /** The operator's stop (AbortSignal). Any time. `intervention`: stopped for a human intervention. */
  | { type: 'operator_abort'; intervention: boolean };

export type TrialSessionEventType = TrialSessionEvent['type'];

// ---------------------------------------------------------------------------------------------
// Effects

export type TrialSessionEffect =
  // --- done at once
  | { type: 'progress'; event: SessionProgress }
  | { type: 'log'; line: string }
  /** A trace event for the campaign (refusals, problems, human resets), as given. */
  | { type: 'record_event'; event: NewTraceEvent }
  /** Refuse the whole session (throw TrialRefusedError with these); the refusal is already traced. */
  | { type: 'refuse_session'; message: string; reasons: string[] }
  /** Start the safety gate for the session and tell it the pair's admission. */
  | {
      type: 'open_gate';
      admission: { pairId: string; admitted: boolean; contractId: string; bindingKey: string; reasons: string[] };
    }
  /** Tell the gate the operator confirmed motion for this run. */
  | { type: 'confirm_to_gate'; runId: string }
  /** Close the gate's episode of this run with its outcome (a safety outcome trips the gate). */
  | { type: 'end_episode'; runId: string; outcome: EpisodeOutcome; reason: string }
  /** Tell the gate the operator stopped (it trips: stop and damp). */
  /** The operator's stop, to the gate; `runId` is the trial whose clip runs, null between trials. */
  | { type: 'operator_stop'; runId: string | null; intervention: boolean; reason: string }
  /**
   * What a trip sends the robot, in order: `stop` with the trip's outcome, then `damp`. The gate
   * writes both in the same turn as the trip (`by: 'gate'`), before anything else can run; the
   * driver checks, it does not send them twice.
   */
  | { type: 'stop'; runId: string | null; outcome: EpisodeOutcome; reason: string; by: 'gate' }
  | { type: 'damp'; runId: string | null; reason: string; by: 'gate' }
  /** The answer to the robot's start check (beforeStart): true lets the robot go on to the write. */
  | { type: 'answer_start_check'; runId: string; answer: true | string }
  /** Write the start now (mayTransmit answers true). Only after the gate allowed `start` and its transmit. */
  | { type: 'start'; runId: string }
  /** Do not write the start (mayTransmit answers this message). */
  | { type: 'withhold_start'; runId: string; message: string }
  /** A `stop_requested` event on the trial's recorded episode (its end was a safety stop). */
  | { type: 'record_stop_requested'; runId: string; reason: string; detail: Record<string, unknown> }
  /** Release the robot's lease; disarm the interlock if it is armed. */
  | { type: 'release_robot'; runId: string }
  /** End the session with the error the recording failed with (it is re-thrown). */
  | { type: 'fail'; runId: string; message: string }
  /** The session is over: its result. */
  | { type: 'done'; result: TrialSessionResult }
  // --- requests (the answer is the next event)
  | { type: 'load_clip' }
  /** Load the stored calibration `calibrationId` → pair_calibration. */
  | { type: 'load_calibration'; calibrationId: string }
  /** Capture the pair's calibration from the still robot → pair_calibration. */
  | { type: 'capture_calibration' }
  /** Settle the pair's calibration in the simulator (if not yet) and store it → pair_calibration_stored. */
  | { type: 'store_calibration' }
  /** Find or create the matched parent trace; trace the pair's calibration unless resumed → matched_pair_opened. */
  | { type: 'open_matched_pair'; calibrationId: string; resumed: boolean }
  | { type: 'run_sim_branch'; attempt: number }
  | { type: 'prompt_reset'; trialIndex: number; afterOutcome: EpisodeOutcome | null; tripped: boolean }
  /** Feed the operator's reset of the trip to the gate → gate_reset. */
  | { type: 'reset_gate'; note: string }
  /** Fresh stillness capture, compared with the pair's calibration → start_pose_checked. */
  | { type: 'check_start_pose'; trialIndex: number }
  /** Store the fresh calibration; open the gate's episode and give it the calibration → trial_opened. */
  | { type: 'open_trial'; runId: string; trialIndex: number }
  | {
      type: 'ask_confirmation';
      runId: string;
      trialIndex: number;
      trials: number;
      calibrationCheck: { maxJointDiffRad: number; attitudeDiffRad: number };
    }
  /** ARM the interlock unless it is armed and fresh → interlock_armed. */
  | { type: 'arm_interlock'; runId: string }
  /** Lease the robot and ask the gate for `prepare` → prepare_decided. */
  | { type: 'prepare'; runId: string }
  /**
   * The robot prepares and runs the clip (lease.run); its start check and last check come back as
   * start_decided and transmit_decided while it runs → run_ended.
   */
  | { type: 'run_trial'; runId: string; trialIndex: number }
  /** Open the episode's recording → recording_opened / recording_failed. */
  | {
      type: 'open_recording';
      runId: string;
      trialIndex: number;
      calibrationId: string;
      freshCalibrationId: string;
      calibrationCheck: CalibrationDifference;
    }
  /** Finish the recorded episode with this outcome and its metrics → episode_finished. */
  | { type: 'finish_episode'; runId: string; trialIndex: number; outcome: EpisodeOutcome; reason: string };

export type TrialSessionEffectType = TrialSessionEffect['type'];

/** Effects whose answer is the session's next event. */
export const REQUEST_EFFECTS = [
  'load_clip',
  'load_calibration',
  'capture_calibration',
  'store_calibration',
  'open_matched_pair',
  'run_sim_branch',
  'prompt_reset',
  'reset_gate',
  'check_start_pose',
  'open_trial',
  'ask_confirmation',
  'arm_interlock',
  'prepare',
  'run_trial',
  'open_recording',
  'finish_episode',
] as const satisfies readonly TrialSessionEffectType[];

export type RequestEffect = Extract<TrialSessionEffect, { type: (typeof REQUEST_EFFECTS)[number] }>;

export function isRequestEffect(e: TrialSessionEffect): e is RequestEffect {
  return (REQUEST_EFFECTS as readonly string[]).includes(e.type);
}

// ---------------------------------------------------------------------------------------------
// Results

export interface RealTrialSummary {
  runId: string;
  trialIndex: number;
  outcome: EpisodeOutcome;
  reason: string;
  frames: number;
  resumed: boolean;
}

export interface SimSummary {
  runId: string;
  outcome: EpisodeOutcome;
  resumed: boolean;
}

export interface TrialSessionResult {
  pairId: string;
  parentTraceId: string;
  calibrationId: string;
  sim: SimSummary;
  /** Sorted by trial index. */
  real: RealTrialSummary[];
  /** Trials still owed (a stop or a refusal ended the session early); a later session resumes. */
  remaining: number;
  stoppedEarly: string | null;
}

// ---------------------------------------------------------------------------------------------
// State (plain data; the reducer returns a new object, never mutates)

/** What every phase carries. */
export interface SessionBase {
  trials: number;
  /** The operator's stop, once heard (it is final for the session). */
  abort: { intervention: boolean } | null;
  /** The gate's trip latch as the session heard it: the first trip since the last accepted reset. */
  gateTrip: GateTrip | null;
}

/** The pair once resolved. */
export interface PairContext {
  pairId: string;
  qualificationTraceId: string;
  contractId: string;
  bindingKey: string;
  clipName: string;
}

/** The matched pair once its parent trace is open. */
export interface MatchedContext extends PairContext {
  calibrationId: string;
  parentTraceId: string;
}

/** Where the pair's calibration comes from. */
export type CalibrationPlan =
  | { source: 'resume'; parentTraceId: string; calibrationId: string }
  | { source: 'stored'; calibrationId: string }
  | { source: 'capture' };

/** The real branch's bookkeeping across trials. */
export interface TrialBook {
  /** Trials that count (this session's and resumed ones), in the order they finished. */
  real: RealTrialSummary[];
  lastOutcome: EpisodeOutcome | null;
  /** The next trial starts with a human-gated reset. */
  needsReset: boolean;
  /** Infrastructure errors in a row (of the trial being attempted). */
  infraRetries: number;
  /** Resets in a row whose start-pose check failed (or that the gate refused). */
  resetAttempts: number;
}

/** A trial from the moment its gate episode is open. */
export interface OpenTrial {
  index: number;
  runId: string;
  check: CalibrationDifference;
  freshCalibrationId: string;
  /** A trip that named this run (it ends the trial with the trip's outcome). */
  trip: GateTrip | null;
}

/** How far the start of a running trial got. */
export type StartStage =
  /** The robot has not asked yet (it is preparing). */
  | { stage: 'not_asked' }
  /** The gate refused `start` at the robot's start check: nothing was opened. */
  | { stage: 'refused'; reasons: Refusal[] }
  /** The gate allowed `start`; the recording is opening. */
  | { stage: 'granted' }
  /** The recording could not open: the start check answered no. */
  | { stage: 'record_failed'; message: string }
  /** The recording is open; the start check answered yes; the last check comes next. */
  | { stage: 'recording' }
  /** The last check passed: the start was written. */
  | { stage: 'sent' }
  /** The last check refused: the start was not written (the recording is open). */
  | { stage: 'not_sent'; reasons: Refusal[] };

export type TrialStep =
  | { step: 'awaiting_reset'; index: number; tripped: boolean }
  | { step: 'resetting_gate'; index: number; note: string }
  | { step: 'checking_start_pose'; index: number }
  | { step: 'opening'; index: number; runId: string; check: CalibrationDifference; trip: GateTrip | null }
  | ({ step: 'confirming' } & OpenTrial)
  | ({ step: 'arming' } & OpenTrial)
  | ({ step: 'preparing' } & OpenTrial)
  | ({ step: 'running'; start: StartStage } & OpenTrial)
  | ({ step: 'finishing'; outcome: EpisodeOutcome; reason: string; notSent: Refusal[] | null } & OpenTrial);

export type TrialStepName = TrialStep['step'];

export type TrialSessionState =
  | (SessionBase & { phase: 'resolving_pair' })
  | (SessionBase & {
      phase: 'loading_clip';
      pair: Omit<PairContext, 'clipName'>;
      /** The admission's reasons, for the gate. */
      admissionReasons: string[];
      plan: CalibrationPlan;
    })
  | (SessionBase & {
      phase: 'pair_calibration';
      pair: PairContext;
      plan: Exclude<CalibrationPlan, { source: 'resume' }>;
    })
  | (SessionBase & { phase: 'storing_calibration'; pair: PairContext })
  | (SessionBase & { phase: 'opening_pair'; pair: PairContext; calibrationId: string; resumed: boolean })
  | (SessionBase & { phase: 'simulating'; pair: MatchedContext; attempt: number; resume: ResumeFacts })
  | (SessionBase & { phase: 'trials'; pair: MatchedContext; sim: SimSummary; book: TrialBook; trial: TrialStep })
  | (SessionBase & { phase: 'done'; result: TrialSessionResult })
  | (SessionBase & { phase: 'refused'; message: string; reasons: string[] })
  | (SessionBase & { phase: 'failed'; message: string });

export type TrialSessionPhase = TrialSessionState['phase'];

/** What a resumed session starts its real branch from (kept while the simulation branch runs). */
export interface ResumeFacts {
  real: RealTrialSummary[];
  needsReset: boolean;
}

export interface TrialSessionStep {
  state: TrialSessionState;
  effects: TrialSessionEffect[];
}
