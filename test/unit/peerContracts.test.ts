import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  eulerXyzExtrinsic,
  HOLOMOTION_EVAL,
  HOLOMOTION_EVAL_ID,
  holomotionAggregate,
  holomotionEpisode,
  holomotionPerFrame,
  PEER_CONTRACTS,
  properSvd3,
  similarityProcrustesErrors,
  SONIC_BODY_NAMES,
  SONIC_EVAL,
  SONIC_EVAL_ID,
  sonicAggregate,
  sonicEpisode,
  type HolomotionEpisodeResult,
  type PeerEpisodeFrames,
  type SonicEpisodeResult,
  type SonicReadings,
} from '../../src/domain/metrics/peerContracts';

// sonic-eval/1 and holomotion-eval/1. The golden values come from
// test/fixtures/peerMetrics/golden.py, a numpy/scipy transcription of the published formulas,
// run on the inputs it writes into golden.json; the behaviour tests below use closed forms.

type Num = number;
interface GoldenEpisode {
  name: string;
  K: number;
  rootBodyIndex: number;
  refBodyPosM: Num[];
  execBodyPosM: Num[];
  refBodyQuatWxyz: Num[];
  execBodyQuatWxyz: Num[];
  refJointPosRad: Num[];
  execJointPosRad: Num[];
  sonic: SonicEpisodeResult & { pa_per_frame_mm: Num[]; pa_sign_det: Num[] };
  holomotion: Omit<HolomotionEpisodeResult, 'contract'> & { per_frame: Record<string, Num[]> };
}
interface Golden {
  bodyNames: string[];
  jointCount: number;
  svdCases: { h: Num[]; s: Num[]; det: Num }[];
  eulerCases: { wxyz: Num[]; euler_xyz: Num[]; magnitude: Num }[];
  episodes: GoldenEpisode[];
  sonicAggregate: Record<string, unknown>;
  holomotionAggregate: Record<string, unknown>;
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/peerMetrics/golden.json', import.meta.url), 'utf8'),
) as Golden;

function framesOf(ep: GoldenEpisode): PeerEpisodeFrames {
  return {
    K: ep.K,
    bodyNames: golden.bodyNames,
    rootBodyIndex: ep.rootBodyIndex,
    refBodyPosM: Float64Array.from(ep.refBodyPosM),
    execBodyPosM: Float64Array.from(ep.execBodyPosM),
    refBodyQuatWxyz: Float64Array.from(ep.refBodyQuatWxyz),
    execBodyQuatWxyz: Float64Array.from(ep.execBodyQuatWxyz),
    refJointPosRad: Float64Array.from(ep.refJointPosRad),
    execJointPosRad: Float64Array.from(ep.execJointPosRad),
  };
}

const REL = 1e-9;
/** |a − b| ≤ 1e-9·max(|a|, |b|), with an absolute floor of 1e-12 for values that are 0 up to rounding. */
function close(actual: number | null, expected: number | null, what: string, abs = 1e-12): void {
  if (expected === null || actual === null) {
    expect(actual, what).toBe(expected);
    return;
  }
  const tol = REL * Math.max(Math.abs(actual), Math.abs(expected)) + abs;
  if (!(Math.abs(actual - expected) <= tol)) {
    throw new Error(`${what}: ${actual} vs golden ${expected} (|Δ| = ${Math.abs(actual - expected)}, tol ${tol})`);
  }
}

function closeObject(actual: object | null, expected: object | null, what: string): void {
  if (expected === null || actual === null) {
    expect(actual, what).toBe(expected);
    return;
  }
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  expect(Object.keys(a).sort(), what).toEqual(Object.keys(e).sort());
  for (const key of Object.keys(e)) {
    const av = a[key];
    const ev = e[key];
    if (typeof ev === 'number' || ev === null) close(av as number | null, ev, `${what}.${key}`);
    else if (typeof ev === 'object') closeObject(av as object, ev, `${what}.${key}`);
    else expect(av, `${what}.${key}`).toEqual(ev);
  }
}

