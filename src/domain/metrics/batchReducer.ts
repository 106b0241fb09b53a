// Batch form: the readings of a whole episode from K frames of R and E already on the common
// timeline (resampled to the contract rate, body positions from FK). The loops run metric by
// metric over whole arrays; each sum sees the same operations in the same frame order as the
// streaming form (see EpisodeAccumulator), so both give identical numbers.

import { EpisodeAccumulator } from './episodeAccumulator';
import type { MetricContract } from './metricContract';
import type { MetricFrames, MetricLayout } from './metricLayout';
import { FULL_STATE, type EpisodeMetrics, type SourceCapabilities } from './readings';

export class BatchEpisodeReducer {
  private readonly acc: EpisodeAccumulator;

  constructor(
    readonly contract: MetricContract,
    readonly layout: MetricLayout,
  ) {
    this.acc = new EpisodeAccumulator(contract, layout, FULL_STATE);
  }

  /**
   * Readings of one episode. `ref` and `exec` hold at least K frames each (see MetricFrames);
   * `capabilities` are those of the executed source. Reuses its buffers across calls.
   */
  reduce(
    ref: MetricFrames,
    exec: MetricFrames,
    K: number,
    capabilities: SourceCapabilities = FULL_STATE,
  ): EpisodeMetrics {
    const { jointCount: J, bodyCount: B } = this.layout;
    if (!(Number.isInteger(K) && K >= 0)) throw new RangeError(`K must be a non-negative integer, got ${K}`);
    for (const [name, f] of [
      ['reference', ref],
      ['executed', exec],
    ] as const) {
      if (f.jointPosRad.length < K * J || f.bodyPosM.length < K * B * 3 || f.rootQuatWxyz.length < K * 4) {
        throw new RangeError(`${name} frames hold fewer than K = ${K} frames of ${J} joints and ${B} bodies`);
      }
    }
    const acc = this.acc;
    acc.reset(capabilities, K);
    acc.frames = K;

    // Hard failure and progress stop; stops once both are known. Frame K−1 is checked too, like
    // the streaming form (which cannot know which frame is last): finalize() ignores a failure
    // or stop found there, but a NaN found there makes failure detection unavailable in both.
    if (acc.canDetectFailure) {
      for (let k = 0; k < K && acc.checksPending; k++) acc.checkFrame(k, ref, k, exec, k);
    }
    if (capabilities.hasGlobalRootHeading) {
      for (let k = 0; k < K; k++) acc.addMpjpeFrame(ref, k, exec, k);
    }
    const eq = exec.jointPosRad;
    const rq = ref.jointPosRad;
    for (let k = 0; k < K; k++) acc.addJointPositionFrame(eq, k * J, rq, k * J);
    for (let k = 1; k < K - 1; k++)
      acc.addVelocityAccelerationFrame(eq, (k + 1) * J, k * J, (k - 1) * J, rq, (k + 1) * J, (k - 1) * J);
    for (let k = 1; k < K - 2; k++) acc.addJerkFrame(eq, (k + 2) * J, (k + 1) * J, k * J, (k - 1) * J);
    return acc.finalize();
  }
}

/** One-off batch reduction (allocates its buffers; keep a BatchEpisodeReducer for many episodes). */
export function reduceEpisode(
  contract: MetricContract,
  layout: MetricLayout,
  ref: MetricFrames,
  exec: MetricFrames,
  K: number,
  capabilities: SourceCapabilities = FULL_STATE,
): EpisodeMetrics {
  return new BatchEpisodeReducer(contract, layout).reduce(ref, exec, K, capabilities);
}
