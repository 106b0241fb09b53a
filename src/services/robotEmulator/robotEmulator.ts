import { performance } from 'node:perf_hooks';
import {
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  EMULATOR_CONTROL_METADATA_KEY,
  EMULATOR_CONTROL_TOPIC,
  type EmulatorControlAction,
  type RobotEmulatorProfile,
  type ScheduledFault,
} from '../../domain/robotEmulator';
import { startBridgeServer, type BridgeServer } from '../bridge/bridgeServer';
import { startInterlockEmulatorProcess, type InterlockBoxProcess } from '../interlock/interlockEmulatorProcess';
import { EmulatedRobotBackend } from './emulatedRobotBackend';
import { EmulatedRobotControl } from './emulatedRobotControl';
import { OnboardComputer } from './onboardComputer';
import { RealtimeStepLoop } from './realtimeStepLoop';
import { RobotEmulatorCore } from './robotEmulatorCore';
import { scheduleFaults } from './sampleFaults';

// `motionbench emulate-robot`: a process that pretends to be a Unitree G1 behind its robot-PC
// bridge (docs/ROBOT_EMULATOR.md). A RobotEmulatorCore (MuJoCo G1 with declared dynamics
// differences) is stepped in real time at the model timestep — 500 Hz — by a wall-clock loop
// with catch-up: step k runs (and its sample is published) at or after start + k·dt, never
// earlier, and a late loop catches up step by step, so the stream neither runs ahead nor
// drifts. Every sample is published as /g1/lowstate through the g1-bridge/1 server in robot
// mode, stamped with the moment it was read (ns since `stamp_origin_unix_ms`).
//
// The robot runs the WBC binding onboard: prepare loads it, start begins the episode at the
// next sample (reference time 0), the clip's end makes it `completed`. An e-stop — from the
// interlock box emulated on `interlockPath` (a wireless e-stop also cuts the motors) or from
// the control channel — damps the motors at once and ends a running episode `estop`.
// `/emulator/control` plays the human beside the robot (human_reset) and injects faults.

export interface RobotEmulatorOptions {
  port?: number;
  host?: string;
  modelFile?: string;
  profile?: RobotEmulatorProfile;
  /** Overrides the profile's mocap (root_state with source "mocap"). */
  mocap?: boolean;
  /** Overrides the profile's seed. */
  seed?: number;
  /** Runs the interlock box emulator on this serial device (one end of a pty pair). */
  interlockPath?: string;
  /** Accept /emulator/control (default true). */
  controlChannel?: boolean;
  /** Faults to inject, at times after start. */
  faults?: ScheduledFault[];
  log?: (line: string) => void;
}

export interface RobotEmulatorStats {
  /** Samples computed (physics steps) and published to the bridge. */
  ticks: number;
  published: number;
  /** Samples not delivered because the bridge fell behind. */
  dropped: number;
  /** Largest lateness of a step behind its due time, ms. */
  maxLateMs: number;
  faults: number;
  episodes: number;
  mode: string;
}

export interface RobotEmulator {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly profile: RobotEmulatorProfile;
  readonly core: RobotEmulatorCore;
  readonly server: BridgeServer;
  readonly interlock: InterlockBoxProcess | null;
  /** Unix ms of stamp_ns = 0. */
  readonly stampOriginUnixMs: number;
  /** Applies one control action as /emulator/control would (also when the channel is disabled). */
  control(action: EmulatorControlAction): { ok: boolean; message: string };
  stats(): RobotEmulatorStats;
  close(): Promise<void>;
}

