import type { WbcState } from '../bridge/g1BridgeContract';
import { composeHeadingAndTilt } from '../calibration/attitude';
import { quatHeading } from '../math/quat';
import type { QuatWxyz } from '../units';

// Is the robot up? The IMU tilt from the lowstate attitude and the banner the top bar
// shows when the robot has fallen or is not holding itself (damping, fault). g1-bridge/1 carries
// the attitude as `imu.quat_wxyz` — w x y z, IMU frame → world (docs/G1_BRIDGE.md §3); the program
// keeps that order everywhere (StateFrame.imu.quatWxyz).

/** Tilt beyond which the robot counts as fallen, rad (30°: a standing G1 stays within a few degrees, a fall passes 45°). */
export const FALLEN_TILT_LIMIT_RAD = (30 * Math.PI) / 180;

/**
 * The angle between the body's up axis and the world's up axis, rad, in [0, π], from a
 * quaternion in **w x y z** order starting at `offset`; heading (yaw) does not change it. The body
 * z axis in world coordinates has z component 1 − 2(x² + y²) for a unit quaternion; the quaternion
 * is normalised first, so a slightly off-unit sample from a noisy IMU gives the same answer.
 * NaN when the quaternion is zero or not finite.
 */
export function tiltRadFromQuatWxyz(q: ArrayLike<number>, offset = 0): number {
  const w = q[offset];
  const x = q[offset + 1];
  const y = q[offset + 2];
  const z = q[offset + 3];
  const n2 = w * w + x * x + y * y + z * z;
  if (!(n2 > 0) || !Number.isFinite(n2)) return Number.NaN;
  const upZ = (w * w - x * x - y * y + z * z) / n2;
  return Math.acos(Math.min(1, Math.max(-1, upZ)));
}

export type RobotAlertCode = 'fallen' | 'damping' | 'fault';

export interface RobotAlert {
  code: RobotAlertCode;
  /** One line for the banner, e.g. "robot fallen: tilt 58° (limit 30°)". */
  message: string;
}

export interface RobotUprightInput {
  /** IMU tilt, rad; null when no lowstate has arrived. */
  tiltRad: number | null;
  /** /g1/wbc_status state; null before the first status. */
  wbcState: WbcState | null;
  /** The status's reason, when it gave one (why damping or fault). */
  wbcReason?: string | null;
}

/** An angle for the operator, whole degrees: "58°". */
export const wholeDegrees = (rad: number): string => `${Math.round((rad * 180) / Math.PI)}°`;

/**
 * The banner's alerts, most severe first: the robot is tilted past FALLEN_TILT_LIMIT_RAD, its
 * controller is in fault, or its motors are damped (a damped G1 sags and falls). Empty when the
 * robot is up and its controller is idle, ready, tracking or done — or when nothing is known yet.
 */
export function robotAlerts(input: RobotUprightInput): RobotAlert[] {
  const out: RobotAlert[] = [];
  const why = input.wbcReason ? `: ${input.wbcReason}` : '';
  if (input.wbcState === 'fault') out.push({ code: 'fault', message: `robot controller in fault${why}` });
  if (input.tiltRad !== null && input.tiltRad > FALLEN_TILT_LIMIT_RAD)
    out.push({
      code: 'fallen',
      message: `robot fallen: tilt ${wholeDegrees(input.tiltRad)} (limit ${wholeDegrees(FALLEN_TILT_LIMIT_RAD)})`,
    });
  if (input.wbcState === 'damping') out.push({ code: 'damping', message: `robot damped: motors limp${why}` });
  return out;
}

/**
 * The root orientation the live robot is drawn with when the link measures no global root (no
 * motion capture): the reference's heading (the IMU's yaw is not tied to the world) with the
 * IMU's measured roll and pitch — so a fallen robot is drawn fallen, and an upright one faces
 * where the reference faces. Both quaternions w x y z.
 */
export function liveRootQuatOnReference(
  imuQuatWxyz: ArrayLike<number>,
  referenceQuatWxyz: ArrayLike<number>,
): QuatWxyz {
  const r = referenceQuatWxyz;
  return composeHeadingAndTilt(quatHeading([r[0], r[1], r[2], r[3]]), Array.from(imuQuatWxyz));
}
