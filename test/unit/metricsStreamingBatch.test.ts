import { describe, expect, it } from 'vitest';
import { seededUniform } from '../../src/domain/stats/prng';
import { BatchEpisodeReducer } from '../../src/domain/metrics/batchReducer';
import { ClipPairEvaluator, StreamingPoseMetrics } from '../../src/domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { FULL_STATE, NO_MOTION_CAPTURE, type SourceCapabilities } from '../../src/domain/metrics/readings';
import { StreamingEpisodeReducer } from '../../src/domain/metrics/streamingReducer';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { sharedData } from '../helpers/sharedData';
import { batch, edit, J, layout, moving, profile, stream, value, yawRoot, type Frames } from './metricsHelpers';

// "Live (streaming) and batch reducers give identical numbers on the same frames" (DESIGN §4).
// Identical means exact equality (toEqual compares numbers with Object.is), not a tolerance: both
// forms run the same per-frame arithmetic (EpisodeAccumulator) in the same frame order, and
// JavaScript rounds every operation the same way everywhere.

const noisy = (ref: Frames, seed: number, extra: (k: number, f: Frames) => void = () => undefined): Frames => {
  const rand = seededUniform(seed);
  return edit(ref, 0, ref.K, (k, f) => {
    for (let j = 0; j < J; j++) f.jointPosRad[J * k + j] += 0.05 * (rand() - 0.5);
    f.rootPosM[3 * k] += 0.01 * (rand() - 0.5);
    extra(k, f);
  });
};

describe('streaming = batch, exactly', () => {
  const K = 300;
  const ref = moving(K, 11);
  const scenarios: [string, Frames, SourceCapabilities][] = [
    ['noise only', noisy(ref, 1), FULL_STATE],
    ['root drop at 200', noisy(ref, 2, (k, f) => (f.rootPosM[3 * k + 2] -= k >= 200 ? 0.3 : 0)), FULL_STATE],
    ['yaw 1.2 rad from 150', noisy(ref, 3, (k, f) => k >= 150 && yawRoot(f, k, 1.2)), FULL_STATE],
    [
      'drift then failure',
      noisy(ref, 4, (k, f) => ((f.rootPosM[3 * k + 1] += 0.004 * k), (f.rootPosM[3 * k + 2] -= k > 250 ? 0.5 : 0))),
      FULL_STATE,
    ],
    [
      'failure on the last frame only',
      noisy(ref, 5, (k, f) => (f.rootPosM[3 * k + 2] -= k === K - 1 ? 0.5 : 0)),
      FULL_STATE,
    ],
    ['no motion capture', noisy(ref, 6), NO_MOTION_CAPTURE],
    ['heading but no position', noisy(ref, 7), { hasGlobalRootPosition: false, hasGlobalRootHeading: true }],
  ];

  for (const [name, exec, caps] of scenarios) {
    it(name, () => {
      const b = batch(ref, exec, caps);
      const s = stream(ref, exec, caps);
      expect(s).toEqual(b);
      expect(value(b.jointJerkP95RadS3)).toBeGreaterThan(0);
    });
  }

  it('a result asked for mid-stream equals the batch over the frames so far, and streaming continues', () => {
    const exec = scenarios[3][1];
    const s = new StreamingEpisodeReducer(MB_METRICS_1, layout, FULL_STATE, { expectedFrames: K });
    const b = new BatchEpisodeReducer(MB_METRICS_1, layout);
    const checkpoints = new Set([1, 2, 3, 4, 5, 57, 180, 251, 252, K]);
    for (let k = 0; k < K; k++) {
      s.push(ref, exec, k, k);
      if (checkpoints.has(k + 1)) expect(s.result(), `after ${k + 1} frames`).toEqual(b.reduce(ref, exec, k + 1));
    }
    expect(s.frameCount).toBe(K);
    // The live per-frame values of the newest frame.
    expect(s.frameJointRmseRad).toBeGreaterThan(0);
    expect(s.frameMpjpeLMm).toBeGreaterThan(0);
    // Reset starts a new episode with the same buffers.
    s.reset(NO_MOTION_CAPTURE);
    for (let k = 0; k < 50; k++) s.push(ref, exec, k, k);
    expect(s.result()).toEqual(b.reduce(ref, exec, 50, NO_MOTION_CAPTURE));
    expect(s.frameMpjpeLMm).toBeNull();
  });

  it('the streaming buffers grow without changing any number when no size is given', () => {
    const exec = scenarios[0][1];
    const small = new StreamingEpisodeReducer(MB_METRICS_1, layout);
    for (let k = 0; k < K; k++) small.push(ref, exec, k, k);
    expect(small.result()).toEqual(batch(ref, exec));
  });
});

