import { growRows, grownCapacity } from '../../../src/domain/buffers/growableRows';
import { slerpWxyzInto } from '../../../src/domain/motion/resample';

// One executed run's trajectory, as the overlay holds it: time, root pose and joint angles per
// sample, in growable Float64Arrays (amortised doubling, so a live run appends without
// allocating per frame). Samples arrive in time order: live rows from a connection's live store
// (robot/liveStreams.ts), or a whole recorded episode at once. Time 0 is the reference clip's frame 0 (as in mb-metrics/1).
//
// A run without a global root position (a real robot without motion capture) stores none; the
// overlay then places it at the reference's root position and reports no world-frame error.

export interface RunSample {
  /** Seconds since the episode started. */
  timeS: number;
  /** Root position, metres; null when the source has none. */
  rootPosM: ArrayLike<number> | null;
  /** Root orientation, wxyz; null when unknown. */
  rootQuatWxyz: ArrayLike<number> | null;
  /** Joint angles, canonical order, radians. */
  jointPosRad: ArrayLike<number>;
}

/** A whole trajectory, frame-major (timeS[i], rootPosM[3i..], rootQuatWxyz[4i..], jointPosRad[J·i..]). */
export interface PackedTrajectory {
  timeS: ArrayLike<number>;
  rootPosM: ArrayLike<number> | null;
  rootQuatWxyz: ArrayLike<number> | null;
  jointPosRad: ArrayLike<number>;
}

export interface SamplePosition {
  /** Sample index at or before t (clamped to the ends). */
  i0: number;
  /** Weight of sample i0 + 1 (0 at or outside the ends). */
  alpha: number;
  /** t was before the first sample or after the last one: the end sample is used as is. */
  clamped: 'before' | 'after' | null;
}

export class RunTrajectory {
  readonly jointCount: number;
  /** Known after the first sample: does the source give a global root position / orientation? */
  hasRootPosition: boolean | null = null;
  hasRootOrientation: boolean | null = null;
  count = 0;
  /** Bumped by clear(): samples already read may have been replaced (a recorded episode set over live frames). */
  generation = 0;
  timeS: Float64Array;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;

  constructor(jointCount: number, capacity = 256) {
    this.jointCount = jointCount;
    const c = Math.max(2, capacity);
    this.timeS = new Float64Array(c);
    this.rootPosM = new Float64Array(3 * c);
    this.rootQuatWxyz = new Float64Array(4 * c);
    this.jointPosRad = new Float64Array(jointCount * c);
  }

  get durationS(): number {
    return this.count === 0 ? 0 : this.timeS[this.count - 1] - this.timeS[0];
  }

  get lastTimeS(): number {
    return this.count === 0 ? Number.NaN : this.timeS[this.count - 1];
  }

  private reserve(n: number): void {
    if (n <= this.timeS.length) return;
    const c = grownCapacity(this.timeS.length, n);
    this.timeS = growRows(this.timeS, 1, this.count, c);
    this.rootPosM = growRows(this.rootPosM, 3, this.count, c);
    this.rootQuatWxyz = growRows(this.rootQuatWxyz, 4, this.count, c);
    this.jointPosRad = growRows(this.jointPosRad, this.jointCount, this.count, c);
  }

  clear(): void {
    this.count = 0;
    this.generation++;
    this.hasRootPosition = null;
    this.hasRootOrientation = null;
  }

  /**
   * Appends one sample. Time must not go backwards (RangeError); a sample at the same time as
   * the last replaces it. A root pose missing from a sample of a run that has one holds the
   * previous sample's value.
   */
  append(s: RunSample): void {
    if (!Number.isFinite(s.timeS)) throw new RangeError(`sample time ${s.timeS} is not a finite number`);
    if (s.jointPosRad.length !== this.jointCount) {
      throw new RangeError(`sample has ${s.jointPosRad.length} joint angles, the robot has ${this.jointCount}`);
    }
    let i = this.count;
    if (i > 0) {
      const last = this.timeS[i - 1];
      if (s.timeS < last) throw new RangeError(`sample time ${s.timeS} s is before the previous sample (${last} s)`);
      if (s.timeS === last) i--;
    }
    if (this.hasRootPosition === null) this.hasRootPosition = s.rootPosM !== null;
    if (this.hasRootOrientation === null) this.hasRootOrientation = s.rootQuatWxyz !== null;
    this.reserve(i + 1);
    this.timeS[i] = s.timeS;
    const J = this.jointCount;
    for (let j = 0; j < J; j++) this.jointPosRad[J * i + j] = s.jointPosRad[j];
    if (s.rootPosM) for (let c = 0; c < 3; c++) this.rootPosM[3 * i + c] = s.rootPosM[c];
    else if (i > 0) this.rootPosM.copyWithin(3 * i, 3 * (i - 1), 3 * i);
    if (s.rootQuatWxyz) for (let c = 0; c < 4; c++) this.rootQuatWxyz[4 * i + c] = s.rootQuatWxyz[c];
    else if (i > 0) this.rootQuatWxyz.copyWithin(4 * i, 4 * (i - 1), 4 * i);
    else this.rootQuatWxyz.set([1, 0, 0, 0], 0);
    this.count = i + 1;
  }

