import type { Backend, BackendListener, EpisodeOutcome, StopDelivery } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import type { StartResiduals } from '../../domain/calibration/residuals';
import type { NotStillReason, StillnessStats } from '../../domain/calibration/stillness';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { CalibrationRecord } from '../../domain/trace/records';
import type { LiveReading } from '../../domain/trial/liveReading';
import type { SessionProgress, TrialPhase } from '../../domain/trial/trialSessionTypes';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EmbeddedSimulator } from '../sim/embeddedSimulator';
import type { CampaignStore } from '../trace';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import type { InterlockFeed } from './interlockFeed';

// The matched sim/real trial (DESIGN §3 Trace, §6): the contracts between the
// trial runner (matchedTrialRunner.ts: the driver of the session reducer in src/domain/trial), its
// callers (the CLI's `calibrate` and `trial`, the console's Trial runner and Calibration panels)
// and the robot link.

/**
 * The robot under trial, as the trial runner uses it: the robot's Backend (reached over the robot
 * link, src/services/robotLink), a way to watch its events without taking its single listener (a
 * subscription to the backend's hub, src/services/stream/backendHub.ts, directly or through the
 * console's ConnectionRegistry), and the stop/damp commands a trip sends at once.
 */
export interface TrialRobot {
  backend: Backend;
  /** Adds a watcher of every event batch; returns the unsubscribe. */
  subscribe(listener: BackendListener): () => void;
  /**
   * Sends `stop` (with an outcome) then holds; never gated, never throws. Resolves with what
   * happened to it (written how often, answered or not), for the trace.
   */
  stop(
    outcome: Extract<EpisodeOutcome, 'aborted_by_operator' | 'estop' | 'intervention' | 'link_lost'>,
    reason: string,
  ): Promise<StopDelivery>;
  /** Sends `damp`; never gated, never throws; resolves with its delivery. */
  damp(reason: string): Promise<StopDelivery>;
  /** Robot unit (serial or inventory name) for calibrations and episodes. */
  readonly robotUnit: string;
}

/** Stillness as it evolves during a capture (pushed to the Calibration panel at a few Hz). */
export interface StillnessProgress {
  still: boolean;
  /** Seconds of still window collected / needed. */
  windowFilledS: number;
  windowNeededS: number;
  reasons: NotStillReason[];
  stats: StillnessStats | null;
}

export interface CalibrationCaptureRequest {
  link: TrialRobot;
  profile: RobotProfile;
  /** The clip whose first frame the measurement is compared with (residual (b)); optional. */
  clip?: MotionClip | null;
  /** Give up after this long without a still window, ms (default 20 000). */
  timeoutMs?: number;
  onProgress?: (p: StillnessProgress) => void;
  signal?: AbortSignal;
}

export type CalibrationCaptureResult =
  | { ok: true; record: CalibrationRecord; residualsVsClip: StartResiduals | null; stats: StillnessStats }
  | { ok: false; message: string; reasons: NotStillReason[]; stats: StillnessStats | null };

/** What the operator is asked; the CLI answers on the terminal (or --yes), the console with buttons. */
export interface OperatorPrompts {
  /** Confirm motion for this real trial (shown: pair, trial index, calibration check, interlock). */
  confirmTrial(info: TrialConfirmInfo): Promise<boolean>;
  /**
   * Human-gated reset before a trial (after the previous one, or after a trip): the operator puts
   * the robot back at its start pose and says so; resolves with a note (who/what), or null to give up.
   */
  confirmReset(info: {
    trialIndex: number;
    afterOutcome: EpisodeOutcome | null;
    tripped: boolean;
  }): Promise<string | null>;
}

export interface TrialConfirmInfo {
  pairId: string;
  runId: string;
  trialIndex: number;
  trials: number;
  clipName: string;
  /** The binding's key (`id@version`) and its name (src/domain/wbc/bindingName.ts). */
  binding: string;
  bindingName: string;
  /** Fresh capture vs the pair's calibration (max joint difference, rad; attitude, rad). */
  calibrationCheck: { maxJointDiffRad: number; attitudeDiffRad: number };
}

export type { LiveReading };

/**
 * Progress of a matched pair for the console and the CLI: the session's own (phases, refusals,
 * trips, episode ends: SessionProgress, decided by the reducer in src/domain/trial), plus the
 * driver's 50 Hz live readings of the running real trial and the stillness of a capture.
 */
export type TrialProgressEvent =
  | SessionProgress
  /** 50 Hz live readings of the running real trial. */
  | ({ type: 'live'; runId: string } & LiveReading)
  | { type: 'stillness'; progress: StillnessProgress };

export type { TrialPhase };

export interface MatchedPairRequest {
  store: CampaignStore;
  link: TrialRobot;
  /** The interlock box (openInterlockFeed): its link for ARM/DISARM and its events for the gate. */
  interlock: InterlockFeed;
  /** Where the pair's clip comes from (default: core-v1 when the decision was made on it). */
  workload?: LoadedWorkload;
  sim: EmbeddedSimulator;
  profile: RobotProfile;
  /** The admitted qualification pair: its parent trace id (or a unique prefix). */
  pairId: string;
  /** Real-robot trials (default 3). */
  trials?: number;
  /** Use this stored calibration for the pair instead of capturing one. */
  calibrationId?: string | null;
  operator: OperatorPrompts;
  onProgress?: (e: TrialProgressEvent) => void;
  /** Operator stop (button, key, SIGINT): ends the running trial as aborted_by_operator (or intervention). */
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface MatchedPairResult {
  pairId: string;
  parentTraceId: string;
  calibrationId: string;
  clip: Pick<MotionClip, 'id' | 'name'>;
  /** `name`: bindingName (src/domain/wbc/bindingName.ts). */
  binding: Pick<WbcBinding, 'id' | 'version' | 'label'> & { name: string };
  sim: { runId: string; outcome: EpisodeOutcome; metrics: EpisodeMetrics | null; resumed: boolean };
  real: {
    runId: string;
    trialIndex: number;
    outcome: EpisodeOutcome;
    reason: string;
    frames: number;
    metrics: EpisodeMetrics | null;
    resumed: boolean;
  }[];
  /** Trials still owed (a stop or a refusal ended the session early); a later call resumes. */
  remaining: number;
  stoppedEarly: string | null;
}

/** A frame as the runner sees it: the StateFrame and when it arrived (performance.now(), ms). */
export interface TimedFrame {
  frame: StateFrame;
  receivedAtMs: number;
}
