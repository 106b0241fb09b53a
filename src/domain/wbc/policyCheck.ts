import type { JointOrderMap } from '../robot/jointOrder';
import { READING_CONTROLS, type ControlApplicability, type ReadingName } from './readingControls';
import { termWidth, type TrackingTerm } from './trackingPolicy';

// The evidence a policy check reports when a policy falls (or to show that it does not): the
// first control step's joint targets against the reference pose at t = 0, each observation
// term's range over the run against the range the policy's own files imply, and the outcome of
// the normal reading beside each negative control (./readingControls.ts), with one verdict line
// that says no more than the runs show. Pure: the runs are made by src/services/policyCheck/policyCheckRun.ts.

/**
 * Slack on an implied bound before a value is flagged. Unit vectors, rotation-matrix entries and
 * sines are computed in float32 from quaternions that need not be normalised: 1e-3. Joint angles
 * are bounded by MuJoCo's joint limits, which are soft constraints the state passes by a few
 * hundredths of a radian under load: 0.05 rad.
 */
export const BOUND_TOLERANCE = { geometric: 1e-3, jointRad: 0.05 } as const;

/** The longest window a check runs per reading, simulated seconds (the check's time stays bounded). */
export const POLICY_CHECK_MAX_SECONDS = 60;
export const POLICY_CHECK_DEFAULT_SECONDS = 5;

/** What "tracks better" means: a first hard failure this much later (or none), or this MPJPE-l ratio. */
export const BETTER_READING_MARGIN = { failureLaterS: 0.5, mpjpeRatio: 0.8 } as const;

/** Per value of one history entry (term.size values): the range the files imply, after the term's scale. */
export interface TermBound {
  lo: Float64Array;
  hi: Float64Array;
  tolerance: Float64Array;
  source: string;
}

export interface BoundContext {
  /** The table the observation's joint terms are written through. */
  jointOrder: JointOrderMap;
  /** Canonical order (the model's joint ranges; null = unlimited). */
  jointRangesRad: readonly (readonly [number, number] | null)[];
  /** Canonical order: the pose joint_pos_rel is relative to. */
  defaultJointPosRad: ArrayLike<number>;
  /** The policy's symmetric clip of the raw action, or null. */
  actionClip: number | null;
}

const unitBound = (size: number, source: string) => ({
  lo: new Float64Array(size).fill(-1),
  hi: new Float64Array(size).fill(1),
  tol: new Float64Array(size).fill(BOUND_TOLERANCE.geometric),
  source,
});

