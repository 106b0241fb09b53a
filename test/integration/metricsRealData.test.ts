import { describe, expect, it } from 'vitest';
import { ClipPairEvaluator } from '../../src/domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { episodeMetricsJson, type EpisodeMetrics } from '../../src/domain/metrics/readings';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { MB_METRICS_1_READINGS } from '../helpers/mbMetricsFields';
import { OUR_G1, sharedData } from '../helpers/sharedData';
import { independentMetrics, percentile, type PlainMetrics } from './metricsIndependent';

// Real clips from ../shared/data as the reference; the executed motion is the same clip with a
// perturbation written here (time delay, joint offset, root offset) or another clip. Readings are
// checked against closed forms and against an independent computation (metricsIndependent.ts:
// its own resampling with exact slerp, MuJoCo's mj_kinematics, the formulas written literally).

const J = 29;
const HANDS_UP = sharedData('motions/g1_moves/csv/B_HandsUp.csv'); // 60 fps
const HANDS_UP_NPZ = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
const DANCE = sharedData('motions/lafan1_g1_csv/dance1_subject2.csv'); // 30 fps
const WALK = sharedData('motions/lafan1_g1_csv/walk1_subject1.csv');
const SPRINT = sharedData('motions/lafan1_g1_csv/sprint1_subject2.csv');
const JUMPS = sharedData('motions/lafan1_g1_csv/jumps1_subject1.csv');
const FENCE = sharedData('motions/g1_moves/csv/B_Fence2.csv');

const evaluator = new ClipPairEvaluator(MB_METRICS_1, loadRobotProfile(OUR_G1));

/** A copy of the clip with per-frame edits (source frame s copied to i, then `edit`). */
function perturb(
  c: MotionClip,
  source: (i: number) => number,
  edit: (i: number, root: Float64Array, joints: Float64Array) => void = () => undefined,
): MotionClip {
  const N = c.frameCount;
  const rootPosM = new Float64Array(3 * N);
  const rootQuatWxyz = new Float64Array(4 * N);
  const jointPosRad = new Float64Array(J * N);
  for (let i = 0; i < N; i++) {
    const s = source(i);
    rootPosM.set(c.rootPosM.subarray(3 * s, 3 * s + 3), 3 * i);
    rootQuatWxyz.set(c.rootQuatWxyz.subarray(4 * s, 4 * s + 4), 4 * i);
    jointPosRad.set(c.jointPosRad.subarray(J * s, J * s + J), J * i);
    edit(i, rootPosM.subarray(3 * i, 3 * i + 3), jointPosRad.subarray(J * i, J * i + J));
  }
  return { ...c, rootPosM, rootQuatWxyz, jointPosRad };
}

const num = (m: EpisodeMetrics, key: keyof EpisodeMetrics): number => {
  const r = m[key] as { available: boolean; value?: number; reason?: string };
  if (!r.available) throw new Error(`${String(key)} unavailable: ${r.reason}`);
  return r.value as number;
};

const READINGS = MB_METRICS_1_READINGS;

/** Every reading of the pipeline against the independent computation: 1e-9 relative (or 1e-9 absolute near 0). */
function expectAgreement(m: EpisodeMetrics, ind: PlainMetrics): void {
  const doc = episodeMetricsJson(m) as Record<string, unknown>;
  expect(doc.K).toBe(ind.K);
  expect(doc.failure).toEqual(ind.failure);
  for (const key of READINGS) {
    const ours = doc[key] as number;
    const theirs = ind[key];
    expect(Math.abs(ours - theirs), `${key}: ${ours} vs ${theirs}`).toBeLessThanOrEqual(
      1e-9 * Math.max(1, Math.abs(theirs)),
    );
  }
}

