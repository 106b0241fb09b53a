import { resampleFrames, slerpWxyzInto } from '../../domain/motion/resample';
import type { ExecutedTrajectoryDto } from '../../api/clipDto';

// A recorded trajectory on the 50 Hz contract timeline (mb-metrics/1): what the gap review
// replays and what the peers' contracts score (src/services/analysis/peerEvaluation.ts).

export interface TimedSample {
  timeS: number;
  rootPosM: readonly number[] | null;
  rootQuatWxyz: readonly number[] | null;
  jointPosRad: readonly number[];
}

/** The executed trajectory on the contract's grid (timeS = k / rate), and how it got there. */
export interface ContractTimeline extends ExecutedTrajectoryDto {
  sourceRateHz: number;
  resampling: 'on_grid' | 'contract_resampler' | 'by_time';
}

/** Time stamps within this of a grid point are on it (the recorder writes tick / rate). */
const ON_GRID_S = 1e-9;
/** A source is uniform when every stamp is within this of t0 + i·dt. */
const UNIFORM_S = 1e-6;

/**
 * A recorded trajectory on the contract timeline t_k = k / rate from its first frame (time 0 of
 * the episode is the reference's frame 0; mb-metrics/1): K = floor(rate·D + 1e-9) + 1 frames.
 * When every t_k is a recorded frame (a 50 Hz episode, or a 500 Hz G1 recording) those frames are
 * taken as they are; else a uniform source goes through the contract's resampler (resampleFrames:
 * linear, shortest-arc slerp); a non-uniform one is interpolated by time stamp the same way. The
 * root is kept only when every frame has one (a trial without motion capture has none).
 */
export function toContractTimeline(
  samples: readonly TimedSample[],
  rateHz: number,
  jointCount: number,
): ContractTimeline {
  const n = samples.length;
  if (n === 0)
    return {
      frames: 0,
      timeS: [],
      rootPosM: null,
      rootQuatWxyz: null,
      jointPosRad: [],
      sourceRateHz: Number.NaN,
      resampling: 'on_grid',
    };
  const t0 = samples[0].timeS;
  const tau = samples.map((s) => s.timeS - t0);
  for (let i = 1; i < n; i++)
    if (!(tau[i] > tau[i - 1]))
      throw new RangeError(
        `executed frame ${i} at ${samples[i].timeS} s does not come after frame ${i - 1} (${samples[i - 1].timeS} s)`,
      );
  for (let i = 0; i < n; i++)
    if (samples[i].jointPosRad.length !== jointCount)
      throw new RangeError(
        `executed frame ${i} has ${samples[i].jointPosRad.length} joint angles, expected ${jointCount}`,
      );
  const D = tau[n - 1];
  const K = Math.floor(rateHz * D + 1e-9) + 1;
  const hasRoot = samples.every((s) => s.rootPosM !== null);
  const hasQuat = samples.every((s) => s.rootQuatWxyz !== null);
  const sourceRateHz = n > 1 ? (n - 1) / D : rateHz;
  const timeS = Array.from({ length: K }, (_, k) => k / rateHz);
  const out: ContractTimeline = {
    frames: K,
    timeS,
    rootPosM: hasRoot ? [] : null,
    rootQuatWxyz: hasQuat ? [] : null,
    jointPosRad: [],
    sourceRateHz,
    resampling: 'on_grid',
  };

  // Every grid time a recorded frame?
  const picks: number[] = [];
  for (let k = 0, i = 0; k < K; k++) {
    const t = k / rateHz;
    while (i < n - 1 && tau[i] < t - ON_GRID_S) i++;
    if (Math.abs(tau[i] - t) > ON_GRID_S) break;
    picks.push(i);
  }
  if (picks.length === K) {
    for (const i of picks) {
      const s = samples[i];
      if (out.rootPosM) out.rootPosM.push(...s.rootPosM!);
      if (out.rootQuatWxyz) out.rootQuatWxyz.push(...s.rootQuatWxyz!);
      out.jointPosRad.push(...s.jointPosRad);
    }
    return out;
  }

  const root = new Float64Array(3 * n);
  const quat = new Float64Array(4 * n);
  const q = new Float64Array(jointCount * n);
  for (let i = 0; i < n; i++) {
    const s = samples[i];
    if (s.rootPosM) root.set(s.rootPosM, 3 * i);
    quat.set(s.rootQuatWxyz ?? [1, 0, 0, 0], 4 * i);
    q.set(s.jointPosRad, jointCount * i);
  }
  const dt = D / (n - 1);
  const uniform = tau.every((t, i) => Math.abs(t - i * dt) <= UNIFORM_S);
  if (uniform) {
    const r = resampleFrames(
      { fps: 1 / dt, frameCount: n, rootPosM: root, rootQuatWxyz: quat, jointPosRad: q },
      rateHz,
      K,
    );
    out.resampling = 'contract_resampler';
    if (out.rootPosM) out.rootPosM = Array.from(r.rootPosM);
    if (out.rootQuatWxyz) out.rootQuatWxyz = Array.from(r.rootQuatWxyz);
    out.jointPosRad = Array.from(r.jointPosRad);
    return out;
  }
  // Non-uniform stamps: the same interpolation, by time.
  out.resampling = 'by_time';
  const qk = new Float64Array(4);
  for (let k = 0, i = 0; k < K; k++) {
    const t = k / rateHz;
    while (i < n - 2 && tau[i + 1] <= t) i++;
    const a = i >= n - 1 ? 0 : Math.min(1, Math.max(0, (t - tau[i]) / (tau[i + 1] - tau[i])));
    const i1 = Math.min(i + 1, n - 1);
    if (out.rootPosM)
      for (let c = 0; c < 3; c++) out.rootPosM.push(root[3 * i + c] + (root[3 * i1 + c] - root[3 * i + c]) * a);
    if (out.rootQuatWxyz) {
      slerpWxyzInto(qk, 0, quat, 4 * i, quat, 4 * i1, a);
      out.rootQuatWxyz.push(...qk);
    }
    for (let j = 0; j < jointCount; j++)
      out.jointPosRad.push(q[jointCount * i + j] + (q[jointCount * i1 + j] - q[jointCount * i + j]) * a);
  }
  return out;
}
