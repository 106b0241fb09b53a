// What a start-state sensitivity run perturbs, and by how much.
//
// Axes: the leg joints (hip, knee, ankle) and the waist joints by name (never by position), then
// the root's roll and pitch. Each axis is normalised by the stillness noise σ the calibration
// measured (`jointStdRad.<joint>`), floored at SIGMA_FLOOR_RAD: an emulator's quantised encoders
// report a std of ~1e-17 rad, and a perturbation of "1 σ" must still be a physical quantity. The
// calibration stores no attitude std, so roll and pitch use ATTITUDE_SIGMA_RAD, stated as such.
// A perturbation δ (in σ units, one entry per axis) moves joint i by δᵢσᵢ and rotates the root
// about its own x (roll) then y (pitch) axis.

import type { InitialState } from '../backend/backend';
import { quatFromAxisAngle, quatMul, quatNormalize } from '../math/quat';
import { slerpWxyzInto } from '../motion/resample';
import type { QuatWxyz } from '../units';

/** Smallest σ of a joint axis, rad (about one encoder count of a G1 joint and a half). */
export const SIGMA_FLOOR_RAD = 1e-3;
/** σ of the root's roll and pitch, rad (the calibration records no attitude std). */
export const ATTITUDE_SIGMA_RAD = 2e-3;

export interface SensitivityAxis {
  readonly name: string;
  readonly kind: 'joint' | 'root_roll' | 'root_pitch';
  /** Index in the canonical joint order (joint axes). */
  readonly jointIndex: number | null;
  readonly sigma: number;
  readonly sigmaSource: 'measured' | 'floor' | 'stated';
}

const PERTURBED_JOINT = /(hip|knee|ankle|waist)_/;

export function sensitivityAxes(
  jointNames: readonly string[],
  stillness: Readonly<Record<string, number>>,
): SensitivityAxis[] {
  const axes: SensitivityAxis[] = [];
  jointNames.forEach((name, i) => {
    if (!PERTURBED_JOINT.test(name)) return;
    const measured = stillness[`jointStdRad.${name}`];
    const ok = typeof measured === 'number' && Number.isFinite(measured) && measured >= SIGMA_FLOOR_RAD;
    axes.push({
      name,
      kind: 'joint',
      jointIndex: i,
      sigma: ok ? measured : SIGMA_FLOOR_RAD,
      sigmaSource: ok ? 'measured' : 'floor',
    });
  });
  axes.push({
    name: 'root_roll',
    kind: 'root_roll',
    jointIndex: null,
    sigma: ATTITUDE_SIGMA_RAD,
    sigmaSource: 'stated',
  });
  axes.push({
    name: 'root_pitch',
    kind: 'root_pitch',
    jointIndex: null,
    sigma: ATTITUDE_SIGMA_RAD,
    sigmaSource: 'stated',
  });
  return axes;
}

/** The initial state moved by δ (σ units per axis). */
export function perturbedInitialState(
  base: InitialState,
  axes: readonly SensitivityAxis[],
  delta: ArrayLike<number>,
): InitialState {
  if (delta.length !== axes.length) throw new RangeError(`${axes.length} axes but a perturbation of ${delta.length}`);
  const q = [...base.jointPosRad];
  let roll = 0;
  let pitch = 0;
  axes.forEach((a, i) => {
    const v = delta[i] * a.sigma;
    if (a.kind === 'joint') q[a.jointIndex!] += v;
    else if (a.kind === 'root_roll') roll = v;
    else pitch = v;
  });
  const rot = quatMul(quatFromAxisAngle([1, 0, 0], roll), quatFromAxisAngle([0, 1, 0], pitch));
  const root: QuatWxyz = quatNormalize(quatMul(base.rootQuatWxyz, rot));
  return { ...base, jointPosRad: q, rootQuatWxyz: root };
}

/** The unit vector along axis i, times h. */
export function axisPerturbation(d: number, i: number, h: number): Float64Array {
  const u = new Float64Array(d);
  u[i] = h;
  return u;
}

/** ‖y − y0‖ / h. */
export function responseMagnitude(y: ArrayLike<number>, y0: ArrayLike<number>, h: number): number {
  if (y.length !== y0.length) throw new RangeError(`responses of ${y.length} and ${y0.length} values`);
  let s = 0;
  for (let t = 0; t < y.length; t++) s += (y[t] - y0[t]) ** 2;
  return Math.sqrt(s) / h;
}

