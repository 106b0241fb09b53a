import { create } from 'zustand';
import { ForwardKinematics } from '../../../src/domain/robot/forwardKinematics';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';

// The robot model the viewport draws and the kinematics the pose is computed with.

export interface RobotState {
  profile: RobotProfile | null;
  fk: ForwardKinematics | null;
}

export const useRobotStore = create<RobotState>(() => ({ profile: null, fk: null }));

export function setRobotProfile(profile: RobotProfile): void {
  useRobotStore.setState({ profile, fk: new ForwardKinematics(profile) });
}