describe('streaming = batch on real clips', () => {
  const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);

  /** The clip delayed by `delay` source frames, with seeded joint noise and a root offset. */
  function perturbed(c: MotionClip, delay: number, seed: number): MotionClip {
    const rand = seededUniform(seed);
    const N = c.frameCount;
    const rootPosM = new Float64Array(3 * N);
    const rootQuatWxyz = new Float64Array(4 * N);
    const jointPosRad = new Float64Array(J * N);
    for (let i = 0; i < N; i++) {
      const s = Math.max(0, i - delay);
      for (let a = 0; a < 3; a++) rootPosM[3 * i + a] = c.rootPosM[3 * s + a] + (a === 0 ? 0.03 : 0);
      rootQuatWxyz.set(c.rootQuatWxyz.subarray(4 * s, 4 * s + 4), 4 * i);
      for (let j = 0; j < J; j++) jointPosRad[J * i + j] = c.jointPosRad[J * s + j] + 0.02 * (rand() - 0.5);
    }
    return { ...c, rootPosM, rootQuatWxyz, jointPosRad };
  }

  const cases: [string, () => [MotionClip, MotionClip]][] = [
    [
      'G1 Moves B_HandsUp (60 fps) against itself delayed 4 frames with noise',
      () => {
        const r = loadClipFile(sharedData('motions/g1_moves/csv/B_HandsUp.csv'));
        return [r, perturbed(r, 4, 1)];
      },
    ],
    [
      'LAFAN1 dance1 (30 fps) against LAFAN1 walk1 (different motions: fails early)',
      () => [
        loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv')),
        loadClipFile(sharedData('motions/lafan1_g1_csv/walk1_subject1.csv')),
      ],
    ],
    [
      'LAFAN1 jumps1 (30 fps) against G1 Moves J_Dance18_TikTok (60 fps)',
      () => [
        loadClipFile(sharedData('motions/lafan1_g1_csv/jumps1_subject1.csv')),
        loadClipFile(sharedData('motions/g1_moves/csv/J_Dance18_TikTok.csv'), { fps: 60 }),
      ],
    ],
  ];

  for (const [name, make] of cases) {
    it(name, () => {
      const [refClip, execClip] = make();
      const { K, ref, exec, metrics } = evaluator.evaluate(refClip, execClip);
      expect(K).toBe(evaluator.frameCount(refClip, execClip));
      const s = new StreamingEpisodeReducer(MB_METRICS_1, layout, FULL_STATE, { expectedFrames: K });
      for (let k = 0; k < K; k++) s.push(ref, exec, k, k);
      expect(s.result()).toEqual(metrics);
      // The streaming form with its own FK, fed root pose and joints frame by frame.
      const live = new StreamingPoseMetrics(MB_METRICS_1, profile);
      for (let k = 0; k < K; k++) live.pushPose(ref, k, exec, k);
      expect(live.result()).toEqual(metrics);
      for (const key of [
        'mpjpeLMm',
        'jointPosRmseRad',
        'jointVelRmseRadS',
        'jointAccP95RadS2',
        'jointJerkP95RadS3',
      ] as const) {
        expect(value(metrics[key])).toBeGreaterThan(0);
      }
    });
  }
});