/** An executed trajectory on the contract's timeline (frame-major arrays). */
export interface ExecutedFrames {
  readonly frameCount: number;
  readonly rootPosM: ArrayLike<number>;
  readonly rootQuatWxyz: ArrayLike<number>;
  readonly jointPosRad: ArrayLike<number>;
}

export interface ResponseVectors {
  /**
   * Body positions relative to the root, in the root's heading frame (what MPJPE-l compares), mm,
   * over K frames × B bodies × 3, divided by √(K·B): its difference between two runs has the norm of
   * the RMS body displacement, so r(u) reads as "mm of MPJPE-l-like displacement per σ".
   */
  readonly bodyMm: Float64Array;
  /** Joint angles over K frames × J, rad, divided by √(K·J): r(u) reads as joint-position RMSE per σ. */
  readonly jointRad: Float64Array;
}

/**
 * The response vectors of one run over its first `K` frames. A run that ended earlier (a fall) holds
 * its last frame for the rest, so every response has the same length; the caller counts such runs.
 * `fkCompute` is ForwardKinematics.compute of the run's model (world body positions of one frame).
 */
export function responseVectors(
  exec: ExecutedFrames,
  K: number,
  bodyCount: number,
  jointCount: number,
  fkCompute: (
    rootPos: ArrayLike<number>,
    rootQuat: ArrayLike<number>,
    q: ArrayLike<number>,
    outPos: Float64Array,
    outQuat: Float64Array,
    ro: number,
    qo: number,
    jo: number,
  ) => void,
): ResponseVectors {
  if (exec.frameCount < 1) throw new RangeError('the run has no executed frame');
  const body = new Float64Array(K * bodyCount * 3);
  const joint = new Float64Array(K * jointCount);
  const pos = new Float64Array(bodyCount * 3);
  const quat = new Float64Array(bodyCount * 4);
  const bScale = 1000 / Math.sqrt(K * bodyCount);
  const jScale = 1 / Math.sqrt(K * jointCount);
  for (let k = 0; k < K; k++) {
    const f = Math.min(k, exec.frameCount - 1);
    fkCompute(exec.rootPosM, exec.rootQuatWxyz, exec.jointPosRad, pos, quat, 3 * f, 4 * f, jointCount * f);
    const q = exec.rootQuatWxyz;
    const yaw = Math.atan2(
      2 * (q[4 * f] * q[4 * f + 3] + q[4 * f + 1] * q[4 * f + 2]),
      1 - 2 * (q[4 * f + 2] ** 2 + q[4 * f + 3] ** 2),
    );
    const c = Math.cos(-yaw);
    const s = Math.sin(-yaw);
    const rx = exec.rootPosM[3 * f];
    const ry = exec.rootPosM[3 * f + 1];
    const rz = exec.rootPosM[3 * f + 2];
    for (let b = 0; b < bodyCount; b++) {
      const dx = pos[3 * b] - rx;
      const dy = pos[3 * b + 1] - ry;
      const o = (k * bodyCount + b) * 3;
      body[o] = (c * dx - s * dy) * bScale;
      body[o + 1] = (s * dx + c * dy) * bScale;
      body[o + 2] = (pos[3 * b + 2] - rz) * bScale;
    }
    for (let j = 0; j < jointCount; j++) joint[k * jointCount + j] = exec.jointPosRad[jointCount * f + j] * jScale;
  }
  return { bodyMm: body, jointRad: joint };
}

/** A measured start pose: 29 joint angles in canonical order, the IMU attitude w, x, y, z. */
export interface MeasuredStart {
  readonly jointPosRad: ArrayLike<number>;
  readonly imuQuatWxyz: ArrayLike<number>;
}

/**
 * The perturbation a robot actually reached (σ units per axis): where it stood at a trial's start
 * (its start-pose capture) against the calibration, the inverse of perturbedInitialState. Joints:
 * the angle difference over σ. Roll and pitch: the relative rotation q_base⁻¹·q_reached decomposed
 * as R = Rx(roll)·Ry(pitch)·(a residual about z, which is not an axis and is dropped), exactly the
 * order perturbedInitialState composes; pitch = asin(R₀₂), roll = atan2(R₂₁, R₁₁) up to that
 * residual (exact when it is 0).
 */
