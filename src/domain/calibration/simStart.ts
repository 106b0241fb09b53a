// The simulator start from a calibration (DESIGN §3 CalibrationRecord). Without motion capture
// the robot's global position and heading are unknown, so:
//   x, y     ← the clip's first frame
//   heading  ← the clip's first frame (ZYX yaw, quatHeading)
//   roll, pitch ← the measured IMU attitude (ZYX)
//   joints   ← the measured (window-averaged) joint angles
//   z        ← the clip's first frame as a starting guess; the simulator solves the root
//              height from foot contact (placeOnFloor: true)
//   velocities ← zero (the robot was still)
// i.e. rootQuat = Rz(ψ_clip)·Ry(θ_imu)·Rx(φ_imu) (composeHeadingAndTilt). With motion capture
// (a measured root pose) the measured position and orientation are used as they are.

import type { InitialState } from '../backend/backend';
import type { MotionClip } from '../motion/motionClip';
import type { RobotProfile } from '../robot/robotProfile';
import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { initialStateFromCalibration } from '../sim/initialState';
import type { CalibrationRecord } from '../trace/records';
import type { QuatWxyz } from '../units';

/** Checks that the profile's joints are the canonical G1 joints in canonical order. */
export function checkProfileJoints(profile: RobotProfile): void {
  if (profile.joints.length !== G1_JOINT_NAMES.length) {
    throw new RangeError(
      `robot profile "${profile.modelName}" has ${profile.joints.length} joints; a calibration holds ${G1_JOINT_NAMES.length}`,
    );
  }
  profile.joints.forEach((j, i) => {
    if (j.name !== G1_JOINT_NAMES[i] || j.index !== i)
      throw new RangeError(
        `robot profile joint ${i} is "${j.name}" (index ${j.index}), expected "${G1_JOINT_NAMES[i]}"`,
      );
  });
}

const quat4 = (q: readonly number[], what: string): QuatWxyz => {
  if (q.length !== 4) throw new RangeError(`calibration ${what} has ${q.length} components, expected 4`);
  return [q[0], q[1], q[2], q[3]];
};

/** The simulator initial state for a calibration and a clip (rule above). Throws a RangeError naming any malformed input. */
export function simInitialStateFromCalibration(
  cal: CalibrationRecord,
  clip: MotionClip,
  profile: RobotProfile,
): InitialState {
  checkProfileJoints(profile);
  if (clip.frameCount < 1) throw new RangeError(`clip ${clip.id} has no frames`);
  const m = cal.measured;
  const mocap = m.rootPosM !== null && m.rootQuatWxyz !== null;
  if (mocap && m.rootPosM!.length !== 3)
    throw new RangeError(`calibration rootPosM has ${m.rootPosM!.length} components, expected 3`);
  return initialStateFromCalibration(
    {
      rootQuatWxyz: mocap ? quat4(m.rootQuatWxyz!, 'rootQuatWxyz') : quat4(m.imuQuatWxyz, 'imuQuatWxyz'),
      jointPosRad: m.jointPosRad,
      rootPosM: mocap ? [m.rootPosM![0], m.rootPosM![1], m.rootPosM![2]] : null,
    },
    clip,
  );
}
