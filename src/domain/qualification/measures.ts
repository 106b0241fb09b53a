// Per-rollout measures of the admission policy that the metric contract does not give
// (docs/QUALIFICATION.md): posture margins (the largest root-height, root-orientation and
// end-effector-height errors of the episode, from FK on the common timeline), actuator
// saturation (from the recorded joint torques and commanded targets) and contacts of robot
// bodies other than the feet with the environment (the floor). Pure: the simulator's frames come
// in, a JSON-able record comes out; the service stores it with the episode.

import type { ContactInfo } from '../robot/stateFrame';
import { relativeAngle } from '../metrics/episodeAccumulator';
import type { MetricFrames, MetricLayout } from '../metrics/metricLayout';
import type { RobotProfile } from '../robot/robotProfile';

export const ROLLOUT_MEASURES_SCHEME = 'mb-rollout-measures/1';

/** What the measures depend on (part of the admission policy, so part of its version). */
export interface MeasurementParameters {
  /** A joint sample is torque-saturated when |τ| ≥ this × the actuator's force limit. */
  saturationTorqueFraction: number;
  /** A joint sample is target-saturated when the commanded target lies within this of an end of the actuator's ctrlrange, or beyond it (rad). */
  ctrlRangeMarginRad: number;
  /** Contacts with a normal force below this are ignored (MuJoCo reports contacts inside the geom margin with zero force), N. */
  contactMinForceN: number;
}

/** Force and control limits per joint (canonical order), from the robot model's actuators. */
export interface ActuatorLimits {
  jointNames: string[];
  /** Symmetric force limit max(|lo|, |hi|) of the joint's actuator, N·m; null when the model gives none. */
  forceLimitNm: (number | null)[];
  /** ctrlrange of the joint's position actuator, rad; null when the model gives none. */
  ctrlRangeRad: ([number, number] | null)[];
}

export function actuatorLimitsOf(profile: Pick<RobotProfile, 'joints' | 'actuators'>): ActuatorLimits {
  const J = profile.joints.length;
  const forceLimitNm: (number | null)[] = new Array(J).fill(null);
  const ctrlRangeRad: ([number, number] | null)[] = new Array(J).fill(null);
  for (const a of profile.actuators) {
    const j = a.jointIndex;
    if (!(j >= 0 && j < J)) continue;
    if (a.forceRange && forceLimitNm[j] === null) {
      const f = Math.max(Math.abs(a.forceRange[0]), Math.abs(a.forceRange[1]));
      if (Number.isFinite(f) && f > 0) forceLimitNm[j] = f;
    }
    if (a.kind === 'position' && a.ctrlRange && ctrlRangeRad[j] === null)
      ctrlRangeRad[j] = [a.ctrlRange[0], a.ctrlRange[1]];
  }
  return { jointNames: profile.joints.map((jt) => jt.name), forceLimitNm, ctrlRangeRad };
}

/** Largest tracking errors of one episode over frames 0..K−2 (the frames the hard-failure test uses). */
export interface PostureMargins {
  /** Frames examined (K − 1). */
  frames: number;
  rootHeight: { maxM: number; frame: number };
  rootOrientation: { maxRad: number; frame: number };
  endEffectorHeight: { maxM: number; frame: number; body: string };
}

/** A floor (environment) contact of one robot body over the episode. */
export interface BodyContactSummary {
  body: string;
  /** What it touched (geom names; "world" for an unnamed one). */
  other: string[];
  /** Recorded frames with the contact at or above the minimum force. */
  frames: number;
  /** Those frames as half-open runs [first, end), in order (exact unions over bodies). */
  runs: [number, number][];
  firstFrame: number;
  firstTimeS: number;
  maxForceN: number;
}

export interface SaturationSummary {
  /** Joint samples counted: recorded frames × joints. */
  samples: number;
  /** Samples saturated by torque or by target (each sample counted once). */
  saturated: number;
  /** saturated / samples (0 when there are no samples). */
  fraction: number;
  torqueSaturated: number;
  targetSaturated: number;
  /** The joint saturated most often, with its own fraction (null when nothing saturated). */
  worstJoint: { name: string; fraction: number } | null;
  /** Joints whose actuator has a force limit (the others are judged by target only). */
  jointsWithForceLimit: number;
  /** Recorded frames without a command (e.g. a backend that does not report one); their targets are not judged. */
  framesWithoutCommand: number;
}

