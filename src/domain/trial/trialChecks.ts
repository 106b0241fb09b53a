// The matched trial session's fixed rules (docs/TRIALS.md): how close a fresh
// capture must be to the pair's calibration, which start poses a pair cannot start from, how often
// a step is retried, which outcomes count as a finished trial and how a trip ends a trial. Pure.

import { isRetryableOutcome, type EpisodeOutcome } from '../backend/backend';
import { quatToYawPitchRoll, wrapAngle } from '../calibration/attitude';
import type { StartResiduals } from '../calibration/residuals';
import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { TRIP_OUTCOMES } from '../safety/safetyConditions';
import type { GateTrip } from '../safety/safetyTypes';
import type { CalibrationRecord } from '../trace/records';

/** A fresh capture must agree with the pair's calibration this closely (rad). */
export const CALIBRATION_CHECK = { maxJointDiffRad: 0.05, maxAttitudeDiffRad: 0.035 } as const;

/** Infrastructure errors (the robot refused the clip, a recorder failure) are retried this many times. */
export const MAX_INFRA_RETRIES = 2;

/** Human-gated resets in a row that may fail the start-pose check before the session stops. */
export const MAX_RESET_ATTEMPTS = 3;

/** Real-robot trials per matched pair: the default and the bounds. */
export const DEFAULT_TRIALS = 3;
export const MAX_TRIALS = 20;

/** Throws RangeError unless `trials` is an integer in 1..MAX_TRIALS. */
export function checkTrialCount(trials: number): number {
  if (!(Number.isInteger(trials) && trials >= 1 && trials <= MAX_TRIALS))
    throw new RangeError(`trials must be an integer in 1..${MAX_TRIALS}, got ${trials}`);
  return trials;
}

/**
 * A calibration the pair cannot start from: the robot lying or leaning (roll/pitch), or with
 * motion capture, its pelvis far from the clip's first-frame height — the trial would be a hard
 * failure at frame 0 and the simulation branch would start from the same wrong state.
 */
export const START_POSE_LIMITS = { maxTiltRad: 0.3, maxRootHeightDiffM: 0.1 } as const;

export function startPoseProblems(r: StartResiduals): string[] {
  const out: string[] = [];
  if (Math.abs(r.rollRad) > START_POSE_LIMITS.maxTiltRad || Math.abs(r.pitchRad) > START_POSE_LIMITS.maxTiltRad) {
    out.push(
      `attitude differs from the clip's first frame by roll ${r.rollRad.toFixed(3)} rad, pitch ${r.pitchRad.toFixed(3)} rad (limit ${START_POSE_LIMITS.maxTiltRad} rad)`,
    );
  }
  if (r.rootPosM && Math.abs(r.rootPosM[2]) > START_POSE_LIMITS.maxRootHeightDiffM) {
    out.push(
      `pelvis height differs from the clip's first frame by ${r.rootPosM[2].toFixed(3)} m (limit ${START_POSE_LIMITS.maxRootHeightDiffM} m)`,
    );
  }
  return out;
}

/** Largest joint and roll/pitch differences between a fresh capture and the pair's calibration. */
export interface CalibrationDifference {
  maxJointDiffRad: number;
  joint: string;
  attitudeDiffRad: number;
  /** Every joint beyond CALIBRATION_CHECK.maxJointDiffRad, largest first (a NaN difference counts as out). */
  jointsOut: { joint: string; diffRad: number }[];
}

/** The measured pose a start-pose check compares: 29 joint angles (canonical order), IMU attitude w x y z. */
export interface MeasuredPose {
  jointPosRad: ArrayLike<number>;
  imuQuatWxyz: ArrayLike<number>;
}

/**
 * Joint and roll/pitch differences between a measured pose (a fresh capture, or the robot's
 * newest lowstate at a reset) and the pair's calibration: the largest, and every joint out.
 */
