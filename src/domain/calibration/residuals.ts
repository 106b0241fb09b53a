// Residuals kept as covariates of a matched pair (DESIGN §3 CalibrationRecord):
//   (b) measurement vs the clip's first reference frame: per joint (measured − clip, rad) and
//       root attitude (roll and pitch differences, ZYX, rad; heading and position only with mocap);
//   (a) the simulator's settled state vs the measurement: per joint (settled − measured, rad)
//       and attitude (settled IMU roll/pitch − measured IMU roll/pitch, rad).
// Pure; running the simulator to its settled state is the caller's job.

import type { StateFrame } from '../robot/stateFrame';
import type { MotionClip } from '../motion/motionClip';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import type { RobotProfile } from '../robot/robotProfile';
import type { CalibrationRecord } from '../trace/records';
import { quatToYawPitchRoll, wrapAngle } from './attitude';
import { simInitialStateFromCalibration } from './simStart';

export interface StartResiduals {
  /** Per joint, canonical order, rad (first minus second of the comparison). */
  jointRad: number[];
  maxAbsJointRad: number;
  /** Canonical name of the joint with the largest |residual|. */
  maxAbsJoint: string;
  rmsJointRad: number;
  /** Roll and pitch differences (ZYX), wrapped to (−π, π], rad. */
  rollRad: number;
  pitchRad: number;
  /** Heading difference, rad; null when the heading is not measured (no mocap). */
  headingRad: number | null;
  /** Root position difference, m; null without mocap. */
  rootPosM: [number, number, number] | null;
}

function jointResiduals(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  what: string,
): Pick<StartResiduals, 'jointRad' | 'maxAbsJointRad' | 'maxAbsJoint' | 'rmsJointRad'> {
  if (a.length !== G1_NUM_JOINTS || b.length !== G1_NUM_JOINTS)
    throw new RangeError(
      `${what}: expected ${G1_NUM_JOINTS} joint angles on both sides, got ${a.length} and ${b.length}`,
    );
  const jointRad: number[] = [];
  let max = -1;
  let maxJ = 0;
  let ss = 0;
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    const d = a[j] - b[j];
    if (!Number.isFinite(d)) throw new RangeError(`${what}: non-finite value at ${G1_JOINT_NAMES[j]}`);
    jointRad.push(d);
    ss += d * d;
    if (Math.abs(d) > max) {
      max = Math.abs(d);
      maxJ = j;
    }
  }
  return {
    jointRad,
    maxAbsJointRad: max,
    maxAbsJoint: G1_JOINT_NAMES[maxJ],
    rmsJointRad: Math.sqrt(ss / G1_NUM_JOINTS),
  };
}

/** (b) The measurement vs the clip's first reference frame. */
export function measuredVsClipStart(cal: CalibrationRecord, clip: MotionClip): StartResiduals {
  if (clip.frameCount < 1) throw new RangeError(`clip ${clip.id} has no frames`);
  const m = cal.measured;
  const joints = jointResiduals(m.jointPosRad, clip.jointPosRad.subarray(0, G1_NUM_JOINTS), 'measured vs clip start');
  const clipQ = [clip.rootQuatWxyz[0], clip.rootQuatWxyz[1], clip.rootQuatWxyz[2], clip.rootQuatWxyz[3]];
  const c = quatToYawPitchRoll(clipQ);
  const mocap = m.rootPosM !== null && m.rootQuatWxyz !== null;
  const meas = quatToYawPitchRoll(mocap ? m.rootQuatWxyz! : m.imuQuatWxyz);
  return {
    ...joints,
    rollRad: wrapAngle(meas.rollRad - c.rollRad),
    pitchRad: wrapAngle(meas.pitchRad - c.pitchRad),
    headingRad: mocap ? wrapAngle(meas.yawRad - c.yawRad) : null,
    rootPosM: mocap
      ? [m.rootPosM![0] - clip.rootPosM[0], m.rootPosM![1] - clip.rootPosM[1], m.rootPosM![2] - clip.rootPosM[2]]
      : null,
  };
}

/**
 * (a) The simulator's settled state vs the measurement. The settled attitude is the simulator's
 * IMU quaternion (like for like with the measured IMU); heading and position are compared only
 * when the calibration has a mocap root pose and the settled frame a root pose.
 */
export function settledVsMeasured(settled: StateFrame, cal: CalibrationRecord): StartResiduals {
  const m = cal.measured;
  const joints = jointResiduals(settled.jointPosRad, m.jointPosRad, 'settled vs measured');
  const s = quatToYawPitchRoll(Array.from(settled.imu.quatWxyz));
  const meas = quatToYawPitchRoll(m.imuQuatWxyz);
  const mocap =
    m.rootPosM !== null && m.rootQuatWxyz !== null && settled.rootPosM !== null && settled.rootQuatWxyz !== null;
  let headingRad: number | null = null;
  let rootPosM: [number, number, number] | null = null;
  if (mocap) {
    headingRad = wrapAngle(
      quatToYawPitchRoll(Array.from(settled.rootQuatWxyz!)).yawRad - quatToYawPitchRoll(m.rootQuatWxyz!).yawRad,
    );
    const p = settled.rootPosM!;
    rootPosM = [p[0] - m.rootPosM![0], p[1] - m.rootPosM![1], p[2] - m.rootPosM![2]];
  }
  return {
    ...joints,
    rollRad: wrapAngle(s.rollRad - meas.rollRad),
    pitchRad: wrapAngle(s.pitchRad - meas.pitchRad),
    headingRad,
    rootPosM,
  };
}

/** Flattens residuals for CalibrationRecord.residuals (`joint.<name>`, rollRad, pitchRad, …). */
export function residualsToRecord(r: StartResiduals): Record<string, number> {
  const out: Record<string, number> = {
    maxAbsJointRad: r.maxAbsJointRad,
    rmsJointRad: r.rmsJointRad,
    rollRad: r.rollRad,
    pitchRad: r.pitchRad,
  };
  if (r.headingRad !== null) out.headingRad = r.headingRad;
  if (r.rootPosM) [out['rootPosM.x'], out['rootPosM.y'], out['rootPosM.z']] = r.rootPosM;
  r.jointRad.forEach((v, j) => (out[`joint.${G1_JOINT_NAMES[j]}`] = v));
  return out;
}

/** The record bound to a clip: clipId, the simulator initial state and residual (b). */
export function withClip(cal: CalibrationRecord, clip: MotionClip, profile: RobotProfile): CalibrationRecord {
  const s = simInitialStateFromCalibration(cal, clip, profile);
  return {
    ...cal,
    clipId: clip.id,
    simulatorInitialState: {
      rootPosM: [...s.rootPosM],
      rootQuatWxyz: [...s.rootQuatWxyz],
      jointPosRad: [...s.jointPosRad],
      ...(s.jointVelRadS ? { jointVelRadS: [...s.jointVelRadS] } : {}),
      placeOnFloor: s.placeOnFloor,
    },
    residuals: { ...cal.residuals, measuredVsClipStart: residualsToRecord(measuredVsClipStart(cal, clip)) },
  };
}

/** The record with residual (a), once the simulator has settled from its initial state. */
export function withSettledState(cal: CalibrationRecord, settled: StateFrame): CalibrationRecord {
  return {
    ...cal,
    residuals: { ...cal.residuals, settledVsMeasured: residualsToRecord(settledVsMeasured(settled, cal)) },
  };
}
