import type { ControlReference } from '../../src/domain/wbc/controller';

// Quaternion maths (wxyz) and a moving reference for the tests that check a peer's observation
// entry by entry: written here from the peers' formulas, independently of src/.

export type Q = [number, number, number, number];
export const qmul = (a: Q, b: Q): Q => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
export const conj = (q: Q): Q => [q[0], -q[1], -q[2], -q[3]];
export const rotInv = (q: Q, v: number[]): number[] => {
  const r = qmul(qmul(conj(q), [0, v[0], v[1], v[2]]), q);
  return [r[1], r[2], r[3]];
};
export const yaw = (q: Q) => Math.atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] * q[2] + q[3] * q[3]));
export const yawQ = (a: number): Q => [Math.cos(a / 2), 0, 0, Math.sin(a / 2)];
export const rot6d = (q: Q): number[] => {
  const [w, x, y, z] = q;
  return [
    1 - 2 * (y * y + z * z),
    2 * (x * y - z * w),
    2 * (x * y + z * w),
    1 - 2 * (x * x + z * z),
    2 * (x * z - y * w),
    2 * (y * z + x * w),
  ];
};
export const angVel = (q0: Q, q1: Q, dt: number): number[] => {
  let r = qmul(q1, conj(q0));
  if (r[0] < 0) r = r.map((v) => -v) as Q;
  const s = Math.hypot(r[1], r[2], r[3]);
  const k = s > 1e-12 ? (2 * Math.atan2(s, r[0])) / s / dt : 2 / dt;
  return [r[1] * k, r[2] * k, r[3] * k];
};

/** A reference that moves, turns and pitches; joint j at frame k = 0.02·k + 0.01·j (canonical j). */
export function movingReference(frames: number): ControlReference {
  const rootPosM = new Float64Array(3 * frames);
  const rootQuatWxyz = new Float64Array(4 * frames);
  const jointPosRad = new Float64Array(29 * frames);
  for (let k = 0; k < frames; k++) {
    rootPosM.set([0.1 * k, 0.05 * k * k, 0.78 + 0.01 * Math.sin(k)], 3 * k);
    const p = 0.05 * Math.sin(k);
    rootQuatWxyz.set(qmul(yawQ(0.3 + 0.1 * k), [Math.cos(p / 2), 0, Math.sin(p / 2), 0]), 4 * k);
    for (let j = 0; j < 29; j++) jointPosRad[29 * k + j] = 0.02 * k + 0.01 * j;
  }
  return { rateHz: 50, frameCount: frames, rootPosM, rootQuatWxyz, jointPosRad };
}

export const refQ = (r: ControlReference, k: number): Q => Array.from(r.rootQuatWxyz.subarray(4 * k, 4 * k + 4)) as Q;
export const refP = (r: ControlReference, k: number) => Array.from(r.rootPosM.subarray(3 * k, 3 * k + 3));