export function poseDifference(measured: MeasuredPose, pairCal: CalibrationRecord): CalibrationDifference {
  let max = 0;
  let joint: string = G1_JOINT_NAMES[0];
  const jointsOut: { joint: string; diffRad: number }[] = [];
  for (let j = 0; j < G1_JOINT_NAMES.length; j++) {
    const d = Math.abs(measured.jointPosRad[j] - pairCal.measured.jointPosRad[j]);
    if (!(d <= max)) {
      max = d;
      joint = G1_JOINT_NAMES[j];
    }
    if (!(d <= CALIBRATION_CHECK.maxJointDiffRad)) jointsOut.push({ joint: G1_JOINT_NAMES[j], diffRad: d });
  }
  jointsOut.sort((a, b) => (Number.isNaN(a.diffRad) ? -1 : Number.isNaN(b.diffRad) ? 1 : b.diffRad - a.diffRad));
  const a = quatToYawPitchRoll(Array.from(measured.imuQuatWxyz));
  const b = quatToYawPitchRoll(pairCal.measured.imuQuatWxyz);
  const att = Math.max(Math.abs(wrapAngle(a.rollRad - b.rollRad)), Math.abs(wrapAngle(a.pitchRad - b.pitchRad)));
  return { maxJointDiffRad: max, joint, attitudeDiffRad: att, jointsOut };
}

/** Largest joint and roll/pitch differences between a fresh capture and the pair's calibration. */
export function calibrationDifference(fresh: CalibrationRecord, pairCal: CalibrationRecord): CalibrationDifference {
  return poseDifference(fresh.measured, pairCal);
}

/** Joints listed by name in a "not at the start pose" message; the rest are counted. */
const JOINTS_LISTED = 5;

/**
 * Why a measured pose does not count as the pair's start pose (CALIBRATION_CHECK), or null: "not
 * at the start pose: 3 joints out — right_elbow 0.120 rad, … (limit 0.05 rad); attitude differs
 * by 0.400 rad (limit 0.035 rad)". A difference that is not a number (NaN) fails too.
 */
export function calibrationCheckProblem(d: CalibrationDifference): string | null {
  const jointsOk = d.maxJointDiffRad <= CALIBRATION_CHECK.maxJointDiffRad;
  const attitudeOk = d.attitudeDiffRad <= CALIBRATION_CHECK.maxAttitudeDiffRad;
  if (jointsOk && attitudeOk) return null;
  const parts: string[] = [];
  if (!jointsOk) {
    const n = d.jointsOut.length;
    const listed = d.jointsOut
      .slice(0, JOINTS_LISTED)
      .map((j) => `${j.joint} ${j.diffRad.toFixed(3)} rad`)
      .join(', ');
    const more = n > JOINTS_LISTED ? ` and ${n - JOINTS_LISTED} more` : '';
    parts.push(
      `${n} joint${n === 1 ? '' : 's'} out — ${listed}${more} (limit ${CALIBRATION_CHECK.maxJointDiffRad} rad)`,
    );
  }
  if (!attitudeOk)
    parts.push(
      `attitude differs by ${d.attitudeDiffRad.toFixed(3)} rad (limit ${CALIBRATION_CHECK.maxAttitudeDiffRad} rad)`,
    );
  return `not at the start pose: ${parts.join('; ')}`;
}

/**
 * A finished episode counts towards its branch (and is not run again on resume) unless it ended
 * with an outcome that is retried: anything but `infrastructure_error` (DESIGN §3). An episode
 * without an outcome (interrupted, never finished) does not count.
 */
export function countsAsFinished(outcome: EpisodeOutcome | null): outcome is EpisodeOutcome {
  return outcome !== null && !isRetryableOutcome(outcome);
}

/** Outcomes that mean the robot side stopped the trial (a trip's outcomes): they get a `stop_requested` event. */
export function isSafetyStop(outcome: EpisodeOutcome): boolean {
  return TRIP_OUTCOMES.includes(outcome);
}

/** How a trip ends the trial it names: the trip's outcome, its reason with the cause. */
export function tripEnd(trip: GateTrip): { outcome: EpisodeOutcome; reason: string } {
  return { outcome: trip.outcome, reason: `${trip.reason} (${trip.cause})` };
}
