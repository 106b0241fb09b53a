#!/usr/bin/env node
// `npm test`: every vitest project, and one JSON summary in test-results/vitest-summary.json.
//
// The `realtime` project measures wall-clock behaviour of real processes (100 ms trips, 500 Hz
// streams). It runs beside `unit` and `e2e` only where the real-time processes can be given the
// CPU first: this process may raise a priority (root or CAP_SYS_NICE, as CI runs). Then it is a
// second vitest run whose worker, and every process it starts (robot emulator, console host,
// runner, interlock box), runs at nice MOTIONBENCH_REALTIME_NICE (test/helpers/realtimePriority.ts)
// above the other tests' nice 0, as the console ranks its own threads on a trial PC: what keeps
// the robot's time first, drawing and file work last (docs/ARCHITECTURE.md, Priorities). Without the
// privilege, or with MOTIONBENCH_TEST_SEQUENTIAL=1, the projects run one after the other in one
// vitest run (vitest.config.ts: unit, then e2e, then realtime on an otherwise idle machine).
//
// Arguments (a file filter, --project, …) are passed to vitest, and then the run is one vitest run.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const REALTIME_NICE = -10;
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const results = path.join(repo, 'test-results');
const vitest = path.join(repo, 'node_modules', 'vitest', 'vitest.mjs');

/** Whether this process may give a child a higher priority than its own (it tries, then undoes it). */
function mayRaisePriority() {
  const own = getPriority(0);
  try {
    setPriority(0, own - 1);
    setPriority(0, own);
    return true;
  } catch {
    return false;
  }
}

/** Runs vitest with `args`; each output line prefixed with `prefix`. Resolves with the exit code. */
function runVitest(args, env, prefix) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [vitest, 'run', ...args], {
      cwd: repo,
      env: { ...process.env, ...env },
      stdio: prefix === '' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    if (prefix !== '') {
      for (const [stream, out] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        let rest = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop();
          for (const line of lines) out.write(`${prefix}${line}\n`);
        });
        stream.on('end', () => rest !== '' && out.write(`${prefix}${rest}\n`));
      }
    }
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const reporters = (file) => ['--reporter=default', '--reporter=json', `--outputFile.json=${file}`];

/** One summary of several vitest JSON reports: the counts added up, the files listed once each. */
function mergeReports(files) {
  const reports = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
  const merged = { ...reports[0], testResults: [] };
  for (const key of Object.keys(reports[0])) {
    if (typeof reports[0][key] === 'number' && key !== 'startTime')
      merged[key] = reports.reduce((sum, r) => sum + r[key], 0);
  }
  merged.startTime = Math.min(...reports.map((r) => r.startTime));
  merged.success = reports.every((r) => r.success);
  merged.testResults = reports.flatMap((r) => r.testResults);
  return merged;
}

const extra = process.argv.slice(2);
mkdirSync(results, { recursive: true });
const summary = path.join(results, 'vitest-summary.json');
let code;
if (extra.length > 0) {
  code = await runVitest(extra, {}, '');
} else if (process.env.MOTIONBENCH_TEST_SEQUENTIAL === '1' || !mayRaisePriority()) {
  process.stdout.write('tests: one run, the realtime project last (no privilege to raise its priority, or asked so)\n');
  code = await runVitest(reporters(summary), {}, '');
} else {
  process.stdout.write(
    `tests: the realtime project at nice ${REALTIME_NICE} beside unit and e2e (lines marked [realtime])\n`,
  );
  const realtimeFile = path.join(results, 'vitest-realtime.json');
  const restFile = path.join(results, 'vitest-unit-e2e.json');
  const codes = await Promise.all([
    runVitest(
      ['--project', 'realtime', ...reporters(realtimeFile)],
      { MOTIONBENCH_REALTIME_NICE: String(REALTIME_NICE) },
      '[realtime] ',
    ),
    runVitest(['--project', 'unit', '--project', 'e2e', ...reporters(restFile)], {}, ''),
  ]);
  writeFileSync(summary, JSON.stringify(mergeReports([realtimeFile, restFile])));
  code = codes.find((c) => c !== 0) ?? 0;
}
process.exitCode = code;
