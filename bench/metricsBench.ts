import { BatchEpisodeReducer } from '../src/domain/metrics/batchReducer';
import { seededUniform } from '../src/domain/stats/prng';
import { bodyPositions, type PoseFrames } from '../src/domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../src/domain/metrics/metricContract';
import { metricLayoutFor } from '../src/domain/metrics/metricLayout';
import { ForwardKinematics } from '../src/domain/robot/forwardKinematics';
import { loadRobotProfile } from '../src/services/robot/loadRobotProfile';
import { fmtRate } from './benchSupport';

// Batch metric reduction over a synthetic workload: 1,000 clip pairs × 10 s at
// 50 Hz (K = 501), 29 joints, 30 bodies. Per clip, FK of R and E (the body positions MPJPE-l and
// the failure tests need) and the batch reducer run back to back, each timed, so both are
// measured in the same run on the same frames. Target: the metrics (FK excluded) take less time
// than the FK of the same frames, i.e. metric time / FK time < 1.
export const METRICS_TARGET_RATIO = 1;

/**
 * One synthetic pair: R walks forward with yaw sway and sinusoidal joints within the joint
 * ranges; E is R delayed by 1 frame, with joint noise and root offsets. Every tenth clip's E
 * drops 0.3 m two thirds of the way through (a hard failure), so the failure path is exercised.
 */
export function makePair(
  seed: number,
  K: number,
  limits: ([number, number] | null)[],
  ref: PoseFrames,
  exec: PoseFrames,
): void {
  const rand = seededUniform(seed);
  const J = limits.length;
  const amp = limits.map((l) => (l ? 0.15 * (l[1] - l[0]) * rand() : 0.15));
  const mid = limits.map((l) => (l ? 0.5 * (l[0] + l[1]) : 0));
  const omega = limits.map(() => 2 * Math.PI * (0.2 + 1.5 * rand()));
  const phase = limits.map(() => 2 * Math.PI * rand());
  const speed = 0.2 + 0.8 * rand();
  const fails = seed % 10 === 0;
  for (let k = 0; k < K; k++) {
    const t = k / 50;
    const yaw = 0.3 * Math.sin(0.5 * t);
    ref.rootPosM[3 * k] = speed * t;
    ref.rootPosM[3 * k + 1] = 0.1 * Math.sin(t);
    ref.rootPosM[3 * k + 2] = 0.79 + 0.02 * Math.sin(4 * t);
    ref.rootQuatWxyz[4 * k] = Math.cos(yaw / 2);
    ref.rootQuatWxyz[4 * k + 1] = 0;
    ref.rootQuatWxyz[4 * k + 2] = 0;
    ref.rootQuatWxyz[4 * k + 3] = Math.sin(yaw / 2);
    for (let j = 0; j < J; j++) ref.jointPosRad[J * k + j] = mid[j] + amp[j] * Math.sin(omega[j] * t + phase[j]);
  }
  for (let k = 0; k < K; k++) {
    const s = Math.max(0, k - 1);
    const drop = fails && k > (2 * K) / 3 ? 0.3 : 0;
    exec.rootPosM[3 * k] = ref.rootPosM[3 * s] + 0.05;
    exec.rootPosM[3 * k + 1] = ref.rootPosM[3 * s + 1] - 0.02;
    exec.rootPosM[3 * k + 2] = ref.rootPosM[3 * s + 2] - drop;
    for (let c = 0; c < 4; c++) exec.rootQuatWxyz[4 * k + c] = ref.rootQuatWxyz[4 * s + c];
    for (let j = 0; j < J; j++) exec.jointPosRad[J * k + j] = ref.jointPosRad[J * s + j] + 0.02 * (rand() - 0.5);
  }
}

export interface MetricsBenchResult {
  ratio: number;
  pass: boolean;
  lines: string[];
}

export function benchMetrics(modelFile: string, label: string, clips = 1000, seconds = 10): MetricsBenchResult {
  const profile = loadRobotProfile(modelFile);
  const fk = new ForwardKinematics(profile);
  const layout = metricLayoutFor(MB_METRICS_1, profile);
  const reducer = new BatchEpisodeReducer(MB_METRICS_1, layout);
  const K = Math.floor(50 * seconds + 1e-9) + 1;
  const J = fk.jointCount;
  const B = fk.bodyCount;
  const newPose = (): PoseFrames => ({
    rootPosM: new Float64Array(3 * K),
    rootQuatWxyz: new Float64Array(4 * K),
    jointPosRad: new Float64Array(J * K),
  });
  const ref = newPose();
  const exec = newPose();
  const refBodies = new Float64Array(K * B * 3);
  const execBodies = new Float64Array(K * B * 3);
  const scratch = { pos: new Float64Array(3 * B), quat: new Float64Array(4 * B) };
  const limits = profile.joints.map(
    (j) => (j.rangeRad ? [j.rangeRad[0], j.rangeRad[1]] : null) as [number, number] | null,
  );
  const refFrames = { rootQuatWxyz: ref.rootQuatWxyz, jointPosRad: ref.jointPosRad, bodyPosM: refBodies };
  const execFrames = { rootQuatWxyz: exec.rootQuatWxyz, jointPosRad: exec.jointPosRad, bodyPosM: execBodies };

  let fkMs = 0;
  let metricMs = 0;
  let failed = 0;
  let checksum = 0;
  const warmup = 50;
  for (let c = -warmup; c < clips; c++) {
    makePair(c + warmup + 1, K, limits, ref, exec);
    const t0 = performance.now();
    bodyPositions(fk, ref, K, refBodies, scratch);
    bodyPositions(fk, exec, K, execBodies, scratch);
    const t1 = performance.now();
    const m = reducer.reduce(refFrames, execFrames, K);
    const t2 = performance.now();
    if (c < 0) continue;
    fkMs += t1 - t0;
    metricMs += t2 - t1;
    if (m.failure.available && m.failure.value) failed++;
    if (m.mpjpeLMm.available) checksum += m.mpjpeLMm.value;
  }
  const pairs = clips * K;
  const ratio = metricMs / fkMs;
  const pass = ratio < METRICS_TARGET_RATIO;
  return {
    ratio,
    pass,
    lines: [
      `metrics ${label}: ${clips} clips × ${seconds} s at 50 Hz (${pairs} frame pairs, ${J} joints, ${B} bodies; ${failed} clips with a hard failure, mean MPJPE-l ${(checksum / clips).toFixed(2)} mm)`,
      `  FK ${fmtRate((2 * pairs) / (fkMs / 1000))} frames (${(fkMs / 1000).toFixed(2)} s), metrics ${fmtRate(pairs / (metricMs / 1000))} frame pairs (${(metricMs / 1000).toFixed(2)} s), FK + metrics ${fmtRate(pairs / ((fkMs + metricMs) / 1000))} frame pairs`,
      `  metric time / FK time ${ratio.toFixed(2)} (target < ${METRICS_TARGET_RATIO}) ${pass ? 'PASS' : 'BELOW TARGET'}`,
    ],
  };
}