const SONIC_KEYS: (keyof SonicReadings)[] = [
  'mpjpe_g_mm',
  'mpjpe_l_mm',
  'mpjpe_pa_mm',
  'vel_dist_mm_per_frame',
  'accel_dist_mm_per_frame2',
];

// ---------------------------------------------------------------------------------------------
// Synthetic frames for the behaviour tests: the 14 SONIC bodies plus two more, a moving,
// turning reference, and the executed motion as a function of it.

const NAMES = ['pelvis', 'waist_yaw_link', ...SONIC_BODY_NAMES.slice(1), 'head_link'];
const NB = NAMES.length;
const NJ = 4;
/** A fixed, asymmetric body shape around the pelvis (metres). */
const SHAPE = NAMES.map((_, b) => [
  0.05 * Math.sin(1.7 * b + 0.3) + (b % 3) * 0.04,
  0.25 * Math.cos(2.3 * b),
  b === 0 ? 0 : -0.8 + 0.1 * b,
]);

type Vec = [number, number, number];
type Quat = [number, number, number, number];
const qMul = (a: Quat, b: Quat): Quat => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
const qAxis = (axis: Vec, angle: number): Quat => {
  const n = Math.hypot(...axis);
  const s = Math.sin(angle / 2) / n;
  return [Math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s];
};
const qRot = (q: Quat, v: readonly number[]): Vec => {
  const [w, x, y, z] = q;
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
};

interface Pose {
  pos: Vec[];
  quat: Quat[];
  joints: number[];
}

function refPose(k: number): Pose {
  const root: Vec = [0.03 * k, 0.01 * k, 0.78 + 0.01 * Math.sin(0.4 * k)];
  const q = qMul(qAxis([0, 0, 1], 0.3 + 0.04 * k), qAxis([1, 0.5, 0], 0.1 * Math.sin(0.2 * k)));
  const pos = SHAPE.map((o, b) => {
    const local = [o[0] + 0.02 * Math.sin(0.5 * k + b), o[1], o[2] + 0.02 * Math.cos(0.3 * k + b)];
    const r = qRot(q, local);
    return b === 0 ? root : ([root[0] + r[0], root[1] + r[1], root[2] + r[2]] as Vec);
  });
  return { pos, quat: NAMES.map(() => q), joints: [0, 1, 2, 3].map((i) => 0.3 * Math.sin(0.2 * k + i)) };
}

function framesFrom(K: number, exec: (ref: Pose, k: number) => Pose, names = NAMES, root = 0): PeerEpisodeFrames {
  const f: PeerEpisodeFrames = {
    K,
    bodyNames: names,
    rootBodyIndex: root,
    refBodyPosM: new Float64Array(K * names.length * 3),
    execBodyPosM: new Float64Array(K * names.length * 3),
    refBodyQuatWxyz: new Float64Array(K * names.length * 4),
    execBodyQuatWxyz: new Float64Array(K * names.length * 4),
    refJointPosRad: new Float64Array(K * NJ),
    execJointPosRad: new Float64Array(K * NJ),
  };
  const order = names.map((n) => NAMES.indexOf(n));
  for (let k = 0; k < K; k++) {
    const r = refPose(k);
    const e = exec(r, k);
    order.forEach((src, b) => {
      f.refBodyPosM.set(r.pos[src], (k * names.length + b) * 3);
      f.execBodyPosM.set(e.pos[src], (k * names.length + b) * 3);
      f.refBodyQuatWxyz.set(r.quat[src], (k * names.length + b) * 4);
      f.execBodyQuatWxyz.set(e.quat[src], (k * names.length + b) * 4);
    });
    f.refJointPosRad.set(r.joints, k * NJ);
    f.execJointPosRad.set(e.joints, k * NJ);
  }
  return f;
}

const same = (r: Pose): Pose => ({
  pos: r.pos.map((p) => [...p] as Vec),
  quat: r.quat.map((q) => [...q] as Quat),
  joints: [...r.joints],
});
const translated =
  (d: Vec) =>
  (r: Pose): Pose => ({ ...same(r), pos: r.pos.map((p) => [p[0] + d[0], p[1] + d[1], p[2] + d[2]] as Vec) });
