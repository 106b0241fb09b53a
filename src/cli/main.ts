import { analyzeCommand } from './commands/analyzeCommand';
import { clipInfoCommand } from './commands/clipInfoCommand';
import { exportLayoutCommand } from './commands/exportLayoutCommand';
import { fkCommand } from './commands/fkCommand';
import { g1RunnerCommand } from './commands/g1RunnerCommand';
import { hostCommand } from './commands/hostCommand';
import { emulateRobotCommand } from './commands/emulateRobotCommand';
import { emulateRobotResetCommand } from './commands/emulateRobotResetCommand';
import { emulateInterlockCommand, interlockListCommand, interlockMonitorCommand } from './commands/interlockCommand';
import { metricsCommand } from './commands/metricsCommand';
import { policyCheckCommand } from './commands/policyCheckCommand';
import { policyInfoCommand } from './commands/policyInfoCommand';
import { policyTableCommand } from './commands/policyTableCommand';
import { qualifyCommand } from './commands/qualifyCommand';
import { reportCommand } from './commands/reportCommand';
import { sensitivityCommand } from './commands/sensitivityCommand';
import { serveSimCommand } from './commands/serveSimCommand';
import { simCommand } from './commands/simCommand';
import { calibrateCommand, trialCommand } from './commands/trialCommands';
import { isHelpRequest } from './cliOptions';
import { processIo, reportError, type CliIo, type Command } from './cliSupport';
import { installLastResort } from '../services/safety/lastResort';

// `motionbench <command>`: every subcommand has --help, exits non-zero with a one-line reason on
// bad input, and with --json prints exactly one JSON document on stdout.
const commands: Command[] = [
  clipInfoCommand,
  policyInfoCommand,
  policyCheckCommand,
  policyTableCommand,
  fkCommand,
  metricsCommand,
  simCommand,
  qualifyCommand,
  reportCommand,
  analyzeCommand,
  sensitivityCommand,
  exportLayoutCommand,
  serveSimCommand,
  emulateRobotCommand,
  emulateRobotResetCommand,
  g1RunnerCommand,
  calibrateCommand,
  trialCommand,
  hostCommand,
  emulateInterlockCommand,
  interlockMonitorCommand,
  interlockListCommand,
];

const NAME_WIDTH = Math.max(...commands.map((c) => c.name.length));

const topUsage = `usage: motionbench <command> [options]

commands:
${commands.map((c) => `  ${c.name.padEnd(NAME_WIDTH)} ${c.summary}`).join('\n')}

Run 'motionbench <command> --help' for a command's options.`;

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout(`${topUsage}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  // Longest matching command name ("clip info" before "clip").
  const match = commands
    .filter((c) => {
      const words = c.name.split(' ');
      return words.every((w, k) => argv[k] === w);
    })
    .sort((a, b) => b.name.length - a.name.length)[0];
  if (!match) {
    io.stderr(`motionbench: unknown command "${argv.slice(0, 2).join(' ')}"\n${topUsage}\n`);
    return 2;
  }
  const rest = argv.slice(match.name.split(' ').length);
  if (isHelpRequest(rest)) {
    io.stdout(`${match.usage}\n`);
    return 0;
  }
  // An error nobody caught stops every robot link before the process dies (DESIGN §6).
  if (io === processIo) installLastResort({ log: (line) => io.stderr(`${line}\n`) });
  try {
    return await match.run(rest, io);
  } catch (err) {
    return reportError(io, err);
  }
}
