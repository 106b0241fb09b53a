// The state both reducer forms (batch and streaming) fill, and the per-frame arithmetic they
// share. Both forms call the same methods with the same values in the same frame order, so every
// sum is formed by the same IEEE-754 operations in the same order and the two forms give
// bit-identical numbers (JavaScript arithmetic is exactly rounded per operation: no fused
// multiply-add, no extended precision). Per-frame partial sums are added to the episode total
// once per frame (two-level summation).
//
// Nothing here allocates per frame; the P95 value buffers grow by doubling (amortised, and never
// when the expected frame count is given up front).

import type { MetricContract } from './metricContract';
import type { MetricFrames, MetricLayout } from './metricLayout';
import { percentileLinearInPlace } from './percentile';
import {
  availableReading,
  unavailableReading,
  type EpisodeMetrics,
  type FailureCondition,
  type ProgressStopCause,
  type Reading,
  type SourceCapabilities,
} from './readings';

const COND_NONE = 0;
const COND_ROOT_HEIGHT = 1;
const COND_ROOT_ORIENTATION = 2;
const COND_EE_HEIGHT = 3;
const CONDITION_NAMES: FailureCondition[] = ['root_height', 'root_height', 'root_orientation', 'end_effector_height'];

const STOP_NONE = 0;
const STOP_FAILURE = 1;
const STOP_DRIFT_XY = 2;
const STOP_DRIFT_HEADING = 3;
const STOP_NAMES: ProgressStopCause[] = ['hard_failure', 'hard_failure', 'drift_xy', 'drift_heading'];

const TWO_PI = 2 * Math.PI;

/** Heading of a wxyz quaternion of any non-zero scale: atan2(2(wz + xy), 1 − 2(y² + z²)) of the normalised quaternion. */
export function headingOf(q: Float64Array, o: number): number {
  const w = q[o];
  const x = q[o + 1];
  const y = q[o + 2];
  const z = q[o + 3];
  const n = w * w + x * x + y * y + z * z;
  return Math.atan2(2 * (w * z + x * y), n - 2 * (y * y + z * z));
}

/** Rotation angle of a⁻¹·b for wxyz quaternions of any non-zero scale, radians in [0, π]. */
export function relativeAngle(a: Float64Array, ao: number, b: Float64Array, bo: number): number {
  const aw = a[ao];
  const ax = a[ao + 1];
  const ay = a[ao + 2];
  const az = a[ao + 3];
  const bw = b[bo];
  const bx = b[bo + 1];
  const by = b[bo + 2];
  const bz = b[bo + 3];
  const w = aw * bw + ax * bx + ay * by + az * bz;
  const x = aw * bx - ax * bw - ay * bz + az * by;
  const y = aw * by + ax * bz - ay * bw - az * bx;
  const z = aw * bz - ax * by + ay * bx - az * bw;
  return 2 * Math.atan2(Math.sqrt(x * x + y * y + z * z), Math.abs(w));
}

/** Wraps an angle difference of two headings (each in (−π, π]) to (−π, π]. */
export function wrapAngle(d: number): number {
  if (d > Math.PI) return d - TWO_PI;
  if (d <= -Math.PI) return d + TWO_PI;
  return d;
}

export class EpisodeAccumulator {
  readonly contract: MetricContract;
  readonly layout: MetricLayout;
  capabilities: SourceCapabilities;
  /** Frames seen (K once the episode is complete). */
  frames = 0;

  // sums (episode totals of per-frame partial sums)
  mpjpeSum = 0;
  posSqSum = 0;
  velSqSum = 0;
  accSqSum = 0;
  jerkSqSum = 0;
  /** |acceleration| and |jerk| values, for P95 (lengths accCount, jerkCount). */
  accAbs: Float64Array;
  jerkAbs: Float64Array;
  accCount = 0;
  jerkCount = 0;