/** The whole body turned by `angle` about the vertical through the root; orientations turned too. */
const yawed =
  (angle: number) =>
  (r: Pose): Pose => {
    const q = qAxis([0, 0, 1], angle);
    const root = r.pos[0];
    return {
      ...same(r),
      pos: r.pos.map((p) => {
        const v = qRot(q, [p[0] - root[0], p[1] - root[1], p[2] - root[2]]);
        return [root[0] + v[0], root[1] + v[1], root[2] + v[2]] as Vec;
      }),
      quat: r.quat.map((x) => qMul(q, x)),
    };
  };
const scaled =
  (s: number) =>
  (r: Pose): Pose => {
    const root = r.pos[0];
    return {
      ...same(r),
      pos: r.pos.map(
        (p) => [root[0] + s * (p[0] - root[0]), root[1] + s * (p[1] - root[1]), root[2] + s * (p[2] - root[2])] as Vec,
      ),
    };
  };

// ---------------------------------------------------------------------------------------------

describe('peer contracts: declarations', () => {
  it('declares both contracts with cited definitions', () => {
    expect(PEER_CONTRACTS.map((c) => c.id)).toEqual([SONIC_EVAL_ID, HOLOMOTION_EVAL_ID]);
    expect(SONIC_EVAL.bodyNames).toHaveLength(14);
    expect(HOLOMOTION_EVAL.bodyNames).toBe('all_bodies');
    for (const c of PEER_CONTRACTS) {
      expect(c.source).toMatch(/@[0-9a-f]{8}/);
      for (const [key, text] of Object.entries(c.definitions))
        expect(text, `${c.id} ${key}`).toMatch(/\.(py|yaml):\d+/);
      expect(Object.isFrozen(c)).toBe(true);
    }
  });
});

describe('properSvd3 (one-sided Jacobi) against numpy.linalg.svd', () => {
  it.each(golden.svdCases.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    const { u, s, v } = properSvd3(c.h);
    const scale = Math.max(1, c.s[0]);
    // singular values: |s| is numpy's, sorted; the sign of the last follows det H
    for (let i = 0; i < 3; i++) expect(Math.abs(Math.abs(s[i]) - c.s[i])).toBeLessThanOrEqual(1e-13 * scale);
    if (Math.abs(c.det) > 1e-12) expect(Math.sign(s[2])).toBe(Math.sign(c.det));
    // U and V are rotations, and U·diag(s)·Vᵀ = H
    for (const m of [u, v]) {
      for (let a = 0; a < 3; a++) {
        for (let b = 0; b < 3; b++) {
          const d = m[a] * m[b] + m[3 + a] * m[3 + b] + m[6 + a] * m[6 + b];
          expect(Math.abs(d - (a === b ? 1 : 0))).toBeLessThan(1e-13);
        }
      }
      const det =
        m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
      expect(det).toBeCloseTo(1, 12);
    }
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        let x = 0;
        for (let k = 0; k < 3; k++) x += u[3 * a + k] * s[k] * v[3 * b + k];
        expect(Math.abs(x - c.h[3 * a + b])).toBeLessThan(1e-13 * scale);
      }
    }
  });

  it('is deterministic', () => {
    const c = golden.svdCases[0];
    expect(properSvd3(c.h)).toEqual(properSvd3(c.h));
  });
});

describe('eulerXyzExtrinsic against scipy as_euler("xyz")', () => {
  it('matches scipy on random rotations, gimbal lock and near the ±π wrap', () => {
    for (const c of golden.eulerCases) {
      const e = eulerXyzExtrinsic(c.wxyz);
      for (let i = 0; i < 3; i++) {
        // angles are compared modulo 2π (±π are the same angle; HoloMotion takes |·| anyway)
        const d = Math.abs(e[i] - c.euler_xyz[i]);
        expect(Math.min(d, Math.abs(d - 2 * Math.PI)), `${c.wxyz} [${i}]`).toBeLessThan(1e-9);
      }
    }
  });
});

