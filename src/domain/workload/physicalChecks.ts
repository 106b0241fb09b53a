// Physical plausibility checks for reference clips (docs/WORKLOAD.md, "Physical checks"):
// measures a clip against a robot model — joint-limit margins, floor penetration of the foot
// contact spheres and of every other collision geom, ground contact, foot sliding while in
// contact, joint velocity / acceleration / jerk, root speed and acceleration, and whether the
// clip starts and ends at rest in the stand pose — and compares the measurements with limits.
//
// Derivatives use the finite differences of the metric contract mb-metrics/1 (§4) at the clip's
// own rate: velocity (q[k+1] − q[k−1])·fps/2, acceleration (q[k+1] − 2q[k] + q[k−1])·fps²,
// jerk (q[k+2] − 3q[k+1] + 3q[k] − q[k−1])·fps³.

import type { CapabilityGroup, MotionClip } from '../motion/motionClip';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import { BodyModel, type Side } from './bodyModel';

export interface PhysicsLimits {
  /** Every joint stays at least this far inside its range (rad). */
  jointLimitMarginRad: number;
  /** Lowest foot contact point ≥ −this (m): numerical tolerance for "not below the floor". */
  floorToleranceM: number;
  /** Every collision geom other than the foot spheres stays at least this high (m). */
  nonFootClearanceM: number;
  /** Without flight, every frame has a foot contact point within this of the floor (m). */
  contactToleranceM: number;
  /** A contact sphere within contactToleranceM of the floor in two consecutive frames moves horizontally at most this fast (m/s). */
  footSlipMps: number;
  jointVelRadS: number;
  jointAccRadS2: number;
  jointJerkRadS3: number;
  rootSpeedMps: number;
  rootAccMps2: number;
  rootAngSpeedRadS: number;
  /** Clips with flight: at some frame both feet are at least this high (m). */
  minFlightM: number;
  /** Duration bounds (s). */
  minDurationS: number;
  maxDurationS: number;
  /** First and last frame: joint angles within this of the stand pose (rad), root roll/pitch within it (rad). */
  restPoseTolRad: number;
  /** First and last frame: joint speed below this (rad/s). */
  restVelRadS: number;
}

/** Limits for upper-body, in-place, locomotion and low-posture clips. */
export const STANDARD_LIMITS: PhysicsLimits = {
  jointLimitMarginRad: 0.05,
  floorToleranceM: 1e-9,
  nonFootClearanceM: 0.02,
  contactToleranceM: 1e-6,
  footSlipMps: 1e-3,
  jointVelRadS: 6,
  jointAccRadS2: 60,
  jointJerkRadS3: 1500,
  rootSpeedMps: 1.0,
  rootAccMps2: 5,
  rootAngSpeedRadS: 2,
  minFlightM: 0.01,
  minDurationS: 5,
  maxDurationS: 15,
  restPoseTolRad: 1e-9,
  restVelRadS: 1e-9,
};

/**
 * Limits for dynamic clips (jogging, jumps, kicks, fast punches and swings): the same geometry
 * checks, higher rates. Jerk peaks where a foot leaves or meets the floor and where a kick turns.
 */
export const DYNAMIC_LIMITS: PhysicsLimits = {
  ...STANDARD_LIMITS,
  jointVelRadS: 14,
  jointAccRadS2: 300,
  jointJerkRadS3: 12000,
  rootSpeedMps: 2.0,
  rootAccMps2: 20,
  rootAngSpeedRadS: 3,
};

export const limitsForGroup = (group: CapabilityGroup | undefined): PhysicsLimits =>
  group === 'dynamic' ? DYNAMIC_LIMITS : STANDARD_LIMITS;

export interface Extreme {
  value: number;
  frame: number;
  /** Joint, body or geom concerned, when there is one. */
  what?: string;
}

