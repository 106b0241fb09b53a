// Quaternion helpers. Every quaternion here is scalar-first (w, x, y, z), unit unless stated.
// Functions on tuples are for set-up code; the hot paths (FK, resampling) inline their math on
// flat Float64Arrays instead, or write into a flat array at an offset (rotateInto).
import type { QuatWxyz, Vec3M } from '../units';

export const QUAT_IDENTITY: QuatWxyz = [1, 0, 0, 0];

export function quatMul(a: QuatWxyz, b: QuatWxyz): QuatWxyz {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}

export function quatNormalize(q: readonly number[]): QuatWxyz {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(n > 0)) return QUAT_IDENTITY;
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

export function quatConj(q: QuatWxyz): QuatWxyz {
  return [q[0], -q[1], -q[2], -q[3]];
}

/** Rotation of angle `angleRad` about unit `axis`. */
export function quatFromAxisAngle(axis: Vec3M, angleRad: number): QuatWxyz {
  const h = angleRad / 2;
  const s = Math.sin(h);
  return [Math.cos(h), axis[0] * s, axis[1] * s, axis[2] * s];
}

export function quatRotate(q: QuatWxyz, v: Vec3M): Vec3M {
  const [w, x, y, z] = q;
  // t = 2 (u × v); v' = v + w t + u × t
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

/**
 * out[o..o+2] = v rotated by the unit quaternion (w, x, y, z) (pass the conjugate to rotate by
 * its inverse): v + w·t + u × t with t = 2·(u × v), u = (x, y, z).
 */
export function rotateInto(
  w: number,
  x: number,
  y: number,
  z: number,
  vx: number,
  vy: number,
  vz: number,
  out: { [i: number]: number },
  o: number,
): void {
  const tx = 2 * (y * vz - z * vy);
  const ty = 2 * (z * vx - x * vz);
  const tz = 2 * (x * vy - y * vx);
  out[o] = vx + w * tx + (y * tz - z * ty);
  out[o + 1] = vy + w * ty + (z * tx - x * tz);
  out[o + 2] = vz + w * tz + (x * ty - y * tx);
}

/** Rotation matrix (row-major 3×3) to quaternion, w ≥ 0. */
export function quatFromMat3(m: readonly number[]): QuatWxyz {
  const [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m;
  const tr = m00 + m11 + m22;
  let q: number[];
  if (tr > 0) {
    const s = Math.sqrt(tr + 1) * 2;
    q = [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s];
  } else if (m00 > m11 && m00 > m22) {
    const s = Math.sqrt(1 + m00 - m11 - m22) * 2;
    q = [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s];
  } else if (m11 > m22) {
    const s = Math.sqrt(1 + m11 - m00 - m22) * 2;
    q = [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s];
  } else {
    const s = Math.sqrt(1 + m22 - m00 - m11) * 2;
    q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s];
  }
  if (q[0] < 0) q = q.map((v) => -v);
  return quatNormalize(q);
}

/** Angle of the rotation q (radians, in [0, π]). */
export function quatAngle(q: QuatWxyz): number {
  const w = Math.min(1, Math.abs(q[0]));
  return 2 * Math.acos(w);
}

/** Heading (yaw about world z) of a wxyz quaternion, DESIGN §4: atan2(2(wz + xy), 1 − 2(y² + z²)). */
export function quatHeading(q: QuatWxyz): number {
  const [w, x, y, z] = q;
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}