export function reachedPerturbation(
  base: MeasuredStart,
  reached: MeasuredStart,
  axes: readonly SensitivityAxis[],
): Float64Array {
  const qb = Array.from(base.imuQuatWxyz) as unknown as QuatWxyz;
  const qr = Array.from(reached.imuQuatWxyz) as unknown as QuatWxyz;
  const [w, x, y, z] = quatMul([qb[0], -qb[1], -qb[2], -qb[3]], quatNormalize(qr));
  // Rotation matrix entries of the relative rotation (w, x, y, z).
  const r02 = 2 * (x * z + w * y);
  const r11 = 1 - 2 * (x * x + z * z);
  const r21 = 2 * (y * z + w * x);
  const r00 = 1 - 2 * (y * y + z * z);
  const r01 = 2 * (x * y - w * z);
  // R = Rx(roll)·Ry(pitch)·Rz(γ): R₀₀ = cos pitch·cos γ, R₀₁ = −cos pitch·sin γ. M = R·Rz(−γ) =
  // Rx(roll)·Ry(pitch) has M₁₁ = cos roll, M₂₁ = sin roll; column 1 of Rz(−γ) is (sin γ, cos γ, 0).
  const gamma = Math.atan2(-r01, r00);
  const c = Math.cos(gamma);
  const s = Math.sin(gamma);
  const r10 = 2 * (x * y + w * z);
  const r20 = 2 * (x * z - w * y);
  const m11 = s * r10 + c * r11;
  const m21 = s * r20 + c * r21;
  const pitch = Math.asin(Math.max(-1, Math.min(1, r02)));
  const roll = Math.atan2(m21, m11);
  return Float64Array.from(axes, (a) => {
    if (a.kind === 'joint') return (reached.jointPosRad[a.jointIndex!] - base.jointPosRad[a.jointIndex!]) / a.sigma;
    return (a.kind === 'root_roll' ? roll : pitch) / a.sigma;
  });
}

/** A robot's recorded frames in time order (episode time, s): joints and root attitude. */
export interface TimedStateFrames {
  readonly timeS: ArrayLike<number>;
  /** frames × 29, canonical order. */
  readonly jointPosRad: Float64Array;
  /** frames × 4, w x y z. */
  readonly rootQuatWxyz: Float64Array;
}

/**
 * A robot's recorded frames on the contract's timeline (t_k = k / rateHz, k < K) for
 * responseVectors: joints interpolated linearly in time and the attitude by slerp between the two
 * frames around t_k (a robot's samples need not be evenly spaced: a dropped sample is bridged);
 * before the first frame the first is used, after the last the last is held (a run that ended
 * early, as responseVectors does). The root position is 0: MPJPE-l's body positions are relative to
 * the root, and a robot without motion capture has none.
 */
export function timedFramesOnTimeline(src: TimedStateFrames, rateHz: number, K: number): ExecutedFrames {
  const n = src.timeS.length;
  if (n < 1) throw new RangeError('no recorded frame');
  for (let i = 1; i < n; i++)
    if (!(src.timeS[i] > src.timeS[i - 1]))
      throw new RangeError(`recorded frame ${i} at ${src.timeS[i]} s does not follow ${src.timeS[i - 1]} s`);
  const J = src.jointPosRad.length / n;
  const joints = new Float64Array(K * J);
  const quats = new Float64Array(K * 4);
  let i = 0;
  for (let k = 0; k < K; k++) {
    const t = k / rateHz;
    while (i + 1 < n && src.timeS[i + 1] <= t) i++;
    let a = i;
    let b = i;
    let alpha = 0;
    if (t > src.timeS[i] && i + 1 < n) {
      b = i + 1;
      alpha = (t - src.timeS[a]) / (src.timeS[b] - src.timeS[a]);
    } else if (t < src.timeS[0]) a = b = 0;
    for (let j = 0; j < J; j++)
      joints[k * J + j] =
        src.jointPosRad[a * J + j] + alpha * (src.jointPosRad[b * J + j] - src.jointPosRad[a * J + j]);
    slerpWxyzInto(quats, 4 * k, src.rootQuatWxyz, 4 * a, src.rootQuatWxyz, 4 * b, alpha);
  }
  return { frameCount: K, rootPosM: new Float64Array(3 * K), rootQuatWxyz: quats, jointPosRad: joints };
}