export interface ClipPhysicsReport {
  clip: string;
  frames: number;
  fps: number;
  durationS: number;
  quatNormMaxDev: number;
  /** Smallest distance of any joint to its nearest limit (negative = outside). */
  jointLimitMargin: Extreme;
  /** Lowest foot contact point over all frames (m). */
  footLowest: Extreme;
  /** Highest per-frame lowest foot contact point (m): > 0 means both feet off the floor (flight). */
  flightHeight: Extreme;
  /** Frames with both feet above contactToleranceM. */
  flightFrames: number;
  nonFootLowest: Extreme;
  footSlip: Extreme;
  jointVel: Extreme;
  jointAcc: Extreme;
  jointJerk: Extreme;
  rootSpeed: Extreme;
  rootAcc: Extreme;
  rootAngSpeed: Extreme;
  /** Max |q − stand| over joints at the first / last frame, and root roll/pitch there. */
  startPoseDev: number;
  endPoseDev: number;
  startVel: number;
  endVel: number;
}

const worse = (e: Extreme, value: number, frame: number, what?: string, lower = false): void => {
  if (lower ? value < e.value : value > e.value) {
    e.value = value;
    e.frame = frame;
    if (what !== undefined) e.what = what;
  }
};
const ext = (value: number): Extreme => ({ value, frame: -1 });

