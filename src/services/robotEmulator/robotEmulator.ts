import { performance } from 'node:perf_hooks';
import type {
  Backend,
  BackendCapabilities,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  RunRequest,
} from '../../domain/backend/backend';
import { BackendEventQueue } from '../../domain/backend/backendEventQueue';
import { cloneStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import type { MotionClip } from '../../domain/motion/motionClip';
import {
  decodeEmulatorControl,
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  EMULATOR_CONTROL_STATUS_ID,
  EMULATOR_CONTROL_METADATA_KEY,
  EMULATOR_CONTROL_TOPIC,
  type EmulatorControlAction,
  type RobotEmulatorProfile,
  type ScheduledFault,
} from '../../domain/robotEmulator';
import { BuiltinTracker } from '../../domain/sim/builtinTracker';
import type { Controller } from '../../domain/wbc/controller';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { startBridgeServer, type BridgeServer } from '../bridge/bridgeServer';
import { startInterlockEmulatorProcess, type InterlockBoxProcess } from '../interlock/interlockEmulatorProcess';
import { OnboardComputer } from './onboardComputer';
import { RobotEmulatorCore, type CoreEpisodeEnd, type CoreStepResult } from './robotEmulatorCore';

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

const MAX_QUEUED_FRAMES = 1000;
/**
 * Longest run of steps computed in one go while catching up, ms of wall time, before the loop
 * yields to I/O. A budget in time, not in steps: on a busy machine (or with a cold JIT) one step
 * can cost more than the 2 ms it stands for, and a fixed batch of steps then blocks the process
 * for 100 ms and more — the lowstate stream stalls, and the console's safety gate trips on a
 * robot link silent for 100 ms and damps the (standing) robot, which falls. (The emulated
 * interlock box runs in its own process so that such a stall cannot also silence its heartbeats.)
 * 5 ms keeps the 500 Hz stream's gaps far inside the limit.
 */
const CATCH_UP_SLICE_MS = 5;
/** Behind real time by more than this, ms, the loop says so on the log (and again when it caught up). */
const BEHIND_LOG_MS = 50;

interface ActiveRun {
  runId: string;
  startNs: number;
  wallStartMs: number;
  resolve: (end: EpisodeEnd) => void;
}

/** The emulated robot as a Backend (robot mode of the bridge server). */
class EmulatedRobotBackend implements Backend {
  readonly id = 'robot-emulator';
  readonly name = 'MotionBench robot emulator (MuJoCo G1)';
  readonly presence = 'present' as const;
  readonly capabilities: BackendCapabilities;
  run: ActiveRun | null = null;
  episodes = 0;
  /**
   * Samples and episode ends on their way to the bridge (the backend event queue every link
   * shares): bounded while the bridge is busy, the oldest samples dropped and counted.
   */
  private readonly queue = new BackendEventQueue({
    maxQueuedFrames: MAX_QUEUED_FRAMES,
    owner: this,
  });
  private leased: string | null = null;
  private prepared: { runId: string; controller: Controller } | null = null;
  /**
   * The binding the robot has loaded, kept across episodes as a robot PC keeps its policy: a
   * prepare of the same binding (id@version: its checkpoint hash and physics are part of the
   * version) reuses it after a reset instead of reading and loading it again.
   */
  private loaded: { key: string; controller: Controller } | null = null;

  constructor(
    private readonly core: RobotEmulatorCore,
    private readonly nominalNs: (tick: number) => number,
    mocap: boolean,
    /** Logs a change of what the motors do, with its cause. */
    private readonly motors: (what: string, cause: string) => void,
    /** The robot PC: where policies are loaded and run. */
    private readonly onboard: OnboardComputer,
    private readonly log: (line: string) => void,
  ) {
    this.capabilities = {
      executionDomain: 'real_robot',
      globalRootPosition: mocap,
      rootOrientation: true,
      contacts: false,
      jointTorque: true,
      stateRateHz: Math.round(1 / core.dtS),
      exactReset: false,
      bindingKinds: ['builtin', 'onnx'],
    };
  }

  /** Samples not delivered because the bridge fell behind. */
  get dropped(): number {
    return this.queue.dropped;
  }

  /** Samples handed to the bridge. */
  get published(): number {
    return this.queue.deliveredFrames;
  }

  setListener(listener: BackendListener | null): void {
    this.queue.setListener(listener);
  }

  /** One sample for the bridge; queued (bounded, oldest dropped) while it is busy. */
  deliver(frame: StateFrame): void {
    this.queue.push({ type: 'frames', runId: this.run?.runId ?? '', frames: [frame] });
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.leased) throw new Error(`${this.name} is leased by run ${this.leased}`);
    this.leased = runId;
    let released = false;
    return {
      runId,
      reset: async () => {
        throw new Error('a real robot cannot be put in an exact state (exact_reset false): a human puts it back');
      },
      run: (request: RunRequest) => this.startRun(runId, request),
      stop: async (outcome, reason) => {
        if (this.run?.runId !== runId) return;
        const end = this.core.endEpisode(outcome, reason);
        if (end) this.finishRun(end);
      },
      release: async () => {
        if (released) return;
        released = true;
        if (this.run?.runId === runId) {
          const end = this.core.endEpisode('aborted_by_operator', 'lease released');
          if (end) this.finishRun(end);
        }
        if (this.prepared?.runId === runId) this.dropPrepared();
        if (this.leased === runId) this.leased = null;
      },
    };
  }

  /**
   * Loads the binding for `runId` (a prepare): a policy is loaded on the onboard computer (a worker
   * thread: this thread's 500 Hz loop and its lowstate stream go on meanwhile, as a G1's motor
   * board does while its PC loads a policy); a binding already loaded for an earlier episode is
   * reused. The builtin tracker has nothing to load and runs here.
   */
  async prepare(runId: string, binding: WbcBinding): Promise<void> {
    const key = bindingKey(binding);
    this.prepared = null;
    if (this.loaded?.key !== key) {
      this.unload();
      let controller: Controller;
      if (binding.kind === 'builtin') controller = new BuiltinTracker(binding, this.core.engine.jointCount);
      else {
        const c = await this.onboard.load(binding, this.core.engine.profile);
        this.log(`emulate-robot: the onboard computer loaded ${binding.id} in ${c.loadMs.toFixed(0)} ms`);
        controller = c;
      }
      // The emulated G1 streams joints, IMU and (its estimator's) root pose, no root velocity.
      const missing = controller.needs.filter((n) => n === 'base_lin_vel');
      if (missing.length > 0) {
        if (controller.dispose) await controller.dispose();
        throw new Error(
          `binding ${binding.id} needs ${missing.join(', ')} (a state estimate of the root velocity), which this robot does not stream; run a variant trained without state estimation (e.g. BeyondMimic's *_wose exports)`,
        );
      }
      this.loaded = { key, controller };
    }
    this.prepared = { runId, controller: this.loaded!.controller };
  }

  /** Frees the loaded binding (its ONNX session on the onboard computer), e.g. when the emulator closes. */
  unload(): void {
    const l = this.loaded;
    this.loaded = null;
    if (l?.controller.dispose) void Promise.resolve(l.controller.dispose()).catch(() => {});
  }

  private dropPrepared(): void {
    this.prepared = null;
  }

  /** Begins the episode synchronously at the next sample (the bridge asks its start right after). */
  private startRun(runId: string, request: RunRequest): Promise<EpisodeEnd> {
    try {
      if (this.run) throw new Error(`run ${this.run.runId} is running`);
      let controller: Controller;
      if (this.prepared?.runId === runId) controller = this.prepared.controller;
      else if (request.binding.kind === 'builtin')
        controller = new BuiltinTracker(request.binding, this.core.engine.jointCount);
      else throw new Error(`binding ${request.binding.id} was not prepared`);
      const startTick = this.core.beginEpisode({
        runId,
        clip: request.clip as MotionClip,
        binding: request.binding,
        controller,
      });
      this.episodes++;
      this.motors(`tracking ${request.clip.name} with ${request.binding.id}`, `start of run ${runId}`);
      return new Promise<EpisodeEnd>((resolve) => {
        this.run = { runId, startNs: this.nominalNs(startTick), wallStartMs: performance.now(), resolve };
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  episodeStartNs(runId: string): number | null {
    return this.run?.runId === runId ? this.run.startNs : null;
  }

  /** The episode ended in the core (clip end, stop, e-stop): after its last sample, tell the bridge. */
  finishRun(end: CoreEpisodeEnd): void {
    const run = this.run;
    if (!run || run.runId !== end.runId) return;
    this.run = null;
    this.motors(
      this.core.mode === 'damp' ? 'still damped' : 'standing, holding its pose',
      `run ${end.runId} ended ${end.outcome}: ${end.reason}`,
    );
    const e: EpisodeEnd = {
      runId: end.runId,
      outcome: end.outcome,
      reason: end.reason,
      frames: end.steps + 1,
      simSeconds: end.simSeconds,
      wallSeconds: (performance.now() - run.wallStartMs) / 1000,
    };
    this.queue.push({ type: 'episode_end', end: e });
    run.resolve(e);
  }

  async close(): Promise<void> {
    this.dropPrepared();
  }
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
  const dueMs = (tick: number): number => t0 + (tick - tick0) * dtMs;
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
  let interlock: InterlockBoxProcess | null = null;
  let server: BridgeServer | null = null;
  const controlEnabled = options.controlChannel ?? true;
  let faults = 0;
  let maxLateMs = 0;

  // Fault state
  let freezeUntilMs = 0;
  let frozen: StateFrame | null = null;
  let nanLeft = 0;
  let lastPublished: StateFrame | null = null;

  const onSample = (r: CoreStepResult): void => {
    // The sample's time is its step's scheduled time (the state belongs to t0 + k·dt of the
    // simulated robot), not the moment a late loop gets to publish it: a consumer placing samples
    // on their time grid (live metrics) must not see a catch-up burst as a stretched stream.
    const stampNs = nominalNs(r.frame.tick);
    let out: StateFrame;
    if (frozen && performance.now() < freezeUntilMs) {
      out = cloneStateFrame(frozen);
      out.tick = r.frame.tick;
      out.referenceFrame = r.frame.referenceFrame;
    } else {
      frozen = null;
      out = cloneStateFrame(r.frame);
      if (nanLeft > 0) {
        nanLeft--;
        out.jointPosRad[0] = Number.NaN; // a buggy bridge: JSON carries it as null
      }
    }
    out.timeS = stampNs / 1e9;
    lastPublished = out;
    backend.deliver(out);
    if (r.episodeEnd) backend.finishRun(r.episodeEnd);
  };

  // The real-time loop: each turn computes the steps that are due, for at most CATCH_UP_SLICE_MS,
  // then yields — at once (setImmediate: I/O is polled first) while still behind, else with a
  // timer until the next step is due.
  let timer: NodeJS.Timeout | null = null;
  let immediate: NodeJS.Immediate | null = null;
  let stopped = false;
  /** Set while the loop is more than BEHIND_LOG_MS behind: when it started and the worst lateness. */
  let behind: { sinceMs: number; worstMs: number } | null = null;
  const loop = (): void => {
    timer = null;
    immediate = null;
    if (stopped) return;
    const sliceEnd = performance.now() + CATCH_UP_SLICE_MS;
    for (;;) {
      const now = performance.now();
      const due = dueMs(core.tick);
      if (due > now) break;
      const lateMs = now - due;
      if (lateMs > maxLateMs) maxLateMs = lateMs;
      if (lateMs > BEHIND_LOG_MS) {
        if (!behind) {
          behind = { sinceMs: now, worstMs: lateMs };
          log(
            `emulate-robot: the real-time loop is ${lateMs.toFixed(0)} ms behind real time at tick ${core.tick} (a busy machine or a stalled process): catching up step by step`,
          );
        } else if (lateMs > behind.worstMs) behind.worstMs = lateMs;
      }
      onSample(core.step());
      if (performance.now() >= sliceEnd) {
        immediate = setImmediate(loop);
        return;
      }
    }
    if (behind) {
      log(
        `emulate-robot: the real-time loop caught up at tick ${core.tick}, ${(performance.now() - behind.sinceMs).toFixed(0)} ms after it fell behind (at worst ${behind.worstMs.toFixed(0)} ms behind)`,
      );
      behind = null;
    }
    const wait = dueMs(core.tick) - performance.now();
    timer = setTimeout(loop, Math.max(0, Math.floor(wait)));
  };

  const estop = (reason: string): void => {
    core.damp();
    motors('damped', `e-stop: ${reason}`);
    if (backend.run) {
      const end = core.endEpisode('estop', reason);
      if (end) backend.finishRun(end);
    } else server?.robotState('damping', reason);
  };

  const control = (a: EmulatorControlAction): { ok: boolean; message: string } => {
    faults++;
    switch (a.action) {
      case 'human_reset': {
        if (backend.run || server?.episodeRunning)
          return { ok: false, message: 'human_reset refused: an episode is running; stop it first' };
        if (interlock?.state === 'ESTOP')
          return {
            ok: false,
            message:
              'human_reset refused: the e-stop is pressed (the motors have no power); release it first (release_estop)',
          };
        const r = core.humanReset();
        motors('standing at the start pose', 'human_reset');
        server?.robotState('idle', 'human reset: the robot was put back in its standing start pose');
        return {
          ok: true,
          message: `human_reset: robot standing at the start pose (root z ${r.rootPosM[2].toFixed(3)} m)`,
        };
      }
      case 'place': {
        if (backend.run || server?.episodeRunning)
          return { ok: false, message: 'place refused: an episode is running; stop it first' };
        if (interlock?.state === 'ESTOP')
          return {
            ok: false,
            message:
              'place refused: the e-stop is pressed (the motors have no power); release it first (release_estop)',
          };
        const r = core.humanReset(core.placedStart(a));
        motors('standing at a placed pose', 'place');
        server?.robotState('idle', 'placed: the robot was put down at a given pose');
        return {
          ok: true,
          message: `place: robot standing at the given pose (root z ${r.rootPosM[2].toFixed(3)} m)`,
        };
      }
      case 'drop':
        server?.suspendPublishing(a.ms);
        return { ok: true, message: `drop: publishing nothing for ${a.ms} ms` };
      case 'freeze':
        frozen = lastPublished ? cloneStateFrame(lastPublished) : null;
        freezeUntilMs = performance.now() + a.ms;
        return { ok: true, message: `freeze: repeating the last sample's values for ${a.ms} ms` };
      case 'nan':
        nanLeft += a.frames;
        return { ok: true, message: `nan: the next ${a.frames} lowstate carry a non-finite q[0] (null in JSON)` };
      case 'stall': {
        const end = performance.now() + a.ms;
        while (performance.now() < end) {
          // the event loop is blocked on purpose: a stalled bridge process
        }
        return { ok: true, message: `stall: blocked the process for ${a.ms} ms` };
      }
      case 'estop':
        if (interlock)
          interlock.pressEstop(); // its ESTOP state damps the robot (below)
        else estop('e-stop pressed (control channel)');
        return {
          ok: true,
          message: interlock ? 'estop: pressed the interlock box e-stop' : 'estop: motors damped (no interlock box)',
        };
      case 'release_estop':
        if (interlock) interlock.releaseEstop();
        return {
          ok: true,
          message: 'release_estop: e-stop released (the robot stays damped until hold or human_reset)',
        };
      case 'kill_link': {
        const n = server?.dropClients() ?? 0;
        return { ok: true, message: `kill_link: terminated ${n} connection${n === 1 ? '' : 's'}` };
      }
    }
  };

  try {
    if (options.interlockPath) {
      // The box runs in a process of its own, as a real box's microcontroller: its 100 ms watchdog
      // and its answers to the console's heartbeats do not wait for this process's 500 Hz loop.
      interlock = await startInterlockEmulatorProcess({ path: options.interlockPath });
      interlock.on('state', (state: string) => {
        if (state === 'ESTOP') estop('interlock e-stop');
      });
    }
    server = await startBridgeServer({
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
        damp: (reason) => {
          core.damp();
          motors('damped', `damp command: ${reason}`);
        },
        hold: (reason) => {
          // With the box's e-stop latched the motors have no power: the robot stays damped.
          if (!core.episodeRunId && interlock?.state !== 'ESTOP') {
            core.hold();
            motors('holding the current pose', `hold command: ${reason}`);
          } else
            motors(
              'hold ignored',
              `hold command: ${reason}; ${core.episodeRunId ? `episode ${core.episodeRunId} runs` : 'the interlock e-stop is latched'}`,
            );
        },
        isDamping: () => core.mode === 'damp',
      },
      // Declared only when it is accepted: the console shows its human-reset control from this.
      extraMetadata: controlEnabled ? { [EMULATOR_CONTROL_METADATA_KEY]: EMULATOR_CONTROL_TOPIC } : {},
      clientChannels: [
        {
          topic: EMULATOR_CONTROL_TOPIC,
          handle: (data) => {
            if (!controlEnabled)
              return {
                ok: false,
                message: `${EMULATOR_CONTROL_TOPIC} is disabled: this emulator was started without it (--no-control)`,
                id: EMULATOR_CONTROL_STATUS_ID.refused,
              };
            let doc: unknown;
            try {
              doc = JSON.parse(Buffer.from(data).toString('utf8'));
            } catch (err) {
              return {
                ok: false,
                message: `${EMULATOR_CONTROL_TOPIC}: not JSON: ${(err as Error).message}`,
                id: EMULATOR_CONTROL_STATUS_ID.refused,
              };
            }
            const d = decodeEmulatorControl(doc);
            if (!d.ok)
              return {
                ok: false,
                message: `${EMULATOR_CONTROL_TOPIC}: ${d.reason}`,
                id: EMULATOR_CONTROL_STATUS_ID.refused,
              };
            const r = control(d.value);
            return { ...r, id: r.ok ? EMULATOR_CONTROL_STATUS_ID.ok : EMULATOR_CONTROL_STATUS_ID.refused };
          },
        },
      ],
    });
  } catch (err) {
    await interlock?.close().catch(() => {});
    await onboard.close();
    core.dispose();
    throw err;
  }
  const srv = server;
  loop();
  const faultTimers = (options.faults ?? []).map((f) =>
    setTimeout(() => {
      const r = control(f.control);
      log(`emulate-robot: scheduled fault ${f.control.action} at ${f.atMs} ms: ${r.message}`);
    }, f.atMs),
  );

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
    control,
    stats: () => ({
      ticks: core.tick - tick0,
      published: backend.published,
      dropped: backend.dropped,
      maxLateMs,
      faults,
      episodes: backend.episodes,
      mode: core.mode,
    }),
    close() {
      closing ??= (async () => {
        for (const t of faultTimers) clearTimeout(t);
        await srv.close(); // ends a running episode (aborted_by_operator) while the loop still runs
        stopped = true;
        if (timer) clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        await interlock?.close().catch(() => {});
        backend.unload();
        await onboard.close();
        core.dispose();
      })();
      return closing;
    },
  };
}
