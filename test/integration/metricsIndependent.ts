// An independent, deliberately plain implementation of DESIGN §4 used for test expectations:
// arrays of arrays, exact slerp, body positions from MuJoCo's own mj_kinematics (mujoco-js),
// the spec's formulas written literally, percentiles by a full sort. It shares no code with
// src/domain/metrics, src/domain/motion/resample or our forward kinematics.
import { loadMujocoModel } from '../../src/services/mujoco/mujocoRuntime';

export interface PlainClip {
  fps: number;
  frameCount: number;
  rootPosM: ArrayLike<number>;
  rootQuatWxyz: ArrayLike<number>;
  jointPosRad: ArrayLike<number>;
}

export interface PlainFrames {
  pos: number[][]; // K × 3
  quat: number[][]; // K × 4, wxyz
  q: number[][]; // K × 29
}

const NJ = 29;
const row = (a: ArrayLike<number>, i: number, w: number): number[] => Array.from({ length: w }, (_, c) => a[i * w + c]);

/** Exact shortest-arc slerp (no normalised-lerp shortcut). */
export function slerp(a: number[], b: number[], t: number): number[] {
  let d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  let bb = b;
  if (d < 0) {
    d = -d;
    bb = b.map((v) => -v);
  }
  const theta = Math.acos(Math.min(1, d));
  if (theta < 1e-12) return a.map((v, i) => v + (bb[i] - v) * t);
  const s = Math.sin(theta);
  const s0 = Math.sin((1 - t) * theta) / s;
  const s1 = Math.sin(t * theta) / s;
  const out = a.map((v, i) => s0 * v + s1 * bb[i]);
  const n = Math.hypot(...out);
  return out.map((v) => v / n);
}

export function commonK(r: number, a: PlainClip, b: PlainClip): number {
  const d = Math.min((a.frameCount - 1) / a.fps, (b.frameCount - 1) / b.fps);
  return Math.floor(r * d + 1e-9) + 1;
}

/** DESIGN §4 common timeline, written from the text: f = t_k·fps, lerp / slerp, last frame as is. */
export function resample(c: PlainClip, r: number, K: number): PlainFrames {
  const out: PlainFrames = { pos: [], quat: [], q: [] };
  for (let k = 0; k < K; k++) {
    const f = (k * c.fps) / r;
    const i = Math.floor(f + 1e-12);
    if (i >= c.frameCount - 1) {
      out.pos.push(row(c.rootPosM, c.frameCount - 1, 3));
      out.quat.push(row(c.rootQuatWxyz, c.frameCount - 1, 4));
      out.q.push(row(c.jointPosRad, c.frameCount - 1, NJ));
      continue;
    }
    const a = Math.max(0, f - i);
    const lerp = (x: number[], y: number[]) => x.map((v, n) => v + (y[n] - v) * a);
    out.pos.push(lerp(row(c.rootPosM, i, 3), row(c.rootPosM, i + 1, 3)));
    out.quat.push(slerp(row(c.rootQuatWxyz, i, 4), row(c.rootQuatWxyz, i + 1, 4), a));
    out.q.push(lerp(row(c.jointPosRad, i, NJ), row(c.jointPosRad, i + 1, NJ)));
  }
  return out;
}

export interface MujocoBodies {
  names: string[];
  /** K × B × 3, bodies in MuJoCo order without the world body. */
  pos: number[][][];
}

/** World body positions of every frame by mujoco-js mj_kinematics on the model file. */
export async function mujocoBodyPositions(modelFile: string, frames: PlainFrames): Promise<MujocoBodies> {
  const mj = await loadMujocoModel(modelFile);
  try {
    const { mujoco, model, data } = mj;
    const nb = model.nbody;
    const names = Array.from(
      { length: nb - 1 },
      (_, b) => mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY.value, b + 1) as string,
    );
    const pos: number[][][] = [];
    for (let k = 0; k < frames.q.length; k++) {
      data.qpos.set([...frames.pos[k], ...frames.quat[k], ...frames.q[k]]);
      mujoco.mj_kinematics(model, data);
      const x = data.xpos;
      pos.push(Array.from({ length: nb - 1 }, (_, b) => [x[3 * (b + 1)], x[3 * (b + 1) + 1], x[3 * (b + 1) + 2]]));
    }
    return { names, pos };
  } finally {
    mj.dispose();
  }
}

export interface PlainMetrics {
  K: number;
  failure: { frame: number; condition: string; body: string } | null;
  progress_soft: number;
  mpjpe_l_mm: number;
  joint_pos_rmse: number;
  joint_vel_rmse: number;
  joint_acc_rms: number;
  joint_acc_p95: number;
  joint_jerk_rms: number;
  joint_jerk_p95: number;
}

const EE = ['left_ankle_roll_link', 'right_ankle_roll_link', 'left_wrist_yaw_link', 'right_wrist_yaw_link'];

