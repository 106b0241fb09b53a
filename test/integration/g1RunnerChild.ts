// A g1-runner in a process of its own (as on a robot's PC) for the matched-pair test: prints its
// URL, then answers stdin lines: "hold" → the operator's hold (G1Runner.hold), "stats" → one JSON
// line {stats, modes, traces, periodWorst}, where periodWorst is the worst LowCmd period p99 and
// max over the runner's 1 s stats windows since the previous "stats" (null before the first window).
import { createInterface } from 'node:readline';
import { startG1Runner } from '../../src/services/g1Runner/g1Runner';
import type { RunnerWorkerStats } from '../../src/services/g1Runner/g1RunnerProtocol';
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
let seen: RunnerWorkerStats | null = null;
let worst: { p99Ms: number; maxMs: number } | null = null;
setInterval(() => {
  const s = runner.stats();
  if (s === null || s === seen) return;
  seen = s;
  worst = { p99Ms: Math.max(worst?.p99Ms ?? 0, s.periodP99Ms), maxMs: Math.max(worst?.maxMs ?? 0, s.periodMaxMs) };
}, 200).unref();
process.stdout.write(`${runner.url}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'hold') runner.hold('the operator placed the robot on its gantry');
  else if (line.trim() === 'stats') {
    process.stdout.write(
      `${JSON.stringify({ stats: runner.stats(), modes: runner.modes.map((m) => m.mode), traces: [...traces.filter((l) => l.includes('root assist')), ...traces.slice(-50)], periodWorst: worst })}\n`,
    );
    worst = null;
  }
});
process.on('SIGINT', () => void runner.close().then(() => process.exit(0)));
