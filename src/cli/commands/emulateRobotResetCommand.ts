import { EMULATOR_CONTROL_TOPIC } from '../../domain/robotEmulator/emulatorControl';
import { sendEmulatorControl } from '../../services/robotEmulator/emulatorControlClient';
import { defineCommand } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

// `motionbench emulate-robot reset`: the human beside the emulated robot puts it back on its feet
// (docs/ROBOT_EMULATOR.md §5, human_reset), sent to a running `motionbench emulate-robot` on its
// ${EMULATOR_CONTROL_TOPIC} channel. The console's Reset button does the same (robot.emulatorReset).

const usage = `usage: motionbench emulate-robot reset --url <ws url> [--timeout-ms N] [--json]
  Sends {"action":"human_reset"} on ${EMULATOR_CONTROL_TOPIC} to the robot emulator at <ws url> (as printed by
  'motionbench emulate-robot'): the robot stands at its start pose again, state idle. Refused by the
  emulator while an episode runs or while its box's e-stop is pressed; refused here when the server
  does not declare the control channel (a real robot's bridge, or an emulator started with --no-control).
  --url U          the emulator's ws:// URL
  --timeout-ms N   wait this long for the answer (default 5000)
  --json           print {ok, message} as JSON
Exits 0 when the emulator answered ok, 1 when it refused or could not be reached (with the reason).`;

export const emulateRobotResetCommand = defineCommand({
  name: 'emulate-robot reset',
  summary: `the emulated robot's human reset: stand it up at its start pose (${EMULATOR_CONTROL_TOPIC} human_reset)`,
  usage,
  strings: ['url', 'timeout-ms'],
  flags: ['json'],
  async run(values, io) {
    if (typeof values.url !== 'string' || !/^wss?:\/\//.test(values.url))
      throw new UsageError(`--url must be the emulator's ws:// URL\n${usage}`);
    const timeoutMs = values['timeout-ms'] === undefined ? 5000 : Number(values['timeout-ms']);
    if (!(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= 60_000))
      throw new UsageError(`--timeout-ms must be an integer in 1..60000, got "${values['timeout-ms']}"`);
    const answer = await sendEmulatorControl(values.url, { action: 'human_reset' }, { timeoutMs });
    if (values.json) printJson(io, answer);
    else if (answer.ok) io.stdout(`${answer.message}\n`);
    if (!answer.ok) io.stderr(`motionbench: ${answer.message}\n`);
    return answer.ok ? 0 : 1;
  },
});
