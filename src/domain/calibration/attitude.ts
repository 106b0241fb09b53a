// Attitude helpers of the calibration (DESIGN §3 CalibrationRecord): ZYX (yaw-pitch-roll)
// decomposition of a wxyz quaternion, the composition "heading from the clip, tilt from the
// IMU", and the average of a window of IMU quaternions.
//
// Convention: q = Rz(ψ)·Ry(θ)·Rx(φ) (intrinsic z-y'-x'', world z up), ψ = heading (yaw),
// θ = pitch, φ = roll. The heading matches quatHeading (DESIGN §4).

import { quatHeading, quatMul, quatNormalize } from '../math/quat';
import type { QuatWxyz } from '../units';

export interface YawPitchRoll {
  yawRad: number;
  pitchRad: number;
  rollRad: number;
}

/** ZYX decomposition: ψ = atan2(2(wz+xy), 1−2(y²+z²)), θ = asin(2(wy−zx)), φ = atan2(2(wx+yz), 1−2(x²+y²)). */
export function quatToYawPitchRoll(q: readonly number[]): YawPitchRoll {
  const [w, x, y, z] = quatNormalize(q);
  const s = Math.max(-1, Math.min(1, 2 * (w * y - z * x)));
  return {
    yawRad: quatHeading([w, x, y, z]),
    pitchRad: Math.asin(s),
    rollRad: Math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)),
  };
}

/** q = Rz(yaw)·Ry(pitch)·Rx(roll), w ≥ 0. */
export function quatFromYawPitchRoll(yawRad: number, pitchRad: number, rollRad: number): QuatWxyz {
  const qz: QuatWxyz = [Math.cos(yawRad / 2), 0, 0, Math.sin(yawRad / 2)];
  const qy: QuatWxyz = [Math.cos(pitchRad / 2), 0, Math.sin(pitchRad / 2), 0];
  const qx: QuatWxyz = [Math.cos(rollRad / 2), Math.sin(rollRad / 2), 0, 0];
  return canonicalQuat(quatMul(quatMul(qz, qy), qx));
}

/** The tilt part of q: Rz(−ψ(q))·q = Ry(θ)·Rx(φ) (heading removed, roll and pitch kept). */
export function tiltOf(q: readonly number[]): QuatWxyz {
  const n = quatNormalize(q);
  const psi = quatHeading(n);
  return canonicalQuat(quatMul([Math.cos(-psi / 2), 0, 0, Math.sin(-psi / 2)], n));
}

/**
 * The composition rule of the simulator start without motion capture: heading from the clip,
 * tilt (roll, pitch) from the measured attitude: Rz(ψ_clip)·Ry(θ_meas)·Rx(φ_meas).
 */
export function composeHeadingAndTilt(headingRad: number, measuredAttitude: readonly number[]): QuatWxyz {
  return canonicalQuat(quatMul([Math.cos(headingRad / 2), 0, 0, Math.sin(headingRad / 2)], tiltOf(measuredAttitude)));
}

/** q with w ≥ 0 (q and −q are the same rotation). */
export function canonicalQuat(q: readonly number[]): QuatWxyz {
  const n = quatNormalize(q);
  return n[0] < 0 ? [-n[0], -n[1], -n[2], -n[3]] : n;
}

/** Wraps an angle to (−π, π]. */
export function wrapAngle(a: number): number {
  let r = a % (2 * Math.PI);
  if (r <= -Math.PI) r += 2 * Math.PI;
  else if (r > Math.PI) r -= 2 * Math.PI;
  return r;
}

/**
 * Accumulates a sign-aligned mean of quaternions (allocation-free): every sample is flipped to the
 * hemisphere of the first one (q·q₀ ≥ 0) and summed; the mean is the normalised sum, w ≥ 0. For
 * the small spreads of a still window (≪ 0.1 rad) this equals Markley's eigenvector average to
 * second order in the spread; it is exact for any set of rotations about a common axis that
 * is symmetric about its centre.
 */
export class QuatMeanAccumulator {
  private readonly ref = new Float64Array(4);
  private readonly sum = new Float64Array(4);
  count = 0;

  reset(): void {
    this.count = 0;
    this.sum.fill(0);
  }

  add(w: number, x: number, y: number, z: number): void {
    if (this.count === 0) {
      this.ref[0] = w;
      this.ref[1] = x;
      this.ref[2] = y;
      this.ref[3] = z;
    }
    const s = w * this.ref[0] + x * this.ref[1] + y * this.ref[2] + z * this.ref[3] < 0 ? -1 : 1;
    const n = Math.hypot(w, x, y, z) || 1;
    this.sum[0] += (s * w) / n;
    this.sum[1] += (s * x) / n;
    this.sum[2] += (s * y) / n;
    this.sum[3] += (s * z) / n;
    this.count++;
  }

  mean(): QuatWxyz | null {
    if (this.count === 0) return null;
    return canonicalQuat([this.sum[0], this.sum[1], this.sum[2], this.sum[3]]);
  }
}