/** The range the files imply for one term's values, or null when neither the files nor the geometry say one. */
export function impliedTermBound(t: TrackingTerm, ctx: BoundContext): TermBound | null {
  const n = ctx.jointOrder.canonicalOf.length;
  const jointRanges = (subtractDefault: boolean) => {
    const lo = new Float64Array(n).fill(-Infinity);
    const hi = new Float64Array(n).fill(Infinity);
    for (let i = 0; i < n; i++) {
      const c = ctx.jointOrder.canonicalOf[i];
      const r = ctx.jointRangesRad[c];
      if (!r) continue;
      const d = subtractDefault ? ctx.defaultJointPosRad[c] : 0;
      lo[i] = r[0] - d;
      hi[i] = r[1] - d;
    }
    return { lo, hi, tol: new Float64Array(n).fill(BOUND_TOLERANCE.jointRad) };
  };
  let raw: { lo: Float64Array; hi: Float64Array; tol: Float64Array; source: string } | null = null;
  switch (t.kind) {
    case 'projected_gravity':
    case 'ref_gravity_b':
      raw = unitBound(t.size, 'a unit vector (world −z in a body frame)');
      break;
    case 'ref_anchor_ori_b':
    case 'ref_anchor_ori_heading_b':
      raw = unitBound(t.size, 'entries of a rotation matrix');
      break;
    case 'ref_yaw_error_sin_cos':
    case 'ref_yaw_delta_sin_cos':
      raw = unitBound(t.size, 'a sine and a cosine');
      break;
    case 'joint_pos_rel':
      raw = { ...jointRanges(true), source: "the model's joint ranges minus the policy's default pose" };
      break;
    case 'ref_joint_pos':
      raw = { ...jointRanges(false), source: "the model's joint ranges" };
      break;
    case 'ref_joint_pos_vel': {
      const p = jointRanges(false);
      const cat = (a: Float64Array, fill: number) => {
        const o = new Float64Array(2 * n).fill(fill);
        o.set(a);
        return o;
      };
      raw = {
        lo: cat(p.lo, -Infinity),
        hi: cat(p.hi, Infinity),
        tol: cat(p.tol, 0),
        source: "angles within the model's joint ranges (velocities: no bound declared)",
      };
      break;
    }
    case 'last_action':
      if (ctx.actionClip !== null)
        raw = {
          lo: new Float64Array(n).fill(-ctx.actionClip),
          hi: new Float64Array(n).fill(ctx.actionClip),
          tol: new Float64Array(n).fill(BOUND_TOLERANCE.geometric),
          source: `the action clip ±${ctx.actionClip} the policy declares`,
        };
      break;
    default:
      break;
  }
  if (raw && raw.lo.length !== t.size) raw = null; // a term sized otherwise than its kind: no bound claimed
  let bound: TermBound | null = null;
  if (raw) {
    const lo = new Float64Array(t.size);
    const hi = new Float64Array(t.size);
    const tol = new Float64Array(t.size);
    for (let i = 0; i < t.size; i++) {
      const s = t.scale ? t.scale[i] : 1;
      const a = raw.lo[i] * s;
      const b = raw.hi[i] * s;
      lo[i] = s === 0 ? 0 : Math.min(a, b);
      hi[i] = s === 0 ? 0 : Math.max(a, b);
      tol[i] = raw.tol[i] * Math.abs(s);
    }
    bound = { lo, hi, tolerance: tol, source: t.scale ? `${raw.source}, times the term's scale` : raw.source };
  }
  if (t.clip !== null) {
    const c = t.clip;
    if (!bound)
      return {
        lo: new Float64Array(t.size).fill(-c),
        hi: new Float64Array(t.size).fill(c),
        tolerance: new Float64Array(t.size).fill(BOUND_TOLERANCE.geometric),
        source: `the clip ±${c} the policy declares`,
      };
    for (let i = 0; i < t.size; i++) {
      bound.lo[i] = Math.max(bound.lo[i], -c);
      bound.hi[i] = Math.min(bound.hi[i], c);
    }
    bound.source += `, within the declared clip ±${c}`;
  }
  return bound;
}

export interface TermRange {
  term: string;
  kind: string;
  width: number;
  min: number;
  max: number;
  mean: number;
  /** The implied range over the term's values (the widest finite per-value bound; null where unbounded), or null. */
  bound: { lo: number | null; hi: number | null; source: string } | null;
  status: 'within' | 'out_of_range' | 'no_bound_declared';
  /** Values beyond their bound (+ tolerance) over the run, and the worst one. */
  outOfRange: { fraction: number; worst: { value: string; at: number; lo: number; hi: number } } | null;
  /** Fraction of values sitting at the term's declared clip, when it declares one. */
  atClipFraction: number | null;
}

/**
 * A term's range judgement in words, the same for the command line and the Policy panel: within
 * the implied range, or out of it with the worst value against ITS OWN bound (a joint term's
 * aggregate range spans every joint and would not show why one joint is out).
 */
export function termJudgement(t: TermRange): string {
  const b = (v: number | null, inf: string) => (v === null ? inf : v.toFixed(3));
  const clip = t.atClipFraction !== null ? `; ${(100 * t.atClipFraction).toFixed(1)}% at the clip` : '';
  if (t.status === 'no_bound_declared' || !t.bound) return `no bound declared${clip}`;
  if (t.status === 'within' || !t.outOfRange)
    return `within [${b(t.bound.lo, '−∞')}, ${b(t.bound.hi, '∞')}] (${t.bound.source})${clip}`;
  const w = t.outOfRange.worst;
  return `OUT OF RANGE: ${(100 * t.outOfRange.fraction).toFixed(1)}% of values; worst ${w.value} = ${w.at.toFixed(3)} outside [${w.lo.toFixed(3)}, ${w.hi.toFixed(3)}] (${t.bound.source})${clip}`;
}

/** Accumulates every observation of a run, term by term (the terms' layout, history and frames included). */
export class ObservationRangeRecorder {
  private readonly offsets: number[] = [];
  private readonly min: number[];
  private readonly max: number[];
  private readonly sum: number[];
  private readonly out: number[];
  private readonly atClip: number[];
  private readonly worst: ({ excess: number; index: number; value: number } | null)[];
  private readonly bounds: (TermBound | null)[];
  private steps = 0;