/** Measures a clip (any fps) against a model. */
export function measureClip(clip: MotionClip, model: BodyModel, standJoints: ArrayLike<number>): ClipPhysicsReport {
  const J = G1_NUM_JOINTS;
  const N = clip.frameCount;
  const r = clip.fps;
  const q = clip.jointPosRad;
  const P = clip.rootPosM;
  const Q = clip.rootQuatWxyz;
  const rep: ClipPhysicsReport = {
    clip: clip.name,
    frames: N,
    fps: r,
    durationS: (N - 1) / r,
    quatNormMaxDev: 0,
    jointLimitMargin: ext(Infinity),
    footLowest: ext(Infinity),
    flightHeight: ext(-Infinity),
    flightFrames: 0,
    nonFootLowest: ext(Infinity),
    footSlip: ext(0),
    jointVel: ext(0),
    jointAcc: ext(0),
    jointJerk: ext(0),
    rootSpeed: ext(0),
    rootAcc: ext(0),
    rootAngSpeed: ext(0),
    startPoseDev: 0,
    endPoseDev: 0,
    startVel: 0,
    endVel: 0,
  };
  const contactTol = STANDARD_LIMITS.contactToleranceM;
  // previous frame's contact sphere centres (side, sphere) → x, y and whether in contact
  const spheres = model.footSpheres;
  const prevXY: number[][][] = [spheres[0].map(() => [0, 0]), spheres[1].map(() => [0, 0])];
  const prevIn: boolean[][] = [spheres[0].map(() => false), spheres[1].map(() => false)];
  for (let k = 0; k < N; k++) {
    const qo = 4 * k;
    const n = Math.sqrt(Q[qo] * Q[qo] + Q[qo + 1] * Q[qo + 1] + Q[qo + 2] * Q[qo + 2] + Q[qo + 3] * Q[qo + 3]);
    rep.quatNormMaxDev = Math.max(rep.quatNormMaxDev, Math.abs(n - 1));
    for (let j = 0; j < J; j++) {
      const v = q[J * k + j];
      const m = Math.min(v - model.lowerLimit[j], model.upperLimit[j] - v);
      worse(rep.jointLimitMargin, m, k, G1_JOINT_NAMES[j], true);
    }
    model.fk.compute(P, Q, q, model.pos, model.quat, 3 * k, 4 * k, J * k);
    const lowL = model.footLowest(0);
    const lowR = model.footLowest(1);
    const low = Math.min(lowL, lowR);
    worse(rep.footLowest, low, k, lowL <= lowR ? 'left foot' : 'right foot', true);
    worse(rep.flightHeight, low, k);
    if (low > contactTol) rep.flightFrames++;
    const [ng, label] = model.lowestNonFootGeom();
    worse(rep.nonFootLowest, ng, k, label, true);
    for (const side of [0, 1] as Side[]) {
      const b = model.footBody[side];
      spheres[side].forEach((s, i) => {
        const w = model.worldPoint(b, s[0], s[1], s[2]);
        const inContact = w[2] - s[3] <= contactTol;
        if (inContact && prevIn[side][i]) {
          const dx = w[0] - prevXY[side][i][0];
          const dy = w[1] - prevXY[side][i][1];
          worse(rep.footSlip, Math.sqrt(dx * dx + dy * dy) * r, k, side === 0 ? 'left foot' : 'right foot');
        }
        prevXY[side][i][0] = w[0];
        prevXY[side][i][1] = w[1];
        prevIn[side][i] = inContact;
      });
    }
  }
  for (let k = 1; k < N - 1; k++) {
    for (let j = 0; j < J; j++) {
      const a = q[J * (k - 1) + j];
      const b = q[J * k + j];
      const c = q[J * (k + 1) + j];
      worse(rep.jointVel, Math.abs((c - a) * r * 0.5), k, G1_JOINT_NAMES[j]);
      worse(rep.jointAcc, Math.abs((c - 2 * b + a) * r * r), k, G1_JOINT_NAMES[j]);
      if (k < N - 2) {
        const d = q[J * (k + 2) + j];
        worse(rep.jointJerk, Math.abs((d - 3 * c + 3 * b - a) * r * r * r), k, G1_JOINT_NAMES[j]);
      }
    }
    let sp = 0;
    let ac = 0;
    for (let c = 0; c < 3; c++) {
      const v = (P[3 * (k + 1) + c] - P[3 * (k - 1) + c]) * r * 0.5;
      const a = (P[3 * (k + 1) + c] - 2 * P[3 * k + c] + P[3 * (k - 1) + c]) * r * r;
      sp += v * v;
      ac += a * a;
    }
    worse(rep.rootSpeed, Math.sqrt(sp), k);
    worse(rep.rootAcc, Math.sqrt(ac), k);
    // angular speed from q[k−1] → q[k+1]: angle of the relative rotation / (2/r)
    const o0 = 4 * (k - 1);
    const o1 = 4 * (k + 1);
    const dot = Math.abs(Q[o0] * Q[o1] + Q[o0 + 1] * Q[o1 + 1] + Q[o0 + 2] * Q[o1 + 2] + Q[o0 + 3] * Q[o1 + 3]);
    const ang = 2 * Math.acos(Math.min(1, dot));
    worse(rep.rootAngSpeed, ang * r * 0.5, k);
  }
  const poseDev = (k: number) => {
    let d = 0;
    for (let j = 0; j < J; j++) d = Math.max(d, Math.abs(q[J * k + j] - standJoints[j]));
    const o = 4 * k;
    const [w, x, y, z] = [Q[o], Q[o + 1], Q[o + 2], Q[o + 3]];
    const roll = Math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    const pitch = Math.asin(Math.max(-1, Math.min(1, 2 * (w * y - z * x))));
    return Math.max(d, Math.abs(roll), Math.abs(pitch));
  };
  rep.startPoseDev = poseDev(0);
  rep.endPoseDev = poseDev(N - 1);
  let sv = 0;
  let ev = 0;
  for (let j = 0; j < J; j++) {
    sv = Math.max(sv, Math.abs(q[J + j] - q[j]) * r);
    ev = Math.max(ev, Math.abs(q[J * (N - 1) + j] - q[J * (N - 2) + j]) * r);
  }
  rep.startVel = sv;
  rep.endVel = ev;
  return rep;
}

export interface PhysicsViolation {
  check: string;
  message: string;
}

