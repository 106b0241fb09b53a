import fs from 'node:fs';
import { G1_BRIDGE_CONTRACT, G1_BRIDGE_TOPICS } from '../../domain/bridge/g1BridgeContract';
import {
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  EMULATOR_CONTROL_TOPIC,
  NAMED_ROBOT_EMULATOR_PROFILES,
  namedRobotEmulatorProfile,
  parseFaultSpec,
  parseRobotEmulatorProfile,
  ROBOT_EMULATOR_PROFILE_FORMAT,
  type RobotEmulatorProfile,
  type ScheduledFault,
  unknownProfileMessage,
} from '../../domain/robotEmulator';
import { readBoundedText } from '../../services/files/boundedRead';
import { DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import { startG1DdsEmulator } from '../../services/robotEmulator/g1DdsEmulator';
import { G1_29DOF_MODE_MACHINE } from '../../services/robotEmulator/g1DdsPlant';
import { startRobotEmulator } from '../../services/robotEmulator/robotEmulator';
import { LOW_CMD_TOPIC, LOW_STATE_TOPIC } from '../../domain/robotLink/unitreeHgWire';
import { MOTION_SWITCHER_TOPICS } from '../../domain/robotLink/unitreeApiWire';
import {
  defineCommand,
  hostOption,
  integerOption,
  nonNegativeIntegerOption,
  portOption,
  warnBeyondLoopback,
} from '../cliOptions';
import { printJson, UsageError, type CliIo, type Command, untilSignal } from '../cliSupport';

// `motionbench emulate-robot`: a Unitree G1 behind its robot-PC bridge, emulated
// (docs/ROBOT_EMULATOR.md).

const usage = `usage: motionbench emulate-robot --port N [--host 127.0.0.1] [--model <mjcf>] [--interlock <pty>] [--profile <name|json>] [--mocap] [--seed N] [--fault <spec>]… [--no-control] [--json]
  Pretends to be a Unitree G1 behind its bridge: serves ${G1_BRIDGE_CONTRACT} (docs/G1_BRIDGE.md) on the Foxglove
  WebSocket protocol at 500 Hz from a MuJoCo G1 whose dynamics differ from the simulator's in
  declared ways (actuator latency, PD gain and friction mismatch, encoder and IMU noise; no
  ${G1_BRIDGE_TOPICS.rootState} unless --mocap), and runs the WBC binding onboard on prepare + start.
  --port N         TCP port (0 = any free port)
  --host H         interface (default 127.0.0.1)
  --model F        MJCF scene (default our G1 in assets/)
  --interlock P    run the interlock box emulator on serial device P (one end of a pty pair): its
                   e-stop damps the robot and ends a running episode \`estop\`
  --profile P      dynamics differences and sensor noise: a named profile (${Object.keys(NAMED_ROBOT_EMULATOR_PROFILES).join(', ')};
                   default ${DEFAULT_ROBOT_EMULATOR_PROFILE.name}: figures a G1 plausibly has, docs/ROBOT_EMULATOR.md §4) or a
                   ${ROBOT_EMULATOR_PROFILE_FORMAT} JSON file (its \`base\` profile with the fields it gives)
  --mocap          publish ${G1_BRIDGE_TOPICS.rootState} (source "mocap"): the lab has motion capture
  --seed N         seed of the sensor noise (overrides the profile's)
  --fault S        inject a fault S = <action>@<time>[:<amount>] after start, e.g. drop@5s:300ms,
                   freeze@2s:1s, nan@3s:5, stall@4s:200ms, estop@10s, kill_link@6s (repeatable)
  --no-control     refuse ${EMULATOR_CONTROL_TOPIC} (human_reset and fault injection by clients)
  --json           print {url, host, port, contract, topics, stamp_origin_unix_ms, profile, …} as JSON once listening
Prints the ws:// URL once listening; logs to stderr; Ctrl+C (SIGINT) or SIGTERM stops it cleanly.

usage: motionbench emulate-robot --dds --interface <name> [--domain <id>] [--port N] [--gantry] [--mode-machine N]
                                 [--motion-mode <name>]
                                 [--model <mjcf>] [--profile <name|json>] [--seed N] [--fault <spec>]… [--no-control] [--json]
  A G1 on the wire (docs/ROBOT_EMULATOR.md "G1 on DDS"): publishes ${LOW_STATE_TOPIC} (unitree_hg LowState_, CRC) at
  500 Hz and applies ${LOW_CMD_TOPIC} as the G1's motor drivers do (per-motor PD + feed-forward at every 2 ms physics
  step, effort-limited; a wrong CRC ignored and counted), on real Cyclone DDS.
  --interface I    network interface (lo: the loopback discovery configuration)
  --domain D       DDS domain id (default 0, a G1's)
  --port N         TCP port of ${EMULATOR_CONTROL_TOPIC} (default 0 = any free port; faults, remote, gantry, status)
  --gantry         start lifted on the gantry instead of standing on the floor
  --mode-machine N LowState_.mode_machine (default ${G1_29DOF_MODE_MACHINE}: a G1 29-DoF)
  --motion-mode M  serve the motion switcher (${MOTION_SWITCHER_TOPICS.request}): CheckMode answers mode M
                   ("ai", "normal", …: a high-level mode owns the motors; "" = none, low-level control free).
                   Default: no service, as a simulator
  --fault S        as above, plus nothing new (remote and gantry go through ${EMULATOR_CONTROL_TOPIC})`;

export interface EmulateRobotDeps {
  /** Resolves when the emulator should stop (default: SIGINT or SIGTERM). */
  untilStopped(io: CliIo): Promise<string>;
}

export function makeEmulateRobotCommand(deps: EmulateRobotDeps = { untilStopped: untilSignal }): Command {
  return defineCommand({
    name: 'emulate-robot',
    summary: `emulate a Unitree G1 behind its bridge: ${G1_BRIDGE_CONTRACT} at 500 Hz, faults, interlock`,
    usage,
    strings: [
      'port',
      'host',
      'model',
      'interlock',
      'profile',
      'seed',
      'interface',
      'domain',
      'mode-machine',
      'motion-mode',
    ],
    flags: ['mocap', 'no-control', 'json', 'dds', 'gantry'],
    lists: ['fault'],
    async run(values, io) {
      if (values.dds) return runDds(values, io, deps);
      for (const k of ['interface', 'domain', 'gantry', 'mode-machine', 'motion-mode'] as const)
        if (values[k] !== undefined) throw new UsageError(`--${k} needs --dds\n${usage}`);
      const port = portOption(values.port);
      if (port === undefined) throw new UsageError(`--port is required (0 = any free port)\n${usage}`);
      const host = hostOption(values.host);
      const seed = nonNegativeIntegerOption(values.seed, 'seed');
      const { faults, profile, modelFile } = emulationOptions(values);

      io.stderr(`emulate-robot: profile ${profile.name}; loading ${modelFile}…\n`);
      const emu = await startRobotEmulator({
        port,
        host,
        modelFile,
        profile,
        mocap: values.mocap ? true : undefined,
        seed,
        interlockPath: values.interlock,
        controlChannel: !values['no-control'],
        faults,
        log: (line) => io.stderr(`${line}\n`),
      });
      const topics = [
        G1_BRIDGE_TOPICS.lowstate,
        ...(emu.profile.mocap ? [G1_BRIDGE_TOPICS.rootState] : []),
        G1_BRIDGE_TOPICS.wbcStatus,
      ];
      if (values.json) {
        printJson(io, {
          url: emu.url,
          host: emu.host,
          port: emu.port,
          contract: G1_BRIDGE_CONTRACT,
          execution_domain: 'real_robot',
          state_rate_hz: Math.round(1 / emu.core.dtS),
          topics,
          command_topic: G1_BRIDGE_TOPICS.command,
          control_topic: values['no-control'] ? null : EMULATOR_CONTROL_TOPIC,
          stamp_origin_unix_ms: emu.stampOriginUnixMs,
          interlock: values.interlock ?? null,
          model: modelFile,
          profile: emu.profile,
        });
      } else {
        io.stdout(`${G1_BRIDGE_CONTRACT} robot emulator: ${emu.url}\n`);
      }
      warnBeyondLoopback(io, 'emulate-robot', host);
      io.stderr('Press Ctrl+C to stop.\n');
      const why = await deps.untilStopped(io);
      io.stderr(`emulate-robot: ${why}: stopping (any running episode ends aborted_by_operator)…\n`);
      await emu.close();
      const s = emu.stats();
      io.stderr(
        `emulate-robot: stopped; ${s.ticks} samples, ${s.published} published, ${s.dropped} dropped, ${s.episodes} episodes, ${s.faults} control actions, largest step lateness ${s.maxLateMs.toFixed(1)} ms\n`,
      );
      return 0;
    },
  });
}

interface DdsValues {
  port?: string;
  host?: string;
  model?: string;
  interlock?: string;
  profile?: string;
  mocap?: boolean;
  seed?: string;
  fault?: string[];
  'no-control'?: boolean;
  json?: boolean;
  interface?: string;
  domain?: string;
  gantry?: boolean;
  'mode-machine'?: string;
  'motion-mode'?: string;
}

/** A motion switcher mode name as Unitree's examples spell them ("ai", "normal", "ai-w"), or "". */
const MOTION_MODE_NAME = /^[A-Za-z0-9_-]{0,64}$/;

/** `emulate-robot --dds`: the G1 on the wire. */
async function runDds(values: DdsValues, io: CliIo, deps: EmulateRobotDeps): Promise<number> {
  const iface = values.interface;
  if (iface === undefined || iface.trim() === '')
    throw new UsageError(`--dds needs --interface <name> (lo for loopback)\n${usage}`);
  if (values.interlock !== undefined) throw new UsageError('--interlock is not available with --dds');
  if (values.mocap) throw new UsageError('--mocap is not available with --dds (LowState_ carries no root position)');
  const domainId = integerOption(values.domain, 'domain', 0, 232, 'a DDS domain id in 0..232') ?? 0;
  const modeMachine = integerOption(values['mode-machine'], 'mode-machine', 0, 255) ?? G1_29DOF_MODE_MACHINE;
  const motionMode = values['motion-mode'];
  if (motionMode !== undefined && !MOTION_MODE_NAME.test(motionMode))
    throw new UsageError(`--motion-mode must be "" or a mode name (letters, digits, - and _), got "${motionMode}"`);
  const seed = nonNegativeIntegerOption(values.seed, 'seed');
  const port = portOption(values.port) ?? 0;
  const host = values.host ?? '127.0.0.1';
  const { faults, profile, modelFile } = emulationOptions(values);
  io.stderr(`emulate-robot --dds: profile ${profile.name}; loading ${modelFile}…\n`);
  const emu = await startG1DdsEmulator({
    interfaceName: iface,
    domainId,
    profile,
    modelFile,
    seed,
    modeMachine,
    startOnGantry: values.gantry === true,
    // No `form`: Unitree publishes no G1 value for it, and the SDK's JSON leaves an empty form out.
    motionMode: motionMode === undefined ? null : { name: motionMode, form: '' },
    controlPort: values['no-control'] ? null : port,
    controlHost: host,
    faults,
    log: (line) => io.stderr(`${line}\n`),
  });
  if (values.json) {
    printJson(io, {
      dds: { interface: iface, domain: domainId, state_topic: LOW_STATE_TOPIC, command_topic: LOW_CMD_TOPIC },
      state_rate_hz: Math.round(1 / emu.plant.dtS),
      mode_machine: modeMachine,
      motion_switcher:
        motionMode === undefined
          ? null
          : {
              request_topic: MOTION_SWITCHER_TOPICS.request,
              response_topic: MOTION_SWITCHER_TOPICS.response,
              mode: motionMode,
            },
      control_url: emu.controlUrl,
      control_topic: emu.controlUrl ? EMULATOR_CONTROL_TOPIC : null,
      on_gantry: emu.plant.onGantry,
      model: modelFile,
      profile,
    });
  } else {
    io.stdout(
      `G1 on DDS: ${LOW_STATE_TOPIC} / ${LOW_CMD_TOPIC} on interface ${iface}, domain ${domainId}${emu.controlUrl ? `; control ${emu.controlUrl}` : ''}\n`,
    );
  }
  io.stderr('Press Ctrl+C to stop.\n');
  const why = await deps.untilStopped(io);
  const s = emu.stats();
  await emu.close();
  io.stderr(
    `emulate-robot --dds: ${why}: stopped; ${s.published} LowState_ published (${s.rateHz.toFixed(1)} Hz, interval mean ${s.intervalMs.mean.toFixed(3)} ms, sd ${s.intervalMs.sd.toFixed(3)} ms, p99 ${s.intervalMs.p99.toFixed(2)} ms, max ${s.intervalMs.max.toFixed(1)} ms), ${s.link.received} LowCmd_ received, ${s.link.crcErrors} with a wrong CRC, CPU ${(100 * s.cpuFraction).toFixed(0)} %\n`,
  );
  return 0;
}

/** What both kinds of emulated G1 take alike: the injected faults, the dynamics profile and the model. */
function emulationOptions(values: Pick<DdsValues, 'fault' | 'profile' | 'model'>): {
  faults: ScheduledFault[];
  profile: RobotEmulatorProfile;
  modelFile: string;
} {
  const faults = (values.fault ?? []).map((spec) => {
    try {
      return parseFaultSpec(spec);
    } catch (err) {
      throw new UsageError(`--fault: ${(err as Error).message}`);
    }
  });
  const profile = values.profile === undefined ? DEFAULT_ROBOT_EMULATOR_PROFILE : profileOption(values.profile);
  return { faults, profile, modelFile: values.model ?? DEFAULT_MODEL_FILE };
}

/**
 * `--profile P`: a named profile, else a profile file. A value that names no profile and is no
 * file is refused with the names there are (a misspelt name must not read as a missing file).
 */
function profileOption(value: string): RobotEmulatorProfile {
  const named = namedRobotEmulatorProfile(value);
  if (named) return named;
  if (!fs.existsSync(value)) throw new UsageError(`--profile: ${unknownProfileMessage(value)}`);
  return parseRobotEmulatorProfile(readBoundedText(value, 'json'), value);
}

export const emulateRobotCommand: Command = makeEmulateRobotCommand();
