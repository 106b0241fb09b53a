import type { BackendCapabilities } from '../../src/domain/backend/backend';
import { ROS2_LOWSTATE_CAPABILITIES } from '../../src/domain/robotLink/serverCapabilities';
import type { WbcBindingKind } from '../../src/domain/wbc/wbcBinding';

/**
 * What a test's stand-in for a real G1 declares: the real robot's sensors (no global root, the
 * IMU's attitude, estimated torques, no contacts, no reset, rt/lowstate at 500 Hz) and the
 * bindings the stand-in runs. Tests that CHECK a backend's declared capabilities spell theirs out.
 */
export function realRobotCapabilities(bindingKinds: WbcBindingKind[], stateRateHz = 500): BackendCapabilities {
  return { ...ROS2_LOWSTATE_CAPABILITIES, stateRateHz, bindingKinds };
}
