// A runner in a process of its own for the last-resort test: prints its URL, then on a line
// "crash" on stdin throws an uncaught exception on its bridge thread (the process dies).
import { createInterface } from 'node:readline';
import { startG1Runner } from '../../src/services/g1Runner/g1Runner';

const domainId = Number(process.argv[2]);
const runner = await startG1Runner({ interfaceName: 'lo', domainId, port: 0, afterClip: 'gantry' });
process.stdout.write(`${runner.url}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'crash')
    setImmediate(() => {
      throw new Error('injected crash of the runner process');
    });
});
