import { performance } from 'node:perf_hooks';
import { encodeG1Remote } from '../../domain/robotLink/g1WirelessRemote';
import {
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  type RobotEmulatorProfile,
  type ScheduledFault,
} from '../../domain/robotEmulator';
import { decodeG1DdsControl, type G1DdsControlAction } from '../../domain/robotEmulator/g1DdsControl';
import type { MotionMode } from '../../domain/robotLink/unitreeApiWire';
import type { LowState } from '../../domain/robotLink/unitreeHgWire';
import type { DdsAddon } from '../dds/cycloneDdsLink';
import { G1DdsRobot, type LinkCounters } from '../dds/g1DdsEndpoints';
import { startEmulatorControlServer, type EmulatorControlServer } from './emulatorControlServer';
import { G1DdsPlant, type G1DdsPlantCounters } from './g1DdsPlant';
import { MotionSwitcherService } from './motionSwitcherService';

// `motionbench emulate-robot --dds`: a Unitree G1 on the wire (docs/ROBOT_EMULATOR.md "G1 on
// DDS"). A G1DdsPlant (MuJoCo G1 with the profile's declared differences, motor drivers applying
// LowCmd_) is stepped in real time at its physics rate (2 ms) by a wall-clock loop with catch-up,
// as the g1-bridge/1 emulator's loop: step k runs at or after start + k·dt, a late loop catches
// up step by step in slices of at most CATCH_UP_SLICE_MS, then yields to I/O. Every step's
// LowState_ goes to `rt/lowstate` (CRC written), so the stream is 500 Hz; every LowCmd_ from
// `rt/lowcmd` whose CRC checks reaches the drivers (a wrong CRC is dropped and counted by the
// DDS end). DDS receipt runs on Cyclone's own thread (stamped and queued there); the loop only
// takes the newest command and writes one sample per step.
//
// Faults (on the control channel, a Foxglove server of its own, or scheduled by --fault):
// drop (no LowState_ for ms), freeze (the last LowState_'s values repeated with fresh ticks for
// ms), nan (q of motor 0 NaN in the next n samples, CRC valid), stall (the process blocked ms),
// estop (the motors damp whatever LowCmd_ says) / release_estop, remote (wireless_remote
// buttons), gantry (lift / lower), human_reset / place (the robot put down standing), status.

export interface G1DdsEmulatorOptions {
  interfaceName: string;
  domainId?: number;
  profile?: RobotEmulatorProfile;
  modelFile?: string;
  seed?: number;
  modeMachine?: number;
  /** Start lifted on the gantry instead of standing on the floor. */
  startOnGantry?: boolean;
  /**
   * Serve the motion switcher (rt/api/motion_switcher/*) answering CheckMode with this mode (name ""
   * = no high-level mode). null or absent: no service, as a simulator.
   */
  motionMode?: MotionMode | null;
  /** Port of the control channel (0 = any free port; null = no control channel). */
  controlPort?: number | null;
  controlHost?: string;
  faults?: ScheduledFault[];
  addon?: DdsAddon;
  log?: (line: string) => void;
}

export interface G1DdsEmulatorStats {
  ticks: number;
  published: number;
  /** LowState_ not written because of an injected drop. */
  suppressed: number;
  link: LinkCounters;
  plant: G1DdsPlantCounters;
  /** Largest lateness of a step behind its due time, ms. */
  maxLateMs: number;
  /** Intervals between consecutive LowState_ writes, ms. */
  intervalMs: { mean: number; sd: number; p99: number; max: number };
  /** Publishing rate over the emulator's life, Hz. */
  rateHz: number;
  /** CPU time of this process per wall second since start (1 = one core). */
  cpuFraction: number;
  rootHeightM: number;
  onGantry: boolean;
  estopped: boolean;
  commanded: boolean;
  /** When the motors were last told to hold or track, and when they were first told to damp after it. */
  gains: G1DdsGainTransitions;
}

/**
 * The motor drivers' view of the gains they receive: a LowCmd_ with kp 0 on every motor is damping
 * (no position stiffness: the runner's damping, Unitree's `Passive`), any kp > 0 is a stiff
 * command (holding, ramping, tracking). Times are wall-clock ms since the epoch
 * (performance.timeOrigin + performance.now(), at the LowCmd_'s receipt here), so that a fault
 * injected by another process on this machine can be timed against them.
 */
