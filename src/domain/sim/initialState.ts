// Initial states of a simulated episode (DESIGN §3 Backend, CalibrationRecord): from a frame of
// the reference clip, or from the robot's measured start state (a calibration). Pure functions;
// the simulator solves the root height (placeOnFloor) itself because that needs its geometry.

import type { InitialState } from '../backend/backend';
import { quatHeading, quatMul, quatNormalize } from '../math/quat';
import type { MotionClip } from '../motion/motionClip';
import { deriveJointVelocities } from '../motion/resample';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import type { QuatWxyz } from '../units';

export interface ClipFrameStartOptions {
  /** Source frame of the clip (default 0). */
  frame?: number;
  /**
   * Joint velocities from the clip at that frame (default true): the stored ones (NPZ
   * joint_vel) or central differences of the joint angles (one-sided at the ends).
   */
  withJointVelocities?: boolean;
  /** Lower or raise the root so the lowest contact point touches the floor (default true). */
  placeOnFloor?: boolean;
}

/** The simulator start at a clip frame: the frame's root pose and joint angles. */
export function initialStateFromClipFrame(clip: MotionClip, options: ClipFrameStartOptions = {}): InitialState {
  const frame = options.frame ?? 0;
  if (!(Number.isInteger(frame) && frame >= 0 && frame < clip.frameCount)) {
    throw new RangeError(`initial-state frame ${frame} is outside the clip's frames 0..${clip.frameCount - 1}`);
  }
  const J = G1_NUM_JOINTS;
  const p = clip.rootPosM;
  const q = clip.rootQuatWxyz;
  const state: InitialState = {
    rootPosM: [p[3 * frame], p[3 * frame + 1], p[3 * frame + 2]],
    rootQuatWxyz: quatNormalize([q[4 * frame], q[4 * frame + 1], q[4 * frame + 2], q[4 * frame + 3]]),
    jointPosRad: Array.from(clip.jointPosRad.subarray(J * frame, J * frame + J)),
    placeOnFloor: options.placeOnFloor ?? true,
  };
  if (options.withJointVelocities ?? true) {
    const v =
      clip.jointVelRadS ?? (clip.frameCount >= 2 ? deriveJointVelocities(clip) : new Float64Array(J * clip.frameCount));
    state.jointVelRadS = Array.from(v.subarray(J * frame, J * frame + J));
  }
  return state;
}

/**
 * The part of a CalibrationRecord (DESIGN §3) the simulator start needs: the measured joint
 * angles (averaged over the still window) and the IMU attitude. `rootPosM` is present only with
 * motion capture; then the measured x, y and heading are used as well.
 */
export interface CalibrationStart {
  /** Root (pelvis) orientation, wxyz: roll and pitch from the IMU; its yaw is arbitrary without mocap. */
  rootQuatWxyz: readonly [number, number, number, number];
  /** 29 measured joint angles, rad, canonical order. */
  jointPosRad: readonly number[];
  /** Measured root position with motion capture (then the measured heading is trusted too), else null/absent. */
  rootPosM?: readonly [number, number, number] | null;
}

const yawQuat = (psi: number): QuatWxyz => [Math.cos(psi / 2), 0, 0, Math.sin(psi / 2)];

/**
 * Replaces the heading (yaw about world z, ZYX convention: q = Rz(ψ)·Ry(θ)·Rx(φ)) of `q` by
 * `headingRad`, keeping its roll and pitch: Rz(ψ_new)·Rz(−ψ(q))·q.
 */
export function withHeading(q: readonly [number, number, number, number], headingRad: number): QuatWxyz {
  const n = quatNormalize(q);
  const tilt = quatMul(yawQuat(-quatHeading(n)), n);
  return quatNormalize(quatMul(yawQuat(headingRad), tilt));
}

/**
 * The simulator start from a calibration (DESIGN §3): roll, pitch and joint angles from the
 * measurement; x, y and heading from the clip's first frame (or from the measurement when it
 * has a motion-capture root position); root height from foot contact (placeOnFloor), zero
 * velocities (the robot was held still).
 */
export function initialStateFromCalibration(calibration: CalibrationStart, clip: MotionClip): InitialState {
  if (calibration.jointPosRad.length !== G1_NUM_JOINTS) {
    throw new RangeError(`calibration has ${calibration.jointPosRad.length} joint angles; the G1 has ${G1_NUM_JOINTS}`);
  }
  for (const v of [...calibration.jointPosRad, ...calibration.rootQuatWxyz]) {
    if (!Number.isFinite(v)) throw new RangeError('calibration holds a non-finite value');
  }
  const mocap = calibration.rootPosM ?? null;
  const cq = clip.rootQuatWxyz;
  const clipQuat: QuatWxyz = [cq[0], cq[1], cq[2], cq[3]];
  const rootQuatWxyz = mocap
    ? quatNormalize(calibration.rootQuatWxyz)
    : withHeading(calibration.rootQuatWxyz, quatHeading(quatNormalize(clipQuat)));
  const rootPosM: [number, number, number] = mocap
    ? [mocap[0], mocap[1], mocap[2]]
    : [clip.rootPosM[0], clip.rootPosM[1], clip.rootPosM[2]];
  return {
    rootPosM,
    rootQuatWxyz,
    jointPosRad: [...calibration.jointPosRad],
    jointVelRadS: new Array<number>(G1_NUM_JOINTS).fill(0),
    placeOnFloor: true,
  };
}

/** Throws a RangeError naming the problem when an InitialState is malformed. */
export function checkInitialState(s: InitialState, jointCount = G1_NUM_JOINTS): void {
  const finite = (xs: readonly number[], what: string, n: number) => {
    if (!Array.isArray(xs) && !(ArrayBuffer.isView(xs) as boolean))
      throw new RangeError(`initial state: ${what} is missing`);
    if (xs.length !== n) throw new RangeError(`initial state: ${what} has ${xs.length} values, expected ${n}`);
    for (let i = 0; i < n; i++)
      if (!Number.isFinite(xs[i])) throw new RangeError(`initial state: ${what}[${i}] is not a finite number`);
  };
  finite(s.rootPosM as readonly number[], 'rootPosM', 3);
  finite(s.rootQuatWxyz as readonly number[], 'rootQuatWxyz', 4);
  finite(s.jointPosRad, 'jointPosRad', jointCount);
  if (s.jointVelRadS) finite(s.jointVelRadS, 'jointVelRadS', jointCount);
  const [w, x, y, z] = s.rootQuatWxyz;
  if (!(Math.hypot(w, x, y, z) > 1e-6)) throw new RangeError('initial state: rootQuatWxyz is (nearly) zero');
}