export interface RolloutMeasures {
  scheme: typeof ROLLOUT_MEASURES_SCHEME;
  /** Recorded 50 Hz frames. */
  frames: number;
  /** null when fewer than two frames were recorded (then marginsUnavailable says why). */
  margins: PostureMargins | null;
  marginsUnavailable?: string;
  saturation: SaturationSummary;
  /** Contacts of robot bodies (feet excepted: the simulator does not report foot–floor contacts) with the environment. */
  floorContacts: BodyContactSummary[];
  /** Whether the backend reported contacts at all (a backend without contact sensing cannot show "none"). */
  contactsKnown: boolean;
}

/** Frames covered by the union of the bodies' contact runs. */
export function contactFramesUnion(bodies: readonly Pick<BodyContactSummary, 'runs'>[]): number {
  const runs = bodies.flatMap((b) => b.runs).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [s, e] of runs) {
    if (e <= end) continue;
    total += e - Math.max(s, end);
    end = e;
  }
  return total;
}

/**
 * Posture margins from frames already on the common timeline with FK body positions (what
 * ClipPairEvaluator.timeline / evaluate return). NaN errors count as +∞.
 */
export function postureMargins(
  layout: MetricLayout,
  ref: MetricFrames,
  exec: MetricFrames,
  K: number,
): PostureMargins | null {
  if (!(K >= 2)) return null;
  const B3 = 3 * layout.bodyCount;
  const root = 3 * layout.rootBodyIndex + 2;
  const ee = layout.endEffectorBodyIndices;
  const m: PostureMargins = {
    frames: K - 1,
    rootHeight: { maxM: -1, frame: 0 },
    rootOrientation: { maxRad: -1, frame: 0 },
    endEffectorHeight: { maxM: -1, frame: 0, body: ee.length > 0 ? layout.bodyNames[ee[0]] : '' },
  };
  const nan = (v: number) => (Number.isNaN(v) ? Infinity : v);
  for (let k = 0; k < K - 1; k++) {
    const o = k * B3;
    const dz = nan(Math.abs(exec.bodyPosM[o + root] - ref.bodyPosM[o + root]));
    if (dz > m.rootHeight.maxM) m.rootHeight = { maxM: dz, frame: k };
    const ang = nan(relativeAngle(ref.rootQuatWxyz, 4 * k, exec.rootQuatWxyz, 4 * k));
    if (ang > m.rootOrientation.maxRad) m.rootOrientation = { maxRad: ang, frame: k };
    for (let i = 0; i < ee.length; i++) {
      const z = o + 3 * ee[i] + 2;
      const e = nan(Math.abs(exec.bodyPosM[z] - ref.bodyPosM[z]));
      if (e > m.endEffectorHeight.maxM) m.endEffectorHeight = { maxM: e, frame: k, body: layout.bodyNames[ee[i]] };
    }
  }
  if (ee.length === 0) m.endEffectorHeight.maxM = 0;
  return m;
}

/**
 * Accumulates saturation and contacts frame by frame as the backend streams them (nothing is
 * kept per frame), then adds the posture margins at the end.
 */
export class RolloutMeasurer {
  private frames = 0;
  private samples = 0;
  private saturated = 0;
  private torqueSat = 0;
  private targetSat = 0;
  private noCommand = 0;
  private contactsSeen = false;
  private readonly perJoint: Float64Array;
  private readonly torqueThreshold: (number | null)[];
  private readonly lo: Float64Array;
  private readonly hi: Float64Array;
  private readonly robotBodies: Set<string>;
  private readonly contacts = new Map<string, BodyContactSummary & { others: Set<string> }>();

