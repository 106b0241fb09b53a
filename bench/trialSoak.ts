// `npx tsx bench/trialSoak.ts [--duration-s 600] [--hog] [--ui] [--sim-busy] [--clips a,b]`:
// matched trials back to back against real parts, measuring the console services' event-loop
// delay and counting every trip. The parts are those of an operator's session:
//   - `motionbench host` as its own process (the services: handlers, trial runner, safety gate,
//     serial interlock, recorder, embedded MuJoCo), its main thread's event-loop delay measured by
//     bench/support/loopDelayPreload.mjs (independent of the host's code, so the same
//     measurement runs against an older commit);
//   - `motionbench emulate-robot` (500 Hz g1-bridge/1, MuJoCo G1) with the interlock box emulated
//     on the far end of a socat PTY;
//   - with --ui, the console open in Debian Chromium (software rendering takes a core), following
//     the trial's pushes;
//   - with --sim-busy, a simulation run of a clip on the embedded simulator streaming to the console
//     for the whole soak, restarted whenever it ends;
//   - with --hog, a busy loop pinned to CPU 1 (`taskset -c 1`).
// Trials are confirmed and resets done (the emulator's human_reset) by this script, as an operator
// would. Prints one JSON document: trials by outcome, every trip with its cause, and the host's
// event-loop delay over the soak (p50/p99/p99.9/max and how many 100 ms windows had a delay over
// 20/50/100 ms).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { TrialJobStatus } from '../src/api/contract';
import { runQualification } from '../src/services/qualification';
import { loadRobotProfile } from '../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../src/services/sim/bindingSpec';
import { loadWorkload } from '../src/services/workload';
import { hostApiCall, startHostCommand } from '../test/e2e/e2eSupport';
import { ensureRendererBuilt, launchChromium, REPO_ROOT } from '../test/helpers/browserHarness';
import { makePtyPair } from '../test/helpers/ptyPair';
import { startEmulatorProcess } from '../test/helpers/robotEmulatorProcess';

