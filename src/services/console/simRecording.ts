import type { StateFrame } from '../../domain/robot/stateFrame';
import { growRows, grownCapacity } from '../../domain/buffers/growableRows';
import { slerpWxyzInto } from '../../domain/motion/resample';

// The executed frames of one console run, as the services keep them: time, root pose, joint
// angles and the live readings after each frame, in growable Float64Arrays (amortised doubling;
// a two-minute 50 Hz run is ~2 MB). The display pushes read slices of it; sim.result returns it
// whole; the batch metrics run over it at the end.

export interface LiveReading {
  mpjpeLMm: number | null;
  jointRmseRad: number | null;
  firstFailureFrame: number | null;
}

export class SimRecording {
  count = 0;
  /** Known from the first frame: does the backend give a root position / orientation? */
  hasRootPosition: boolean | null = null;
  hasRootOrientation: boolean | null = null;
  timeS: Float64Array;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
  liveMpjpeLMm: Float64Array;
  liveJointRmseRad: Float64Array;
  liveFailFrame: Float64Array;

  constructor(
    readonly jointCount: number,
    capacity = 256,
  ) {
    const c = Math.max(2, capacity);
    this.timeS = new Float64Array(c);
    this.rootPosM = new Float64Array(3 * c);
    this.rootQuatWxyz = new Float64Array(4 * c);
    this.jointPosRad = new Float64Array(jointCount * c);
    this.liveMpjpeLMm = new Float64Array(c);
    this.liveJointRmseRad = new Float64Array(c);
    this.liveFailFrame = new Float64Array(c);
  }

  private reserve(n: number): void {
    if (n <= this.timeS.length) return;
    const c = grownCapacity(this.timeS.length, n);
    this.timeS = growRows(this.timeS, 1, this.count, c);
    this.rootPosM = growRows(this.rootPosM, 3, this.count, c);
    this.rootQuatWxyz = growRows(this.rootQuatWxyz, 4, this.count, c);
    this.jointPosRad = growRows(this.jointPosRad, this.jointCount, this.count, c);
    this.liveMpjpeLMm = growRows(this.liveMpjpeLMm, 1, this.count, c);
    this.liveJointRmseRad = growRows(this.liveJointRmseRad, 1, this.count, c);
    this.liveFailFrame = growRows(this.liveFailFrame, 1, this.count, c);
  }

  /**
   * Appends a frame (copied). Frames whose time goes backwards, or whose joint vector has the
   * wrong length, are refused (false); the caller counts them.
   */
  append(f: StateFrame, live: LiveReading | null): boolean {
    const J = this.jointCount;
    if (!Number.isFinite(f.timeS) || f.jointPosRad.length !== J) return false;
    if (this.count > 0 && f.timeS <= this.timeS[this.count - 1]) return false;
    if (this.hasRootPosition === null) this.hasRootPosition = f.rootPosM !== null;
    if (this.hasRootOrientation === null) this.hasRootOrientation = f.rootQuatWxyz !== null;
    const i = this.count;
    this.reserve(i + 1);
    this.timeS[i] = f.timeS;
    this.jointPosRad.set(f.jointPosRad, J * i);
    if (f.rootPosM) this.rootPosM.set(f.rootPosM, 3 * i);
    else if (i > 0) this.rootPosM.copyWithin(3 * i, 3 * (i - 1), 3 * i);
    if (f.rootQuatWxyz) this.rootQuatWxyz.set(f.rootQuatWxyz, 4 * i);
    else if (i > 0) this.rootQuatWxyz.copyWithin(4 * i, 4 * (i - 1), 4 * i);
    else this.rootQuatWxyz.set([1, 0, 0, 0], 0);
    this.liveMpjpeLMm[i] = live?.mpjpeLMm ?? Number.NaN;
    this.liveJointRmseRad[i] = live?.jointRmseRad ?? Number.NaN;
    this.liveFailFrame[i] = live?.firstFailureFrame ?? Number.NaN;
    this.count = i + 1;
    return true;
  }

  /**
   * The recording on the `rateHz` timeline t_k = k/rateHz, k = 0..K−1 (K from the last frame's
   * time), as the metric contract wants its executed clip. A recording already on that timeline
   * (the embedded simulator's) is returned as is, without copying or rounding; any other is
   * interpolated (linear; shortest-arc slerp for the orientation), the ends held.
   */
  onTimeline(rateHz: number): {
    fps: number;
    frameCount: number;
    rootPosM: Float64Array;
    rootQuatWxyz: Float64Array;
    jointPosRad: Float64Array;
  } {
    const n = this.count;
    const J = this.jointCount;
    let exact = n > 0;
    for (let k = 0; k < n && exact; k++) if (this.timeS[k] !== k / rateHz) exact = false;
    if (exact || n === 0) {
      return {
        fps: rateHz,
        frameCount: n,
        rootPosM: this.rootPosM.subarray(0, 3 * n),
        rootQuatWxyz: this.rootQuatWxyz.subarray(0, 4 * n),
        jointPosRad: this.jointPosRad.subarray(0, J * n),
      };
    }
    const last = this.timeS[n - 1];
    const K = last > 0 ? Math.floor(last * rateHz + 1e-9) + 1 : 1;
    const pos = new Float64Array(3 * K);
    const quat = new Float64Array(4 * K);
    const q = new Float64Array(J * K);
    let i = 0;
    for (let k = 0; k < K; k++) {
      const t = k / rateHz;
      while (i < n - 2 && this.timeS[i + 1] <= t) i++;
      const t0 = this.timeS[i];
      const t1 = n > 1 ? this.timeS[i + 1] : t0;
      const a = n > 1 && t > t0 ? Math.min(1, (t - t0) / (t1 - t0)) : 0;
      const j = n > 1 ? i + 1 : i;
      for (let c = 0; c < 3; c++)
        pos[3 * k + c] = this.rootPosM[3 * i + c] + (this.rootPosM[3 * j + c] - this.rootPosM[3 * i + c]) * a;
      slerpWxyzInto(quat, 4 * k, this.rootQuatWxyz, 4 * i, this.rootQuatWxyz, 4 * j, a);
      for (let c = 0; c < J; c++)
        q[J * k + c] = this.jointPosRad[J * i + c] + (this.jointPosRad[J * j + c] - this.jointPosRad[J * i + c]) * a;
    }
    return { fps: rateHz, frameCount: K, rootPosM: pos, rootQuatWxyz: quat, jointPosRad: q };
  }
}
