import { G1_BRIDGE_CONTRACT } from '../../domain/bridge/g1BridgeContract';
import {
  CONSOLE_SILENT_DAMP_MS,
  CONSOLE_SILENT_HOLD_MS,
  LOWSTATE_STALE_MS,
  type AfterClip,
} from '../../domain/g1Runner/g1RunnerSafety';
import { MOTION_SWITCHER_TOPICS, SDK_CLIENT_TIMEOUT_MS } from '../../domain/robotLink/unitreeApiWire';
import { startG1Runner } from '../../services/g1Runner/g1Runner';
import { setAutogroupNice } from '../../services/os/threadPriority';
import { DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import { loadStandingPolicy } from '../../services/wbc/standingPolicy';
import { defineCommand, integerOption, portOption } from '../cliOptions';
import { printJson, UsageError, type CliIo, type Command, untilSignal } from '../cliSupport';

// `motionbench g1-runner`: the robot side of g1-bridge/1 for a Unitree G1 over DDS (docs/G1_RUNNER.md).

const usage = `usage: motionbench g1-runner --interface <name> --after-clip gantry|standing_policy [--standing-policy <folder>] [--domain 0] [--port N]
                            [--host 127.0.0.1] [--model <mjcf>] [--interlock-trips <socket>] [--motion-switcher-timeout-ms N] [--json]
  Serves ${G1_BRIDGE_CONTRACT} (docs/G1_BRIDGE.md) to the console and drives the Unitree G1 found on the
  network interface over Cyclone DDS (rt/lowstate in, rt/lowcmd out at 500 Hz; docs/G1_RUNNER.md).
  The motors start damped (kp 0, kd 3). prepare ramps to the clip's start pose (FixStand gains, ≥ 3 s),
  start tracks the clip with the pair's binding on board. What keeps the robot up after the clip is
  declared (required): gantry (it hangs on one; the last pose is held) or standing_policy (a standing
  controller, unitree_rl_lab's velocity policy at zero command, loaded at prepare, takes over at the
  clip end with its own gains; a fall while standing damps).
  Watchdogs: lowstate older than ${LOWSTATE_STALE_MS} ms → damp; console silent ${CONSOLE_SILENT_HOLD_MS} ms → hold,
  ${CONSOLE_SILENT_DAMP_MS} ms → damp; non-finite or out-of-range state → damp; wireless remote L2 + B → damp.
  prepare first asks the robot's motion switcher (${MOTION_SWITCHER_TOPICS.request}, CheckMode): a high-level mode
  owning the motors refuses; no answer (a simulator) goes on, said in the trace.
  --interface I    network interface of the robot's wired link (lo: the loopback configuration for tests)
  --domain N       DDS domain id (default 0, as a G1 uses)
  --after-clip W   what keeps the robot up after a clip: gantry | standing_policy (operator-declared)
  --standing-policy D  the standing controller's folder (params/deploy.yaml + exported/policy.onnx of
                   unitree_rl_lab's G1 velocity policy); required with --after-clip standing_policy
  --port N         TCP port of ${G1_BRIDGE_CONTRACT} (default 0 = any free port)
  --host H         interface to listen on (default 127.0.0.1)
  --model F        MJCF of the robot: joint ranges and effort limits (default our G1 in assets/)
  --interlock-trips S  listen on Unix socket S for the interlock keeper's e-stops (the console's
                   trial --interlock-runner S): the box's e-stop damps here, episode estop, whatever the console does
  --motion-switcher-timeout-ms N  how long prepare waits for CheckMode's answer (default ${SDK_CLIENT_TIMEOUT_MS}: the SDK client's)
  --json           print {url, port, interface, domain, stamp_origin_unix_ms} as JSON once listening
Ctrl+C (SIGINT) or SIGTERM damps the motors and stops.`;

export interface G1RunnerDeps {
  untilStopped(io: CliIo): Promise<string>;
}

export function makeG1RunnerCommand(deps: G1RunnerDeps = { untilStopped: untilSignal }): Command {
  return defineCommand({
    name: 'g1-runner',
    summary: `drive a Unitree G1 over DDS, serving ${G1_BRIDGE_CONTRACT} to the console`,
    usage,
    strings: [
      'interface',
      'domain',
      'after-clip',
      'standing-policy',
      'port',
      'host',
      'model',
      'interlock-trips',
      'motion-switcher-timeout-ms',
    ],
    flags: ['json'],
    async run(values, io) {
      const interfaceName = values.interface;
      if (!interfaceName) throw new UsageError(`--interface is required\n${usage}`);
      const domainId = integerOption(values.domain, 'domain', 0, 232) ?? 0;
      let afterClip: AfterClip;
      if (values['after-clip'] === 'gantry') afterClip = 'gantry';
      else if (values['after-clip'] === 'standing_policy') afterClip = 'standing_policy';
      else if (values['after-clip'] === undefined) afterClip = null;
      else throw new UsageError(`--after-clip: "${values['after-clip']}" is neither gantry nor standing_policy`);
      const standingPolicyPath = values['standing-policy'];
      if (afterClip === 'standing_policy') {
        if (!standingPolicyPath)
          throw new UsageError(
            '--after-clip standing_policy needs --standing-policy <folder> (unitree_rl_lab G1 velocity policy)',
          );
        try {
          loadStandingPolicy(standingPolicyPath); // refused now, with the file and key, rather than at prepare
        } catch (e) {
          throw new UsageError(`--standing-policy: ${(e as Error).message}`);
        }
      } else if (standingPolicyPath)
        throw new UsageError('--standing-policy is used only with --after-clip standing_policy');
      const motionSwitcherTimeoutMs =
        integerOption(
          values['motion-switcher-timeout-ms'],
          'motion-switcher-timeout-ms',
          10,
          60_000,
          'an integer in 10..60000 (ms)',
        ) ?? SDK_CLIENT_TIMEOUT_MS;
      const port = portOption(values.port) ?? 0;
      const host = values.host ?? '127.0.0.1';
      // The runner keeps time: its session gets the timekeepers' weight where the kernel groups by session.
      setAutogroupNice(-10);
      const runner = await startG1Runner({
        interfaceName,
        domainId,
        port,
        host,
        afterClip,
        ...(standingPolicyPath ? { standingPolicyPath } : {}),
        motionSwitcherTimeoutMs,
        modelFile: values.model ?? DEFAULT_MODEL_FILE,
        ...(values['interlock-trips'] ? { interlockTripSocket: values['interlock-trips'] } : {}),
        log: (line) => io.stderr(`${line}\n`),
      });
      if (afterClip === null) io.stderr('g1-runner: no --after-clip declared: prepare works, start is refused\n');
      if (values.json)
        printJson(io, {
          url: runner.url,
          port: runner.port,
          contract: G1_BRIDGE_CONTRACT,
          interface: interfaceName,
          domain: domainId,
          after_clip: afterClip,
          stamp_origin_unix_ms: runner.stampOriginUnixMs,
        });
      else io.stdout(`${G1_BRIDGE_CONTRACT} g1-runner: ${runner.url}\n`);
      const why = await deps.untilStopped(io);
      io.stderr(`g1-runner: ${why}: damping and stopping…\n`);
      await runner.close();
      const s = runner.stats();
      if (s)
        io.stderr(
          `g1-runner: stopped; ${s.lowCmdSent} LowCmd sent, ${s.lowStateReceived} LowState received, ${s.crcErrors} CRC errors\n`,
        );
      return 0;
    },
  });
}

export const g1RunnerCommand: Command = makeG1RunnerCommand();