  /** Replaces every sample with a packed trajectory (a recorded episode). */
  setPacked(p: PackedTrajectory): void {
    const n = p.timeS.length;
    const J = this.jointCount;
    if (p.jointPosRad.length !== n * J)
      throw new RangeError(`jointPosRad has ${p.jointPosRad.length} values, expected ${n}×${J}`);
    if (p.rootPosM && p.rootPosM.length !== 3 * n)
      throw new RangeError(`rootPosM has ${p.rootPosM.length} values, expected ${n}×3`);
    if (p.rootQuatWxyz && p.rootQuatWxyz.length !== 4 * n)
      throw new RangeError(`rootQuatWxyz has ${p.rootQuatWxyz.length} values, expected ${n}×4`);
    this.clear();
    this.reserve(n);
    const root = new Float64Array(3);
    const quat = new Float64Array(4);
    const q = new Float64Array(J);
    for (let i = 0; i < n; i++) {
      if (p.rootPosM) for (let c = 0; c < 3; c++) root[c] = p.rootPosM[3 * i + c];
      if (p.rootQuatWxyz) for (let c = 0; c < 4; c++) quat[c] = p.rootQuatWxyz[4 * i + c];
      for (let j = 0; j < J; j++) q[j] = p.jointPosRad[J * i + j];
      this.append({
        timeS: p.timeS[i],
        rootPosM: p.rootPosM ? root : null,
        rootQuatWxyz: p.rootQuatWxyz ? quat : null,
        jointPosRad: q,
      });
    }
  }

  /** Where time t falls between samples (binary search). Requires count ≥ 1. */
  locate(t: number): SamplePosition {
    const n = this.count;
    const ts = this.timeS;
    if (t <= ts[0]) return { i0: 0, alpha: 0, clamped: t < ts[0] ? 'before' : null };
    if (t >= ts[n - 1]) return { i0: n - 1, alpha: 0, clamped: t > ts[n - 1] ? 'after' : null };
    let lo = 0;
    let hi = n - 1; // ts[lo] < t < ts[hi] or equal at lo
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ts[mid] <= t) lo = mid;
      else hi = mid;
    }
    const span = ts[lo + 1] - ts[lo];
    return { i0: lo, alpha: span > 0 ? (t - ts[lo]) / span : 0, clamped: null };
  }

  /**
   * The pose at time t: linear in root position and joint angles, shortest-arc slerp in root
   * orientation (as the metric contract resamples). Writes into the given arrays.
   */
  sampleAt(
    t: number,
    outRootPosM: Float64Array,
    outRootQuatWxyz: Float64Array,
    outJointPosRad: Float64Array,
  ): SamplePosition {
    const at = this.locate(t);
    const { i0, alpha } = at;
    const J = this.jointCount;
    if (alpha === 0) {
      outRootPosM.set(this.rootPosM.subarray(3 * i0, 3 * i0 + 3));
      outRootQuatWxyz.set(this.rootQuatWxyz.subarray(4 * i0, 4 * i0 + 4));
      outJointPosRad.set(this.jointPosRad.subarray(J * i0, J * i0 + J));
      return at;
    }
    const i1 = i0 + 1;
    for (let c = 0; c < 3; c++) {
      const a = this.rootPosM[3 * i0 + c];
      outRootPosM[c] = a + (this.rootPosM[3 * i1 + c] - a) * alpha;
    }
    slerpWxyzInto(outRootQuatWxyz, 0, this.rootQuatWxyz, 4 * i0, this.rootQuatWxyz, 4 * i1, alpha);
    for (let j = 0; j < J; j++) {
      const a = this.jointPosRad[J * i0 + j];
      outJointPosRad[j] = a + (this.jointPosRad[J * i1 + j] - a) * alpha;
    }
    return at;
  }
}