  // first hard-failure condition (any frame; only frames ≤ K−2 count when finalised)
  failFrame = -1;
  failCondition = COND_NONE;
  failBody = -1;
  failError = 0;
  failThreshold = 0;
  // first progress stop (condition or drift)
  stopFrame = -1;
  stopCause = STOP_NONE;
  /** A NaN/∞ met in a failure or drift test. */
  checkNonFinite = false;

  // contract constants
  private readonly rate: number;
  private readonly halfRate: number;
  private readonly rate2: number;
  private readonly rate3: number;
  private readonly thRootZ: number;
  private readonly thRootAngle: number;
  private readonly thEeZ: number;
  private readonly thDriftXy: number;
  private readonly thDriftHeading: number;

  constructor(contract: MetricContract, layout: MetricLayout, capabilities: SourceCapabilities, expectedFrames = 0) {
    this.contract = contract;
    this.layout = layout;
    this.capabilities = capabilities;
    const r = contract.rateHz;
    this.rate = r;
    this.halfRate = r / 2;
    this.rate2 = r * r;
    this.rate3 = r * r * r;
    const t = contract.thresholds;
    this.thRootZ = t.rootHeightM;
    this.thRootAngle = t.rootOrientationRad;
    this.thEeZ = t.endEffectorHeightM;
    this.thDriftXy = t.driftXyM;
    this.thDriftHeading = t.driftHeadingRad;
    const cap = Math.max(16, expectedFrames) * layout.jointCount;
    this.accAbs = new Float64Array(cap);
    this.jerkAbs = new Float64Array(cap);
  }

  /** Starts a new episode, keeping the buffers (grown to the expected size if needed). */
  reset(capabilities: SourceCapabilities, expectedFrames = 0): void {
    this.capabilities = capabilities;
    this.frames = 0;
    this.mpjpeSum = 0;
    this.posSqSum = 0;
    this.velSqSum = 0;
    this.accSqSum = 0;
    this.jerkSqSum = 0;
    this.accCount = 0;
    this.jerkCount = 0;
    this.failFrame = -1;
    this.failCondition = COND_NONE;
    this.failBody = -1;
    this.failError = 0;
    this.failThreshold = 0;
    this.stopFrame = -1;
    this.stopCause = STOP_NONE;
    this.checkNonFinite = false;
    const need = expectedFrames * this.layout.jointCount;
    if (this.accAbs.length < need) {
      this.accAbs = new Float64Array(need);
      this.jerkAbs = new Float64Array(need);
    }
  }

  get canDetectFailure(): boolean {
    return this.capabilities.hasGlobalRootPosition && this.capabilities.hasGlobalRootHeading;
  }

  /** True while a later frame can still change failure or progress. */
  get checksPending(): boolean {
    return this.failFrame < 0 || this.stopFrame < 0;
  }

