// Per-frame readings of mb-metrics/1 over an episode, for plots over time (docs/CONSOLE.md,
// "Plots over time"). Frames are pushed in timeline order (k = 0, 1, …, t_k = k/r), each a frame
// pair already on the common timeline with FK body positions (MetricFrames), exactly what the
// streaming reducer takes — and the builder runs the streaming reducer itself, so the plotted
// MPJPE-l and joint RMS error of frame k are the reducer's own per-frame terms
// (StreamingEpisodeReducer.frameMpjpeLMm / frameJointRmseRad) and the failure marker is the
// reducer's decision (first failing frame, never the last frame), not a second derivation.
//
// Beside them it keeps, per frame, the three quantities the hard-failure rule compares with the
// contract's thresholds — |z_root(E) − z_root(R)| (m), the angle of q_root(R)⁻¹·q_root(E) (rad)
// and the largest |z_b(E) − z_b(R)| over the contract's end-effectors (m) — and the signed error
// of every joint, q_E − q_R (rad). A value the executed source cannot give (MPJPE-l or the failure
// quantities without a global root) is NaN, never 0.
//
// Columns are growable Float64Arrays (amortised doubling): a live run appends without allocating
// per frame. Read the first `count` entries.

import { grownCapacity, growRows } from '../buffers/growableRows';
import { relativeAngle } from './episodeAccumulator';
import type { MetricContract } from './metricContract';
import type { MetricFrames, MetricLayout } from './metricLayout';
import type { HardFailure, Reading, SourceCapabilities } from './readings';
import { StreamingEpisodeReducer } from './streamingReducer';

export class FrameSeriesBuilder {
  readonly contract: MetricContract;
  readonly layout: MetricLayout;
  readonly capabilities: SourceCapabilities;
  /** Frames pushed. */
  count = 0;
  /** t_k = k / r, seconds. */
  timeS: Float64Array;
  /** MPJPE-l of frame k (mean root-relative body error), mm; NaN without the executed root's global heading. */
  mpjpeLMm: Float64Array;
  /** RMS of the 29 joint-angle errors of frame k, rad. */
  jointRmseRad: Float64Array;
  /** |z_root(E) − z_root(R)|, m; NaN without a global root position. */
  rootHeightErrM: Float64Array;
  /** Angle of q_root(R)⁻¹·q_root(E), rad; NaN without a global heading. */
  rootOrientationErrRad: Float64Array;
  /** max over the contract's end-effectors of |z_b(E) − z_b(R)|, m; NaN without a global root position. */
  endEffectorHeightErrM: Float64Array;
  /** q_E − q_R per frame and joint, count × jointCount (frame-major), rad. */
  jointErrRad: Float64Array;

  private readonly reducer: StreamingEpisodeReducer;
  private readonly canCheck: boolean;

  constructor(contract: MetricContract, layout: MetricLayout, capabilities: SourceCapabilities, expectedFrames = 0) {
    this.contract = contract;
    this.layout = layout;
    this.capabilities = capabilities;
    this.reducer = new StreamingEpisodeReducer(contract, layout, capabilities, { expectedFrames });
    this.canCheck = capabilities.hasGlobalRootPosition && capabilities.hasGlobalRootHeading;
    const c = Math.max(16, expectedFrames);
    this.timeS = new Float64Array(c);
    this.mpjpeLMm = new Float64Array(c);
    this.jointRmseRad = new Float64Array(c);
    this.rootHeightErrM = new Float64Array(c);
    this.rootOrientationErrRad = new Float64Array(c);
    this.endEffectorHeightErrM = new Float64Array(c);
    this.jointErrRad = new Float64Array(c * layout.jointCount);
  }

  /** Adds frame k = count: R at frame `rf` of `ref`, E at frame `ef` of `exec` (single-frame buffers: 0). */
  push(ref: MetricFrames, rf: number, exec: MetricFrames, ef: number): void {
    const k = this.count;
    this.reserve(k + 1);
    this.reducer.push(ref, exec, rf, ef);
    this.timeS[k] = k / this.contract.rateHz;
    this.mpjpeLMm[k] = this.reducer.frameMpjpeLMm ?? Number.NaN;
    this.jointRmseRad[k] = this.reducer.frameJointRmseRad ?? Number.NaN;

    const J = this.layout.jointCount;
    const eq = exec.jointPosRad;
    const rq = ref.jointPosRad;
    for (let j = 0; j < J; j++) this.jointErrRad[k * J + j] = eq[ef * J + j] - rq[rf * J + j];

    if (this.canCheck) {
      const B3 = 3 * this.layout.bodyCount;
      const rb = ref.bodyPosM;
      const eb = exec.bodyPosM;
      const ro = rf * B3;
      const eo = ef * B3;
      const rootZ = 3 * this.layout.rootBodyIndex + 2;
      this.rootHeightErrM[k] = Math.abs(eb[eo + rootZ] - rb[ro + rootZ]);
      this.rootOrientationErrRad[k] = relativeAngle(ref.rootQuatWxyz, 4 * rf, exec.rootQuatWxyz, 4 * ef);
      let ee = 0;
      const ees = this.layout.endEffectorBodyIndices;
      for (let i = 0; i < ees.length; i++) {
        const z = 3 * ees[i] + 2;
        ee = Math.max(ee, Math.abs(eb[eo + z] - rb[ro + z]));
      }
      this.endEffectorHeightErrM[k] = ee;
    } else {
      this.rootHeightErrM[k] = Number.NaN;
      this.rootOrientationErrRad[k] = Number.NaN;
      this.endEffectorHeightErrM[k] = Number.NaN;
    }
    this.count = k + 1;
  }

  /** The reducer's first failing frame so far, −1 for none (provisional for the newest frame, which may be the last). */
  get firstFailureFrame(): number {
    return this.reducer.firstFailureFrame;
  }

  /**
   * The contract's hard failure over the frames so far, the newest taken as the last (so a
   * failure there does not count): the reducer's own reading, unavailable with its reason when
   * the executed source has no global root.
   */
  failure(): Reading<HardFailure | null> {
    return this.reducer.result().failure;
  }

  /** The signed error of joint `j` over the frames so far (a new array, `count` long), rad. */
  jointErrorOf(j: number): Float64Array {
    const J = this.layout.jointCount;
    if (!(Number.isInteger(j) && j >= 0 && j < J)) throw new RangeError(`joint index ${j} is not in 0..${J - 1}`);
    const out = new Float64Array(this.count);
    for (let k = 0; k < this.count; k++) out[k] = this.jointErrRad[k * J + j];
    return out;
  }

  private reserve(n: number): void {
    const cap = this.timeS.length;
    if (n <= cap) return;
    const c = grownCapacity(cap, n);
    const k = this.count;
    this.timeS = growRows(this.timeS, 1, k, c);
    this.mpjpeLMm = growRows(this.mpjpeLMm, 1, k, c);
    this.jointRmseRad = growRows(this.jointRmseRad, 1, k, c);
    this.rootHeightErrM = growRows(this.rootHeightErrM, 1, k, c);
    this.rootOrientationErrRad = growRows(this.rootOrientationErrRad, 1, k, c);
    this.endEffectorHeightErrM = growRows(this.endEffectorHeightErrM, 1, k, c);
    this.jointErrRad = growRows(this.jointErrRad, this.layout.jointCount, k, c);
  }
}
