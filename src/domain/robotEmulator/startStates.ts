import type { InitialState } from '../episode/initialState';
import type { RobotProfile } from '../robot/robotProfile';
import type { PlaceAction } from './emulatorControl';

// The start states an emulated robot is put down in (the UDP emulator and the DDS plant alike).

/** The standing start pose: the model's default pose at the origin, feet on the floor, at rest. */
export function standingStartState(profile: RobotProfile): InitialState {
  const p = profile.defaultPose;
  return {
    rootPosM: [0, 0, p.rootPosM[2]],
    rootQuatWxyz: [1, 0, 0, 0],
    jointPosRad: [...p.jointPosRad],
    placeOnFloor: true,
  };
}

/**
 * The start state of a `place` (emulatorControl.ts): the joints mapped by name onto the model's
 * joint order, the root orientation as given (w, x, y, z), at the origin with the feet put on the
 * floor, at rest. Throws a RangeError naming the joints the place gives no angle for.
 */
export function placedStartState(profile: RobotProfile, a: PlaceAction): InitialState {
  const names = profile.joints.map((j) => j.name);
  const missing = names.filter((n) => !(n in a.joint_pos_rad));
  if (missing.length > 0) throw new RangeError(`place: no angle for ${missing.join(', ')}`);
  const [w, x, y, z] = a.root_quat_wxyz;
  const n = Math.hypot(w, x, y, z);
  return {
    rootPosM: [0, 0, profile.defaultPose.rootPosM[2]],
    rootQuatWxyz: [w / n, x / n, y / n, z / n],
    jointPosRad: names.map((name) => a.joint_pos_rad[name]),
    placeOnFloor: true,
  };
}