  constructor(
    private readonly terms: readonly TrackingTerm[],
    ctx: BoundContext,
    private readonly jointNames: readonly string[] = ctx.jointOrder.policyNames,
  ) {
    let o = 0;
    for (const t of terms) {
      this.offsets.push(o);
      o += termWidth(t);
    }
    this.min = terms.map(() => Infinity);
    this.max = terms.map(() => -Infinity);
    this.sum = terms.map(() => 0);
    this.out = terms.map(() => 0);
    this.atClip = terms.map(() => 0);
    this.worst = terms.map(() => null);
    this.bounds = terms.map((t) => impliedTermBound(t, ctx));
  }

  add(observation: ArrayLike<number>): void {
    this.steps++;
    this.terms.forEach((t, ti) => {
      const o = this.offsets[ti];
      const w = termWidth(t);
      const b = this.bounds[ti];
      for (let k = 0; k < w; k++) {
        const v = observation[o + k];
        if (v < this.min[ti]) this.min[ti] = v;
        if (v > this.max[ti]) this.max[ti] = v;
        this.sum[ti] += v;
        if (t.clip !== null && Math.abs(v) >= t.clip * (1 - 1e-6)) this.atClip[ti]++;
        if (b) {
          const i = k % t.size;
          const excess = Math.max(b.lo[i] - v, v - b.hi[i]) - b.tolerance[i];
          if (excess > 0 || !Number.isFinite(v)) {
            this.out[ti]++;
            const e = Number.isFinite(v) ? excess : Infinity;
            const cur = this.worst[ti];
            if (!cur || e > cur.excess) this.worst[ti] = { excess: e, index: i, value: v };
          }
        }
      }
    });
  }

  private label(t: TrackingTerm, i: number): string {
    const n = this.jointNames.length;
    if (t.size === n) return this.jointNames[i];
    if (t.size === 2 * n) return `${this.jointNames[i % n]} (${i < n ? 'angle' : 'velocity'})`;
    return `[${i}]`;
  }

  ranges(): TermRange[] {
    return this.terms.map((t, ti) => {
      const w = termWidth(t);
      const count = w * this.steps;
      const b = this.bounds[ti];
      const worst = this.worst[ti];
      // The widest finite per-value bound (a term may bound only some of its values).
      const finite = (a: Float64Array) => Array.from(a).filter(Number.isFinite);
      const los = b ? finite(b.lo) : [];
      const his = b ? finite(b.hi) : [];
      return {
        term: t.name,
        kind: t.kind,
        width: w,
        min: this.min[ti],
        max: this.max[ti],
        mean: count > 0 ? this.sum[ti] / count : NaN,
        bound: b
          ? { lo: los.length ? Math.min(...los) : null, hi: his.length ? Math.max(...his) : null, source: b.source }
          : null,
        status: !b ? 'no_bound_declared' : this.out[ti] > 0 ? 'out_of_range' : 'within',
        outOfRange:
          b && worst
            ? {
                fraction: this.out[ti] / count,
                worst: {
                  value: this.label(t, worst.index),
                  at: worst.value,
                  lo: b.lo[worst.index],
                  hi: b.hi[worst.index],
                },
              }
            : null,
        atClipFraction: t.clip !== null && count > 0 ? this.atClip[ti] / count : null,
      };
    });
  }
}

export interface FirstActionReport {
  /** max |target − reference| over the joints, rad. */
  maxAbsRad: number;
  meanAbsRad: number;
  /** The joints with the largest |target − reference|, largest first. */
  worst: { joint: string; targetRad: number; referenceRad: number; deltaRad: number }[];
  perJoint: { joint: string; targetRad: number; referenceRad: number; deltaRad: number }[];
}

/** The first control step's joint targets (canonical, as the robot receives them) against the reference pose at t = 0. */
export function firstActionReport(
  targetsRad: ArrayLike<number>,
  referenceRad: ArrayLike<number>,
  jointNames: readonly string[],
  worstCount = 3,
): FirstActionReport {
  const perJoint = jointNames.map((joint, j) => ({
    joint,
    targetRad: targetsRad[j],
    referenceRad: referenceRad[j],
    deltaRad: targetsRad[j] - referenceRad[j],
  }));
  const abs = perJoint.map((p) => Math.abs(p.deltaRad));
  return {
    maxAbsRad: Math.max(...abs),
    meanAbsRad: abs.reduce((s, v) => s + v, 0) / Math.max(1, abs.length),
    worst: [...perJoint].sort((a, b) => Math.abs(b.deltaRad) - Math.abs(a.deltaRad)).slice(0, worstCount),
    perJoint,
  };
}