const { values: args } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '120' },
    hog: { type: 'boolean', default: false },
    ui: { type: 'boolean', default: false },
    'sim-busy': { type: 'boolean', default: false },
    clips: { type: 'string', default: 'ub_wave_right,ub_hands_up,ub_arm_swing,ip_torso_twist,ip_side_bend' },
    'trials-per-pair': { type: 'string', default: '10' },
    /** Write a V8 CPU profile of the host's main thread over the measured period into this folder. */
    'cpu-prof': { type: 'string' },
  },
});
const durationMs = Number(args['duration-s']) * 1000;
const clips = args.clips!.split(',');
const trialsPerPair = Number(args['trials-per-pair']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`soak: ${line}\n`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-soak-'));
const loopDir = path.join(tmp, 'loop');
fs.mkdirSync(loopDir);
const campaignDir = path.join(tmp, 'campaign');
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function main(): Promise<void> {
  const built = ensureRendererBuilt(); // the host serves the console's bundle
  log(`qualifying ${clips.join(', ')} × builtin:assist=3000`);
  const q = await runQualification({
    campaignDir,
    workload: loadWorkload('core-v1'),
    bindings: [await resolveBindingSpec('builtin:assist=3000')],
    profile: loadRobotProfile(),
    clips,
    workers: 2,
  });
  log(`${q.admitted} pairs admitted`);

  const pty = await makePtyPair();
  cleanups.push(() => pty.dispose());
  // As the console e2e test: the default profile (g1-plausible), whose velocity noise lets a
  // stillness capture pass (test/e2e/trialRunner.test.ts).
  const emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--seed', '3']);
  cleanups.push(() => emu.stop());
  await built;

  const preload = path.join(REPO_ROOT, 'bench/support/loopDelayPreload.mjs');
  const savedOptions = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${savedOptions ?? ''} --import ${preload}`.trim();
  if (args['cpu-prof']) process.env.MB_CPU_PROF_DIR = path.resolve(args['cpu-prof']);
  process.env.MB_LOOP_DELAY_DIR = loopDir;
  const host = await startHostCommand([]);
  if (savedOptions === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = savedOptions;
  delete process.env.MB_LOOP_DELAY_DIR;
  delete process.env.MB_CPU_PROF_DIR;
  cleanups.push(() => host.stop());
  // The interlock's own lines (the keeper's watchdog, trips) from the host's log, for the report.
  const interlockLines: string[] = [];
  let stderrTail = '';
  host.child.stderr!.on('data', (d: Buffer) => {
    stderrTail += d.toString();
    const lines = stderrTail.split('\n');
    stderrTail = lines.pop()!;
    for (const l of lines) if (/interlock|watchdog|safety/i.test(l)) interlockLines.push(l.slice(0, 300));
  });
  const u = new URL(host.url);
  const server = { port: Number(u.port), token: u.searchParams.get('token')! };
  const api = <T>(method: string, params: unknown) => hostApiCall<T>(server, method, params);

  if (args.ui) {
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(host.url);
    await page.locator('[data-testid=connection-status]').filter({ hasText: 'Connected' }).waitFor();
    log('console open in Chromium');
  }

  const conn = await api<{ id: string }>('connections.add', { url: emu.url, kind: 'robot' });
  const connectionId = conn.id;
  await api('interlock.open', { path: pty.consolePath });
  const queue = await api<{ pairs: { pairId: string; clipName: string; admitted: boolean }[] }>('trial.queue', {
    campaignDir,
    trials: trialsPerPair,
  });
  const pairs = queue.pairs.filter((p) => p.admitted);
  if (pairs.length === 0) throw new Error('no admitted pair');

  if (args.hog) {
    const hog = spawn('taskset', ['-c', '1', process.execPath, '-e', 'for(;;){}'], { stdio: 'ignore' });
    children.push(hog);
    log(`CPU hog pid ${hog.pid} on CPU 1`);
  }
  let simBusy = false;
  if (args['sim-busy']) {
    simBusy = true;
    const clip = await api<{ id: string }>('clips.load', {
      path: path.join(REPO_ROOT, '../shared/data/motions/lafan1_g1_csv/dance1_subject2.csv'),
    });
    void (async () => {
      while (simBusy) {
        try {
          const r = await api<{ runId: string }>('sim.run', {
            connectionId: 'embedded-sim',
            clipId: clip.id,
            binding: 'builtin:assist=3000',
          });
          for (;;) {
            await sleep(500);
            const res = await api<{ state?: string } | null>('sim.result', { runId: r.runId }).catch(() => null);
            if (!simBusy || (res && res.state !== 'running')) break;
          }
        } catch (e) {
          log(`sim-busy: ${(e as Error).message}`);
          await sleep(2000);
        }
      }
    })();
  }

  // The measured period starts here.
  host.child.kill('SIGUSR2');
  const t0 = Date.now();
  const outcomes: Record<string, number> = {};
  const trips: { cause: string; reason: string; outcome: string; trialIndex: number | null }[] = [];
  const failures: string[] = [];
  let realTrials = 0;
  let pairIndex = 0;
  const done = new Map<string, number>();
  while (Date.now() - t0 < durationMs && pairIndex < pairs.length) {
    const pair = pairs[pairIndex];
    const already = done.get(pair.pairId) ?? 0;
    if (already >= trialsPerPair) {
      pairIndex++;
      continue;
    }
    const job = (
      await api<{ status: TrialJobStatus }>('trial.start', {
        campaignDir,
        pairId: pair.pairId,
        connectionId,
        trials: already + 1,
      })
    ).status;
    let status: TrialJobStatus;
    for (;;) {
      status = await api<TrialJobStatus>('trial.status', { jobId: job.jobId });
      if (status.state !== 'running') break;
      if (status.prompt) {
        if (status.prompt.kind === 'confirm_reset') await emu.control({ action: 'human_reset' });
        await api('trial.confirm', {
          jobId: job.jobId,
          promptId: status.prompt.promptId,
          ok: true,
          note: 'soak operator',
        });
      }
      await sleep(100);
    }
    if (status.lastTrip) trips.push({ ...status.lastTrip, trialIndex: status.trialIndex });
    if (status.state === 'failed') {
      failures.push(status.error ?? 'failed');
      // A trip damped the robot and it fell: the human puts it back, as between trials.
      await emu.control({ action: 'human_reset' });
      await sleep(1500);
    }
    const fresh = status.episodes.filter((e) => e.domain === 'real_robot' && !e.resumed);
    for (const e of fresh) {
      outcomes[e.outcome] = (outcomes[e.outcome] ?? 0) + 1;
      realTrials++;
      if (e.outcome !== 'infrastructure_error') done.set(pair.pairId, (done.get(pair.pairId) ?? 0) + 1);
    }
    if (fresh.length === 0 && status.state !== 'completed') {
      const why = [status.error, ...status.refusals.map((r) => `${r.code}: ${r.message}`)].filter(Boolean).join('; ');
      failures.push(`no trial: ${why || status.phaseMessage}`);
      log(`session on ${pair.clipName} ended ${status.state} without a trial: ${why || status.phaseMessage}`);
      await sleep(1000);
    }
    log(
      `${((Date.now() - t0) / 1000).toFixed(0)} s: ${pair.clipName} → ${fresh.map((e) => `${e.outcome} (${e.frames} frames)`).join(', ') || status.state}`,
    );
  }
  const elapsedS = (Date.now() - t0) / 1000;
  simBusy = false;
  host.child.kill('SIGUSR2');
  await sleep(300);
  const files = fs.readdirSync(loopDir).sort();
  const loop =
    files.length > 1 ? JSON.parse(fs.readFileSync(path.join(loopDir, files[files.length - 1]), 'utf8')) : null;
  const doc = {
    elapsedS: Math.round(elapsedS),
    options: { hog: args.hog, ui: args.ui, simBusy: args['sim-busy'], clips },
    realTrials,
    outcomes,
    trips,
    failures,
    hostLoopDelay: loop,
    interlockLog: interlockLines.slice(-40),
  };
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

main()
  .catch((err) => {
    process.stderr.write(`soak failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
    process.exit();
  });
