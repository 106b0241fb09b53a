import fs from 'node:fs';
import path from 'node:path';
import type { Backend } from '../../domain/backend/backend';
import { otherWriterOf, type CampaignStore } from '../trace';
import type { AdmittedPair } from '../trial/admittedPairs';
import { trialRobotOf } from '../trial/trialRobot';
import type {
  CalibrationCaptureRequest,
  CalibrationCaptureResult,
  MatchedPairRequest,
  MatchedPairResult,
  TrialRobot,
} from '../trial/trialTypes';
import { ApiFailure } from './apiFailure';
import type { ConnectionRegistry } from './connectionRegistry';

// What the console's robot jobs (calibration captures and matched trials) share: the trial services
// they call, the checks of the connection and campaign they are asked to work on, and their ids.

/** The trial services the robot jobs call; tests inject their own. Default: src/services/trial. */
export interface TrialServices {
  captureRobotCalibration(req: CalibrationCaptureRequest): Promise<CalibrationCaptureResult>;
  runMatchedPair(req: MatchedPairRequest): Promise<MatchedPairResult>;
  listAdmittedPairs(store: CampaignStore, trials?: number): AdmittedPair[];
}

export async function defaultTrialServices(): Promise<TrialServices> {
  const m = await import('../trial');
  return {
    captureRobotCalibration: m.captureRobotCalibration,
    runMatchedPair: m.runMatchedPair,
    listAdmittedPairs: m.listAdmittedPairs,
  };
}

let serial = 0;
/** A job, capture or prompt id, unique in this process. */
export const nextId = (prefix: string, now: number): string => `${prefix}-${now.toString(36)}-${++serial}`;

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The TrialRobot of a registry entry: its watchers subscribe through the registry to the backend's hub. */
export function registryTrialRobot(
  registry: ConnectionRegistry,
  connectionId: string,
  backend: Backend,
  log: (line: string) => void,
): TrialRobot {
  return trialRobotOf(backend, {
    subscribe: (l) => registry.subscribe(connectionId, l),
    robotUnit: registry.get(connectionId).url ?? connectionId,
    log: (line) => log(`${connectionId}: ${line}`),
  });
}

/** The backend of a connection added as a robot; refused for an unknown connection or a simulator. */
export function requireRobot(registry: ConnectionRegistry, connectionId: string): Promise<Backend> {
  const kind = registry.kindOf(connectionId);
  if (kind === null) throw new ApiFailure('not_found', `no connection "${connectionId}"`, 'params.connectionId');
  if (kind !== 'robot')
    throw new ApiFailure(
      'bad_params',
      `connection "${connectionId}" is a simulator: calibrations and real trials need the robot (add it in Connections as a robot)`,
      'params.connectionId',
    );
  return registry.backend(connectionId);
}

/** The absolute campaign directory; refused when it holds no campaign.sqlite. */
export function requireCampaign(dir: string): string {
  const abs = path.resolve(dir);
  if (!fs.existsSync(path.join(abs, 'campaign.sqlite')))
    throw new ApiFailure('not_found', `no campaign at ${abs} (no campaign.sqlite)`, 'params.campaignDir');
  return abs;
}

/** A campaign a job will write: refused at once while another process holds its writer lock (writerLock.ts). */
export function requireWritableCampaign(dir: string): string {
  const abs = requireCampaign(dir);
  const other = otherWriterOf(abs);
  if (other) throw new ApiFailure('busy', other, 'params.campaignDir');
  return abs;
}
