// The services behind the console API, built once per API and wired to each other: the
// connections registry, clip cache, file worker, event hub, policies, simulation runs,
// qualification and sensitivity jobs, the interlock box, trials and the live robot view. Each
// job family is told what the others are busy with, so that only one real-robot or batch job runs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { raiseThreadPriority } from '../os/threadPriority';
import { OffThreadFiles } from './offThread';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../robot/loadRobotProfile';
import { defaultBackendFactories } from './backendFactories';
import { ClipCache } from './clipCache';
import { ConnectionRegistry, type BackendFactories } from './connectionRegistry';
import { EventHub } from './eventHub';
import { PolicyRegistry } from './policyRegistry';
import { QualificationJobs } from './qualificationJobs';
import { InterlockSessions } from './interlockSessions';
import { SensitivityJobs } from './sensitivityJobs';
import { SimRunManager } from './simRuns';
import { RobotLive } from './robotLive';
import { TrialJobs, type TrialServices } from './trialJobs';

/** The services' thread keeps time for STOP, the safety gate and the robot link (threadPriority.ts). */
export const SERVICES_NICE = -5;

export interface ConsoleServices {
  modelFile: string;
  /** The private directory of the runner's e-stop socket, made here (removed at close); null when given. */
  estopDir: string | null;
  runnerEstopSocket: string | null;
  /** The robot profile, loaded on first use. */
  getProfile(): RobotProfile;
  /** The robot profile if this thread has loaded it already. */
  loadedProfile(): RobotProfile | undefined;
  connections: ConnectionRegistry;
  clips: ClipCache;
  files: OffThreadFiles;
  hub: EventHub;
  policies: PolicyRegistry;
  sims: SimRunManager;
  qualification: QualificationJobs;
  interlocks: InterlockSessions;
  trials: TrialJobs;
  sensitivity: SensitivityJobs;
  robotLive: RobotLive;
}

export interface ConsoleServicesOptions {
  /** Robot model (MJCF); defaults to our G1 in assets/. */
  modelFile?: string;
  /** Backend implementations for the Connections registry; default: backendFactories.ts. */
  backends?: BackendFactories;
  /** The trial services (calibration capture, matched pairs, admitted pairs); default src/services/trial. */
  trialServices?: TrialServices;
  /**
   * The Unix socket on which the runner the services start ("G1 over DDS") hears the interlock
   * keeper's e-stops. Default: `runner-estop.sock` in a private directory made here (mode 0700,
   * removed at close). Null: none (the robot then damps on an interlock e-stop only through this
   * process).
   */
  runnerEstopSocket?: string | null;
}

export function createConsoleServices(options: ConsoleServicesOptions): ConsoleServices {
  // Ask to run before ordinary work (the console's own renderer, a simulation): granted only with
  // the privilege; the interlock keeper asks for more (-10), the batch workers run below (5, 10).
  raiseThreadPriority(SERVICES_NICE);
  const modelFile = path.resolve(options.modelFile ?? DEFAULT_MODEL_FILE);
  // The runner's e-stop socket is chosen here, once, so that the keeper (opened with the box) and
  // every runner the services start (before or after the box, or restarted) meet on it.
  const estopDir = options.runnerEstopSocket === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'mb-estop-')) : null;
  const runnerEstopSocket = estopDir ? path.join(estopDir, 'runner-estop.sock') : (options.runnerEstopSocket ?? null);
  const connections = new ConnectionRegistry({
    factories: options.backends ?? defaultBackendFactories(),
    modelFile,
    runnerEstopSocket,
  });
  let profile: RobotProfile | undefined;
  const getProfile = (): RobotProfile => (profile ??= loadRobotProfile(modelFile));
  const clips = new ClipCache();
  // Clip decoding and campaign opening run in a worker thread: never on the loop that carries STOP.
  const files = new OffThreadFiles();
  // Pushes to clients; a client that falls behind gets frames skipped for display, reported here.
  const hub = new EventHub({
    onDropped: (runId, clientId, dropped, final) => {
      const connectionId = (() => {
        try {
          return sims.result(runId).started.connectionId;
        } catch {
          return null;
        }
      })();
      if (!connectionId) return;
      connections.reportProblem(connectionId, {
        severity: 'warn',
        code: 'display_frames_dropped',
        message: final
          ? `run ${runId}: console client ${clientId} fell behind; ${dropped} frame(s) were not sent for display (the recording is complete: replay fetches it)`
          : `run ${runId}: console client ${clientId} is falling behind; frames are being skipped for display (the recording is complete)`,
        atMs: Date.now(),
      });
    },
  });
  const policies = new PolicyRegistry({ clips, files, modelFile });
  const sims = new SimRunManager({
    registry: connections,
    clips,
    hub,
    profile: getProfile,
    bindings: policies,
    realRobotWork: () => trials.busyWith(),
  });
  const qualification: QualificationJobs = new QualificationJobs({
    hub,
    files,
    profile: getProfile,
    modelFile,
    policies,
    otherWork: () => sensitivity.busyWith(),
  });
  const interlocks: InterlockSessions = new InterlockSessions({
    log: (line) => process.stderr.write(`${line}\n`),
    beforeOpen: (): void => trials.warmUp(),
    runnerTripSocket: runnerEstopSocket,
  });
  const trials: TrialJobs = new TrialJobs({
    hub,
    registry: connections,
    interlocks,
    clips,
    profile: getProfile,
    files,
    ...(options.trialServices && { services: options.trialServices }),
    otherWork: () => sensitivity.busyWith(),
  });
  const sensitivity: SensitivityJobs = new SensitivityJobs({
    modelFile,
    profile: getProfile,
    otherWork: () => trials.busyWith() ?? qualification.busyWith(),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const robotLive = new RobotLive({ hub, registry: connections });
  return {
    modelFile,
    estopDir,
    runnerEstopSocket,
    getProfile,
    loadedProfile: () => profile,
    connections,
    clips,
    files,
    hub,
    policies,
    sims,
    qualification,
    interlocks,
    trials,
    sensitivity,
    robotLive,
  };
}

/** Stops every run and closes every service, in dependency order. */
export async function closeConsoleServices(s: ConsoleServices): Promise<void> {
  s.robotLive.close();
  await s.trials.close();
  await s.sims.close();
  await s.qualification.close();
  await s.sensitivity.close();
  await s.interlocks.shutdown();
  s.hub.close();
  await s.connections.close();
  await s.files.close();
  if (s.estopDir) fs.rmSync(s.estopDir, { recursive: true, force: true });
}