describe('real clips with a known perturbation', () => {
  it('G1 Moves B_HandsUp (60 fps) delayed by 6 source frames = 0.1 s = 5 frames on the 50 Hz timeline', async () => {
    const ref = loadClipFile(HANDS_UP);
    expect(ref.fps).toBe(60);
    const exec = perturb(ref, (i) => Math.max(0, i - 6));
    const { K, metrics: m, ref: R, exec: E } = evaluator.evaluate(ref, exec);
    expect(K).toBe(Math.floor(50 * ((ref.frameCount - 1) / 60) + 1e-9) + 1);
    // Closed form: E on the timeline is R shifted by 5 frames (holding R's first frame before).
    let maxShift = 0;
    for (let k = 0; k < K; k++) {
      const s = Math.max(0, k - 5);
      for (let j = 0; j < J; j++)
        maxShift = Math.max(maxShift, Math.abs(E.jointPosRad[J * k + j] - R.jointPosRad[J * s + j]));
    }
    expect(maxShift).toBeLessThan(1e-12);
    let sq = 0;
    for (let k = 0; k < K; k++)
      for (let j = 0; j < J; j++) sq += (R.jointPosRad[J * Math.max(0, k - 5) + j] - R.jointPosRad[J * k + j]) ** 2;
    expect(num(m, 'jointPosRmseRad')).toBeCloseTo(Math.sqrt(sq / (K * J)), 12);
    // E's accelerations are R's shifted by 5 frames (with R's first frame held before): their P95.
    const accR: number[] = [];
    for (let k = 1; k <= K - 2; k++) {
      for (let j = 0; j < J; j++) {
        const q = (i: number) => R.jointPosRad[J * Math.max(0, i - 5) + j];
        accR.push(Math.abs((q(k + 1) - 2 * q(k) + q(k - 1)) * 2500));
      }
    }
    expect(num(m, 'jointAccP95RadS2')).toBeCloseTo(percentile(accR, 95), 8);
    // And everything against the independent computation.
    expectAgreement(m, await independentMetrics(OUR_G1, ref, exec));
    expect(num(m, 'mpjpeLMm')).toBeGreaterThan(1);
  });

  it('LAFAN1 dance1 (30 fps) with a constant 0.03 rad offset on every joint', async () => {
    const ref = loadClipFile(DANCE);
    expect(ref.fps).toBe(30);
    const delta = 0.03;
    const exec = perturb(
      ref,
      (i) => i,
      (_i, _root, q) => q.forEach((v, j) => (q[j] = v + delta)),
    );
    const { metrics: m } = evaluator.evaluate(ref, exec);
    expect(Math.abs(num(m, 'jointPosRmseRad') - delta)).toBeLessThan(1e-12);
    expect(num(m, 'jointVelRmseRadS')).toBeLessThan(1e-10);
    // The offset does not change E's acceleration or jerk: they are R's own.
    const self = evaluator.evaluate(ref, ref).metrics;
    expect(num(m, 'jointAccRmsRadS2')).toBeCloseTo(num(self, 'jointAccRmsRadS2'), 8);
    expect(num(m, 'jointJerkP95RadS3')).toBeCloseTo(num(self, 'jointJerkP95RadS3'), 6);
    expect(num(self, 'mpjpeLMm')).toBe(0);
    expectAgreement(m, await independentMetrics(OUR_G1, ref, exec));
  });

  it('LAFAN1 walk1 with root offsets: translation is subtracted, drift and height are not', async () => {
    const ref = loadClipFile(WALK);
    const shifted = (dx: number, dy: number, dz: number) =>
      perturb(
        ref,
        (i) => i,
        (_i, root) => {
          root[0] += dx;
          root[1] += dy;
          root[2] += dz;
        },
      );
    // 0.3, 0.3 (0.42 m xy) and 0.1 m up: within every threshold; MPJPE-l ≈ 0; joints identical.
    const small = evaluator.evaluate(ref, shifted(0.3, 0.3, 0.1)).metrics;
    expect(episodeMetricsJson(small)).toMatchObject({
      failed: false,
      failure: null,
      progress_soft: 1,
      joint_pos_rmse: 0,
      joint_vel_rmse: 0,
    });
    expect(num(small, 'mpjpeLMm')).toBeLessThan(1e-9);
    // 0.4, 0.4 (0.57 m xy): drift from frame 0 → progress-soft 0, yet no hard failure.
    const drift = evaluator.evaluate(ref, shifted(0.4, 0.4, 0)).metrics;
    expect(episodeMetricsJson(drift)).toMatchObject({ failed: false, failure: null, progress_soft: 0 });
    expect(drift.progressStop).toEqual({ available: true, value: { frame: 0, cause: 'drift_xy' } });
    // 0.3 m up: root_height at frame 0.
    const up = evaluator.evaluate(ref, shifted(0, 0, 0.3)).metrics;
    expect(episodeMetricsJson(up)).toMatchObject({
      failed: true,
      failure: { frame: 0, condition: 'root_height', body: 'pelvis' },
      progress_soft: 0,
    });
    expectAgreement(drift, await independentMetrics(OUR_G1, ref, shifted(0.4, 0.4, 0)));
  });
});

describe('different real clips, against the independent computation', () => {
  const cases: [string, string, string][] = [
    ['LAFAN1 dance1 vs walk1', DANCE, WALK],
    ['LAFAN1 sprint1 vs jumps1', SPRINT, JUMPS],
    ['G1 Moves B_Fence2 (60 fps) vs LAFAN1 walk1 (30 fps)', FENCE, WALK],
    ['G1 Moves B_HandsUp CSV vs the same clip as NPZ', HANDS_UP, HANDS_UP_NPZ],
  ];
  for (const [name, a, b] of cases) {
    it(name, async () => {
      const ref = loadClipFile(a);
      const exec = loadClipFile(b);
      const { metrics } = evaluator.evaluate(ref, exec);
      const ind = await independentMetrics(OUR_G1, ref, exec);
      expectAgreement(metrics, ind);
    });
  }
});
