// A g1-runner in a process of its own (as on a robot's PC) for the matched-pair test: prints its
// URL, then answers stdin lines: "hold" → the operator's hold (G1Runner.hold), "stats" → one JSON
// line {stats, modes, traces}.
import { createInterface } from 'node:readline';
import { startG1Runner } from '../../src/services/g1Runner/g1Runner';
import { setAutogroupNice } from '../../src/services/os/threadPriority';

setAutogroupNice(-10);
const domainId = Number(process.argv[2]);
const traces: string[] = [];
const runner = await startG1Runner({
  interfaceName: 'lo',
  domainId,
  port: 0,
  afterClip: 'gantry',
  log: (l) => traces.push(l),
});
process.stdout.write(`${runner.url}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'hold') runner.hold('the operator placed the robot on its gantry');
  else if (line.trim() === 'stats')
    process.stdout.write(
      `${JSON.stringify({ stats: runner.stats(), modes: runner.modes.map((m) => m.mode), traces: [...traces.filter((l) => l.includes('root assist')), ...traces.slice(-50)] })}\n`,
    );
});
process.on('SIGINT', () => void runner.close().then(() => process.exit(0)));
