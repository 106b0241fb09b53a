// Peer metric contracts: the numbers two published whole-body-tracking projects
// report, computed from the same frames as mb-metrics/1, so a policy can be compared with their
// tables under their own definitions rather than ours.
//
//   sonic-eval/1       SONIC (NVlabs/GR00T-WholeBodyControl, gear_sonic) calling SMPLSim's
//                      compute_metrics_lite: 14 G1 bodies, frame 0 dropped, frame-weighted
//                      ("micro") averages over motions, success = no eval.yaml termination.
//   holomotion-eval/1  HoloMotion (HorizonRobotics/HoloMotion) metrics.py: every body, frames from
//                      0, per-clip means then the mean over clips ("macro"), success = root height
//                      error ≤ 0.25 m on every frame.
//
// The definitions are implemented from the formulas (file:line citations in each contract's
// `definitions`; docs/METRICS.md "Peer contracts"), not from the peers' code.
// Quirks of the published code that change the number are reproduced on purpose and say so where
// they happen. What differs on purpose: everything runs in float64 (the peers run float32), and
// unit quaternions are normalised before use.
//
// Inputs are one episode on the common 50 Hz timeline (the same K frames mb-metrics/1 uses);
// results are plain JSON (no typed arrays, no NaN: null where a value does not exist) carrying
// the contract id, so they can be stored and aggregated later from what was stored.

import { InputError } from '../problems';
import { rotateInto } from '../math/quat';
import { percentileLinearInPlace } from './percentile';

export const SONIC_EVAL_ID = 'sonic-eval/1';
export const HOLOMOTION_EVAL_ID = 'holomotion-eval/1';

export interface PeerContract {
  readonly id: string;
  readonly label: string;
  /** The repositories and files (at the commits read) the definitions come from. */
  readonly source: string;
  /** The bodies scored, by name in the robot model, or every body of the model. */
  readonly bodyNames: readonly string[] | 'all_bodies';
  /** One sentence per reading, with its source file:line. */
  readonly definitions: Readonly<Record<string, string>>;
}

/** One episode's frames on the common 50 Hz timeline (frame-major flat arrays, world frame, metres, quaternions wxyz). */
export interface PeerEpisodeFrames {
  K: number;
  /** The robot model's bodies, index = body index; the root (pelvis) is bodyNames[rootBodyIndex]. */
  bodyNames: readonly string[];
  rootBodyIndex: number;
  /** K×B×3 */
  refBodyPosM: Float64Array;
  execBodyPosM: Float64Array;
  /** K×B×4: SONIC needs the pelvis orientation (failure rule), HoloMotion the root's (mpjpe_l, root errors). */
  refBodyQuatWxyz: Float64Array;
  execBodyQuatWxyz: Float64Array;
  /** K×J */
  refJointPosRad: Float64Array;
  execJointPosRad: Float64Array;
}

// ---------------------------------------------------------------------------------------------
// Contracts

const SONIC_COMMIT = 'NVlabs/GR00T-WholeBodyControl@1983e888';
const SMPLSIM_COMMIT = 'ZhengyiLuo/SMPLSim@b5c08720';
const HOLOMOTION_COMMIT = 'HorizonRobotics/HoloMotion@71ab7e97';

/** SONIC's body list, in its order (gear_sonic/config/manager_env/commands/terms/motion.yaml:52-67). */
export const SONIC_BODY_NAMES: readonly string[] = Object.freeze([
  'pelvis',
  'left_hip_roll_link',
  'left_knee_link',
  'left_ankle_roll_link',
  'right_hip_roll_link',
  'right_knee_link',
  'right_ankle_roll_link',
  'torso_link',
  'left_shoulder_roll_link',
  'left_elbow_link',
  'left_wrist_yaw_link',
  'right_shoulder_roll_link',
  'right_elbow_link',
  'right_wrist_yaw_link',
]);

/**
 * SONIC's body subsets (im_eval_callback.py:549-571). Each is scored by compute_metrics_lite on
 * its own, so its root (for mpjpe_l) is its first body, not the pelvis.
 */
export const SONIC_SUBSETS = Object.freeze({
  legs: Object.freeze([
    'left_hip_roll_link',
    'left_knee_link',
    'left_ankle_roll_link',
    'right_hip_roll_link',
    'right_knee_link',
    'right_ankle_roll_link',
  ]),
  vr_3points: Object.freeze(['torso_link', 'left_wrist_yaw_link', 'right_wrist_yaw_link']),
  other_upper_bodies: Object.freeze([
    'pelvis',
    'left_shoulder_roll_link',
    'left_elbow_link',
    'right_shoulder_roll_link',
    'right_elbow_link',
  ]),
  foot: Object.freeze(['left_ankle_roll_link', 'right_ankle_roll_link']),
});
export type SonicSubset = keyof typeof SONIC_SUBSETS;
const SONIC_SUBSET_NAMES = Object.keys(SONIC_SUBSETS) as SonicSubset[];

/** The bodies of SONIC's end-effector height termination, in its order (terms/ee_body_pos.yaml:6-10). */
export const SONIC_END_EFFECTORS: readonly string[] = Object.freeze([
  'left_ankle_roll_link',
  'right_ankle_roll_link',
  'left_wrist_yaw_link',
  'right_wrist_yaw_link',
]);
/** SONIC's anchor body (motion.yaml:47). */
const SONIC_ANCHOR = 'pelvis';
/** eval.yaml:11-25: anchor height and end-effector height thresholds (m), orientation threshold on the squared angle (rad²). */
const SONIC_ANCHOR_HEIGHT_M = 0.25;
const SONIC_ANCHOR_ORI_SQ_RAD2 = 1.0;
const SONIC_EE_HEIGHT_M = 0.25;
/** HoloMotion's failure_pos_err_thresh_m (metrics.py:965; eval_motion_tracking_single.py:312). */
const HOLOMOTION_ROOT_HEIGHT_M = 0.25;