function heading(q: number[]): number {
  const n = Math.hypot(...q);
  const [w, x, y, z] = q.map((v) => v / n);
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

function relAngle(a: number[], b: number[]): number {
  const na = Math.hypot(...a);
  const nb = Math.hypot(...b);
  // w of conj(a)·b
  const w = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]) / (na * nb);
  return 2 * Math.acos(Math.min(1, Math.abs(w)));
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((x, y) => x - y);
  const i = (p / 100) * (s.length - 1);
  const lo = Math.floor(i);
  if (lo + 1 >= s.length) return s[lo];
  return s[lo] + (s[lo + 1] - s[lo]) * (i - lo);
}

/** The readings of DESIGN §4, computed literally. */
export function plainMetrics(
  R: PlainFrames,
  E: PlainFrames,
  bodiesR: MujocoBodies,
  bodiesE: MujocoBodies,
  r = 50,
): PlainMetrics {
  const K = R.q.length;
  const names = bodiesR.names;
  const root = names.indexOf('pelvis');
  const ee = EE.map((n) => names.indexOf(n));
  const pR = bodiesR.pos;
  const pE = bodiesE.pos;

  const conditionAt = (k: number): { condition: string; body: string } | null => {
    if (Math.abs(pE[k][root][2] - pR[k][root][2]) > 0.25) return { condition: 'root_height', body: 'pelvis' };
    if (relAngle(R.quat[k], E.quat[k]) > 1.0) return { condition: 'root_orientation', body: 'pelvis' };
    for (let i = 0; i < ee.length; i++)
      if (Math.abs(pE[k][ee[i]][2] - pR[k][ee[i]][2]) > 0.25) return { condition: 'end_effector_height', body: EE[i] };
    return null;
  };
  let failure: PlainMetrics['failure'] = null;
  for (let k = 0; k <= K - 2 && !failure; k++) {
    const c = conditionAt(k);
    if (c) failure = { frame: k, ...c };
  }
  let kStar = -1;
  for (let k = 0; k <= K - 1 && kStar < 0; k++) {
    const hard = k <= K - 2 && conditionAt(k) !== null;
    const dxy = Math.hypot(pE[k][root][0] - pR[k][root][0], pE[k][root][1] - pR[k][root][1]);
    let dh = heading(E.quat[k]) - heading(R.quat[k]);
    while (dh > Math.PI) dh -= 2 * Math.PI;
    while (dh <= -Math.PI) dh += 2 * Math.PI;
    if (hard || dxy > 0.5 || Math.abs(dh) > 0.5) kStar = k;
  }
  const progress = kStar < 0 ? 1 : kStar / (K - 1);

  let mp = 0;
  for (let k = 0; k < K; k++) {
    for (let b = 0; b < names.length; b++) {
      const d = [0, 1, 2].map((c) => pE[k][b][c] - pE[k][root][c] - (pR[k][b][c] - pR[k][root][c]));
      mp += Math.hypot(...d);
    }
  }
  const mpjpe = (mp / (K * names.length)) * 1000;

  const sq: number[] = [];
  for (let k = 0; k < K; k++) for (let j = 0; j < NJ; j++) sq.push((E.q[k][j] - R.q[k][j]) ** 2);
  const vel: number[] = [];
  const acc: number[] = [];
  for (let k = 1; k <= K - 2; k++) {
    for (let j = 0; j < NJ; j++) {
      const vE = ((E.q[k + 1][j] - E.q[k - 1][j]) * r) / 2;
      const vR = ((R.q[k + 1][j] - R.q[k - 1][j]) * r) / 2;
      vel.push((vE - vR) ** 2);
      acc.push((E.q[k + 1][j] - 2 * E.q[k][j] + E.q[k - 1][j]) * r * r);
    }
  }
  const jerk: number[] = [];
  for (let k = 1; k <= K - 3; k++) {
    for (let j = 0; j < NJ; j++)
      jerk.push((E.q[k + 2][j] - 3 * E.q[k + 1][j] + 3 * E.q[k][j] - E.q[k - 1][j]) * r * r * r);
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    K,
    failure,
    progress_soft: progress,
    mpjpe_l_mm: mpjpe,
    joint_pos_rmse: Math.sqrt(mean(sq)),
    joint_vel_rmse: Math.sqrt(mean(vel)),
    joint_acc_rms: Math.sqrt(mean(acc.map((a) => a * a))),
    joint_acc_p95: percentile(
      acc.map((a) => Math.abs(a)),
      95,
    ),
    joint_jerk_rms: Math.sqrt(mean(jerk.map((a) => a * a))),
    joint_jerk_p95: percentile(
      jerk.map((a) => Math.abs(a)),
      95,
    ),
  };
}

/** Everything from two clips: common timeline, MuJoCo FK, literal readings. */
export async function independentMetrics(
  modelFile: string,
  ref: PlainClip,
  exec: PlainClip,
  r = 50,
): Promise<PlainMetrics & { R: PlainFrames; E: PlainFrames }> {
  const K = commonK(r, ref, exec);
  const R = resample(ref, r, K);
  const E = resample(exec, r, K);
  const [bR, bE] = [await mujocoBodyPositions(modelFile, R), await mujocoBodyPositions(modelFile, E)];
  return { ...plainMetrics(R, E, bR, bE, r), R, E };
}
