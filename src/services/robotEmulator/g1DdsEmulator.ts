import { performance } from 'node:perf_hooks';
import {
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  EMULATOR_CONTROL_TOPIC,
  type RobotEmulatorProfile,
  type ScheduledFault,
} from '../../domain/robotEmulator';
import { decodeG1DdsControl, type G1DdsControlAction } from '../../domain/robotEmulator/g1DdsControl';
import { GainTransitionMeter, type G1DdsGainTransitions } from '../../domain/robotEmulator/gainTransitions';
import type { MotionMode } from '../../domain/robotLink/unitreeApiWire';
import type { DdsAddon } from '../dds/cycloneDdsLink';
import { G1DdsRobot, type LinkCounters } from '../dds/g1DdsEndpoints';
import { startEmulatorControlServer, type EmulatorControlServer } from './emulatorControlServer';
import { G1DdsLowStatePublisher } from './g1DdsLowStatePublisher';
import { G1DdsPlant, type G1DdsPlantCounters } from './g1DdsPlant';
import { MotionSwitcherService } from './motionSwitcherService';
import type { IntervalSummary } from './publishIntervals';
import { RealtimeStepLoop } from './realtimeStepLoop';
import { parseControl, scheduleFaults, stallProcess, type ControlResult } from './sampleFaults';

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
  intervalMs: IntervalSummary;
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

export interface G1DdsEmulator {
  readonly plant: G1DdsPlant;
  readonly controlUrl: string | null;
  readonly domainId: number;
  readonly interfaceName: string;
  control(action: G1DdsControlAction): { ok: boolean; message: string };
  stats(): G1DdsEmulatorStats;
  close(): Promise<void>;
}

/** Steps run before the wall clock starts (see startG1DdsEmulator). */
const WARM_UP_STEPS = 250;

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
  const gains = new GainTransitionMeter();
  robot.onMessage(({ message }) => {
    gains.observe(message.kp, performance.timeOrigin + performance.now());
    const refused = plant.command(message);
    if (refused && plant.counters().refusedModePr + plant.counters().refusedNonFinite <= 5)
      log(`emulate-robot --dds: LowCmd_ ${refused}`);
  });

  const publisher = new G1DdsLowStatePublisher((s) => robot.send(s));
  const tick0 = plant.tick;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const loop = new RealtimeStepLoop({
    tick: () => plant.tick,
    dueMs: (tick) => t0 + (tick - tick0) * plant.dtS * 1000,
    step: () => publisher.publish(plant.step()),
    onBehind: (lateMs, tick) =>
      log(`emulate-robot --dds: ${lateMs.toFixed(0)} ms behind real time at tick ${tick}: catching up`),
    onCaughtUp: (tick, afterMs, worstMs) =>
      log(
        `emulate-robot --dds: caught up at tick ${tick} after ${afterMs.toFixed(0)} ms (at worst ${worstMs.toFixed(0)} ms behind)`,
      ),
  });

  const stats = (): G1DdsEmulatorStats => {
    const wallS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      ticks: plant.tick - tick0,
      published: publisher.published,
      suppressed: publisher.suppressed,
      link: robot.counters(),
      plant: plant.counters(),
      maxLateMs: loop.maxLateMs,
      intervalMs: publisher.intervals.summary(),
      rateHz: wallS > 0 ? publisher.published / wallS : 0,
      cpuFraction: wallS > 0 ? (cpu.user + cpu.system) / 1e6 / wallS : 0,
      rootHeightM: plant.rootHeightM(),
      onGantry: plant.onGantry,
      estopped: plant.isEstopped,
      commanded: plant.commanded,
      gains: gains.transitions(),
    };
  };
  const control = (a: G1DdsControlAction): ControlResult => applyG1DdsControl(a, plant, publisher, stats);

  let controlServer: EmulatorControlServer | null = null;
  if (options.controlPort !== null) {
    try {
      controlServer = await startEmulatorControlServer({
        host: options.controlHost,
        port: options.controlPort ?? 0,
        name: `motionbench emulate-robot --dds (profile ${profile.name})`,
        log,
        handle: (text) => {
          const d = parseControl(EMULATOR_CONTROL_TOPIC, text, decodeG1DdsControl);
          return d.ok ? control(d.value) : d;
        },
      });
    } catch (err) {
      robot.close();
      plant.dispose();
      throw err;
    }
  }

  loop.start();
  const faultTimers = scheduleFaults(options.faults ?? [], (f) => {
    if (f.control.action === 'kill_link') {
      log(`emulate-robot --dds: scheduled fault kill_link at ${f.atMs} ms: no meaning on DDS; ignored`);
      return;
    }
    const r = control(f.control);
    log(`emulate-robot --dds: scheduled fault ${f.control.action} at ${f.atMs} ms: ${r.message}`);
  });

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
        loop.stop();
        await controlServer?.close();
        motionSwitcher?.close();
        robot.close();
        plant.dispose();
      })();
      return closing;
    },
  };
}

/** One control action on the emulated G1 (the control channel's, or a scheduled fault's). */
function applyG1DdsControl(
  a: G1DdsControlAction,
  plant: G1DdsPlant,
  publisher: G1DdsLowStatePublisher,
  stats: () => G1DdsEmulatorStats,
): ControlResult {
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
      publisher.drop(a.ms);
      return { ok: true, message: `drop: no LowState_ for ${a.ms} ms` };
    case 'freeze':
      publisher.freeze(plant.lastState(), a.ms);
      return { ok: true, message: `freeze: the last LowState_'s values repeated (fresh tick) for ${a.ms} ms` };
    case 'nan':
      publisher.nan(a.frames);
      return { ok: true, message: `nan: the next ${a.frames} LowState_ carry a NaN q on motor 0 (CRC valid)` };
    case 'stall':
      stallProcess(a.ms); // a stalled robot computer
      return { ok: true, message: `stall: blocked the process for ${a.ms} ms` };
    case 'estop':
      plant.setEstop(true);
      return { ok: true, message: 'estop: the motors damp whatever LowCmd_ says' };
    case 'release_estop':
      plant.setEstop(false);
      return { ok: true, message: 'release_estop: the motors follow LowCmd_ again' };
    case 'remote':
      publisher.holdRemote({ buttons: a.buttons, axes: a.axes }, a.ms);
      return {
        ok: true,
        message: `remote: ${a.buttons.length ? a.buttons.join(' + ') : 'no button'} held${a.ms ? ` for ${a.ms} ms` : ''}`,
      };
  }
}
