// What the simulator worker and the main thread exchange: the packed layout of recorded frames,
// the shared control block (stop flag and batch acknowledgements, read with Atomics so the
// worker's episode loop never has to yield to its event loop), and the message types.

import type { InitialState } from '../../domain/backend/backend';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { HardFailure } from '../../domain/metrics';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { trajectoryFrameWidth } from '../../domain/sim/trajectoryHash';

/**
 * Offsets of one recorded frame in a batch (float64 values). The first part, [0, hashEnd), is
 * exactly the trajectory-hash layout (src/domain/sim/trajectoryHash.ts), −0 already written +0.
 */
export interface FrameLayout {
  jointCount: number;
  time: number;
  rootPos: number;
  rootQuat: number;
  q: number;
  rootLinVel: number;
  rootAngVel: number;
  dq: number;
  hashEnd: number;
  tick: number;
  refFrame: number;
  tau: number;
  imuQuat: number;
  gyro: number;
  accel: number;
  target: number;
  kp: number;
  kd: number;
  /** Root-assist wrench at the start of the control interval: F (N) then τ (N·m), world; NaN without assist. */
  wrench: number;
  /** Live metrics after this frame: frame MPJPE-l (mm), frame joint RMS error (rad), first failure frame so far (−1 none). */
  liveMpjpe: number;
  liveJointRmse: number;
  liveFailFrame: number;
  width: number;
}

export function frameLayout(J: number): FrameLayout {
  let o = 0;
  const take = (n: number): number => {
    const at = o;
    o += n;
    return at;
  };
  const time = take(1);
  const rootPos = take(3);
  const rootQuat = take(4);
  const q = take(J);
  const rootLinVel = take(3);
  const rootAngVel = take(3);
  const dq = take(J);
  const hashEnd = o;
  if (hashEnd !== trajectoryFrameWidth(J))
    throw new Error('frame layout does not start with the trajectory-hash layout');
  return {
    jointCount: J,
    time,
    rootPos,
    rootQuat,
    q,
    rootLinVel,
    rootAngVel,
    dq,
    hashEnd,
    tick: take(1),
    refFrame: take(1),
    tau: take(J),
    imuQuat: take(4),
    gyro: take(3),
    accel: take(3),
    target: take(J),
    kp: take(J),
    kd: take(J),
    wrench: take(6),
    liveMpjpe: take(1),
    liveJointRmse: take(1),
    liveFailFrame: take(1),
    width: o,
  };
}

/** A contact other than a foot on the floor, at a recorded frame. */
export interface BatchContact {
  /** Frame index (episode frame k, not the index within the batch). */
  frame: number;
  body: string;
  other: string;
  forceN: number;
}

export interface FrameBatch {
  /** count × layout.width values. */
  data: Float64Array;
  count: number;
  /** Episode frame index of the first frame in the batch. */
  firstFrame: number;
  contacts: BatchContact[];
}

// ---- shared control block (Int32Array over a SharedArrayBuffer) ----
/** Stop request: 0 none, else a STOP_* code. */
export const CTL_STOP = 0;
/** Batches the main thread has finished delivering (acknowledged), this episode. */
export const CTL_ACKED = 1;
/** Episode serial number the acknowledgements belong to. */
export const CTL_EPISODE = 2;
export const CTL_SIZE = 4;

export const STOP_NONE = 0;
export const STOP_ABORTED = 1;
export const STOP_ESTOP = 2;
export const STOP_INTERVENTION = 3;

export type StopOutcome = 'aborted_by_operator' | 'estop' | 'intervention';
export const STOP_CODES: Record<StopOutcome, number> = {
  aborted_by_operator: STOP_ABORTED,
  estop: STOP_ESTOP,
  intervention: STOP_INTERVENTION,
};
export const STOP_OUTCOMES: Record<number, StopOutcome> = {
  [STOP_ABORTED]: 'aborted_by_operator',
  [STOP_ESTOP]: 'estop',
  [STOP_INTERVENTION]: 'intervention',
};

/** The clip as sent to a worker (typed arrays are copied by structured clone). */
export type WireClip = Pick<
  MotionClip,
  'id' | 'name' | 'fps' | 'frameCount' | 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad' | 'jointVelRadS'
>;

export interface SimRunOptions {
  /** Frames per batch sent to the main thread (default 10 = 0.2 s of simulated time). */
  framesPerBatch?: number;
  /** Batches in flight before the worker waits for the listener (default 2). */
  maxBatchesInFlight?: number;
  /** Run no faster than this multiple of real time (e.g. 1 for live display); default unpaced. */
  paceRealTime?: number | null;
  /** Seeded uniform noise on the initial joint angles, ±rad (default 0: none). */
  initialJointNoiseRad?: number;
  /** Test fault injection: the worker thread exits abruptly when it reaches this frame. */
  crashAtFrame?: number;
}

export type ToWorker =
  | { type: 'init'; modelFile: string; control: SharedArrayBuffer }
  | { type: 'reset'; id: number; initial: InitialState; seed: number; noiseRad: number }
  | {
      type: 'run';
      id: number;
      episode: number;
      runId: string;
      clip: WireClip;
      binding: WbcBinding;
      seed: number;
      initial: InitialState;
      options: SimRunOptions;
    }
  | { type: 'shutdown' };

export interface WorkerModelInfo {
  modelFile: string;
  modelName: string;
  timestepS: number;
  jointCount: number;
  bodyCount: number;
  hasImuSensors: boolean;
  loadMs: number;
}

export interface ResolvedInitialState {
  rootPosM: [number, number, number];
  rootQuatWxyz: [number, number, number, number];
  jointPosRad: number[];
  jointVelRadS: number[];
  /** Height change the floor solve applied to the root, m (0 without placeOnFloor). */
  floorShiftM: number;
}

export interface WorkerEpisodeEnd {
  outcome: 'completed' | 'hard_failure' | 'aborted_by_operator' | 'estop' | 'intervention' | 'infrastructure_error';
  reason: string;
  frames: number;
  /** Frames on the episode's timeline (reference duration at 50 Hz). */
  plannedFrames: number;
  simSeconds: number;
  failure: HardFailure | null;
  /**
   * The lift of the reference as placed for the run (m; src/domain/sim/referencePlacement.ts):
   * the hard-failure test compared with the reference raised by it. null when the episode did
   * not run.
   */
  referenceLiftM: number | null;
}

export type FromWorker =
  | { type: 'ready'; info: WorkerModelInfo }
  | { type: 'init_failed'; message: string }
  | { type: 'reset_done'; id: number; state: ResolvedInitialState }
  | { type: 'reset_failed'; id: number; message: string }
  | { type: 'run_failed'; id: number; message: string }
  | { type: 'batch'; id: number; episode: number; seq: number; batch: FrameBatch }
  | { type: 'end'; id: number; episode: number; end: WorkerEpisodeEnd; batches: number; tainted: boolean };