/** Violations of `limits` in a report; `flight` allows frames with both feet off the floor. */
export function physicsViolations(rep: ClipPhysicsReport, limits: PhysicsLimits, flight: boolean): PhysicsViolation[] {
  const out: PhysicsViolation[] = [];
  const at = (e: Extreme) => `at frame ${e.frame}${e.what ? ` (${e.what})` : ''}`;
  const over = (check: string, e: Extreme, lim: number, unit: string) => {
    if (!(e.value <= lim))
      out.push({ check, message: `${check} ${e.value.toPrecision(4)} ${unit} ${at(e)} exceeds ${lim} ${unit}` });
  };
  if (!(rep.durationS >= limits.minDurationS - 1e-9 && rep.durationS <= limits.maxDurationS + 1e-9)) {
    out.push({
      check: 'duration',
      message: `duration ${rep.durationS} s is outside ${limits.minDurationS}–${limits.maxDurationS} s`,
    });
  }
  if (!(rep.quatNormMaxDev <= 1e-12))
    out.push({ check: 'quaternion', message: `root quaternion norm deviates from 1 by ${rep.quatNormMaxDev}` });
  if (!(rep.jointLimitMargin.value >= limits.jointLimitMarginRad)) {
    out.push({
      check: 'joint_limits',
      message: `joint-limit margin ${rep.jointLimitMargin.value.toFixed(4)} rad ${at(rep.jointLimitMargin)} is below ${limits.jointLimitMarginRad} rad`,
    });
  }
  if (!(rep.footLowest.value >= -limits.floorToleranceM)) {
    out.push({
      check: 'floor',
      message: `foot contact point ${rep.footLowest.value.toExponential(3)} m below the floor ${at(rep.footLowest)}`,
    });
  }
  if (!(rep.nonFootLowest.value >= limits.nonFootClearanceM)) {
    out.push({
      check: 'clearance',
      message: `collision geom at ${rep.nonFootLowest.value.toFixed(4)} m ${at(rep.nonFootLowest)}, less than ${limits.nonFootClearanceM} m above the floor`,
    });
  }
  if (flight && !(rep.flightHeight.value >= limits.minFlightM)) {
    out.push({
      check: 'flight',
      message: `a clip with flight never has both feet ${limits.minFlightM} m off the floor (highest ${rep.flightHeight.value.toFixed(4)} m)`,
    });
  }
  if (!flight && rep.flightFrames > 0) {
    out.push({
      check: 'contact',
      message: `${rep.flightFrames} frames with both feet off the floor (highest ${rep.flightHeight.value.toExponential(3)} m ${at(rep.flightHeight)}) in a clip without flight`,
    });
  }
  over('foot_slip', rep.footSlip, limits.footSlipMps, 'm/s');
  over('joint_velocity', rep.jointVel, limits.jointVelRadS, 'rad/s');
  over('joint_acceleration', rep.jointAcc, limits.jointAccRadS2, 'rad/s²');
  over('joint_jerk', rep.jointJerk, limits.jointJerkRadS3, 'rad/s³');
  over('root_speed', rep.rootSpeed, limits.rootSpeedMps, 'm/s');
  over('root_acceleration', rep.rootAcc, limits.rootAccMps2, 'm/s²');
  over('root_angular_speed', rep.rootAngSpeed, limits.rootAngSpeedRadS, 'rad/s');
  if (!(rep.startPoseDev <= limits.restPoseTolRad))
    out.push({
      check: 'start_pose',
      message: `first frame is ${rep.startPoseDev.toExponential(3)} rad from the stand pose`,
    });
  if (!(rep.endPoseDev <= limits.restPoseTolRad))
    out.push({
      check: 'end_pose',
      message: `last frame is ${rep.endPoseDev.toExponential(3)} rad from the stand pose`,
    });
  if (!(rep.startVel <= limits.restVelRadS))
    out.push({
      check: 'start_rest',
      message: `joints move at ${rep.startVel.toExponential(3)} rad/s at the first frame`,
    });
  if (!(rep.endVel <= limits.restVelRadS))
    out.push({ check: 'end_rest', message: `joints move at ${rep.endVel.toExponential(3)} rad/s at the last frame` });
  return out;
}
