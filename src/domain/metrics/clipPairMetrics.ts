// From two clips to the readings of DESIGN §4: both are resampled to the contract rate on the
// common timeline (K from the shorter duration), body positions come from forward kinematics of
// (root pose, joint angles) on the contract's robot model, then the batch reducer runs.

import { commonTimelineFrameCount, resampleFrames, type ResampledFrames, type TimedFrames } from '../motion/resample';
import { ForwardKinematics } from '../robot/forwardKinematics';
import type { RobotProfile } from '../robot/robotProfile';
import { BatchEpisodeReducer } from './batchReducer';
import type { MetricContract } from './metricContract';
import { metricLayoutFor, type MetricFrames, type MetricLayout } from './metricLayout';
import { FULL_STATE, type EpisodeMetrics, type SourceCapabilities } from './readings';
import { StreamingEpisodeReducer, type StreamingOptions } from './streamingReducer';

/** Root pose and joint angles per frame (flat, frame-major; quaternions wxyz). */
export interface PoseFrames {
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
}

/**
 * World positions of every body for frames 0..K−1 (K×B×3, m) by FK. Allocation-free when `out`
 * (≥ K×B×3) and the scratch buffers are given.
 */
export function bodyPositions(
  fk: ForwardKinematics,
  frames: PoseFrames,
  K: number,
  out?: Float64Array,
  scratch: { pos: Float64Array; quat: Float64Array } = {
    pos: new Float64Array(fk.bodyCount * 3),
    quat: new Float64Array(fk.bodyCount * 4),
  },
): Float64Array {
  const B3 = fk.bodyCount * 3;
  const J = fk.jointCount;
  const pos = out ?? new Float64Array(K * B3);
  for (let k = 0; k < K; k++) {
    fk.compute(
      frames.rootPosM,
      frames.rootQuatWxyz,
      frames.jointPosRad,
      scratch.pos,
      scratch.quat,
      3 * k,
      4 * k,
      J * k,
    );
    pos.set(scratch.pos, k * B3);
  }
  return pos;
}

export interface ClipPairEvaluation {
  metrics: EpisodeMetrics;
  /** Frames on the common timeline. */
  K: number;
  /** R and E on the common timeline, with FK body positions (K×B×3). */
  ref: ResampledFrames & MetricFrames;
  exec: ResampledFrames & MetricFrames;
}

/** Evaluates executed clips against reference clips under one contract and robot model. */
export class ClipPairEvaluator {
  readonly layout: MetricLayout;
  readonly fk: ForwardKinematics;
  private readonly reducer: BatchEpisodeReducer;
  private readonly scratch: { pos: Float64Array; quat: Float64Array };

  constructor(
    readonly contract: MetricContract,
    readonly profile: RobotProfile,
  ) {
    this.layout = metricLayoutFor(contract, profile);
    this.fk = new ForwardKinematics(profile);
    this.reducer = new BatchEpisodeReducer(contract, this.layout);
    this.scratch = { pos: new Float64Array(3 * this.fk.bodyCount), quat: new Float64Array(4 * this.fk.bodyCount) };
  }

  /** Common-timeline frame count for the pair: K = floor(r·min(D_R, D_E) + 1e-9) + 1. */
  frameCount(ref: TimedFrames, exec: TimedFrames): number {
    return commonTimelineFrameCount(this.contract.rateHz, ref, exec);
  }

  /** Resamples both clips to the contract rate over the common timeline and adds FK body positions. */
  timeline(
    ref: TimedFrames,
    exec: TimedFrames,
  ): { K: number; ref: ResampledFrames & MetricFrames; exec: ResampledFrames & MetricFrames } {
    for (const [what, c] of [
      ['reference', ref],
      ['executed', exec],
    ] as const) {
      if (c.jointPosRad.length !== c.frameCount * this.layout.jointCount) {
        throw new RangeError(
          `${what} clip has ${c.jointPosRad.length / c.frameCount} joints per frame; the model has ${this.layout.jointCount}`,
        );
      }
    }
    const K = this.frameCount(ref, exec);
    const r = this.contract.rateHz;
    const R = resampleFrames(ref, r, K);
    const E = resampleFrames(exec, r, K);
    return {
      K,
      ref: { ...R, bodyPosM: bodyPositions(this.fk, R, K, undefined, this.scratch) },
      exec: { ...E, bodyPosM: bodyPositions(this.fk, E, K, undefined, this.scratch) },
    };
  }

  /** Batch readings of one executed clip against its reference. */
  evaluate(ref: TimedFrames, exec: TimedFrames, capabilities: SourceCapabilities = FULL_STATE): ClipPairEvaluation {
    const t = this.timeline(ref, exec);
    return { ...t, metrics: this.reducer.reduce(t.ref, t.exec, t.K, capabilities) };
  }
}

/**
 * Streaming form with FK included: push root pose and joint angles of R and E (frames already
 * on the common timeline); body positions are computed into internal single-frame buffers.
 * Allocation-free per frame.
 */
export class StreamingPoseMetrics {
  readonly reducer: StreamingEpisodeReducer;
  readonly fk: ForwardKinematics;
  private readonly refFrame: MetricFrames;
  private readonly execFrame: MetricFrames;
  private readonly quat: Float64Array;

  constructor(
    contract: MetricContract,
    profile: RobotProfile,
    capabilities: SourceCapabilities = FULL_STATE,
    options: StreamingOptions = {},
  ) {
    const layout = metricLayoutFor(contract, profile);
    this.fk = new ForwardKinematics(profile);
    this.reducer = new StreamingEpisodeReducer(contract, layout, capabilities, options);
    const B = layout.bodyCount;
    const J = layout.jointCount;
    this.refFrame = {
      rootQuatWxyz: new Float64Array(4),
      jointPosRad: new Float64Array(J),
      bodyPosM: new Float64Array(3 * B),
    };
    this.execFrame = {
      rootQuatWxyz: new Float64Array(4),
      jointPosRad: new Float64Array(J),
      bodyPosM: new Float64Array(3 * B),
    };
    this.quat = new Float64Array(4 * B);
  }

  /** Adds frame `refFrame` of `ref` and frame `execFrame` of `exec`. */
  pushPose(ref: PoseFrames, refFrame: number, exec: PoseFrames, execFrame: number): void {
    this.fill(this.refFrame, ref, refFrame);
    this.fill(this.execFrame, exec, execFrame);
    this.reducer.push(this.refFrame, this.execFrame);
  }

  private fill(dst: MetricFrames, src: PoseFrames, k: number): void {
    const J = this.fk.jointCount;
    const q = dst.rootQuatWxyz;
    for (let c = 0; c < 4; c++) q[c] = src.rootQuatWxyz[4 * k + c];
    const jp = dst.jointPosRad;
    for (let j = 0; j < J; j++) jp[j] = src.jointPosRad[J * k + j];
    this.fk.compute(src.rootPosM, src.rootQuatWxyz, src.jointPosRad, dst.bodyPosM, this.quat, 3 * k, 4 * k, J * k);
  }

  result(): EpisodeMetrics {
    return this.reducer.result();
  }
}