  /**
   * Hard-failure conditions and global drift at frame k (R at ref frame rf, E at exec frame ef).
   * Records the first frame with a condition (order: root height, root orientation, end-effectors
   * in contract order) and the first frame with a condition or drift.
   */
  checkFrame(k: number, ref: MetricFrames, rf: number, exec: MetricFrames, ef: number): void {
    const B3 = 3 * this.layout.bodyCount;
    const rb = ref.bodyPosM;
    const eb = exec.bodyPosM;
    const ro = rf * B3;
    const eo = ef * B3;
    const root3 = 3 * this.layout.rootBodyIndex;
    let condition = COND_NONE;
    if (this.failFrame < 0) {
      let body = this.layout.rootBodyIndex;
      let err = Math.abs(eb[eo + root3 + 2] - rb[ro + root3 + 2]);
      let th = this.thRootZ;
      if (!(err <= th)) condition = COND_ROOT_HEIGHT;
      else {
        err = relativeAngle(ref.rootQuatWxyz, 4 * rf, exec.rootQuatWxyz, 4 * ef);
        th = this.thRootAngle;
        if (!(err <= th)) condition = COND_ROOT_ORIENTATION;
        else {
          th = this.thEeZ;
          const ee = this.layout.endEffectorBodyIndices;
          for (let i = 0; i < ee.length; i++) {
            const z = 3 * ee[i] + 2;
            err = Math.abs(eb[eo + z] - rb[ro + z]);
            if (!(err <= th)) {
              condition = COND_EE_HEIGHT;
              body = ee[i];
              break;
            }
          }
        }
      }
      if (condition !== COND_NONE) {
        if (err !== err) {
          this.checkNonFinite = true;
          condition = COND_NONE;
        } else {
          this.failFrame = k;
          this.failCondition = condition;
          this.failBody = body;
          this.failError = err;
          this.failThreshold = th;
        }
      }
    }
    if (this.stopFrame < 0) {
      if (condition !== COND_NONE) {
        this.stopFrame = k;
        this.stopCause = STOP_FAILURE;
        return;
      }
      const dx = eb[eo + root3] - rb[ro + root3];
      const dy = eb[eo + root3 + 1] - rb[ro + root3 + 1];
      const dist = Math.sqrt(dx * dx + dy * dy);
      if (!(dist <= this.thDriftXy)) {
        if (dist !== dist) this.checkNonFinite = true;
        else {
          this.stopFrame = k;
          this.stopCause = STOP_DRIFT_XY;
        }
        return;
      }
      const dh = wrapAngle(headingOf(exec.rootQuatWxyz, 4 * ef) - headingOf(ref.rootQuatWxyz, 4 * rf));
      if (!(Math.abs(dh) <= this.thDriftHeading)) {
        if (dh !== dh) this.checkNonFinite = true;
        else {
          this.stopFrame = k;
          this.stopCause = STOP_DRIFT_HEADING;
        }
      }
    }
  }

  /** Adds frame terms of MPJPE-l: Σ_b ‖(p_b(E) − p_root(E)) − (p_b(R) − p_root(R))‖. Returns the frame's mean, m. */
  addMpjpeFrame(ref: MetricFrames, rf: number, exec: MetricFrames, ef: number): number {
    const B = this.layout.bodyCount;
    const rb = ref.bodyPosM;
    const eb = exec.bodyPosM;
    const ro = rf * 3 * B;
    const eo = ef * 3 * B;
    const root3 = 3 * this.layout.rootBodyIndex;
    const rrx = rb[ro + root3];
    const rry = rb[ro + root3 + 1];
    const rrz = rb[ro + root3 + 2];
    const erx = eb[eo + root3];
    const ery = eb[eo + root3 + 1];
    const erz = eb[eo + root3 + 2];
    let s = 0;
    for (let b = 0; b < B; b++) {
      const i = 3 * b;
      const dx = eb[eo + i] - erx - (rb[ro + i] - rrx);
      const dy = eb[eo + i + 1] - ery - (rb[ro + i + 1] - rry);
      const dz = eb[eo + i + 2] - erz - (rb[ro + i + 2] - rrz);
      s += Math.sqrt(dx * dx + dy * dy + dz * dz);
    }
    this.mpjpeSum += s;
    return s / B;
  }

  /** Adds frame terms of joint-position RMSE: Σ_j (q_E − q_R)². Returns the frame's RMS, rad. */
  addJointPositionFrame(eq: Float64Array, eo: number, rq: Float64Array, ro: number): number {
    const J = this.layout.jointCount;
    let s = 0;
    for (let j = 0; j < J; j++) {
      const d = eq[eo + j] - rq[ro + j];
      s += d * d;
    }
    this.posSqSum += s;
    return Math.sqrt(s / J);
  }

