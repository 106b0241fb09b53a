// Stillness detection for the calibration capture (DESIGN §3 CalibrationRecord).
// A StillnessDetector is fed StateFrames (500 Hz typical) into a preallocated ring buffer —
// push() allocates nothing — and, on demand, judges whether the robot has been still over the
// last `windowS` seconds:
//   • every joint's RMS velocity over the window ≤ maxJointVelRadS (an RMS, not the largest
//     sample: encoder velocities of a standing robot are noisy — σ ≈ 0.02 rad/s would put the
//     largest of 500 × 29 samples above 0.05 rad/s by chance, while a joint really moving at
//     0.05 rad/s has an RMS of at least that),
//   • the gyro norm ≤ maxGyroRadS in every frame,
//   • every joint's position range (max − min) over the window ≤ maxJointRangeRad,
//   • the window is covered (oldest kept frame at least windowS before the newest), has no time
//     gap longer than maxGapS, and holds only finite values.
// Every failed condition is reported with its value and limit, naming the joint where there is one.

import type { StateFrame } from '../robot/stateFrame';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';

export interface StillnessThresholds {
  /** Length of the still window, s (default 1.0). */
  windowS: number;
  /** Largest RMS velocity of any joint over the window, rad/s (default 0.05). */
  maxJointVelRadS: number;
  /** Largest gyro norm allowed in any frame of the window, rad/s (default 0.03). */
  maxGyroRadS: number;
  /** Largest position range (max − min) of any joint over the window, rad (default 0.01). */
  maxJointRangeRad: number;
  /** Longest time between consecutive frames inside the window, s (default 0.05). */
  maxGapS: number;
}

export const DEFAULT_STILLNESS_THRESHOLDS: Readonly<StillnessThresholds> = Object.freeze({
  windowS: 1.0,
  maxJointVelRadS: 0.05,
  maxGyroRadS: 0.03,
  maxJointRangeRad: 0.01,
  maxGapS: 0.05,
});

export type NotStillCode =
  | 'no_frames'
  | 'window_not_filled'
  | 'buffer_too_small'
  | 'frame_gap'
  | 'non_finite'
  | 'joint_velocity'
  | 'gyro'
  | 'joint_drift'
  /** Some frames of the window have a root pose (motion capture) and some do not. */
  | 'root_partial';

export interface NotStillReason {
  code: NotStillCode;
  /** One sentence for the operator and the trace. */
  message: string;
  /** Canonical joint name, for joint_velocity, joint_drift and non_finite (when a joint). */
  joint?: string;
  jointIndex?: number;
  /** The offending value and its limit (units of the check). */
  value?: number;
  limit?: number;
  /** Time of the frame where the worst value occurred, s (backend clock). */
  atS?: number;
}

/** Statistics of the window that was judged (whether still or not). */
export interface StillnessStats {
  /** Frames in the window. */
  frames: number;
  /** newest.timeS − oldest.timeS, s. */
  spanS: number;
  /** Mean frame rate over the window, Hz (0 with fewer than two frames). */
  rateHz: number;
  /** Number of tick discontinuities (tick step ≠ 1) inside the window. */
  tickGaps: number;
  /** Frames missing by tick count inside the window (Σ (step − 1) over forward steps > 1). */
  missingTicks: number;
  /** Longest interval between consecutive frames, s. */
  maxIntervalS: number;
  /** Largest |joint velocity| over joints and frames, rad/s, and its joint index (a statistic; the check uses the RMS). */
  maxAbsJointVelRadS: number;
  maxAbsJointVelJoint: number;
  /** Largest per-joint RMS velocity over the window, rad/s, and its joint index (what the check judges). */
  maxJointVelRmsRadS: number;
  maxJointVelRmsJoint: number;
  /** Largest gyro norm, rad/s. */
  maxGyroRadS: number;
  /** Largest joint position range, rad, and its joint index. */
  maxJointRangeRad: number;
  maxJointRangeJoint: number;
}

export interface StillnessStatus {
  still: boolean;
  reasons: NotStillReason[];
  stats: StillnessStats;
}

export interface StillnessDetectorOptions {
  /** Ring capacity in frames (default: windowS × 1000 Hz × 1.25 + 8, enough for 1 kHz streams). */
  capacity?: number;
  jointCount?: number;
}

const fmt = (v: number, d = 4) => (Number.isFinite(v) ? v.toFixed(d) : String(v));