export const SONIC_EVAL: PeerContract = Object.freeze({
  id: SONIC_EVAL_ID,
  label: 'SONIC evaluation (SMPLSim compute_metrics_lite, gear_sonic im_eval callback)',
  source:
    `${SONIC_COMMIT} gear_sonic/trl/callbacks/im_eval_callback.py, ` +
    'gear_sonic/config/manager_env/terminations/tracking/eval.yaml, gear_sonic/envs/manager_env/mdp/terminations.py, ' +
    `gear_sonic/config/manager_env/commands/terms/motion.yaml; ${SMPLSIM_COMMIT} smpl_sim/smpllib/smpl_eval.py`,
  bodyNames: SONIC_BODY_NAMES,
  definitions: Object.freeze({
    frames:
      'Frames 1..K−1 (T = K−1): SONIC records one pair per env step and keeps the first N−1, never the reset frame 0 (im_eval_callback.py:455-472).',
    roles:
      'SONIC\'s "pred" is the reference and its "gt" the robot (im_eval_callback.py:349-354; manager_env_wrapper.py:977-981; commands.py:1759-1771, 2298-2300); only mpjpe_pa is asymmetric.',
    mpjpe_g_mm: '1000·‖g − p‖ per body in world frame, averaged over the 14 bodies (smpl_eval.py:71).',
    mpjpe_l_mm:
      "1000·‖(p_j − p_pelvis) − (g_j − g_pelvis)‖ averaged over the 14 bodies, the pelvis's own 0 included: root translation only, no rotation removed (smpl_eval.py:77-78, 81).",
    mpjpe_pa_mm:
      'Per frame, the reference is similarity-aligned onto the robot (rotation with reflections turned into proper rotations, scale, translation), then 1000·‖aligned − robot‖ averaged over the 14 bodies (smpl_eval.py:80, 98-137).',
    vel_dist_mm_per_frame:
      '1000·mean_j ‖(p_{t+1} − p_t) − (g_{t+1} − g_t)‖ on world positions, no division by dt (smpl_eval.py:74, 332-339).',
    accel_dist_mm_per_frame2:
      '1000·mean_j ‖(p_t − 2p_{t+1} + p_{t+2}) − (g_t − 2g_{t+1} + g_{t+2})‖ on world positions, no dt (smpl_eval.py:75, 295-323).',
    episode_sums:
      "Per motion: S = Σ_t of the per-frame body mean for the mpjpe terms, Σ_t of the T−1 (vel) or T−2 (accel) terms otherwise; the episode mean is S/T for all five — the vel/accel denominator T is SONIC's (im_eval_callback.py:625-631, 712).",
    aggregate:
      'all = Σ S / Σ T over every motion, success = the same over motions that never terminated (frame-weighted, im_eval_callback.py:700-712); success_rate = 1 − mean(terminated) (im_eval_callback.py:705, 747).',
    success:
      'No eval.yaml termination on frames 1..K−1: |Δz_pelvis| > 0.25 m, or (pelvis quaternion error angle)² > 1.0, or |Δz| > 0.25 m on any of the ankle-roll and wrist-yaw links (eval.yaml:1-25; terms/ee_body_pos.yaml:1-11; terminations.py:97-128, 160-179, 206-242); time-outs are not failures (im_eval_callback.py:363-370).',
    subsets:
      'Each of legs, vr_3points, other_upper_bodies and foot is scored by the same formulas on its own bodies, its first body as the mpjpe_l root (im_eval_callback.py:549-623).',
    not_reproduced:
      'Terminations are tested on the same frame as the metrics (SONIC\'s simulator tests reference frame k−1 against the robot after step k, commands.py:3218 with IsaacLab\'s step order); no frames after a failure are replayed (SONIC keeps the auto-reset replay in its "all" averages, im_eval_callback.py:455-478); a training-config foot_pos_xyz term possibly left active in SONIC eval is not applied (eval_agent_trl.py:79-146; base_adaptive_strict_ori_foot_xyz.yaml:12-14).',
  }),
});

export const HOLOMOTION_EVAL: PeerContract = Object.freeze({
  id: HOLOMOTION_EVAL_ID,
  label: 'HoloMotion evaluation (metrics.py, per-clip, dof_mode 29)',
  source: `${HOLOMOTION_COMMIT} holomotion/src/evaluation/metrics.py, holomotion/src/algo/ppo.py`,
  bodyNames: 'all_bodies',
  definitions: Object.freeze({
    frames:
      'Frames 0..K−1: HoloMotion records pre-step states from the post-reset frame (ppo.py:1737); dof_mode "29", every body (metrics.py:730-766 with the reduction off).',
    mpjpe_g_mm: '1000·mean over bodies of ‖g − p‖ in world frame (metrics.py:775-777).',
    mpjpe_l_mm:
      '1000·mean over bodies of ‖R(q_exec_root)⁻¹(p_j − p_root) − R(q_ref_root)⁻¹(g_j − g_root)‖: the full root rotation removed on each side (metrics.py:787-804).',
    whole_body_joints_dist_rad: 'Mean over joints of |q_exec − q_ref| (metrics.py:823-825).',
    root_height_error_m: '|z_exec_root − z_ref_root| (metrics.py:869-870).',
    root_r_p_y_error_rad:
      '|components| of scipy as_euler("xyz") (extrinsic x, y, z) of R_ref⁻¹·R_exec at the root (metrics.py:827-852).',
    root_quat_error_rad: 'Rotation angle of R_ref⁻¹·R_exec at the root (scipy magnitude, metrics.py:853).',
    root_vel_error_m_per_frame:
      '‖Δp_root − Δg_root‖ between consecutive frames, per frame, no dt (metrics.py:856-863; frame 0 is NaN-padded and skipped by the mean, metrics.py:940-941).',
    per_clip:
      "Each reading is averaged over the clip's frames; p95_root_y_error and p95_root_quat_error are the clip's 0.95 quantile with linear interpolation (pandas default; metrics.py:1147-1178, 1252-1262).",
    success: 'max over frames of |z_exec_root − z_ref_root| ≤ 0.25 m (metrics.py:1060-1070).',
    aggregate:
      'Mean (and median) over clips of the per-clip values, failed clips included, non-finite values dropped; success_rate = mean of the clip flags (metrics.py:250-262, 1295-1307, 1331-1336).',
    not_computed:
      "root_ang_vel_error and its p95 need the simulator's recorded root angular velocities (metrics.py:864-867), which episodes do not carry: reported as null; mpjpe_pa, vel_dist and accel_dist are computed by HoloMotion but never aggregated (metrics.py:1147-1164), so they are not part of this contract.",
  }),
});

