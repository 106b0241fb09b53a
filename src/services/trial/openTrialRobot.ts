import { connectRobot } from '../bridge/bridgeClientBackend';
import { trialRobotOf } from './trialRobot';
import type { TrialRobot } from './trialTypes';

// The CLI's robot: a g1-bridge/1 client with the robot's freshness thresholds (connectRobot),
// connected before anything else happens, behind a TrialRobot that fans its events out.

export async function openTrialRobot(
  url: string,
  o: { robotUnit?: string | undefined; connectTimeoutMs?: number; log?: (line: string) => void } = {},
): Promise<TrialRobot & { close(): Promise<void> }> {
  const backend = connectRobot({ url, ...(o.log ? { log: o.log } : {}) });
  const link = trialRobotOf(backend, {
    ...(o.robotUnit ? { robotUnit: o.robotUnit } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  const timeoutMs = o.connectTimeoutMs ?? 5000;
  try {
    await backend.whenPresent(timeoutMs);
  } catch {
    const presence = backend.presence;
    await backend.close();
    throw new Error(`cannot reach the robot at ${url} (${presence} after ${timeoutMs} ms)`);
  }
  return { ...link, robotUnit: o.robotUnit ?? backend.id, close: () => backend.close() };
}
