// Builders for metric tests: frames on the 50 Hz common timeline made from our G1's standing
// pose, perturbed per test, with FK body positions; and both reducer forms over them.
import { BatchEpisodeReducer } from '../../src/domain/metrics/batchReducer';
import { seededUniform } from '../../src/domain/stats/prng';
import { bodyPositions, type PoseFrames } from '../../src/domain/metrics/clipPairMetrics';
import { MB_METRICS_1, type MetricContract } from '../../src/domain/metrics/metricContract';
import { metricLayoutFor, type MetricFrames } from '../../src/domain/metrics/metricLayout';
import { FULL_STATE, type EpisodeMetrics, type SourceCapabilities } from '../../src/domain/metrics/readings';
import { StreamingEpisodeReducer } from '../../src/domain/metrics/streamingReducer';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { OUR_G1 } from '../helpers/sharedData';

export const J = 29;
export const RATE = 50;
export const profile = loadRobotProfile(OUR_G1);
export const fk = new ForwardKinematics(profile);
export const layout = metricLayoutFor(MB_METRICS_1, profile);
export const B = fk.bodyCount;
export const bodyIndex = (name: string): number => profile.bodies.findIndex((b) => b.name === name);
export const jointIndex = (name: string): number => profile.joints.findIndex((j) => j.name === name);

export type Frames = PoseFrames & MetricFrames & { K: number };

/** K frames of the standing pose (root at the keyframe's pose), FK included. */
export function standing(K: number): Frames {
  const p = profile.defaultPose;
  const rootPosM = new Float64Array(3 * K);
  const rootQuatWxyz = new Float64Array(4 * K);
  const jointPosRad = new Float64Array(J * K);
  for (let k = 0; k < K; k++) {
    rootPosM.set(p.rootPosM, 3 * k);
    rootQuatWxyz.set(p.rootQuatWxyz, 4 * k);
    jointPosRad.set(p.jointPosRad, J * k);
  }
  return withBodies({ K, rootPosM, rootQuatWxyz, jointPosRad });
}

/** Recomputes FK body positions after the poses were edited. */
export function withBodies(f: PoseFrames & { K: number }): Frames {
  return { ...f, bodyPosM: bodyPositions(fk, f, f.K) };
}

export function clone(f: Frames): Frames {
  return {
    K: f.K,
    rootPosM: f.rootPosM.slice(),
    rootQuatWxyz: f.rootQuatWxyz.slice(),
    jointPosRad: f.jointPosRad.slice(),
    bodyPosM: f.bodyPosM.slice(),
  };
}

/** Edits frames k ∈ [from, to) with `edit`, then recomputes FK. */
export function edit(f: Frames, from: number, to: number, e: (k: number, f: Frames) => void): Frames {
  const g = clone(f);
  for (let k = from; k < to; k++) e(k, g);
  return withBodies(g);
}

/** Left-multiplies the root orientation of frame k by a yaw of `angle` about world z. */
export function yawRoot(f: PoseFrames, k: number, angle: number): void {
  const c = Math.cos(angle / 2);
  const s = Math.sin(angle / 2);
  const o = 4 * k;
  const [w, x, y, z] = [f.rootQuatWxyz[o], f.rootQuatWxyz[o + 1], f.rootQuatWxyz[o + 2], f.rootQuatWxyz[o + 3]];
  // (c, 0, 0, s) ⊗ (w, x, y, z)
  f.rootQuatWxyz[o] = c * w - s * z;
  f.rootQuatWxyz[o + 1] = c * x - s * y;
  f.rootQuatWxyz[o + 2] = c * y + s * x;
  f.rootQuatWxyz[o + 3] = c * z + s * w;
}

export function batch(
  ref: Frames,
  exec: Frames,
  caps: SourceCapabilities = FULL_STATE,
  contract: MetricContract = MB_METRICS_1,
  K = Math.min(ref.K, exec.K),
): EpisodeMetrics {
  return new BatchEpisodeReducer(contract, metricLayoutFor(contract, profile)).reduce(ref, exec, K, caps);
}

export function stream(
  ref: Frames,
  exec: Frames,
  caps: SourceCapabilities = FULL_STATE,
  K = Math.min(ref.K, exec.K),
): EpisodeMetrics {
  const s = new StreamingEpisodeReducer(MB_METRICS_1, layout, caps);
  for (let k = 0; k < K; k++) s.push(ref, exec, k, k);
  return s.result();
}

/** The value of an available reading (fails the test otherwise). */
export function value<T>(r: { available: true; value: T } | { available: false; reason: string }): T {
  if (!r.available) throw new Error(`reading unavailable: ${r.reason}`);
  return r.value;
}

/** A moving reference: walking root with yaw sway, joints oscillating about the standing pose. */
export function moving(K: number, seed = 1): Frames {
  const rand = seededUniform(seed);
  const f = standing(K);
  const amp = Array.from({ length: J }, () => 0.3 * rand());
  const om = Array.from({ length: J }, () => 2 * Math.PI * (0.2 + rand()));
  const ph = Array.from({ length: J }, () => 2 * Math.PI * rand());
  for (let k = 0; k < K; k++) {
    const t = k / RATE;
    f.rootPosM[3 * k] += 0.5 * t;
    f.rootPosM[3 * k + 1] += 0.05 * Math.sin(2 * t);
    f.rootPosM[3 * k + 2] += 0.02 * Math.sin(5 * t);
    yawRoot(f, k, 0.4 * Math.sin(0.7 * t));
    for (let j = 0; j < J; j++) f.jointPosRad[J * k + j] += amp[j] * Math.sin(om[j] * t + ph[j]);
  }
  return withBodies(f);
}