export const PEER_CONTRACTS: readonly PeerContract[] = Object.freeze([SONIC_EVAL, HOLOMOTION_EVAL]);

// ---------------------------------------------------------------------------------------------
// Input checks

interface Dims {
  K: number;
  B: number;
  J: number;
}

function checkFrames(f: PeerEpisodeFrames, contract: string, minK: number): Dims {
  const where = (key: string) => ({ file: `peer contract ${contract}`, key });
  const K = f.K;
  if (!Number.isInteger(K) || K < minK) throw new InputError(where('K'), `needs at least ${minK} frames, got ${K}`);
  const B = f.bodyNames.length;
  if (!(Number.isInteger(f.rootBodyIndex) && f.rootBodyIndex >= 0 && f.rootBodyIndex < B)) {
    throw new InputError(where('rootBodyIndex'), `${f.rootBodyIndex} is not a body index (B = ${B})`);
  }
  const J = f.refJointPosRad.length / K;
  if (!Number.isInteger(J))
    throw new InputError(where('refJointPosRad'), `length ${f.refJointPosRad.length} is not K×J`);
  const want: [keyof PeerEpisodeFrames, number][] = [
    ['refBodyPosM', K * B * 3],
    ['execBodyPosM', K * B * 3],
    ['refBodyQuatWxyz', K * B * 4],
    ['execBodyQuatWxyz', K * B * 4],
    ['refJointPosRad', K * J],
    ['execJointPosRad', K * J],
  ];
  for (const [key, n] of want) {
    const a = f[key] as Float64Array;
    if (a.length !== n) throw new InputError(where(key), `length ${a.length}, expected ${n}`);
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(a[i])) throw new InputError(where(key), `element ${i} is ${a[i]}`);
    }
  }
  return { K, B, J };
}

function bodyIndices(f: PeerEpisodeFrames, names: readonly string[], contract: string): number[] {
  const missing = names.filter((n) => !f.bodyNames.includes(n));
  if (missing.length > 0) {
    throw new InputError(
      { file: `peer contract ${contract}`, key: 'bodyNames' },
      `the robot model has no body ${missing.map((n) => `"${n}"`).join(', ')}, which ${contract} scores`,
    );
  }
  return names.map((n) => f.bodyNames.indexOf(n));
}

// ---------------------------------------------------------------------------------------------
// Small geometry

/** Unit quaternion (wxyz) of body b at frame k, into out[0..4). Throws on a zero quaternion. */
function unitQuat(q: Float64Array, B: number, k: number, b: number, out: Float64Array): Float64Array {
  const o = (k * B + b) * 4;
  const n = Math.hypot(q[o], q[o + 1], q[o + 2], q[o + 3]);
  if (!(n > 0))
    throw new InputError({ file: 'peer contracts', key: 'quaternion' }, `zero quaternion at frame ${k}, body ${b}`);
  out[0] = q[o] / n;
  out[1] = q[o + 1] / n;
  out[2] = q[o + 2] / n;
  out[3] = q[o + 3] / n;
  return out;
}

/** out = conj(a) ⊗ b (wxyz): the rotation R_a⁻¹·R_b. */
function conjMul(a: Float64Array, b: Float64Array, out: Float64Array): Float64Array {
  const aw = a[0];
  const ax = -a[1];
  const ay = -a[2];
  const az = -a[3];
  const [bw, bx, by, bz] = [b[0], b[1], b[2], b[3]];
  out[0] = aw * bw - ax * bx - ay * by - az * bz;
  out[1] = aw * bx + ax * bw + ay * bz - az * by;
  out[2] = aw * by - ax * bz + ay * bw + az * bx;
  out[3] = aw * bz + ax * by - ay * bx + az * bw;
  return out;
}

/** Rotation angle of a unit quaternion (wxyz) in [0, π]: 2·atan2(‖v‖, |w|) (IsaacLab's and scipy's form). */
function quatAngleRad(q: Float64Array): number {
  return 2 * Math.atan2(Math.hypot(q[1], q[2], q[3]), Math.abs(q[0]));
}

/** out = R(q)ᵀ·v for a unit quaternion q (wxyz), i.e. v rotated by q⁻¹. */
function rotateInverse(q: Float64Array, vx: number, vy: number, vz: number, out: Float64Array, o: number): void {
  rotateInto(q[0], -q[1], -q[2], -q[3], vx, vy, vz, out, o);
}

/** numpy's floor-mod: the result has the divisor's sign, so (x + π) mod 2π − π lies in [−π, π). */
function wrapPi(x: number): number {
  const m = 2 * Math.PI;
  let r = (x + Math.PI) % m;
  if (r !== 0 && r < 0) r += m;
  return r - Math.PI;
}

/**
 * scipy's Rotation.as_euler('xyz') (lowercase: extrinsic rotations about x, then y, then z, so
 * R = Rz(γ)·Ry(β)·Rx(α)) of a unit quaternion (wxyz), returned as [α, β, γ] with β ∈ [−π/2, π/2].
 * scipy computes it directly from the quaternion (Bernardes & Viollet 2022); this follows the
 * same steps, so the angles agree to rounding, including scipy's gimbal-lock convention (the
 * third angle set to 0 when the middle angle is within 1e-7 of its limit).
 */
export function eulerXyzExtrinsic(qWxyz: ArrayLike<number>): [number, number, number] {
  const [w, x, y, z] = [qWxyz[0], qWxyz[1], qWxyz[2], qWxyz[3]];
  // axes i, j, k = x, y, z: not symmetric, permutation sign +1
  const a = w - y;
  const b = x + z;
  const c = y + w;
  const d = z - x;
  const halfSum = Math.atan2(b, a);
  const halfDiff = Math.atan2(d, c);
  const theta = 2 * Math.atan2(Math.hypot(c, d), Math.hypot(a, b));
  const eps = 1e-7;
  let first: number;
  let third: number;
  if (Math.abs(theta) <= eps) {
    first = 2 * halfSum;
    third = 0;
  } else if (Math.abs(theta - Math.PI) <= eps) {
    first = -2 * halfDiff; // extrinsic
    third = 0;
  } else {
    first = halfSum - halfDiff;
    third = halfSum + halfDiff;
  }
  return [wrapPi(first), wrapPi(theta - Math.PI / 2), wrapPi(third)];
}