describe('sonic-eval/1 golden (numpy transcription of compute_metrics_lite and the callback)', () => {
  it('covers success, pelvis-height, wrist-height and orientation failures and a reflection frame', () => {
    const names = golden.episodes.map((e) => [
      e.sonic.success,
      e.sonic.failure?.condition ?? null,
      e.sonic.failure?.body,
    ]);
    expect(names).toEqual([
      [true, null, undefined],
      [false, 'anchor_pos', 'pelvis'],
      [false, 'ee_body_pos', 'left_wrist_yaw_link'],
      [false, 'anchor_ori_full', 'pelvis'],
    ]);
    expect(golden.episodes[0].sonic.pa_sign_det).toContain(-1);
  });

  it.each(golden.episodes.map((e) => [e.name, e] as const))('episode %s', (_n, ep) => {
    const r = sonicEpisode(framesOf(ep));
    expect(r.contract).toBe(SONIC_EVAL_ID);
    expect(r.frames).toBe(ep.K - 1);
    expect(r.success).toBe(ep.sonic.success);
    closeObject(r.failure, ep.sonic.failure, 'failure');
    closeObject(r.sums, ep.sonic.sums, 'sums');
    closeObject(r.means, ep.sonic.means, 'means');
    closeObject(r.subsets, ep.sonic.subsets, 'subsets');
  });

  it('matches numpy per frame for mpjpe_pa, including the frame needing the reflection fix', () => {
    const idx = SONIC_BODY_NAMES.map((n) => golden.bodyNames.indexOf(n));
    const B = golden.bodyNames.length;
    for (const ep of golden.episodes) {
      for (let k = 1; k < ep.K; k++) {
        const X = new Float64Array(42);
        const Y = new Float64Array(42);
        idx.forEach((b, j) => {
          for (let c = 0; c < 3; c++) {
            X[3 * j + c] = ep.execBodyPosM[(k * B + b) * 3 + c] - ep.execBodyPosM[(k * B + idx[0]) * 3 + c];
            Y[3 * j + c] = ep.refBodyPosM[(k * B + b) * 3 + c] - ep.refBodyPosM[(k * B + idx[0]) * 3 + c];
          }
        });
        close(1000 * similarityProcrustesErrors(X, Y, 14), ep.sonic.pa_per_frame_mm[k - 1], `${ep.name} frame ${k}`);
      }
    }
  });

  it('aggregates frame-weighted over all and over successful episodes', () => {
    const rs = golden.episodes.map((e) => sonicEpisode(framesOf(e)));
    const agg = sonicAggregate(rs);
    expect(agg.contract).toBe(SONIC_EVAL_ID);
    closeObject({ ...agg, contract: undefined }, { ...golden.sonicAggregate, contract: undefined }, 'aggregate');
  });
});

