import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { RunnerMotionSwitcherStatus } from '../../domain/bridge/g1BridgeContract';
import type { AfterClip, RunnerMode } from '../../domain/g1Runner/g1RunnerSafety';
import { SDK_CLIENT_TIMEOUT_MS } from '../../domain/robotLink/unitreeApiWire';
import { startBridgeServer, type BridgeServer } from '../bridge/bridgeServer';
import type { FromRunnerWorker, RunnerWorkerInit, RunnerWorkerStats, ToRunnerWorker } from './g1RunnerProtocol';
import { autogroupWarning } from '../os/schedulerFacts';
import { RunnerBackend } from './runnerBackend';
import { RunnerStatusBoard } from './runnerStatusBoard';

// `motionbench g1-runner`: the robot side of g1-bridge/1 for a real G1 (docs/G1_RUNNER.md). This
// thread serves the console's WebSocket (the bridge server in robot mode); everything that moves
// or damps the robot — the DDS link, the safety reducer, the binding, LowCmd at 500 Hz and the
// watchdogs — runs on a worker thread at a raised priority (g1RunnerWorker.ts). This thread only
// relays: commands in, lowstate frames and episode ends out, and the console's liveness (every
// WebSocket ping or message) to the worker's console watchdog.

const BOOTSTRAP = new URL('../sim/simWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./g1RunnerWorker.ts', import.meta.url);
/** The console's liveness is forwarded at most this often, ms. */
const CONSOLE_FORWARD_MS = 20;
/** How long a dying process waits for the real-time thread's last damping command, ms. */
const LAST_RESORT_WAIT_MS = 50;