export class StillnessDetector {
  readonly thresholds: Readonly<StillnessThresholds>;
  readonly capacity: number;
  readonly jointCount: number;
  // Ring buffer, slot-major.
  private readonly timeS: Float64Array;
  private readonly tick: Float64Array;
  private readonly q: Float64Array; // capacity × J
  private readonly maxDq: Float64Array; // per frame max |dq|
  private readonly dq: Float64Array; // capacity × J
  private readonly maxDqJoint: Int32Array;
  private readonly gyro: Float64Array; // per frame gyro norm
  private readonly imuQuat: Float64Array; // capacity × 4
  private readonly rootPos: Float64Array; // capacity × 3
  private readonly rootQuat: Float64Array; // capacity × 4
  private readonly hasRoot: Uint8Array;
  private readonly finite: Uint8Array;
  private readonly badJoint: Int32Array; // first non-finite joint, −1 none / not a joint
  private head = 0; // next slot to write
  private size = 0;
  // Scratch for evaluate().
  private readonly qMin: Float64Array;
  private readonly qMax: Float64Array;
  private readonly dqSq: Float64Array;

  constructor(thresholds: Partial<StillnessThresholds> = {}, options: StillnessDetectorOptions = {}) {
    const t = { ...DEFAULT_STILLNESS_THRESHOLDS, ...thresholds };
    for (const [k, v] of Object.entries(t)) {
      if (!(Number.isFinite(v) && v > 0))
        throw new RangeError(`stillness threshold ${k} must be a positive finite number, got ${v}`);
    }
    this.thresholds = Object.freeze(t);
    this.jointCount = options.jointCount ?? G1_NUM_JOINTS;
    this.capacity = options.capacity ?? Math.ceil(t.windowS * 1000 * 1.25) + 8;
    if (!(Number.isInteger(this.capacity) && this.capacity >= 2))
      throw new RangeError(`stillness capacity must be an integer ≥ 2, got ${this.capacity}`);
    const C = this.capacity;
    const J = this.jointCount;
    this.timeS = new Float64Array(C);
    this.tick = new Float64Array(C);
    this.q = new Float64Array(C * J);
    this.maxDq = new Float64Array(C);
    this.dq = new Float64Array(C * J);
    this.maxDqJoint = new Int32Array(C);
    this.gyro = new Float64Array(C);
    this.imuQuat = new Float64Array(C * 4);
    this.rootPos = new Float64Array(C * 3);
    this.rootQuat = new Float64Array(C * 4);
    this.hasRoot = new Uint8Array(C);
    this.finite = new Uint8Array(C);
    this.badJoint = new Int32Array(C);
    this.qMin = new Float64Array(J);
    this.qMax = new Float64Array(J);
    this.dqSq = new Float64Array(J);
  }

  /** Frames currently held. */
  get frameCount(): number {
    return this.size;
  }

  clear(): void {
    this.head = 0;
    this.size = 0;
  }