describe('holomotion-eval/1 golden (numpy/scipy transcription of metrics.py)', () => {
  it.each(golden.episodes.map((e) => [e.name, e] as const))('episode %s', (_n, ep) => {
    const f = framesOf(ep);
    const pf = holomotionPerFrame(f);
    for (const [key, want] of Object.entries(ep.holomotion.per_frame)) {
      const got = pf[key as keyof typeof pf];
      expect(got, key).not.toBeNull();
      expect(got?.length, key).toBe(want.length);
      want.forEach((w, i) => close(got?.[i] ?? null, w, `${key}[${i}]`));
    }
    const r = holomotionEpisode(f);
    expect(r.contract).toBe(HOLOMOTION_EVAL_ID);
    expect(r.frames).toBe(ep.K);
    expect(r.success).toBe(ep.holomotion.success);
    close(r.max_root_height_error_m, ep.holomotion.max_root_height_error_m, 'max');
    const { root_ang_vel_error_rad_per_s, p95_root_ang_vel_error_rad_per_s, ...clip } = r.clip;
    expect(root_ang_vel_error_rad_per_s).toBeNull();
    expect(p95_root_ang_vel_error_rad_per_s).toBeNull();
    closeObject(clip, ep.holomotion.clip, 'clip');
  });

  it('HoloMotion fails only on root height: the wrist and orientation failures of SONIC succeed', () => {
    expect(golden.episodes.map((e) => holomotionEpisode(framesOf(e)).success)).toEqual([true, false, true, true]);
  });

  it('aggregates per clip (macro), failed clips included', () => {
    const agg = holomotionAggregate(golden.episodes.map((e) => holomotionEpisode(framesOf(e))));
    const strip = (o: Record<string, unknown>) => {
      const { root_ang_vel_error_rad_per_s: a, p95_root_ang_vel_error_rad_per_s: b, ...rest } = o;
      expect(a).toBeNull();
      expect(b).toBeNull();
      return rest;
    };
    expect(agg.episodes).toBe(4);
    close(agg.success_rate, golden.holomotionAggregate.success_rate as number, 'success_rate');
    closeObject(strip(agg.per_clip_mean), golden.holomotionAggregate.per_clip_mean as object, 'per_clip_mean');
    closeObject(strip(agg.per_clip_median), golden.holomotionAggregate.per_clip_median as object, 'per_clip_median');
  });
});