  constructor(
    private readonly limits: ActuatorLimits,
    robotBodyNames: readonly string[],
    private readonly params: MeasurementParameters,
    private readonly rateHz = 50,
  ) {
    const J = limits.jointNames.length;
    this.perJoint = new Float64Array(J);
    this.torqueThreshold = limits.forceLimitNm.map((f) => (f === null ? null : params.saturationTorqueFraction * f));
    this.lo = new Float64Array(J).fill(-Infinity);
    this.hi = new Float64Array(J).fill(Infinity);
    limits.ctrlRangeRad.forEach((r, j) => {
      if (r) {
        this.lo[j] = r[0] + params.ctrlRangeMarginRad;
        this.hi[j] = r[1] - params.ctrlRangeMarginRad;
      }
    });
    this.robotBodies = new Set(robotBodyNames);
  }

  /**
   * One recorded frame: the joint torques, the commanded targets (null when unknown) and the
   * contacts the backend reported (null when it does not sense contacts).
   */
  addFrame(
    k: number,
    tauNm: ArrayLike<number>,
    targetRad: ArrayLike<number> | null,
    contacts: readonly ContactInfo[] | null,
  ): void {
    const J = this.perJoint.length;
    this.frames++;
    if (!targetRad) this.noCommand++;
    for (let j = 0; j < J; j++) {
      const th = this.torqueThreshold[j];
      const t = tauNm[j];
      const bySat = th !== null && !(Math.abs(t) < th);
      const tg = targetRad ? targetRad[j] : NaN;
      const byTarget = targetRad !== null && !(tg > this.lo[j] && tg < this.hi[j]);
      if (bySat) this.torqueSat++;
      if (byTarget) this.targetSat++;
      if (bySat || byTarget) {
        this.saturated++;
        this.perJoint[j]++;
      }
    }
    this.samples += J;
    if (contacts) {
      this.contactsSeen = true;
      const seen = new Set<string>();
      for (const c of contacts) {
        if (this.robotBodies.has(c.other)) continue; // robot–robot (self) contact
        if (!(c.forceN >= this.params.contactMinForceN)) continue;
        let s = this.contacts.get(c.body);
        if (!s) {
          s = {
            body: c.body,
            other: [],
            others: new Set(),
            frames: 0,
            runs: [],
            firstFrame: k,
            firstTimeS: k / this.rateHz,
            maxForceN: 0,
          };
          this.contacts.set(c.body, s);
        }
        s.others.add(c.other || 'world');
        if (c.forceN > s.maxForceN) s.maxForceN = c.forceN;
        if (!seen.has(c.body)) {
          seen.add(c.body);
          s.frames++;
          const last = s.runs[s.runs.length - 1];
          if (last && last[1] === k) last[1] = k + 1;
          else s.runs.push([k, k + 1]);
        }
      }
    }
  }

  result(margins: PostureMargins | null, marginsUnavailable?: string): RolloutMeasures {
    let worst = -1;
    for (let j = 0; j < this.perJoint.length; j++)
      if (this.perJoint[j] > 0 && (worst < 0 || this.perJoint[j] > this.perJoint[worst])) worst = j;
    const framesJudged = this.frames;
    const out: RolloutMeasures = {
      scheme: ROLLOUT_MEASURES_SCHEME,
      frames: this.frames,
      margins,
      saturation: {
        samples: this.samples,
        saturated: this.saturated,
        fraction: this.samples > 0 ? this.saturated / this.samples : 0,
        torqueSaturated: this.torqueSat,
        targetSaturated: this.targetSat,
        worstJoint:
          worst >= 0
            ? {
                name: this.limits.jointNames[worst],
                fraction: framesJudged > 0 ? this.perJoint[worst] / framesJudged : 0,
              }
            : null,
        jointsWithForceLimit: this.limits.forceLimitNm.filter((f) => f !== null).length,
        framesWithoutCommand: this.noCommand,
      },
      floorContacts: [...this.contacts.values()]
        .map(({ others, ...s }) => ({ ...s, other: [...others].sort() }))
        .sort((a, b) => a.firstFrame - b.firstFrame || (a.body < b.body ? -1 : 1)),
      contactsKnown: this.contactsSeen,
    };
    if (!margins) out.marginsUnavailable = marginsUnavailable ?? 'fewer than two frames on the common timeline';
    return out;
  }
}