  /** Adds one frame (copied; allocation-free). A frame earlier than the newest clears the buffer (new episode/clock). */
  push(f: StateFrame): void {
    if (this.size > 0 && f.timeS < this.timeS[this.slot(this.size - 1)]) this.clear();
    const s = this.head;
    const J = this.jointCount;
    this.timeS[s] = f.timeS;
    this.tick[s] = f.tick;
    let ok = Number.isFinite(f.timeS);
    let bad = -1;
    let m = 0;
    let mj = 0;
    for (let j = 0; j < J; j++) {
      const qj = f.jointPosRad[j];
      const v = Math.abs(f.jointVelRadS[j]);
      this.q[s * J + j] = qj;
      this.dq[s * J + j] = f.jointVelRadS[j];
      if (!(Number.isFinite(qj) && Number.isFinite(v))) {
        if (bad < 0) bad = j;
        ok = false;
      } else if (v > m) {
        m = v;
        mj = j;
      }
    }
    this.maxDq[s] = m;
    this.maxDqJoint[s] = mj;
    const g = f.imu.gyroRadS;
    const gn = Math.hypot(g[0], g[1], g[2]);
    this.gyro[s] = gn;
    const iq = f.imu.quatWxyz;
    for (let k = 0; k < 4; k++) this.imuQuat[4 * s + k] = iq[k];
    if (!(Number.isFinite(gn) && Number.isFinite(iq[0] + iq[1] + iq[2] + iq[3]))) ok = false;
    const rp = f.rootPosM;
    const rq = f.rootQuatWxyz;
    if (rp && rq) {
      this.hasRoot[s] = 1;
      for (let k = 0; k < 3; k++) this.rootPos[3 * s + k] = rp[k];
      for (let k = 0; k < 4; k++) this.rootQuat[4 * s + k] = rq[k];
      if (!Number.isFinite(rp[0] + rp[1] + rp[2] + rq[0] + rq[1] + rq[2] + rq[3])) ok = false;
    } else this.hasRoot[s] = 0;
    this.finite[s] = ok ? 1 : 0;
    this.badJoint[s] = bad;
    this.head = (s + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** Ring slot of the i-th held frame, oldest first. */
  private slot(i: number): number {
    return (this.head - this.size + i + this.capacity) % this.capacity;
  }

  /** Index (oldest-first) of the first frame of the window: the newest frame at or before newest − windowS, or 0. */
  private windowStart(): number {
    if (this.size === 0) return 0;
    const tEnd = this.timeS[this.slot(this.size - 1)];
    const from = tEnd - this.thresholds.windowS;
    // Include the last frame with t ≤ from (so the span is ≥ windowS) — search backwards.
    for (let i = this.size - 1; i >= 0; i--) {
      if (this.timeS[this.slot(i)] <= from + 1e-9) return i;
    }
    return 0;
  }

  /** Judges the current window. Allocates only the returned status. */
  evaluate(): StillnessStatus {
    const t = this.thresholds;
    const J = this.jointCount;
    const reasons: NotStillReason[] = [];
    const stats: StillnessStats = {
      frames: 0,
      spanS: 0,
      rateHz: 0,
      tickGaps: 0,
      missingTicks: 0,
      maxIntervalS: 0,
      maxAbsJointVelRadS: 0,
      maxAbsJointVelJoint: -1,
      maxJointVelRmsRadS: 0,
      maxJointVelRmsJoint: -1,
      maxGyroRadS: 0,
      maxJointRangeRad: 0,
      maxJointRangeJoint: -1,
    };
    if (this.size === 0) {
      reasons.push({ code: 'no_frames', message: 'no state frames received yet' });
      return { still: false, reasons, stats };
    }
    const i0 = this.windowStart();
    const n = this.size - i0;
    const sFirst = this.slot(i0);
    const sLast = this.slot(this.size - 1);
    stats.frames = n;
    stats.spanS = this.timeS[sLast] - this.timeS[sFirst];
    stats.rateHz = n >= 2 && stats.spanS > 0 ? (n - 1) / stats.spanS : 0;
    this.qMin.fill(Infinity);
    this.qMax.fill(-Infinity);
    this.dqSq.fill(0);
    let finiteFrames = 0;
    let rootFrames = 0;
    let gAt = 0;
    let nonFinite = -1;
    for (let i = i0; i < this.size; i++) {
      const s = this.slot(i);
      if (this.hasRoot[s]) rootFrames++;
      if (!this.finite[s]) {
        if (nonFinite < 0) nonFinite = s;
        continue;
      }
      if (i > i0) {
        const p = this.slot(i - 1);
        const dt = this.timeS[s] - this.timeS[p];
        if (dt > stats.maxIntervalS) stats.maxIntervalS = dt;
        const dk = this.tick[s] - this.tick[p];
        if (dk !== 1) {
          stats.tickGaps++;
          if (dk > 1) stats.missingTicks += dk - 1;
        }
      }
      if (this.maxDq[s] > stats.maxAbsJointVelRadS) {
        stats.maxAbsJointVelRadS = this.maxDq[s];
        stats.maxAbsJointVelJoint = this.maxDqJoint[s];
      }
      finiteFrames++;
      for (let j = 0; j < J; j++) {
        const d = this.dq[s * J + j];
        this.dqSq[j] += d * d;
      }
      if (this.gyro[s] > stats.maxGyroRadS) {
        stats.maxGyroRadS = this.gyro[s];
        gAt = this.timeS[s];
      }
      for (let j = 0; j < J; j++) {
        const v = this.q[s * J + j];
        if (v < this.qMin[j]) this.qMin[j] = v;
        if (v > this.qMax[j]) this.qMax[j] = v;
      }
    }
    for (let j = 0; j < J && finiteFrames > 0; j++) {
      const rms = Math.sqrt(this.dqSq[j] / finiteFrames);
      if (rms > stats.maxJointVelRmsRadS) {
        stats.maxJointVelRmsRadS = rms;
        stats.maxJointVelRmsJoint = j;
      }
    }
    for (let j = 0; j < J; j++) {
      const r = this.qMax[j] - this.qMin[j];
      if (r > stats.maxJointRangeRad) {
        stats.maxJointRangeRad = r;
        stats.maxJointRangeJoint = j;
      }
    }
    const name = (j: number) => (this.jointCount === G1_NUM_JOINTS ? G1_JOINT_NAMES[j] : `joint_${j}`);

    if (stats.spanS < t.windowS - 1e-9) {
      const full = this.size === this.capacity;
      reasons.push(
        full
          ? {
              code: 'buffer_too_small',
              message: `the ring of ${this.capacity} frames spans only ${fmt(stats.spanS, 3)} s, less than the ${t.windowS} s window (frame rate too high for the capacity)`,
              value: stats.spanS,
              limit: t.windowS,
            }
          : {
              code: 'window_not_filled',
              message: `still window not yet covered: ${fmt(stats.spanS, 3)} s of ${t.windowS} s`,
              value: stats.spanS,
              limit: t.windowS,
            },
      );
    }
    if (nonFinite >= 0) {
      const bj = this.badJoint[nonFinite];
      reasons.push({
        code: 'non_finite',
        message:
          bj >= 0
            ? `non-finite value of ${name(bj)} at t=${fmt(this.timeS[nonFinite], 3)} s`
            : `non-finite IMU, root or time value at t=${fmt(this.timeS[nonFinite], 3)} s`,
        ...(bj >= 0 ? { joint: name(bj), jointIndex: bj } : {}),
        atS: this.timeS[nonFinite],
      });
    }
    if (stats.maxIntervalS > t.maxGapS) {
      reasons.push({
        code: 'frame_gap',
        message: `a ${fmt(stats.maxIntervalS * 1000, 1)} ms gap between frames inside the window (limit ${fmt(t.maxGapS * 1000, 1)} ms)`,
        value: stats.maxIntervalS,
        limit: t.maxGapS,
      });
    }
    if (stats.maxJointVelRmsRadS > t.maxJointVelRadS) {
      const j = stats.maxJointVelRmsJoint;
      reasons.push({
        code: 'joint_velocity',
        message: `${name(j)} is moving: RMS velocity ${fmt(stats.maxJointVelRmsRadS)} rad/s over the window > ${t.maxJointVelRadS} rad/s`,
        joint: name(j),
        jointIndex: j,
        value: stats.maxJointVelRmsRadS,
        limit: t.maxJointVelRadS,
      });
    }
    if (stats.maxGyroRadS > t.maxGyroRadS) {
      reasons.push({
        code: 'gyro',
        message: `the body is rotating: gyro ${fmt(stats.maxGyroRadS)} rad/s > ${t.maxGyroRadS} rad/s`,
        value: stats.maxGyroRadS,
        limit: t.maxGyroRadS,
        atS: gAt,
      });
    }
    if (stats.maxJointRangeRad > t.maxJointRangeRad) {
      const j = stats.maxJointRangeJoint;
      reasons.push({
        code: 'joint_drift',
        message: `${name(j)} drifted ${fmt(stats.maxJointRangeRad)} rad over the window > ${t.maxJointRangeRad} rad`,
        joint: name(j),
        jointIndex: j,
        value: stats.maxJointRangeRad,
        limit: t.maxJointRangeRad,
      });
    }
    // A window that motion capture covers only in part (its stream started, or stopped, inside
    // the window) would give a calibration without the root pose the robot in fact reports, or
    // one averaged over a part: wait until the window is wholly one or the other.
    if (rootFrames > 0 && rootFrames < n) {
      reasons.push({
        code: 'root_partial',
        message: `motion capture covers only ${rootFrames} of the window's ${n} frames (its stream started or stopped inside the window)`,
        value: rootFrames,
        limit: n,
      });
    }
    return { still: reasons.length === 0, reasons, stats };
  }

  /**
   * Visits the frames of the current window, oldest first, with the buffer's copies of their
   * data: the joint angles (J values from `q[qOffset]`), the IMU quaternion (`imu[iOffset]`), and
   * the root pose where the frame had one. Used by the capture; allocation-free.
   */
  forEachInWindow(
    visit: (view: {
      timeS: number;
      tick: number;
      q: Float64Array;
      qOffset: number;
      imu: Float64Array;
      imuOffset: number;
      hasRoot: boolean;
      rootPos: Float64Array;
      rootPosOffset: number;
      rootQuat: Float64Array;
      rootQuatOffset: number;
    }) => void,
  ): void {
    if (this.size === 0) return;
    const J = this.jointCount;
    const view = {
      timeS: 0,
      tick: 0,
      q: this.q,
      qOffset: 0,
      imu: this.imuQuat,
      imuOffset: 0,
      hasRoot: false,
      rootPos: this.rootPos,
      rootPosOffset: 0,
      rootQuat: this.rootQuat,
      rootQuatOffset: 0,
    };
    for (let i = this.windowStart(); i < this.size; i++) {
      const s = this.slot(i);
      if (!this.finite[s]) continue;
      view.timeS = this.timeS[s];
      view.tick = this.tick[s];
      view.qOffset = s * J;
      view.imuOffset = 4 * s;
      view.hasRoot = this.hasRoot[s] === 1;
      view.rootPosOffset = 3 * s;
      view.rootQuatOffset = 4 * s;
      visit(view);
    }
  }
}