describe('peer contracts: behaviour', () => {
  it('identical motions: every error is 0 and both succeed', () => {
    const f = framesFrom(20, same);
    const s = sonicEpisode(f);
    expect(s.success).toBe(true);
    for (const key of SONIC_KEYS) expect(s.sums[key]).toBeCloseTo(0, 9);
    const h = holomotionEpisode(f);
    expect(h.success).toBe(true);
    for (const [key, v] of Object.entries(h.clip)) if (v !== null) expect(v, key).toBeCloseTo(0, 9);
  });

  it('a pure translation: mpjpe_g = offset·1000, but mpjpe_l, mpjpe_pa (and HoloMotion mpjpe_l) are 0', () => {
    const f = framesFrom(20, translated([0.06, -0.08, 0]));
    const s = sonicEpisode(f);
    expect(s.means.mpjpe_g_mm).toBeCloseTo(100, 9);
    expect(s.means.mpjpe_l_mm).toBeCloseTo(0, 9);
    expect(s.means.mpjpe_pa_mm).toBeCloseTo(0, 9);
    expect(s.means.vel_dist_mm_per_frame).toBeCloseTo(0, 9);
    const h = holomotionEpisode(f);
    expect(h.clip.mpjpe_g_mm).toBeCloseTo(100, 9);
    expect(h.clip.mpjpe_l_mm).toBeCloseTo(0, 9);
    expect(h.clip.root_height_error_m).toBeCloseTo(0, 12);
    // negative control: a vertical offset is a root height error
    expect(holomotionEpisode(framesFrom(20, translated([0, 0, 0.1]))).clip.root_height_error_m).toBeCloseTo(0.1, 12);
  });

  it('a yaw of the whole body about the root: SONIC mpjpe_l > 0 (translation only), HoloMotion mpjpe_l = 0', () => {
    const f = framesFrom(20, yawed(0.5));
    const s = sonicEpisode(f);
    expect(s.means.mpjpe_l_mm).toBeGreaterThan(50);
    expect(s.means.mpjpe_pa_mm).toBeCloseTo(0, 9); // a rotation is what Procrustes removes
    expect(s.success).toBe(true); // 0.5 rad: 0.25 rad² < 1
    const h = holomotionEpisode(f);
    expect(h.clip.mpjpe_l_mm).toBeCloseTo(0, 9);
    expect(h.clip.mpjpe_g_mm).toBeGreaterThan(50);
    expect(h.clip.root_quat_error_rad).toBeCloseTo(0.5, 9);
    // a world-z turn is a yaw of R_ref⁻¹·R_exec only up to the reference root's small tilt
    expect(h.clip.root_y_error_rad).toBeCloseTo(0.5, 2);
    expect(h.clip.root_r_error_rad).toBeLessThan(0.05);
    // negative control: above 1 rad SONIC terminates on the pelvis orientation
    const big = sonicEpisode(framesFrom(20, yawed(1.05)));
    expect(big.failure).toMatchObject({ frame: 1, condition: 'anchor_ori_full', body: 'pelvis' });
    expect(big.failure?.error).toBeCloseTo(1.05, 9);
  });

  it('a uniform scaling about the root: mpjpe_pa is 0 (the fit includes scale), mpjpe_l is not', () => {
    const s = sonicEpisode(framesFrom(20, scaled(1.2)));
    expect(s.means.mpjpe_pa_mm).toBeCloseTo(0, 9);
    expect(s.means.mpjpe_l_mm).toBeGreaterThan(10);
  });

  it('aggregation is frame-weighted: the pooled mean, not the mean of the episode means', () => {
    const a = sonicEpisode(framesFrom(10, translated([0.1, 0, 0]))); // 100 mm on 9 frames
    const b = sonicEpisode(framesFrom(100, translated([0.01, 0, 0]))); // 10 mm on 99 frames
    const agg = sonicAggregate([a, b]);
    const pooled = (9 * 100 + 99 * 10) / 108;
    expect(agg.all?.mpjpe_g_mm).toBeCloseTo(pooled, 9);
    expect(Math.abs((agg.all?.mpjpe_g_mm ?? 0) - (100 + 10) / 2)).toBeGreaterThan(30);
    expect(agg.frames).toBe(108);
    expect(agg.success_rate).toBe(1);
    expect(agg.success).toEqual(agg.all);
    // HoloMotion is the opposite: a plain mean over clips
    const h = holomotionAggregate([
      holomotionEpisode(framesFrom(10, translated([0.1, 0, 0]))),
      holomotionEpisode(framesFrom(100, translated([0.01, 0, 0]))),
    ]);
    expect(h.per_clip_mean.mpjpe_g_mm).toBeCloseTo(55, 9);
  });

  it('success-only averages leave the failed episodes out; none succeeded gives null', () => {
    const ok = sonicEpisode(framesFrom(10, translated([0.1, 0, 0])));
    const fail = sonicEpisode(framesFrom(10, translated([0, 0, -0.3])));
    expect(fail.failure).toMatchObject({ frame: 1, condition: 'anchor_pos', body: 'pelvis' });
    const agg = sonicAggregate([ok, fail]);
    expect(agg.success_rate).toBe(0.5);
    expect(agg.success?.mpjpe_g_mm).toBeCloseTo(100, 9);
    expect(agg.all?.mpjpe_g_mm).toBeCloseTo(200, 9);
    expect(sonicAggregate([fail]).success).toBeNull();
    expect(sonicAggregate([]).all).toBeNull();
  });

  it("vel/accel keep SONIC's denominator T: biased by (T−1)/T and (T−2)/T", () => {
    // the executed motion drifts 5 mm per frame in x: a 5 mm/frame velocity error on every body
    const T = 19;
    const s = sonicEpisode(framesFrom(T + 1, (r, k) => translated([0.005 * k, 0, 0])(r)));
    expect(s.means.vel_dist_mm_per_frame).toBeCloseTo((5 * (T - 1)) / T, 9);
    expect(s.sums.vel_dist_mm_per_frame).toBeCloseTo(5 * (T - 1), 9);
    expect(s.means.accel_dist_mm_per_frame2).toBeCloseTo(0, 9);
    // negative control: a quadratic drift has a 2·c accel error
    const q = sonicEpisode(framesFrom(T + 1, (r, k) => translated([0.001 * k * k, 0, 0])(r)));
    expect(q.means.accel_dist_mm_per_frame2).toBeCloseTo((2 * (T - 2)) / T, 9);
  });

  it('SONIC excludes frame 0; HoloMotion does not', () => {
    const wrong = (r: Pose, k: number) => (k === 0 ? yawed(2)(translated([1, 1, 1])(r)) : same(r));
    const f = framesFrom(12, wrong);
    const s = sonicEpisode(f);
    expect(s.success).toBe(true);
    for (const key of SONIC_KEYS) expect(s.sums[key]).toBeCloseTo(0, 9);
    const h = holomotionEpisode(f);
    expect(h.success).toBe(false);
    expect(h.clip.mpjpe_g_mm).toBeGreaterThan(100);
    // negative control: the same error on frame 1 counts for SONIC
    const s1 = sonicEpisode(framesFrom(12, (r, k) => (k === 1 ? translated([0, 0, 1])(r) : same(r))));
    expect(s1.success).toBe(false);
    expect(s1.sums.mpjpe_g_mm).toBeCloseTo(1000, 9);
  });

  it('a wrist too high by more than 0.25 m fails SONIC; 0.2 m does not', () => {
    const lift = (dz: number) => (r: Pose, k: number) => {
      const e = same(r);
      if (k === 3) e.pos[NAMES.indexOf('right_wrist_yaw_link')][2] += dz;
      return e;
    };
    expect(sonicEpisode(framesFrom(8, lift(0.3))).failure).toMatchObject({
      frame: 3,
      condition: 'ee_body_pos',
      body: 'right_wrist_yaw_link',
    });
    expect(sonicEpisode(framesFrom(8, lift(0.2))).success).toBe(true);
    expect(holomotionEpisode(framesFrom(8, lift(0.3))).success).toBe(true);
  });

  it('a missing SONIC body is an error naming it; HoloMotion scores any model', () => {
    const names = NAMES.filter((n) => n !== 'left_wrist_yaw_link');
    const f = framesFrom(6, translated([0.1, 0, 0]), names);
    expect(() => sonicEpisode(f)).toThrow(/left_wrist_yaw_link/);
    expect(holomotionEpisode(f).clip.mpjpe_g_mm).toBeCloseTo(100, 9);
  });

  it('bodies are found by name: reordering the model (root not first) changes nothing', () => {
    const exec = (r: Pose, k: number) => yawed(0.2 * Math.sin(k))(translated([0.01 * k, 0.02, 0.03])(r));
    const base = framesFrom(15, exec);
    const reordered = [...NAMES].reverse();
    const f = framesFrom(15, exec, reordered, reordered.indexOf('pelvis'));
    expect(f.rootBodyIndex).not.toBe(0);
    closeObject(sonicEpisode(f), sonicEpisode(base), 'sonic');
    closeObject(holomotionEpisode(f), holomotionEpisode(base), 'holomotion');
  });

  it('results are plain JSON and aggregate the same after a round trip', () => {
    const eps = golden.episodes.map(framesOf);
    const s = eps.map(sonicEpisode);
    const h = eps.map(holomotionEpisode);
    const rt = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
    expect(rt(s)).toEqual(s); // NaN or typed arrays would not survive
    expect(rt(h)).toEqual(h);
    expect(sonicAggregate(rt(s))).toEqual(sonicAggregate(s));
    expect(holomotionAggregate(rt(h))).toEqual(holomotionAggregate(h));
    expect(rt(sonicAggregate(s))).toEqual(sonicAggregate(s));
    expect(() => sonicAggregate(h as unknown as SonicEpisodeResult[])).toThrow(/contract/);
  });

  it('rejects malformed frames', () => {
    const f = framesFrom(6, same);
    expect(() => sonicEpisode({ ...f, K: 1, refJointPosRad: f.refJointPosRad.slice(0, NJ) })).toThrow(/at least 2/);
    expect(() => holomotionEpisode({ ...f, execBodyPosM: f.execBodyPosM.slice(1) })).toThrow(/execBodyPosM/);
    const bad = f.refBodyPosM.slice();
    bad[7] = NaN;
    expect(() => holomotionEpisode({ ...f, refBodyPosM: bad })).toThrow(/refBodyPosM/);
    expect(() => holomotionEpisode({ ...f, rootBodyIndex: NB })).toThrow(/rootBodyIndex/);
  });
});