export interface G1DdsGainTransitions {
  /** Stiff LowCmd_ → damping LowCmd_ transitions seen. */
  dampAfterStiff: number;
  /** Receipt of the newest stiff LowCmd_; null before the first. */
  lastStiffAtEpochMs: number | null;
  /** Receipt of the first damping LowCmd_ after the newest run of stiff ones; null before the first. */
  lastDampAfterStiffAtEpochMs: number | null;
}

export interface G1DdsEmulator {
  readonly plant: G1DdsPlant;
  readonly controlUrl: string | null;
  readonly domainId: number;
  readonly interfaceName: string;
  control(action: G1DdsControlAction): { ok: boolean; message: string };
  stats(): G1DdsEmulatorStats;
  close(): Promise<void>;
}

const CATCH_UP_SLICE_MS = 5;
const WARM_UP_STEPS = 250;
const BEHIND_LOG_MS = 50;
/** Interval histogram: 10 µs bins up to 200 ms. */
const HIST_BIN_MS = 0.01;
const HIST_BINS = 20_000;

export async function startG1DdsEmulator(options: G1DdsEmulatorOptions): Promise<G1DdsEmulator> {
  const log = options.log ?? (() => {});
  const profile = options.profile ?? DEFAULT_ROBOT_EMULATOR_PROFILE;
  const domainId = options.domainId ?? 0;
  const plant = await G1DdsPlant.create({
    profile,
    modelFile: options.modelFile,
    seed: options.seed,
    modeMachine: options.modeMachine,
  });
  let robot: G1DdsRobot;
  try {
    robot = new G1DdsRobot({ interfaceName: options.interfaceName, domainId, addon: options.addon });
  } catch (err) {
    plant.dispose();
    throw err;
  }
  const motionSwitcher = options.motionMode
    ? new MotionSwitcherService(robot.participant, { mode: options.motionMode, log })
    : null;
  if (options.motionMode)
    log(`emulate-robot --dds: motion switcher: CheckMode answers mode "${options.motionMode.name}"`);
  // Warm-up: the first steps run compiled code paths cold (tens of ms each); stepped here, before
  // the wall clock starts, they do not put the stream a second behind real time. The robot is then
  // put back at its start pose; the tick keeps counting.
  for (let k = 0; k < WARM_UP_STEPS; k++) plant.step();
  plant.humanReset();
  if (options.startOnGantry) plant.setGantry(true);
  const gains: G1DdsGainTransitions = {
    dampAfterStiff: 0,
    lastStiffAtEpochMs: null,
    lastDampAfterStiffAtEpochMs: null,
  };
  let stiff = false;
  robot.onMessage(({ message }) => {
    let anyKp = false;
    for (let j = 0; j < message.kp.length; j++) if (message.kp[j] !== 0) anyKp = true;
    const atEpochMs = performance.timeOrigin + performance.now();
    if (anyKp) {
      stiff = true;
      gains.lastStiffAtEpochMs = atEpochMs;
    } else if (stiff) {
      stiff = false;
      gains.dampAfterStiff++;
      gains.lastDampAfterStiffAtEpochMs = atEpochMs;
    }
    const refused = plant.command(message);
    if (refused && plant.counters().refusedModePr + plant.counters().refusedNonFinite <= 5)
      log(`emulate-robot --dds: LowCmd_ ${refused}`);
  });

  // Fault state
  let dropUntilMs = 0;
  let freezeUntilMs = 0;
  let frozen: LowState | null = null;
  let nanLeft = 0;
  let remoteUntilMs = 0;
  const remote = new Uint8Array(40);
  let remoteHeld = false;

  // Figures
  let published = 0;
  let suppressed = 0;
  let maxLateMs = 0;
  let lastPubMs = 0;
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  let maxInt = 0;
  const hist = new Uint32Array(HIST_BINS + 1);
  const tick0 = plant.tick;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const dueMs = (tick: number): number => t0 + (tick - tick0) * plant.dtS * 1000;

  const publish = (s: LowState): void => {
    const now = performance.now();
    if (now < dropUntilMs) {
      suppressed++;
      return;
    }
    if (remoteHeld && remoteUntilMs > 0 && now >= remoteUntilMs) {
      remote.fill(0);
      remoteHeld = false;
      remoteUntilMs = 0;
    }
    let out = s;
    if (frozen && now < freezeUntilMs) {
      frozen.tick = s.tick;
      out = frozen;
    } else frozen = null;
    out.wirelessRemote.set(remote);
    if (nanLeft > 0) {
      nanLeft--;
      const saved = out.q[0];
      out.q[0] = Number.NaN;
      robot.send(out);
      out.q[0] = saved;
    } else robot.send(out);
    published++;
    if (lastPubMs > 0) {
      const d = now - lastPubMs;
      n++;
      sum += d;
      sumSq += d * d;
      if (d > maxInt) maxInt = d;
      hist[Math.min(HIST_BINS, Math.floor(d / HIST_BIN_MS))]++;
    }
    lastPubMs = now;
  };

  let timer: NodeJS.Timeout | null = null;
  let immediate: NodeJS.Immediate | null = null;
  let stopped = false;
  let behind: { sinceMs: number; worstMs: number } | null = null;
  const loop = (): void => {
    timer = null;
    immediate = null;
    if (stopped) return;
    const sliceEnd = performance.now() + CATCH_UP_SLICE_MS;
    for (;;) {
      const now = performance.now();
      const due = dueMs(plant.tick);
      if (due > now) break;
      const lateMs = now - due;
      if (lateMs > maxLateMs) maxLateMs = lateMs;
      if (lateMs > BEHIND_LOG_MS) {
        if (!behind) {
          behind = { sinceMs: now, worstMs: lateMs };
          log(`emulate-robot --dds: ${lateMs.toFixed(0)} ms behind real time at tick ${plant.tick}: catching up`);
        } else if (lateMs > behind.worstMs) behind.worstMs = lateMs;
      }
      publish(plant.step());
      if (performance.now() >= sliceEnd) {
        immediate = setImmediate(loop);
        return;
      }
    }
    if (behind) {
      log(
        `emulate-robot --dds: caught up at tick ${plant.tick} after ${(performance.now() - behind.sinceMs).toFixed(0)} ms (at worst ${behind.worstMs.toFixed(0)} ms behind)`,
      );
      behind = null;
    }
    timer = setTimeout(loop, Math.max(0, Math.floor(dueMs(plant.tick) - performance.now())));
  };

  const percentileMs = (p: number): number => {
    const target = Math.ceil((p / 100) * n);
    let acc = 0;
    for (let i = 0; i <= HIST_BINS; i++) {
      acc += hist[i];
      if (acc >= target && target > 0) return (i + 1) * HIST_BIN_MS;
    }
    return 0;
  };

  const stats = (): G1DdsEmulatorStats => {
    const wallS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const mean = n > 0 ? sum / n : 0;
    return {
      ticks: plant.tick - tick0,
      published,
      suppressed,
      link: robot.counters(),
      plant: plant.counters(),
      maxLateMs,
      intervalMs: {
        mean,
        sd: n > 1 ? Math.sqrt(Math.max(0, sumSq / n - mean * mean)) : 0,
        p99: percentileMs(99),
        max: maxInt,
      },
      rateHz: wallS > 0 ? published / wallS : 0,
      cpuFraction: wallS > 0 ? (cpu.user + cpu.system) / 1e6 / wallS : 0,
      rootHeightM: plant.rootHeightM(),
      onGantry: plant.onGantry,
      estopped: plant.isEstopped,
      commanded: plant.commanded,
      gains: { ...gains },
    };
  };

  const control = (a: G1DdsControlAction): { ok: boolean; message: string } => {
    switch (a.action) {
      case 'status':
        return { ok: true, message: JSON.stringify(stats()) };
      case 'human_reset': {
        const r = plant.humanReset();
        return {
          ok: true,
          message: `human_reset: robot standing at the start pose (root z ${r.rootPosM[2].toFixed(3)} m)`,
        };
      }
      case 'place': {
        const r = plant.humanReset(plant.placedStart(a));
        return { ok: true, message: `place: robot standing at the given pose (root z ${r.rootPosM[2].toFixed(3)} m)` };
      }
      case 'gantry':
        plant.setGantry(a.lift);
        return {
          ok: true,
          message: a.lift ? 'gantry: the robot hangs on the gantry' : 'gantry: lowered off the gantry',
        };
      case 'drop':
        dropUntilMs = performance.now() + a.ms;
        return { ok: true, message: `drop: no LowState_ for ${a.ms} ms` };
      case 'freeze':
        frozen = cloneLowState(plant.lastState());
        freezeUntilMs = performance.now() + a.ms;
        return { ok: true, message: `freeze: the last LowState_'s values repeated (fresh tick) for ${a.ms} ms` };
      case 'nan':
        nanLeft += a.frames;
        return { ok: true, message: `nan: the next ${a.frames} LowState_ carry a NaN q on motor 0 (CRC valid)` };
      case 'stall': {
        const end = performance.now() + a.ms;
        while (performance.now() < end) {
          // the process is blocked on purpose: a stalled robot computer
        }
        return { ok: true, message: `stall: blocked the process for ${a.ms} ms` };
      }
      case 'estop':
        plant.setEstop(true);
        return { ok: true, message: 'estop: the motors damp whatever LowCmd_ says' };
      case 'release_estop':
        plant.setEstop(false);
        return { ok: true, message: 'release_estop: the motors follow LowCmd_ again' };
      case 'remote':
        encodeG1Remote({ buttons: a.buttons, axes: a.axes }, remote);
        remoteHeld = true;
        remoteUntilMs = a.ms ? performance.now() + a.ms : 0;
        return {
          ok: true,
          message: `remote: ${a.buttons.length ? a.buttons.join(' + ') : 'no button'} held${a.ms ? ` for ${a.ms} ms` : ''}`,
        };
    }
  };

  let controlServer: EmulatorControlServer | null = null;
  if (options.controlPort !== null) {
    try {
      controlServer = await startEmulatorControlServer({
        host: options.controlHost,
        port: options.controlPort ?? 0,
        name: `motionbench emulate-robot --dds (profile ${profile.name})`,
        log,
        handle: (text) => {
          let doc: unknown;
          try {
            doc = JSON.parse(text);
          } catch (err) {
            return { ok: false, message: `/emulator/control: not JSON: ${(err as Error).message}` };
          }
          const d = decodeG1DdsControl(doc);
          if (!d.ok) return { ok: false, message: `/emulator/control: ${d.reason}` };
          return control(d.value);
        },
      });
    } catch (err) {
      robot.close();
      plant.dispose();
      throw err;
    }
  }

  loop();
  const faultTimers = (options.faults ?? []).map((f) =>
    setTimeout(() => {
      if (f.control.action === 'kill_link') {
        log(`emulate-robot --dds: scheduled fault kill_link at ${f.atMs} ms: no meaning on DDS; ignored`);
        return;
      }
      const r = control(f.control);
      log(`emulate-robot --dds: scheduled fault ${f.control.action} at ${f.atMs} ms: ${r.message}`);
    }, f.atMs),
  );

  let closing: Promise<void> | null = null;
  return {
    plant,
    controlUrl: controlServer?.url ?? null,
    domainId,
    interfaceName: options.interfaceName,
    control,
    stats,
    close() {
      closing ??= (async () => {
        for (const t of faultTimers) clearTimeout(t);
        stopped = true;
        if (timer) clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        await controlServer?.close();
        motionSwitcher?.close();
        robot.close();
        plant.dispose();
      })();
      return closing;
    },
  };
}

function cloneLowState(s: LowState): LowState {
  return {
    ...s,
    version: s.version.slice(),
    imu: {
      quaternion: s.imu.quaternion.slice(),
      gyroscope: s.imu.gyroscope.slice(),
      accelerometer: s.imu.accelerometer.slice(),
      rpy: s.imu.rpy.slice(),
      temperature: s.imu.temperature,
    },
    mode: s.mode.slice(),
    q: s.q.slice(),
    dq: s.dq.slice(),
    ddq: s.ddq.slice(),
    tauEst: s.tauEst.slice(),
    temperature: s.temperature.slice(),
    vol: s.vol.slice(),
    sensor: s.sensor.slice(),
    motorstate: s.motorstate.slice(),
    motorReserve: s.motorReserve.slice(),
    wirelessRemote: s.wirelessRemote.slice(),
    reserve: s.reserve.slice(),
  };
}