export interface ReadingRun {
  reading: ReadingName;
  outcome: string;
  /** The first hard failure in the window, or null. */
  failure: { timeS: number; condition: string; body: string } | null;
  progressSoft: number | null;
  mpjpeLMm: number | null;
  simSeconds: number;
  wallSeconds: number;
}

/** Why `control` tracks better than `normal`, or null when it does not. */
export function tracksBetter(control: ReadingRun, normal: ReadingRun): string | null {
  const m = BETTER_READING_MARGIN;
  if (normal.failure) {
    if (!control.failure)
      return `no hard failure in the window; the normal reading fails at ${normal.failure.timeS.toFixed(2)} s`;
    if (control.failure.timeS >= normal.failure.timeS + m.failureLaterS)
      return `first hard failure at ${control.failure.timeS.toFixed(2)} s; the normal reading's at ${normal.failure.timeS.toFixed(2)} s`;
    return null;
  }
  if (
    !control.failure &&
    control.mpjpeLMm !== null &&
    normal.mpjpeLMm !== null &&
    control.mpjpeLMm < m.mpjpeRatio * normal.mpjpeLMm
  )
    return `MPJPE-l ${control.mpjpeLMm.toFixed(1)} mm against the normal reading's ${normal.mpjpeLMm.toFixed(1)} mm`;
  return null;
}

export type VerdictKind = 'reading_tracks_better' | 'consistent_with_policy_limit' | 'normal_reading_tracks';

export interface PolicyCheckVerdict {
  kind: VerdictKind;
  line: string;
  /** The controls that track better, with why. */
  better: { reading: ReadingName; why: string }[];
}

const aspectOf = (r: ReadingName): string => READING_CONTROLS.find((c) => c.name === r)?.aspect ?? r;

/** One line that says what the runs show and no more. */
export function policyCheckVerdict(
  runs: readonly ReadingRun[],
  applicability: readonly ControlApplicability[],
  seconds: number,
): PolicyCheckVerdict {
  const normal = runs.find((r) => r.reading === 'normal');
  if (!normal) throw new RangeError('a policy check needs the normal reading');
  const better = runs
    .filter((r) => r.reading !== 'normal')
    .map((r) => ({ reading: r.reading, why: tracksBetter(r, normal) }))
    .filter((b): b is { reading: ReadingName; why: string } => b.why !== null);
  const tested = [...new Set(applicability.filter((a) => a.applicable).map((a) => aspectOf(a.name)))].join(', ');
  if (better.length > 0) {
    const aspects = [...new Set(better.map((b) => aspectOf(b.reading)))].join(' and ');
    return {
      kind: 'reading_tracks_better',
      line: `reading ${better.map((b) => `${b.reading} tracks better (${b.why})`).join('; ')}: suspect the harness's ${aspects}`,
      better,
    };
  }
  if (normal.failure)
    return {
      kind: 'consistent_with_policy_limit',
      line: `no alternative reading tracks better: consistent with a policy limit (the controls tested ${tested}; other harness faults are not ruled out)`,
      better,
    };
  return {
    kind: 'normal_reading_tracks',
    line: `the normal reading tracks with no hard failure in the first ${Number(seconds.toFixed(2))} s and no alternative reading tracks better`,
    better,
  };
}

/** The whole report of one check (what `policy check --json` prints and policies.check answers). */
export interface PolicyCheckReport {
  policy: { path: string; family: string; adapter: string; jointOrder: string; controlRateHz: number };
  clip: { file: string; name: string; fps: number; frames: number; seconds: number };
  /** Simulated seconds per reading (the window, or the whole clip when shorter). */
  seconds: number;
  firstAction: FirstActionReport;
  /** The normal reading's observation, term by term. */
  terms: TermRange[];
  controls: { name: ReadingName; aspect: string; description: string; applicable: boolean; why: string | null }[];
  runs: ReadingRun[];
  verdict: PolicyCheckVerdict;
  wallSeconds: number;
}
