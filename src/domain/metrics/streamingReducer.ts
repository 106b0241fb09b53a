// Streaming form: one frame pair at a time on the common timeline (live use at 50 Hz).
//
// Memory per episode: O(1) for every reading except the two P95s — a 4-frame window of E's joint
// angles (jerk needs q[k−1..k+2]), a 3-frame window of R's (velocity needs q[k−1], q[k+1]),
// scalar sums, the first failure and the first progress stop. The P95s are exact: the reducer
// keeps every |acceleration| and |jerk| value of the episode (2 × K × 29 doubles, 0.46 MB per
// minute at 50 Hz) and selects the percentile when a result is asked for. Give `expectedFrames`
// to preallocate them; push() then allocates nothing.
//
// Readings of frame k that need later frames (velocity and acceleration at k need k+1, jerk at k
// needs k+2) are added when those frames arrive. A failure at the newest frame is not reported
// until the next frame arrives, because a failure on the last frame K−1 does not count.

import { EpisodeAccumulator } from './episodeAccumulator';
import type { MetricContract } from './metricContract';
import type { MetricFrames, MetricLayout } from './metricLayout';
import { FULL_STATE, type EpisodeMetrics, type SourceCapabilities } from './readings';

export interface StreamingOptions {
  /** Frames the episode is expected to have (preallocates the P95 buffers). */
  expectedFrames?: number;
}

export class StreamingEpisodeReducer {
  private readonly acc: EpisodeAccumulator;
  private readonly eWindow: Float64Array;
  private readonly rWindow: Float64Array;
  private lastMpjpeM = NaN;
  private lastJointRmsRad = NaN;

  constructor(
    readonly contract: MetricContract,
    readonly layout: MetricLayout,
    capabilities: SourceCapabilities = FULL_STATE,
    options: StreamingOptions = {},
  ) {
    this.acc = new EpisodeAccumulator(contract, layout, capabilities, options.expectedFrames ?? 0);
    this.eWindow = new Float64Array(4 * layout.jointCount);
    this.rWindow = new Float64Array(3 * layout.jointCount);
  }

  /** Starts a new episode. */
  reset(capabilities: SourceCapabilities = this.acc.capabilities, options: StreamingOptions = {}): void {
    this.acc.reset(capabilities, options.expectedFrames ?? 0);
    this.lastMpjpeM = NaN;
    this.lastJointRmsRad = NaN;
  }

  /** Frames pushed so far. */
  get frameCount(): number {
    return this.acc.frames;
  }

  /**
   * Adds the next frame pair: R at frame `refFrame` of `ref`, E at frame `execFrame` of `exec`
   * (single-frame buffers use frame 0). Reads only; keeps nothing but copies of joint angles.
   */
  push(ref: MetricFrames, exec: MetricFrames, refFrame = 0, execFrame = 0): void {
    const acc = this.acc;
    const J = this.layout.jointCount;
    const n = acc.frames;
    const eq = exec.jointPosRad;
    const rq = ref.jointPosRad;
    const eo = execFrame * J;
    const ro = refFrame * J;
    const e0 = (n & 3) * J;
    const r0 = (n % 3) * J;
    const eWin = this.eWindow;
    const rWin = this.rWindow;
    for (let j = 0; j < J; j++) {
      eWin[e0 + j] = eq[eo + j];
      rWin[r0 + j] = rq[ro + j];
    }
    if (acc.canDetectFailure && acc.checksPending) acc.checkFrame(n, ref, refFrame, exec, execFrame);
    if (acc.capabilities.hasGlobalRootHeading) this.lastMpjpeM = acc.addMpjpeFrame(ref, refFrame, exec, execFrame);
    this.lastJointRmsRad = acc.addJointPositionFrame(eq, eo, rq, ro);
    if (n >= 2) {
      // velocity error and acceleration at k = n − 1
      acc.addVelocityAccelerationFrame(eWin, e0, ((n - 1) & 3) * J, ((n - 2) & 3) * J, rWin, r0, ((n - 2) % 3) * J);
    }
    if (n >= 3) {
      // jerk at k = n − 2 from q[n], q[n−1], q[n−2], q[n−3]
      acc.addJerkFrame(eWin, e0, ((n - 1) & 3) * J, ((n - 2) & 3) * J, ((n - 3) & 3) * J);
    }
    acc.frames = n + 1;
  }

  /** Live: mean root-relative body position error of the newest frame, mm; null before the first frame or without global heading. */
  get frameMpjpeLMm(): number | null {
    return Number.isFinite(this.lastMpjpeM) ? this.lastMpjpeM * 1000 : null;
  }

  /** Live: RMS joint-angle error of the newest frame, rad; null before the first frame. */
  get frameJointRmseRad(): number | null {
    return Number.isFinite(this.lastJointRmsRad) ? this.lastJointRmsRad : null;
  }

  /** Live: the first frame with a failure condition so far (−1: none), provisional for the newest frame. */
  get firstFailureFrame(): number {
    return this.acc.failFrame;
  }

  /**
   * The readings over the frames pushed so far, as if the newest frame were the last (K = frames
   * pushed). Can be called at any time; pushing may continue afterwards. Equal, number for
   * number, to the batch form over the same frames.
   */
  result(): EpisodeMetrics {
    return this.acc.finalize();
  }
}
