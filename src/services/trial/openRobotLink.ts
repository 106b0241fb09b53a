import { connectRobot } from '../bridge/bridgeClientBackend';
import { robotLinkFor } from './robotLink';
import type { RobotLink } from './trialTypes';

// The CLI's robot: a g1-bridge/1 client with the robot's freshness thresholds (connectRobot),
// connected before anything else happens, behind a RobotLink that fans its events out.

export async function openRobotLink(
  url: string,
  o: { robotUnit?: string | undefined; connectTimeoutMs?: number; log?: (line: string) => void } = {},
): Promise<RobotLink & { close(): Promise<void> }> {
  const backend = connectRobot({ url, ...(o.log ? { log: o.log } : {}) });
  const link = robotLinkFor(backend, {
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
