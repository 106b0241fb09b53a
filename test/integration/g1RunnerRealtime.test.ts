// The g1-runner's scheduling, on a real runner process (g1RunnerChild.ts: bridge thread, real-time
// worker, real Cyclone DDS on loopback, the onboard computer thread): which of its threads run
// SCHED_FIFO (threadPriority.ts setThisThreadRealtimeFifo, g1RunnerWorker.ts). The real-time thread
// and the DDS threads its participant starts are real-time; the bridge's main thread, libuv's pool,
// the onboard computer (idle: it loads at normal priority) and the loader's threads are not.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RUNNER_RT_PRIORITY } from '../../src/services/os/threadPriority';
import { REPO_ROOT } from '../helpers/sharedData';
import { threadPolicies } from '../helpers/threadPolicies';
import { nodeArgsFor } from '../helpers/tsChild';
import { claimDdsDomains } from '../helpers/ddsDomain';

const RUNNER_CHILD = fileURLToPath(new URL('./g1RunnerChild.ts', import.meta.url));
const DOMAIN = claimDdsDomains();
const privileged = process.getuid?.() === 0;
const hasChrt = spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0;
/** Thread names (comm) of Cyclone DDS's own threads (ddsrt_thread_create's names in its sources). */
const DDS_THREADS = ['gc', 'dq.builtins', 'dq.user', 'tev', 'recv', 'recvUC'];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let runner: ChildProcess | null = null;
const lines: string[] = [];

async function report(): Promise<{ traces: string[] }> {
  const n = lines.length;
  runner!.stdin!.write('stats\n');
  for (let i = 0; i < 500 && lines.length <= n; i++) await sleep(10);
  return JSON.parse(lines[lines.length - 1]) as { traces: string[] };
}

afterAll(async () => {
  if (runner && runner.exitCode === null) {
    const gone = new Promise((r) => runner!.once('exit', r));
    runner.kill('SIGINT');
    await Promise.race([gone, sleep(3000)]);
    if (runner.exitCode === null) runner.kill('SIGKILL');
  }
});

describe.runIf(process.platform === 'linux' && privileged && hasChrt)('g1-runner: real-time scheduling', () => {
  it('the real-time thread and the DDS threads run SCHED_FIFO; the main thread, the onboard computer and the rest do not (controls)', async () => {
    runner = spawn(process.execPath, [...nodeArgsFor(RUNNER_CHILD), String(DOMAIN)], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    createInterface({ input: runner.stdout! }).on('line', (l) => lines.push(l));
    const pid = runner.pid!;
    // Wait for the URL (the runner is up) and the onboard computer's ready trace.
    let traces: string[] = [];
    for (let i = 0; i < 300; i++) {
      await sleep(100);
      if (lines.length === 0) continue;
      traces = (await report()).traces;
      if (traces.some((l) => l.includes('onboard computer thread'))) break;
    }
    const rtLine = traces.find((l) => l.includes('g1-runner: real-time thread'));
    const onboardLine = traces.find((l) => l.includes('onboard computer thread'));
    expect(rtLine, traces.join('\n')).toMatch(
      new RegExp(`real-time thread \\d+ under SCHED_FIFO ${RUNNER_RT_PRIORITY}`),
    );
    expect(onboardLine, traces.join('\n')).toBeDefined();
    const rtTid = Number(/real-time thread (\d+)/.exec(rtLine!)![1]);
    const onboardTid = Number(/onboard computer thread (\d+)/.exec(onboardLine!)![1]);

    const threads = threadPolicies(pid);
    console.log(
      `g1-runner ${pid} threads (tid comm policy rtprio):\n${threads.map((t) => `${t.tid} ${t.comm} ${t.policy} ${t.rtPriority}${t.tid === rtTid ? ' <- real-time thread' : t.tid === onboardTid ? ' <- onboard computer' : t.tid === pid ? ' <- main (bridge)' : ''}`).join('\n')}`,
    );
    const byTid = new Map(threads.map((t) => [t.tid, t]));
    const fifo = { policy: 'fifo', rtPriority: RUNNER_RT_PRIORITY };
    expect(byTid.get(rtTid)).toMatchObject(fifo);
    const dds = threads.filter((t) => DDS_THREADS.includes(t.comm));
    expect(dds.map((t) => t.comm).sort()).toEqual([...DDS_THREADS].sort());
    for (const t of dds) expect(t, t.comm).toMatchObject(fifo);
    // Controls: the bridge's main thread and the idle onboard computer are ordinary threads ...
    expect(byTid.get(pid)).toMatchObject({ policy: 'other', rtPriority: 0 });
    expect(byTid.get(onboardTid)).toMatchObject({ policy: 'other', rtPriority: 0 });
    // ... and nothing else in the process is real-time (libuv's pool, V8's, the loader's threads).
    const others = threads.filter((t) => t.tid !== rtTid && !DDS_THREADS.includes(t.comm));
    expect(others.length).toBeGreaterThan(2);
    for (const t of others) expect(t.policy, `thread ${t.tid} ${t.comm}`).toBe('other');
  }, 60_000);
});