// ---------------------------------------------------------------------------------------------
// 3×3 SVD and similarity Procrustes

export interface ProperSvd3 {
  /** Row-major 3×3 rotations (det +1). */
  u: Float64Array;
  v: Float64Array;
  /** s[0] ≥ s[1] ≥ |s[2]|; s[2] carries the sign of det H. */
  s: Float64Array;
}

/**
 * H = U·diag(s)·Vᵀ with U and V both rotations, by one-sided Jacobi (Hestenes): plane rotations
 * V are applied to H's columns until they are mutually orthogonal, W = H·V; the singular values
 * are the column norms. One-sided Jacobi keeps small singular values accurate (it never forms
 * HᵀH, which would square them away), needs no pivoting choices, and is deterministic.
 *
 * U is completed as u₃ = u₁ × u₂, so U is a rotation even when H is rank-deficient; the last
 * singular value is then the signed w₃·u₃, and a reflection in V is moved onto it too. In this
 * form the reflection-free Procrustes rotation is just V·Uᵀ, and the sign-corrected trace that
 * SMPLSim uses for the scale (smpl_eval.py:122-130) is s₀ + s₁ + s₂: the same numbers as numpy's
 * SVD followed by SMPLSim's sign fix, without depending on numpy's choice of signs.
 */
export function properSvd3(h: ArrayLike<number>): ProperSvd3 {
  const w = Float64Array.from({ length: 9 }, (_, i) => h[i]); // row-major, columns are w_k
  const v = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const pairs = [
    [0, 1],
    [0, 2],
    [1, 2],
  ];
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (const [p, q] of pairs) {
      let alpha = 0;
      let beta = 0;
      let gamma = 0;
      for (let r = 0; r < 3; r++) {
        const wp = w[3 * r + p];
        const wq = w[3 * r + q];
        alpha += wp * wp;
        beta += wq * wq;
        gamma += wp * wq;
      }
      if (gamma === 0 || Math.abs(gamma) <= Number.EPSILON * Math.sqrt(alpha * beta)) continue;
      rotated = true;
      const zeta = (beta - alpha) / (2 * gamma);
      const t =
        Math.abs(zeta) > 1e150 ? 1 / (2 * zeta) : (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
      const c = 1 / Math.sqrt(1 + t * t);
      const s = c * t;
      for (let r = 0; r < 3; r++) {
        const wp = w[3 * r + p];
        const wq = w[3 * r + q];
        w[3 * r + p] = c * wp - s * wq;
        w[3 * r + q] = s * wp + c * wq;
        const vp = v[3 * r + p];
        const vq = v[3 * r + q];
        v[3 * r + p] = c * vp - s * vq;
        v[3 * r + q] = s * vp + c * vq;
      }
    }
    if (!rotated) break;
  }
  // order the columns by norm, largest first
  const norms = [0, 1, 2].map((k) => Math.hypot(w[k], w[3 + k], w[6 + k]));
  const order = [0, 1, 2].sort((i, j) => norms[j] - norms[i] || i - j);
  const col = (m: Float64Array, k: number): [number, number, number] => [m[k], m[3 + k], m[6 + k]];
  const W = order.map((k) => col(w, k));
  const Vc = order.map((k) => col(v, k));
  const s1 = norms[order[0]];
  const U = new Float64Array(9);
  const S = new Float64Array(3);
  const V = new Float64Array(9);
  const setCol = (m: Float64Array, k: number, x: readonly number[]) => {
    m[k] = x[0];
    m[3 + k] = x[1];
    m[6 + k] = x[2];
  };
  if (!(s1 > 0)) {
    // H = 0: any rotations will do; numpy returns the identity.
    U.set([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    V.set([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    return { u: U, s: S, v: V };
  }
  const u1 = W[0].map((x) => x / s1);
  const dot = (a: readonly number[], b: readonly number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const d12 = dot(u1, W[1]);
  let u2 = W[1].map((x, i) => x - d12 * u1[i]);
  let n2 = Math.hypot(u2[0], u2[1], u2[2]);
  if (!(n2 > s1 * 1e-30)) {
    // rank 1: u2 is any unit vector orthogonal to u1 (the fit does not depend on it)
    const axis = [0, 1, 2].reduce((m, i) => (Math.abs(u1[i]) < Math.abs(u1[m]) ? i : m), 0);
    const e = [0, 0, 0];
    e[axis] = 1;
    const de = dot(u1, e);
    u2 = e.map((x, i) => x - de * u1[i]);
    n2 = 0;
  }
  const m2 = Math.hypot(u2[0], u2[1], u2[2]);
  u2 = u2.map((x) => x / m2);
  const u3 = [u1[1] * u2[2] - u1[2] * u2[1], u1[2] * u2[0] - u1[0] * u2[2], u1[0] * u2[1] - u1[1] * u2[0]];
  let s3 = dot(W[2], u3);
  let v3 = Vc[2];
  const detV =
    Vc[0][0] * (Vc[1][1] * Vc[2][2] - Vc[1][2] * Vc[2][1]) -
    Vc[0][1] * (Vc[1][0] * Vc[2][2] - Vc[1][2] * Vc[2][0]) +
    Vc[0][2] * (Vc[1][0] * Vc[2][1] - Vc[1][1] * Vc[2][0]);
  if (detV < 0) {
    v3 = v3.map((x) => -x) as [number, number, number];
    s3 = -s3;
  }
  setCol(U, 0, u1);
  setCol(U, 1, u2);
  setCol(U, 2, u3);
  setCol(V, 0, Vc[0]);
  setCol(V, 1, Vc[1]);
  setCol(V, 2, v3);
  S[0] = s1;
  S[1] = n2;
  S[2] = s3;
  return { u: U, s: S, v: V };
}

/**
 * SMPLSim's p_mpjpe for one frame (smpl_eval.py:98-137): the similarity transform (rotation
 * without reflection, scale, translation) that best maps `predicted` onto `target` is applied to
 * `predicted`, and each point's distance to its target is written to `outErrM` (metres).
 * Points are n rows of xyz in flat arrays. The fit is not symmetric: `predicted` is moved.
 *
 * Degenerate frames (all predicted or all target points coincide), where SMPLSim divides by a zero
 * norm and yields NaN, use the best fit with scale 0: every point maps onto the target centroid.
 * Returns the mean error over the points, metres.
 */
export function similarityProcrustesErrors(
  target: ArrayLike<number>,
  predicted: ArrayLike<number>,
  n: number,
  outErrM: Float64Array = new Float64Array(n),
): number {
  let mx0 = 0;
  let mx1 = 0;
  let mx2 = 0;
  let my0 = 0;
  let my1 = 0;
  let my2 = 0;
  for (let j = 0; j < n; j++) {
    mx0 += target[3 * j];
    mx1 += target[3 * j + 1];
    mx2 += target[3 * j + 2];
    my0 += predicted[3 * j];
    my1 += predicted[3 * j + 1];
    my2 += predicted[3 * j + 2];
  }
  mx0 /= n;
  mx1 /= n;
  mx2 /= n;
  my0 /= n;
  my1 /= n;
  my2 /= n;
  const X0 = new Float64Array(3 * n);
  const Y0 = new Float64Array(3 * n);
  let nx = 0;
  let ny = 0;
  for (let j = 0; j < n; j++) {
    X0[3 * j] = target[3 * j] - mx0;
    X0[3 * j + 1] = target[3 * j + 1] - mx1;
    X0[3 * j + 2] = target[3 * j + 2] - mx2;
    Y0[3 * j] = predicted[3 * j] - my0;
    Y0[3 * j + 1] = predicted[3 * j + 1] - my1;
    Y0[3 * j + 2] = predicted[3 * j + 2] - my2;
    nx += X0[3 * j] ** 2 + X0[3 * j + 1] ** 2 + X0[3 * j + 2] ** 2;
    ny += Y0[3 * j] ** 2 + Y0[3 * j + 1] ** 2 + Y0[3 * j + 2] ** 2;
  }
  nx = Math.sqrt(nx);
  ny = Math.sqrt(ny);
  let sum = 0;
  if (!(nx > 0 && ny > 0)) {
    for (let j = 0; j < n; j++) {
      outErrM[j] = Math.hypot(X0[3 * j], X0[3 * j + 1], X0[3 * j + 2]);
      sum += outErrM[j];
    }
    return sum / n;
  }
  // H = X0ᵀ·Y0 of the normalised point sets (smpl_eval.py:111-117)
  const H = new Float64Array(9);
  for (let j = 0; j < n; j++) {
    for (let a = 0; a < 3; a++) {
      const xa = X0[3 * j + a];
      for (let b = 0; b < 3; b++) H[3 * a + b] += xa * Y0[3 * j + b];
    }
  }
  const inv = 1 / (nx * ny);
  for (let i = 0; i < 9; i++) H[i] *= inv;
  const { u, s, v } = properSvd3(H);
  // R = V·Uᵀ, a rotation (the reflection fix of smpl_eval.py:122-126 is built into properSvd3)
  const R = new Float64Array(9);
  for (let a = 0; a < 3; a++) {
    for (let b = 0; b < 3; b++)
      R[3 * a + b] = v[3 * a] * u[3 * b] + v[3 * a + 1] * u[3 * b + 1] + v[3 * a + 2] * u[3 * b + 2];
  }
  // scale a = (sign-corrected trace)·‖X0‖/‖Y0‖ (smpl_eval.py:128-130); with t = μX − a·μY·R
  // (smpl_eval.py:131) the aligned point a·Y·R + t minus X is a·(Y − μY)·R − (X − μX).
  const scale = ((s[0] + s[1] + s[2]) * nx) / ny;
  for (let j = 0; j < n; j++) {
    const y0 = Y0[3 * j];
    const y1 = Y0[3 * j + 1];
    const y2 = Y0[3 * j + 2];
    const e0 = scale * (y0 * R[0] + y1 * R[3] + y2 * R[6]) - X0[3 * j];
    const e1 = scale * (y0 * R[1] + y1 * R[4] + y2 * R[7]) - X0[3 * j + 1];
    const e2 = scale * (y0 * R[2] + y1 * R[5] + y2 * R[8]) - X0[3 * j + 2];
    outErrM[j] = Math.hypot(e0, e1, e2);
    sum += outErrM[j];
  }
  return sum / n;
}

// ---------------------------------------------------------------------------------------------
// sonic-eval/1

/** SONIC's five readings (mm, mm/frame, mm/frame²). */
export interface SonicReadings {
  mpjpe_g_mm: number;
  mpjpe_l_mm: number;
  mpjpe_pa_mm: number;
  vel_dist_mm_per_frame: number;
  accel_dist_mm_per_frame2: number;
}

export type SonicTerminationCondition = 'anchor_pos' | 'anchor_ori_full' | 'ee_body_pos';

/** The first eval.yaml termination that fired. */
export interface SonicTermination {
  /** Frame on the common timeline (1..K−1). */
  frame: number;
  /** eval.yaml's term name. */
  condition: SonicTerminationCondition;
  body: string;
  /** |Δz| in metres, or the pelvis orientation error angle in radians (not squared). */
  error: number;
  /** 0.25 m, or 1.0 rad (the threshold on the squared angle is 1.0 rad²). */
  threshold: number;
}

export interface SonicSumsAndMeans {
  /** S per reading: what frame-weighted aggregation adds up. */
  sums: SonicReadings;
  /** S / T per reading. */
  means: SonicReadings;
}

export interface SonicEpisodeResult extends SonicSumsAndMeans {
  contract: typeof SONIC_EVAL_ID;
  /** T = K − 1, the frames scored. */
  frames: number;
  /** Never terminated. */
  success: boolean;
  failure: SonicTermination | null;
  subsets: Record<SonicSubset, SonicSumsAndMeans>;
}

export interface SonicAggregateResult {
  contract: typeof SONIC_EVAL_ID;
  /** Σ S / Σ T over every episode (null: no episodes). */
  all: SonicReadings | null;
  /** Σ S / Σ T over the successful episodes (null: none succeeded). */
  success: SonicReadings | null;
  /** null: no episodes. */
  success_rate: number | null;
  episodes: number;
  success_episodes: number;
  /** Σ T over all episodes. */
  frames: number;
  subsets: Record<SonicSubset, { all: SonicReadings | null; success: SonicReadings | null }>;
}

const SONIC_KEYS: readonly (keyof SonicReadings)[] = [
  'mpjpe_g_mm',
  'mpjpe_l_mm',
  'mpjpe_pa_mm',
  'vel_dist_mm_per_frame',
  'accel_dist_mm_per_frame2',
];

/**
 * compute_metrics_lite on frames 1..K−1 of the bodies `idx` (idx[0] is the mpjpe_l root), reduced
 * to SONIC's per-motion sums. p = reference ("pred"), g = robot ("gt").
 */
function sonicSums(f: PeerEpisodeFrames, B: number, idx: readonly number[]): SonicReadings {
  const K = f.K;
  const n = idx.length;
  const P = f.refBodyPosM;
  const G = f.execBodyPosM;
  const X = new Float64Array(3 * n); // robot, root-relative
  const Y = new Float64Array(3 * n); // reference, root-relative
  const err = new Float64Array(n);
  const at = (k: number, j: number, c: number) => (k * B + idx[j]) * 3 + c;
  let g = 0;
  let l = 0;
  let pa = 0;
  let vel = 0;
  let acc = 0;
  for (let k = 1; k < K; k++) {
    let eg = 0;
    let el = 0;
    const pr = [P[at(k, 0, 0)], P[at(k, 0, 1)], P[at(k, 0, 2)]];
    const gr = [G[at(k, 0, 0)], G[at(k, 0, 1)], G[at(k, 0, 2)]];
    for (let j = 0; j < n; j++) {
      let dg = 0;
      let dl = 0;
      for (let c = 0; c < 3; c++) {
        const p = P[at(k, j, c)];
        const q = G[at(k, j, c)];
        dg += (q - p) ** 2;
        Y[3 * j + c] = p - pr[c];
        X[3 * j + c] = q - gr[c];
        dl += (X[3 * j + c] - Y[3 * j + c]) ** 2;
      }
      eg += Math.sqrt(dg);
      el += Math.sqrt(dl);
    }
    g += eg / n;
    l += el / n;
    // the reference is aligned onto the robot (SONIC's pred/gt roles, im_eval_callback.py:349-354)
    pa += similarityProcrustesErrors(X, Y, n, err);
    if (k + 1 < K) {
      let ev = 0;
      for (let j = 0; j < n; j++) {
        let d = 0;
        for (let c = 0; c < 3; c++) {
          d += (P[at(k + 1, j, c)] - P[at(k, j, c)] - (G[at(k + 1, j, c)] - G[at(k, j, c)])) ** 2;
        }
        ev += Math.sqrt(d);
      }
      vel += ev / n;
    }
    if (k + 2 < K) {
      let ea = 0;
      for (let j = 0; j < n; j++) {
        let d = 0;
        for (let c = 0; c < 3; c++) {
          const ap = P[at(k, j, c)] - 2 * P[at(k + 1, j, c)] + P[at(k + 2, j, c)];
          const ag = G[at(k, j, c)] - 2 * G[at(k + 1, j, c)] + G[at(k + 2, j, c)];
          d += (ap - ag) ** 2;
        }
        ea += Math.sqrt(d);
      }
      acc += ea / n;
    }
  }
  return {
    mpjpe_g_mm: 1000 * g,
    mpjpe_l_mm: 1000 * l,
    mpjpe_pa_mm: 1000 * pa,
    vel_dist_mm_per_frame: 1000 * vel,
    accel_dist_mm_per_frame2: 1000 * acc,
  };
}

function divide(s: SonicReadings, t: number): SonicReadings {
  const out = {} as SonicReadings;
  for (const key of SONIC_KEYS) out[key] = s[key] / t;
  return out;
}

function sonicFirstTermination(f: PeerEpisodeFrames, B: number): SonicTermination | null {
  const pelvis = f.bodyNames.indexOf(SONIC_ANCHOR);
  const ee = SONIC_END_EFFECTORS.map((n) => f.bodyNames.indexOf(n));
  const qr = new Float64Array(4);
  const qe = new Float64Array(4);
  const rel = new Float64Array(4);
  const z = (pos: Float64Array, k: number, b: number) => pos[(k * B + b) * 3 + 2];
  // Same frames as the metrics: SONIC's robot starts on reference frame 0 and cannot fail there.
  for (let k = 1; k < f.K; k++) {
    // eval.yaml's order: anchor_pos, anchor_ori_full, ee_body_pos
    const dz = Math.abs(z(f.refBodyPosM, k, pelvis) - z(f.execBodyPosM, k, pelvis));
    if (dz > SONIC_ANCHOR_HEIGHT_M) {
      return { frame: k, condition: 'anchor_pos', body: SONIC_ANCHOR, error: dz, threshold: SONIC_ANCHOR_HEIGHT_M };
    }
    const angle = quatAngleRad(
      conjMul(unitQuat(f.refBodyQuatWxyz, B, k, pelvis, qr), unitQuat(f.execBodyQuatWxyz, B, k, pelvis, qe), rel),
    );
    if (angle * angle > SONIC_ANCHOR_ORI_SQ_RAD2) {
      return { frame: k, condition: 'anchor_ori_full', body: SONIC_ANCHOR, error: angle, threshold: 1.0 };
    }
    for (let i = 0; i < ee.length; i++) {
      const d = Math.abs(z(f.refBodyPosM, k, ee[i]) - z(f.execBodyPosM, k, ee[i]));
      if (d > SONIC_EE_HEIGHT_M) {
        return {
          frame: k,
          condition: 'ee_body_pos',
          body: SONIC_END_EFFECTORS[i],
          error: d,
          threshold: SONIC_EE_HEIGHT_M,
        };
      }
    }
  }
  return null;
}

/**
 * One episode under sonic-eval/1: the 14 SONIC bodies (and the four subsets) on frames 1..K−1.
 * Throws InputError when the model lacks one of SONIC's bodies, or K < 2.
 */
export function sonicEpisode(frames: PeerEpisodeFrames): SonicEpisodeResult {
  const { B } = checkFrames(frames, SONIC_EVAL_ID, 2);
  const idx = bodyIndices(frames, SONIC_BODY_NAMES, SONIC_EVAL_ID);
  const T = frames.K - 1;
  // vel/accel: the sum has T−1 / T−2 terms but SONIC divides by T (im_eval_callback.py:625-631,
  // 709, 712), which biases them low by (T−1)/T and (T−2)/T. Reproduced on purpose.
  const sums = sonicSums(frames, B, idx);
  const subsets = {} as Record<SonicSubset, SonicSumsAndMeans>;
  for (const name of SONIC_SUBSET_NAMES) {
    const s = sonicSums(frames, B, bodyIndices(frames, SONIC_SUBSETS[name], SONIC_EVAL_ID));
    subsets[name] = { sums: s, means: divide(s, T) };
  }
  const failure = sonicFirstTermination(frames, B);
  return {
    contract: SONIC_EVAL_ID,
    frames: T,
    success: failure === null,
    failure,
    sums,
    means: divide(sums, T),
    subsets,
  };
}

function pooled(rs: readonly SonicSumsAndMeans[], frames: readonly number[]): SonicReadings | null {
  const total = frames.reduce((a, b) => a + b, 0);
  if (rs.length === 0 || !(total > 0)) return null;
  const out = {} as SonicReadings;
  for (const key of SONIC_KEYS) {
    let s = 0;
    for (const r of rs) s += r.sums[key];
    out[key] = s / total;
  }
  return out;
}

function checkContract(r: { contract?: unknown }, id: string, i: number): void {
  if (r.contract !== id) {
    throw new InputError({ file: `peer contract ${id}`, key: `episodes[${i}].contract` }, `is ${String(r.contract)}`);
  }
}

/**
 * SONIC's reduction over motions (im_eval_callback.py:700-712): frame-weighted means Σ S / Σ T
 * over all episodes and over the successful ones. Accepts results read back from JSON.
 */
export function sonicAggregate(episodes: readonly SonicEpisodeResult[]): SonicAggregateResult {
  episodes.forEach((e, i) => checkContract(e, SONIC_EVAL_ID, i));
  const ok = episodes.filter((e) => e.success);
  const subsets = {} as SonicAggregateResult['subsets'];
  for (const name of SONIC_SUBSET_NAMES) {
    subsets[name] = {
      all: pooled(
        episodes.map((e) => e.subsets[name]),
        episodes.map((e) => e.frames),
      ),
      success: pooled(
        ok.map((e) => e.subsets[name]),
        ok.map((e) => e.frames),
      ),
    };
  }
  return {
    contract: SONIC_EVAL_ID,
    all: pooled(
      episodes,
      episodes.map((e) => e.frames),
    ),
    success: pooled(
      ok,
      ok.map((e) => e.frames),
    ),
    success_rate: episodes.length === 0 ? null : ok.length / episodes.length,
    episodes: episodes.length,
    success_episodes: ok.length,
    frames: episodes.reduce((a, e) => a + e.frames, 0),
    subsets,
  };
}

// ---------------------------------------------------------------------------------------------
// holomotion-eval/1

/** HoloMotion's per-frame series of one episode (frames 0..K−1 unless stated). */
export interface HolomotionPerFrame {
  mpjpe_g_mm: Float64Array;
  mpjpe_l_mm: Float64Array;
  /** null when the model has no joints. */
  whole_body_joints_dist_rad: Float64Array | null;
  root_height_error_m: Float64Array;
  root_r_error_rad: Float64Array;
  root_p_error_rad: Float64Array;
  root_y_error_rad: Float64Array;
  root_quat_error_rad: Float64Array;
  /** K−1 values: element k−1 is between frames k−1 and k (HoloMotion's frame-0 NaN pad left out). */
  root_vel_error_m_per_frame: Float64Array;
}

/** One clip's values: means over its frames, and two 0.95 quantiles. */
export interface HolomotionClipReadings {
  mpjpe_g_mm: number;
  mpjpe_l_mm: number;
  whole_body_joints_dist_rad: number | null;
  root_height_error_m: number;
  root_r_error_rad: number;
  root_p_error_rad: number;
  root_y_error_rad: number;
  root_quat_error_rad: number;
  /** null with a single frame. */
  root_vel_error_m_per_frame: number | null;
  p95_root_y_error_rad: number;
  p95_root_quat_error_rad: number;
  /** Not computed: needs the simulator's root angular velocities (see HOLOMOTION_EVAL.definitions.not_computed). */
  root_ang_vel_error_rad_per_s: null;
  p95_root_ang_vel_error_rad_per_s: null;
}

export interface HolomotionEpisodeResult {
  contract: typeof HOLOMOTION_EVAL_ID;
  /** K: every frame is scored. */
  frames: number;
  /** max_t |Δz_root| ≤ 0.25 m. */
  success: boolean;
  max_root_height_error_m: number;
  clip: HolomotionClipReadings;
}

/** Over-clip statistics: each value over the clips that have it (null: none has it). */
export type HolomotionClipStatistics = { [K in keyof HolomotionClipReadings]: number | null };

export interface HolomotionAggregateResult {
  contract: typeof HOLOMOTION_EVAL_ID;
  /** Mean over clips of the per-clip values (HoloMotion's default "per_clip"), failed clips included. */
  per_clip_mean: HolomotionClipStatistics;
  per_clip_median: HolomotionClipStatistics;
  /** null: no episodes. */
  success_rate: number | null;
  episodes: number;
}

/** HoloMotion's per-frame metrics (metrics.py:775-870), every body, root = rootBodyIndex. */
export function holomotionPerFrame(frames: PeerEpisodeFrames): HolomotionPerFrame {
  const { K, B, J } = checkFrames(frames, HOLOMOTION_EVAL_ID, 1);
  const r = frames.rootBodyIndex;
  const P = frames.execBodyPosM; // robot
  const G = frames.refBodyPosM; // reference
  const out: HolomotionPerFrame = {
    mpjpe_g_mm: new Float64Array(K),
    mpjpe_l_mm: new Float64Array(K),
    whole_body_joints_dist_rad: J > 0 ? new Float64Array(K) : null,
    root_height_error_m: new Float64Array(K),
    root_r_error_rad: new Float64Array(K),
    root_p_error_rad: new Float64Array(K),
    root_y_error_rad: new Float64Array(K),
    root_quat_error_rad: new Float64Array(K),
    root_vel_error_m_per_frame: new Float64Array(Math.max(0, K - 1)),
  };
  const qr = new Float64Array(4);
  const qe = new Float64Array(4);
  const rel = new Float64Array(4);
  const a = new Float64Array(3);
  const b = new Float64Array(3);
  for (let k = 0; k < K; k++) {
    unitQuat(frames.refBodyQuatWxyz, B, k, r, qr);
    unitQuat(frames.execBodyQuatWxyz, B, k, r, qe);
    const ro = (k * B + r) * 3;
    let eg = 0;
    let el = 0;
    for (let j = 0; j < B; j++) {
      const o = (k * B + j) * 3;
      eg += Math.hypot(G[o] - P[o], G[o + 1] - P[o + 1], G[o + 2] - P[o + 2]);
      // each side in its own root frame: the full root rotation removed (metrics.py:787-804)
      rotateInverse(qe, P[o] - P[ro], P[o + 1] - P[ro + 1], P[o + 2] - P[ro + 2], a, 0);
      rotateInverse(qr, G[o] - G[ro], G[o + 1] - G[ro + 1], G[o + 2] - G[ro + 2], b, 0);
      el += Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    }
    out.mpjpe_g_mm[k] = (1000 * eg) / B;
    out.mpjpe_l_mm[k] = (1000 * el) / B;
    if (out.whole_body_joints_dist_rad) {
      let d = 0;
      for (let i = 0; i < J; i++) d += Math.abs(frames.execJointPosRad[k * J + i] - frames.refJointPosRad[k * J + i]);
      out.whole_body_joints_dist_rad[k] = d / J;
    }
    out.root_height_error_m[k] = Math.abs(P[ro + 2] - G[ro + 2]);
    conjMul(qr, qe, rel); // R_ref⁻¹·R_exec
    const [ex, ey, ez] = eulerXyzExtrinsic(rel);
    out.root_r_error_rad[k] = Math.abs(ex);
    out.root_p_error_rad[k] = Math.abs(ey);
    out.root_y_error_rad[k] = Math.abs(ez);
    out.root_quat_error_rad[k] = quatAngleRad(rel);
    if (k > 0) {
      const po = ((k - 1) * B + r) * 3;
      out.root_vel_error_m_per_frame[k - 1] = Math.hypot(
        P[ro] - P[po] - (G[ro] - G[po]),
        P[ro + 1] - P[po + 1] - (G[ro + 1] - G[po + 1]),
        P[ro + 2] - P[po + 2] - (G[ro + 2] - G[po + 2]),
      );
    }
  }
  return out;
}

function mean(x: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return s / x.length;
}

/**
 * One episode under holomotion-eval/1: every body, frames 0..K−1, per-clip means and P95s,
 * success by the root height rule.
 */
export function holomotionEpisode(frames: PeerEpisodeFrames): HolomotionEpisodeResult {
  const pf = holomotionPerFrame(frames);
  const K = frames.K;
  let maxDz = 0;
  for (let k = 0; k < K; k++) maxDz = Math.max(maxDz, pf.root_height_error_m[k]);
  const p95 = (x: Float64Array) => percentileLinearInPlace(Float64Array.from(x), x.length, 95);
  return {
    contract: HOLOMOTION_EVAL_ID,
    frames: K,
    success: maxDz <= HOLOMOTION_ROOT_HEIGHT_M,
    max_root_height_error_m: maxDz,
    clip: {
      mpjpe_g_mm: mean(pf.mpjpe_g_mm),
      mpjpe_l_mm: mean(pf.mpjpe_l_mm),
      whole_body_joints_dist_rad: pf.whole_body_joints_dist_rad ? mean(pf.whole_body_joints_dist_rad) : null,
      root_height_error_m: mean(pf.root_height_error_m),
      root_r_error_rad: mean(pf.root_r_error_rad),
      root_p_error_rad: mean(pf.root_p_error_rad),
      root_y_error_rad: mean(pf.root_y_error_rad),
      root_quat_error_rad: mean(pf.root_quat_error_rad),
      root_vel_error_m_per_frame: K > 1 ? mean(pf.root_vel_error_m_per_frame) : null,
      p95_root_y_error_rad: p95(pf.root_y_error_rad),
      p95_root_quat_error_rad: p95(pf.root_quat_error_rad),
      root_ang_vel_error_rad_per_s: null,
      p95_root_ang_vel_error_rad_per_s: null,
    },
  };
}

const HOLOMOTION_CLIP_KEYS: readonly (keyof HolomotionClipReadings)[] = [
  'mpjpe_g_mm',
  'mpjpe_l_mm',
  'whole_body_joints_dist_rad',
  'root_height_error_m',
  'root_r_error_rad',
  'root_p_error_rad',
  'root_y_error_rad',
  'root_quat_error_rad',
  'root_vel_error_m_per_frame',
  'p95_root_y_error_rad',
  'p95_root_quat_error_rad',
  'root_ang_vel_error_rad_per_s',
  'p95_root_ang_vel_error_rad_per_s',
];

/** numpy's median: the middle value, or the mean of the two middle values. */
function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * HoloMotion's dataset values (metrics.py:1295-1336, metric_calculation "per_clip"): mean and
 * median over clips of each per-clip value, clips without the value skipped (its
 * _safe_nanmean), failed clips included; success_rate = fraction of successful clips.
 */
export function holomotionAggregate(episodes: readonly HolomotionEpisodeResult[]): HolomotionAggregateResult {
  episodes.forEach((e, i) => checkContract(e, HOLOMOTION_EVAL_ID, i));
  const meanOut = {} as HolomotionClipStatistics;
  const medianOut = {} as HolomotionClipStatistics;
  for (const key of HOLOMOTION_CLIP_KEYS) {
    const xs = episodes.map((e) => e.clip[key]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    meanOut[key] = xs.length === 0 ? null : xs.reduce((p, q) => p + q, 0) / xs.length;
    medianOut[key] = xs.length === 0 ? null : median(xs);
  }
  return {
    contract: HOLOMOTION_EVAL_ID,
    per_clip_mean: meanOut,
    per_clip_median: medianOut,
    success_rate: episodes.length === 0 ? null : episodes.filter((e) => e.success).length / episodes.length,
    episodes: episodes.length,
  };
}