export interface G1RunnerOptions {
  interfaceName: string;
  domainId?: number;
  port?: number;
  host?: string;
  /** What keeps the robot up after a clip; null refuses start. */
  afterClip: AfterClip;
  /** The standing controller's folder (unitree_rl_lab velocity policy); required with `standing_policy`. */
  standingPolicyPath?: string;
  modelFile?: string;
  /**
   * A Unix-domain socket path on which the real-time thread hears the interlock keeper's e-stops
   * (docs/G1_RUNNER.md "Interlock e-stop"); omitted: the runner does not hear the interlock.
   */
  interlockTripSocket?: string;
  /** How long `prepare` waits for the motion switcher's answer, ms (default: the SDK client's 1000). */
  motionSwitcherTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface G1Runner {
  readonly url: string;
  readonly port: number;
  readonly server: BridgeServer;
  readonly stampOriginUnixMs: number;
  mode(): RunnerMode;
  /**
   * The operator's hold on the robot's own side (not through the console): stiffens the joints at
   * the measured pose, also when already holding; ignored while damped for a lost link or the
   * remote's stop. Ends a running episode aborted_by_operator.
   */
  hold(reason: string): void;
  stats(): RunnerWorkerStats | null;
  /** The motion switcher's last answer (asked at prepare); null before the first prepare. */
  motionSwitcher(): RunnerMotionSwitcherStatus | null;
  /** Every mode change with its cause, in order (for tests and the trace). */
  readonly modes: { mode: RunnerMode; cause: string; atMs: number }[];
  close(): Promise<void>;
}

export async function startG1Runner(options: G1RunnerOptions): Promise<G1Runner> {
  const log = options.log ?? (() => {});
  const schedulerWarning = autogroupWarning();
  if (schedulerWarning) log(`g1-runner: ${schedulerWarning}`);
  const originMonoNs = process.hrtime.bigint();
  const stampOriginUnixMs = performance.timeOrigin + performance.now();
  const nowNs = (): number => Number(process.hrtime.bigint() - originMonoNs);
  const init: RunnerWorkerInit = {
    interfaceName: options.interfaceName,
    domainId: options.domainId ?? 0,
    afterClip: options.afterClip,
    standingPolicyPath: options.standingPolicyPath ?? null,
    modelFile: options.modelFile,
    interlockTripSocket: options.interlockTripSocket ?? null,
    motionSwitcherTimeoutMs: options.motionSwitcherTimeoutMs ?? SDK_CLIENT_TIMEOUT_MS,
    originMonoNs,
  };
  const emergency = new SharedArrayBuffer(8);
  const emergencyCells = new Int32Array(emergency);
  const worker = new Worker(BOOTSTRAP, {
    workerData: { entry: WORKER_ENTRY.href, init, emergency },
    name: 'motionbench-g1-runner-rt',
  });
  const toWorker = (m: ToRunnerWorker): void => worker.postMessage(m);
  const backend = new RunnerBackend(toWorker, nowNs);
  const board = new RunnerStatusBoard();
  let server: BridgeServer | null = null;
  let exited = false;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on('error', (err) => {
      log(`g1-runner: real-time thread failed: ${err.message}`);
      reject(err);
    });
    worker.on('exit', (code) => {
      exited = true;
      reject(new Error(`g1-runner: real-time thread exited (${code})`));
    });
    worker.on('message', (m: FromRunnerWorker) => {
      switch (m.type) {
        case 'ready':
          return resolve();
        case 'fatal':
          log(`g1-runner: ${m.message}`);
          return reject(new Error(m.message));
        case 'reply':
          return backend.reply(m.id, m.ok, m.message);
        case 'frame':
          board.frameArrived();
          return backend.deliver(m.frame);
        case 'episode_end':
          return backend.finishRun(m);
        case 'mode':
          board.modeChanged(m.mode, m.cause);
          if ((m.mode === 'damping' || m.mode === 'standing') && !backend.run) server?.robotState(m.mode, m.cause);
          return;
        case 'trace':
          return log(m.line);
        case 'motion_switcher':
          board.motionSwitcher = m.status;
          return;
        case 'stats':
          return board.statsArrived(m.stats);
      }
    });
  });
  try {
    await ready;
  } catch (err) {
    if (!exited) await worker.terminate();
    throw err;
  }

  // Last resort: a process going down (an uncaught exception, process.exit) first has the
  // real-time thread put damping on the wire, waiting for it at most LAST_RESORT_WAIT_MS.
  const onExit = (): void => {
    if (exited) return;
    Atomics.store(emergencyCells, 0, 1);
    Atomics.wait(emergencyCells, 1, 0, LAST_RESORT_WAIT_MS);
  };
  process.on('exit', onExit);

  let lastForwardMs = 0;
  server = await startBridgeServer({
    backend,
    host: options.host,
    port: options.port,
    name: `motionbench g1-runner (${options.interfaceName}, domain ${init.domainId})`,
    log,
    onClientActivity: () => {
      const now = performance.now();
      if (now - lastForwardMs < CONSOLE_FORWARD_MS) return;
      lastForwardMs = now;
      toWorker({ type: 'console' });
    },
    robot: {
      stampOriginUnixMs,
      nowNs,
      prepare: (runId, clip, binding) => backend.prepare(runId, clip, binding),
      episodeStartNs: (runId) => backend.episodeStartNs(runId),
      damp: (reason) => toWorker({ type: 'damp', reason }),
      hold: (reason) => toWorker({ type: 'hold', reason }),
      isDamping: () => board.mode === 'damping',
      isStanding: () => board.mode === 'standing',
      runnerStatus: () => board.status(options.interfaceName, init.domainId),
    },
  });
  const srv = server;
  // The real-time thread starts damped and reports only changes, so the first state is said here:
  // a console that connects sees the motors damped, not an idle tracker.
  if (board.mode === 'damping') srv.robotState('damping', 'runner started: motors damped (kp 0, kd 3)');
  let closing: Promise<void> | null = null;
  return {
    url: srv.url,
    port: srv.port,
    server: srv,
    stampOriginUnixMs,
    modes: board.modes,
    mode: () => board.mode,
    hold: (reason) => toWorker({ type: 'hold', reason }),
    stats: () => board.stats,
    motionSwitcher: () => board.motionSwitcher,
    close() {
      closing ??= (async () => {
        process.off('exit', onExit);
        await srv.close();
        if (!exited) {
          const gone = new Promise<void>((r) => worker.once('exit', () => r()));
          toWorker({ type: 'close' });
          await Promise.race([gone, new Promise((r) => setTimeout(r, 2000))]);
          if (!exited) await worker.terminate();
        }
      })();
      return closing;
    },
  };
}
