import { useSafetyStore } from '../safety/safetyStore';
import { useTrialStore } from './trialStore';

/** The robot the lights and the top bar show: the Trial runner's connection, else the first robot. */
export function useShownRobot() {
  const robots = useSafetyStore((s) => s.robots);
  const connectionId = useTrialStore((s) => s.form.connectionId);
  return robots.find((r) => r.connectionId === connectionId) ?? robots[0] ?? null;
}
