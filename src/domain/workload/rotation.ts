// Small rotation helpers for the workload generator: roll-pitch-yaw (ZYX: R = Rz(yaw)·Ry(pitch)·
// Rx(roll)) to wxyz quaternions, quaternion products and vector rotation on plain tuples.

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];

/** wxyz quaternion of R = Rz(yaw)·Ry(pitch)·Rx(roll). */
export function quatFromRpy(roll: number, pitch: number, yaw: number): Quat {
  const cr = Math.cos(roll / 2);
  const sr = Math.sin(roll / 2);
  const cp = Math.cos(pitch / 2);
  const sp = Math.sin(pitch / 2);
  const cy = Math.cos(yaw / 2);
  const sy = Math.sin(yaw / 2);
  return [
    cy * cp * cr + sy * sp * sr,
    cy * cp * sr - sy * sp * cr,
    cy * sp * cr + sy * cp * sr,
    sy * cp * cr - cy * sp * sr,
  ];
}

export function qmul(a: ArrayLike<number>, b: ArrayLike<number>): Quat {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}

/** Rotates v by the unit quaternion q (wxyz) read at offset `o` of a flat array. */
export function qrot(q: ArrayLike<number>, v: ArrayLike<number>, o = 0): Vec3 {
  const w = q[o];
  const x = q[o + 1];
  const y = q[o + 2];
  const z = q[o + 3];
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

/** Rotation of a planar vector (x, y) by yaw. */
export function rotYaw(yaw: number, x: number, y: number): [number, number] {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  return [c * x - s * y, s * x + c * y];
}