export async function startRobotEmulator(options: RobotEmulatorOptions = {}): Promise<RobotEmulator> {
  const log = options.log ?? (() => {});
  const base = options.profile ?? DEFAULT_ROBOT_EMULATOR_PROFILE;
  const profile: RobotEmulatorProfile = {
    ...base,
    mocap: options.mocap ?? base.mocap,
    seed: options.seed ?? base.seed,
  };
  // The robot PC, started (ONNX runtime initialised) before anything real-time starts.
  const onboard = new OnboardComputer();
  let core: RobotEmulatorCore;
  try {
    await onboard.whenReady();
    core = await RobotEmulatorCore.create({ profile, modelFile: options.modelFile });
  } catch (err) {
    await onboard.close();
    throw err;
  }
  const dtMs = core.dtS * 1000;

  // The clock: stamp_ns 0 is t0 (performance.now() ms); step k of the loop is due at t0 + (k − tick0)·dt.
  const t0 = performance.now();
  const tick0 = core.tick;
  const stampOriginUnixMs = performance.timeOrigin + t0;
  const nowNs = (): number => Math.round((performance.now() - t0) * 1e6);
  const nominalNs = (tick: number): number => Math.round((tick - tick0) * dtMs * 1e6);

  // Every change of what the motors do is logged with its cause: an operator wants to know why
  // the robot went limp (or stood up) without a trace of the console.
  const motors = (what: string, cause: string): void => {
    log(
      `emulate-robot: motors: ${what} (${cause}) at tick ${core.tick}, t = ${(nominalNs(core.tick) / 1e9).toFixed(3)} s`,
    );
  };
  const backend = new EmulatedRobotBackend(core, nominalNs, profile.mocap, motors, onboard, log);
  const control = new EmulatedRobotControl(core, backend, motors, nominalNs);
  const controlEnabled = options.controlChannel ?? true;
  const loop = new RealtimeStepLoop({
    tick: () => core.tick,
    dueMs: (tick) => t0 + (tick - tick0) * dtMs,
    step: () => control.onSample(core.step()),
    onBehind: (lateMs, tick) =>
      log(
        `emulate-robot: the real-time loop is ${lateMs.toFixed(0)} ms behind real time at tick ${tick} (a busy machine or a stalled process): catching up step by step`,
      ),
    onCaughtUp: (tick, afterMs, worstMs) =>
      log(
        `emulate-robot: the real-time loop caught up at tick ${tick}, ${afterMs.toFixed(0)} ms after it fell behind (at worst ${worstMs.toFixed(0)} ms behind)`,
      ),
  });

  let srv: BridgeServer;
  try {
    if (options.interlockPath) {
      // The box runs in a process of its own, as a real box's microcontroller: its 100 ms watchdog
      // and its answers to the console's heartbeats do not wait for this process's 500 Hz loop.
      const box = await startInterlockEmulatorProcess({ path: options.interlockPath });
      control.interlock = box;
      box.on('state', (state: string) => {
        if (state === 'ESTOP') control.estop('interlock e-stop');
      });
    }
    srv = await startBridgeServer({
      backend,
      host: options.host,
      port: options.port,
      // The hello (serverInfo.name) says which profile this robot runs: the gap it produces depends on it.
      name: `motionbench emulate-robot (profile ${profile.name})`,
      log,
      robot: {
        stampOriginUnixMs,
        nowNs,
        prepare: (runId, _clip, binding) => backend.prepare(runId, binding),
        episodeStartNs: (runId) => backend.episodeStartNs(runId),
        damp: (reason) => control.damp(reason),
        hold: (reason) => control.hold(reason),
        isDamping: () => core.mode === 'damp',
      },
      // Declared only when it is accepted: the console shows its human-reset control from this.
      extraMetadata: controlEnabled ? { [EMULATOR_CONTROL_METADATA_KEY]: EMULATOR_CONTROL_TOPIC } : {},
      clientChannels: [{ topic: EMULATOR_CONTROL_TOPIC, handle: (data) => control.onChannel(controlEnabled, data) }],
    });
  } catch (err) {
    await control.interlock?.close().catch(() => {});
    await onboard.close();
    core.dispose();
    throw err;
  }
  control.bridge = srv;
  const interlock = control.interlock;
  loop.start();
  const faultTimers = scheduleFaults(options.faults ?? [], (f) => {
    const r = control.apply(f.control);
    log(`emulate-robot: scheduled fault ${f.control.action} at ${f.atMs} ms: ${r.message}`);
  });

  let closing: Promise<void> | null = null;
  return {
    url: srv.url,
    host: srv.host,
    port: srv.port,
    profile,
    core,
    server: srv,
    interlock,
    stampOriginUnixMs,
    control: (a) => control.apply(a),
    stats: () => ({
      ticks: core.tick - tick0,
      published: backend.published,
      dropped: backend.dropped,
      maxLateMs: loop.maxLateMs,
      faults: control.applied,
      episodes: backend.episodes,
      mode: core.mode,
    }),
    close() {
      closing ??= (async () => {
        for (const t of faultTimers) clearTimeout(t);
        await srv.close(); // ends a running episode (aborted_by_operator) while the loop still runs
        loop.stop();
        await interlock?.close().catch(() => {});
        backend.unload();
        await onboard.close();
        core.dispose();
      })();
      return closing;
    },
  };
}
