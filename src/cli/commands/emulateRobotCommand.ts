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
import { startRobotEmulator } from '../../services/robotEmulator/robotEmulator';
import {
  numberOption,
  parse,
  portOption,
  printJson,
  UsageError,
  type CliIo,
  type Command,
  untilSignal,
} from '../cliSupport';

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
Prints the ws:// URL once listening; logs to stderr; Ctrl+C (SIGINT) or SIGTERM stops it cleanly.`;

export interface EmulateRobotDeps {
  /** Resolves when the emulator should stop (default: SIGINT or SIGTERM). */
  untilStopped(): Promise<string>;
}

export function makeEmulateRobotCommand(deps: EmulateRobotDeps = { untilStopped: untilSignal }): Command {
  return {
    name: 'emulate-robot',
    summary: `emulate a Unitree G1 behind its bridge: ${G1_BRIDGE_CONTRACT} at 500 Hz, faults, interlock`,
    usage,
    async run(argv: string[], io: CliIo) {
      const { values } = parse(
        argv,
        {
          port: { type: 'string' },
          host: { type: 'string' },
          model: { type: 'string' },
          interlock: { type: 'string' },
          profile: { type: 'string' },
          mocap: { type: 'boolean' },
          seed: { type: 'string' },
          fault: { type: 'string', multiple: true },
          'no-control': { type: 'boolean' },
          json: { type: 'boolean' },
        },
        usage,
      );
      const port = portOption(values.port);
      if (port === undefined) throw new UsageError(`--port is required (0 = any free port)\n${usage}`);
      const host = values.host ?? '127.0.0.1';
      if (host.trim() === '') throw new UsageError('--host must not be empty');
      const seed = numberOption(values.seed, 'seed', (v) => Number.isSafeInteger(v) && v >= 0, 'an integer ≥ 0');
      const faults: ScheduledFault[] = [];
      for (const spec of values.fault ?? []) {
        try {
          faults.push(parseFaultSpec(spec));
        } catch (err) {
          throw new UsageError(`--fault: ${(err as Error).message}`);
        }
      }
      const profile = values.profile === undefined ? DEFAULT_ROBOT_EMULATOR_PROFILE : profileOption(values.profile);
      const modelFile = values.model ?? DEFAULT_MODEL_FILE;

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
      if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
        io.stderr(`emulate-robot: warning: listening on ${host}, not only on loopback\n`);
      io.stderr('Press Ctrl+C to stop.\n');
      const why = await deps.untilStopped();
      io.stderr(`emulate-robot: ${why}: stopping (any running episode ends aborted_by_operator)…\n`);
      await emu.close();
      const s = emu.stats();
      io.stderr(
        `emulate-robot: stopped; ${s.ticks} samples, ${s.published} published, ${s.dropped} dropped, ${s.episodes} episodes, ${s.faults} control actions, largest step lateness ${s.maxLateMs.toFixed(1)} ms\n`,
      );
      return 0;
    },
  };
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