  /**
   * Velocity error and acceleration at an interior frame k, from E's joint rows at k+1, k, k−1
   * and R's at k+1, k−1 (row offsets into eq / rq).
   */
  addVelocityAccelerationFrame(
    eq: Float64Array,
    eNext: number,
    eCur: number,
    ePrev: number,
    rq: Float64Array,
    rNext: number,
    rPrev: number,
  ): void {
    const J = this.layout.jointCount;
    const half = this.halfRate;
    const r2 = this.rate2;
    const acc = this.accAbs;
    let n = this.accCount;
    if (n + J > acc.length) {
      this.accAbs = growCopy(acc, n + J);
      return this.addVelocityAccelerationFrame(eq, eNext, eCur, ePrev, rq, rNext, rPrev);
    }
    let sv = 0;
    let sa = 0;
    for (let j = 0; j < J; j++) {
      const qn = eq[eNext + j];
      const qp = eq[ePrev + j];
      const dv = (qn - qp) * half - (rq[rNext + j] - rq[rPrev + j]) * half;
      sv += dv * dv;
      const a = (qn - 2 * eq[eCur + j] + qp) * r2;
      sa += a * a;
      acc[n++] = Math.abs(a);
    }
    this.accCount = n;
    this.velSqSum += sv;
    this.accSqSum += sa;
  }

  /** Jerk at frame k from E's joint rows at k+2, k+1, k, k−1. */
  addJerkFrame(eq: Float64Array, o2: number, o1: number, o0: number, om1: number): void {
    const J = this.layout.jointCount;
    const r3 = this.rate3;
    const buf = this.jerkAbs;
    let n = this.jerkCount;
    if (n + J > buf.length) {
      this.jerkAbs = growCopy(buf, n + J);
      return this.addJerkFrame(eq, o2, o1, o0, om1);
    }
    let s = 0;
    for (let j = 0; j < J; j++) {
      // (q[k+2] − 3q[k+1] + 3q[k] − q[k−1])·r³, grouped as differences so that a constant
      // signal gives exactly 0 (3q is not exact in floating point).
      const v = (eq[o2 + j] - eq[om1 + j] - 3 * (eq[o1 + j] - eq[o0 + j])) * r3;
      s += v * v;
      buf[n++] = Math.abs(v);
    }
    this.jerkCount = n;
    this.jerkSqSum += s;
  }

