import type { ForwardKinematics } from '../../../src/domain/robot/forwardKinematics';
import type { RunTrajectory, SamplePosition } from './runTrajectory';

// What the viewport draws of one executed run at the shown time, and how far it is from the
// reference: the run's pose sampled at that time, forward kinematics of it on the same
// RobotProfile as the reference (so what is drawn is what is measured), and per-body errors.
//
//   local  (root-relative, MPJPE-l's term): ‖(p_b(E) − p_root(E)) − (p_b(R) − p_root(R))‖
//   global (world frame):                   ‖p_b(E) − p_b(R)‖, unavailable (NaN) for a run
//                                            without a global root position
//
// Allocation-free: every array of a RunFrame is allocated once per run and written in place.

export type ErrorMode = 'local' | 'global';

export interface RunFrame {
  /** False until the run has a sample. */
  valid: boolean;
  /** The time asked for (the shown reference frame's time), seconds. */
  timeS: number;
  /** The shown time lies before the run's first or after its last sample. */
  clamped: SamplePosition['clamped'];
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
  /** FK of the sampled pose: bodyCount×3 metres, bodyCount×4 wxyz. */
  bodyPosM: Float64Array;
  bodyQuatWxyz: Float64Array;
  bodyErrLocalM: Float64Array;
  /** NaN per body when the run has no global root position. */
  bodyErrGlobalM: Float64Array;
  /** Mean of bodyErrLocalM over all bodies (MPJPE-l at this frame), metres. */
  mpjpeLocalM: number;
  maxErrLocalM: number;
  maxErrLocalBody: number;
  /** NaN / -1 without a global root position. */
  maxErrGlobalM: number;
  maxErrGlobalBody: number;
  /** ‖p_root(E) − p_root(R)‖, metres; NaN without a global root position. */
  rootErrM: number;
  /** The run's root position is the reference's (the source has no global position). */
  rootFromReference: boolean;
}

export function createRunFrame(bodyCount: number, jointCount: number): RunFrame {
  return {
    valid: false,
    timeS: 0,
    clamped: null,
    rootPosM: new Float64Array(3),
    rootQuatWxyz: Float64Array.of(1, 0, 0, 0),
    jointPosRad: new Float64Array(jointCount),
    bodyPosM: new Float64Array(3 * bodyCount),
    bodyQuatWxyz: new Float64Array(4 * bodyCount),
    bodyErrLocalM: new Float64Array(bodyCount),
    bodyErrGlobalM: new Float64Array(bodyCount).fill(Number.NaN),
    mpjpeLocalM: Number.NaN,
    maxErrLocalM: Number.NaN,
    maxErrLocalBody: -1,
    maxErrGlobalM: Number.NaN,
    maxErrGlobalBody: -1,
    rootErrM: Number.NaN,
    rootFromReference: false,
  };
}

export interface ReferencePose {
  /** Reference root pose at the shown time. */
  rootPosM: ArrayLike<number>;
  rootQuatWxyz: ArrayLike<number>;
  /** FK of the reference at the shown time, bodyCount×3. */
  bodyPosM: ArrayLike<number>;
}

/** Fills `out` for time `timeS`. `rootBody` is the index of the free-joint body (pelvis). */
export function computeRunFrame(
  out: RunFrame,
  traj: RunTrajectory,
  fk: ForwardKinematics,
  ref: ReferencePose,
  rootBody: number,
  timeS: number,
): void {
  out.timeS = timeS;
  if (traj.count === 0 || ref.bodyPosM.length !== 3 * fk.bodyCount) {
    out.valid = false;
    return;
  }
  const at = traj.sampleAt(timeS, out.rootPosM, out.rootQuatWxyz, out.jointPosRad);
  out.clamped = at.clamped;
  const hasRoot = traj.hasRootPosition === true;
  out.rootFromReference = !hasRoot;
  if (!hasRoot) for (let c = 0; c < 3; c++) out.rootPosM[c] = ref.rootPosM[c];
  if (traj.hasRootOrientation !== true) for (let c = 0; c < 4; c++) out.rootQuatWxyz[c] = ref.rootQuatWxyz[c];
  fk.compute(out.rootPosM, out.rootQuatWxyz, out.jointPosRad, out.bodyPosM, out.bodyQuatWxyz);

  const E = out.bodyPosM;
  const R = ref.bodyPosM;
  const r3 = 3 * rootBody;
  const dRx = E[r3] - R[r3];
  const dRy = E[r3 + 1] - R[r3 + 1];
  const dRz = E[r3 + 2] - R[r3 + 2];
  let sum = 0;
  let maxL = -1;
  let maxLb = -1;
  let maxG = -1;
  let maxGb = -1;
  const n = fk.bodyCount;
  for (let b = 0; b < n; b++) {
    const dx = E[3 * b] - R[3 * b];
    const dy = E[3 * b + 1] - R[3 * b + 1];
    const dz = E[3 * b + 2] - R[3 * b + 2];
    const local = Math.hypot(dx - dRx, dy - dRy, dz - dRz);
    out.bodyErrLocalM[b] = local;
    sum += local;
    if (local > maxL) {
      maxL = local;
      maxLb = b;
    }
    if (hasRoot) {
      const global = Math.hypot(dx, dy, dz);
      out.bodyErrGlobalM[b] = global;
      if (global > maxG) {
        maxG = global;
        maxGb = b;
      }
    } else out.bodyErrGlobalM[b] = Number.NaN;
  }
  out.mpjpeLocalM = sum / n;
  out.maxErrLocalM = maxL;
  out.maxErrLocalBody = maxLb;
  out.maxErrGlobalM = hasRoot ? maxG : Number.NaN;
  out.maxErrGlobalBody = hasRoot ? maxGb : -1;
  out.rootErrM = hasRoot ? Math.hypot(dRx, dRy, dRz) : Number.NaN;
  out.valid = true;
}

/** The per-body errors the colours follow in `mode` (global falls back to local without a root position). */
export function bodyErrors(frame: RunFrame, mode: ErrorMode): Float64Array {
  return mode === 'global' && !frame.rootFromReference ? frame.bodyErrGlobalM : frame.bodyErrLocalM;
}
