import type { ForwardKinematics } from '../robot/forwardKinematics';

// The reference a tracking policy observes, on its control timeline: per frame the joint
// angles and velocities (canonical order), the root (pelvis) pose (world frame) and the anchor
// body's pose and velocities (world). Built either from the motion a policy file carries (the
// exporter's own values, nothing recomputed) or from a clip, by forward kinematics on the
// simulator's model and central differences — what mjlab's csv_to_npz.py does when it turns a
// CSV into the motion a policy trains on (torch.gradient over positions; the SO(3) derivative
// for angular velocity).

export interface TrackingReference {
  frames: number;
  rateHz: number;
  jointPosRad: Float64Array;
  jointVelRadS: Float64Array;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  anchorPosM: Float64Array;
  anchorQuatWxyz: Float64Array;
  /** World frame, m/s. */
  anchorLinVelMps: Float64Array;
  /** World frame, rad/s. */
  anchorAngVelRadS: Float64Array;
}

export interface ClipOnTimeline {
  rateHz: number;
  frameCount: number;
  rootPosM: ArrayLike<number>;
  rootQuatWxyz: ArrayLike<number>;
  jointPosRad: ArrayLike<number>;
}

/** np.gradient along frames: central differences inside, one-sided at the ends. */
export function gradient(src: ArrayLike<number>, frames: number, width: number, dt: number, out: Float64Array): void {
  for (let f = 0; f < frames; f++) {
    const a = f === 0 ? 0 : f - 1;
    const b = f === frames - 1 ? frames - 1 : f + 1;
    const span = (b - a) * dt;
    for (let c = 0; c < width; c++)
      out[f * width + c] = span > 0 ? (src[b * width + c] - src[a * width + c]) / span : 0;
  }
}

/** World angular velocity from a quaternion sequence: log(q_b · q_a⁻¹) / Δt, central differences. */
export function angularVelocity(q: ArrayLike<number>, frames: number, dt: number, out: Float64Array): void {
  for (let f = 0; f < frames; f++) {
    const a = f === 0 ? 0 : f - 1;
    const b = f === frames - 1 ? frames - 1 : f + 1;
    const span = (b - a) * dt;
    if (span === 0) {
      out.fill(0, 3 * f, 3 * f + 3);
      continue;
    }
    // d = q_b ⊗ conj(q_a)
    const aw = q[4 * a];
    const ax = -q[4 * a + 1];
    const ay = -q[4 * a + 2];
    const az = -q[4 * a + 3];
    const bw = q[4 * b];
    const bx = q[4 * b + 1];
    const by = q[4 * b + 2];
    const bz = q[4 * b + 3];
    let w = bw * aw - bx * ax - by * ay - bz * az;
    let x = bw * ax + bx * aw + by * az - bz * ay;
    let y = bw * ay - bx * az + by * aw + bz * ax;
    let z = bw * az + bx * ay - by * ax + bz * aw;
    if (w < 0) {
      w = -w;
      x = -x;
      y = -y;
      z = -z;
    }
    const s = Math.hypot(x, y, z);
    const angle = 2 * Math.atan2(s, w);
    const k = s > 1e-12 ? angle / s / span : 2 / span;
    out[3 * f] = x * k;
    out[3 * f + 1] = y * k;
    out[3 * f + 2] = z * k;
  }
}

/**
 * The reference of a clip already on the control timeline: FK for the anchor (a profile body
 * index), central differences for velocities.
 */
export function trackingReferenceFromClip(
  clip: ClipOnTimeline,
  fk: ForwardKinematics,
  anchorBody: number,
): TrackingReference {
  const F = clip.frameCount;
  const J = fk.jointCount;
  const B = fk.bodyCount;
  const dt = 1 / clip.rateHz;
  const pos = new Float64Array(3 * B);
  const quat = new Float64Array(4 * B);
  const anchorPosM = new Float64Array(3 * F);
  const anchorQuatWxyz = new Float64Array(4 * F);
  const rootPosM = Float64Array.from({ length: 3 * F }, (_, i) => clip.rootPosM[i]);
  const rootQuatWxyz = Float64Array.from({ length: 4 * F }, (_, i) => clip.rootQuatWxyz[i]);
  const jointPosRad = Float64Array.from({ length: J * F }, (_, i) => clip.jointPosRad[i]);
  for (let f = 0; f < F; f++) {
    fk.compute(rootPosM, rootQuatWxyz, jointPosRad, pos, quat, 3 * f, 4 * f, J * f);
    for (let c = 0; c < 3; c++) anchorPosM[3 * f + c] = pos[3 * anchorBody + c];
    for (let c = 0; c < 4; c++) anchorQuatWxyz[4 * f + c] = quat[4 * anchorBody + c];
  }
  const jointVelRadS = new Float64Array(J * F);
  gradient(jointPosRad, F, J, dt, jointVelRadS);
  const anchorLinVelMps = new Float64Array(3 * F);
  gradient(anchorPosM, F, 3, dt, anchorLinVelMps);
  const anchorAngVelRadS = new Float64Array(3 * F);
  angularVelocity(anchorQuatWxyz, F, dt, anchorAngVelRadS);
  return {
    frames: F,
    rateHz: clip.rateHz,
    jointPosRad,
    jointVelRadS,
    rootPosM,
    rootQuatWxyz,
    anchorPosM,
    anchorQuatWxyz,
    anchorLinVelMps,
    anchorAngVelRadS,
  };
}