  /**
   * The readings over the frames seen so far, treating the last frame seen as frame K−1.
   * Non-destructive apart from reordering the P95 buffers (their order carries no meaning).
   */
  finalize(): EpisodeMetrics {
    const K = this.frames;
    const J = this.layout.jointCount;
    const B = this.layout.bodyCount;
    const caps = this.capabilities;
    const rate = this.rate;
    const none = (why: string) => unavailableReading(why);
    const noFrames = none('no frames on the common timeline');
    if (K === 0) {
      return {
        contract: this.contract.id,
        K,
        failure: noFrames,
        progressSoft: noFrames,
        progressStop: noFrames,
        mpjpeLMm: noFrames,
        jointPosRmseRad: noFrames,
        jointVelRmseRadS: noFrames,
        jointAccRmsRadS2: noFrames,
        jointAccP95RadS2: noFrames,
        jointJerkRmsRadS3: noFrames,
        jointJerkP95RadS3: noFrames,
      };
    }
    const finite = (v: number, what: string): Reading<number> =>
      Number.isFinite(v)
        ? availableReading(v)
        : none(
            `${what} is not finite: the frames contain NaN or infinite values, or values so large that it overflows`,
          );

    // Hard failure and progress-soft.
    let failure: EpisodeMetrics['failure'];
    let progressSoft: Reading<number>;
    let progressStop: EpisodeMetrics['progressStop'];
    const missing = missingGlobalState(caps);
    if (missing) {
      failure = none(
        `hard-failure detection needs the executed root's global ${missing} (root height, end-effector heights in the world frame, root orientation); the executed source does not provide it (e.g. a robot without motion capture)`,
      );
      const p = none(
        `progress-soft needs the executed root's global ${missing} (hard failures, root xy drift, heading drift); the executed source does not provide it`,
      );
      progressSoft = p;
      progressStop = p;
    } else if (K < 2) {
      failure = none(
        'hard-failure detection needs at least 2 frames on the common timeline (only frames 0..K−2 count)',
      );
      progressSoft = none('progress-soft k*/(K − 1) needs at least 2 frames on the common timeline');
      progressStop = progressSoft;
    } else if (this.checkNonFinite) {
      failure = none('hard-failure detection met NaN or infinite root or body positions');
      progressSoft = failure;
      progressStop = failure;
    } else {
      const last = K - 1;
      failure = availableReading(
        this.failFrame >= 0 && this.failFrame < last
          ? {
              frame: this.failFrame,
              timeS: this.failFrame / rate,
              condition: CONDITION_NAMES[this.failCondition],
              body: this.layout.bodyNames[this.failBody],
              error: this.failError,
              threshold: this.failThreshold,
            }
          : null,
      );
      const stopped = this.stopFrame >= 0 && this.stopFrame < last;
      progressSoft = availableReading(stopped ? this.stopFrame / last : 1);
      progressStop = availableReading(stopped ? { frame: this.stopFrame, cause: STOP_NAMES[this.stopCause] } : null);
    }

    const mpjpeLMm = caps.hasGlobalRootHeading
      ? finite((this.mpjpeSum / (K * B)) * 1000, 'MPJPE-l')
      : none(
          "MPJPE-l subtracts the root translation but not the root rotation: body offsets from the root are compared in the world frame, so they need the executed root's global heading, which the executed source does not provide",
        );
    const jointPosRmseRad = finite(Math.sqrt(this.posSqSum / (K * J)), 'joint-position RMSE');
    const interior = K - 2;
    let jointVelRmseRadS: Reading<number>;
    let jointAccRmsRadS2: Reading<number>;
    let jointAccP95RadS2: Reading<number>;
    if (interior < 1) {
      const why = none(`needs at least 3 frames on the common timeline (central differences at k = 1..K−2), K = ${K}`);
      jointVelRmseRadS = why;
      jointAccRmsRadS2 = why;
      jointAccP95RadS2 = why;
    } else {
      jointVelRmseRadS = finite(Math.sqrt(this.velSqSum / (interior * J)), 'joint-velocity RMSE');
      jointAccRmsRadS2 = finite(Math.sqrt(this.accSqSum / (interior * J)), 'joint-acceleration RMS');
      // The P95 shares the RMS's values: when those are not finite, so is the P95 (its own reason).
      jointAccP95RadS2 = jointAccRmsRadS2.available
        ? finite(percentileLinearInPlace(this.accAbs, this.accCount, 95), 'joint-acceleration P95')
        : finite(NaN, 'joint-acceleration P95');
    }
    let jointJerkRmsRadS3: Reading<number>;
    let jointJerkP95RadS3: Reading<number>;
    if (K - 3 < 1) {
      const why = none(`needs at least 4 frames on the common timeline (jerk at k = 1..K−3), K = ${K}`);
      jointJerkRmsRadS3 = why;
      jointJerkP95RadS3 = why;
    } else {
      jointJerkRmsRadS3 = finite(Math.sqrt(this.jerkSqSum / ((K - 3) * J)), 'joint-jerk RMS');
      jointJerkP95RadS3 = jointJerkRmsRadS3.available
        ? finite(percentileLinearInPlace(this.jerkAbs, this.jerkCount, 95), 'joint-jerk P95')
        : finite(NaN, 'joint-jerk P95');
    }
    return {
      contract: this.contract.id,
      K,
      failure,
      progressSoft,
      progressStop,
      mpjpeLMm,
      jointPosRmseRad,
      jointVelRmseRadS,
      jointAccRmsRadS2,
      jointAccP95RadS2,
      jointJerkRmsRadS3,
      jointJerkP95RadS3,
    };
  }
}

function missingGlobalState(c: SourceCapabilities): string | null {
  if (!c.hasGlobalRootPosition && !c.hasGlobalRootHeading) return 'position and heading';
  if (!c.hasGlobalRootPosition) return 'position';
  if (!c.hasGlobalRootHeading) return 'heading';
  return null;
}

function growCopy(a: Float64Array, need: number): Float64Array {
  const b = new Float64Array(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}
