// `npm run soak:g1`: the G1 runner soak (docs/G1_RUNNER.md "Soak"). Real parts
// only, each in its own process: `motionbench host` (loopback) with the console open in headless
// Debian Chromium, the interlock box emulated on a real socat pty, `emulate-robot --dds --gantry`
// on loopback, the runner started by the console ("G1 over DDS"), a `motionbench qualify` running
// all along, and a CPU hog pinned to core 1 (taskset). Matched trials of a released policy on
// board (BeyondMimic Jump_wose, qualified first by `motionbench qualify`) run through the
// console's API (trial.start / trial.status / trial.confirm, as the Trial runner panel calls them),
// with faults injected at a seeded random point after the runner reports `tracking`:
//   state_drop       the emulated G1 publishes no rt/lowstate for STATE_DROP_MS
//   remote_estop     L2 + B held in wireless_remote for REMOTE_HOLD_MS
//   interlock_estop  the emulated box's e-stop pressed (released and re-armed after the trial)
//   runner_kill      SIGKILL to the runner; after the trial the console reconnects the entry
//                    (connections.disconnect + connections.connect: the services start a new runner)
//   console_freeze   the console's services process stopped (SIGSTOP) for CONSOLE_FREEZE_MS, then
//                    continued: the runner and the keeper carry the trial (DESIGN §5.2), it completes
// Each trial: outcome, trip cause, injected fault, fault → first damping LowCmd_ at the emulated
// G1 (its gain-transition time; both clocks are this machine's wall clock), frames. Output: a JSON
// file and a markdown trip-cause table in SOAK_G1_OUT. Exit status 1 when a trial without an
// injected fault did not complete, or a fault ended otherwise than declared (DECLARED below).
//
// Knobs (environment):
//   SOAK_G1_TRIALS=30         trials without an injected fault
//   SOAK_G1_FAULT_REPEATS=3   trials per injected fault kind
//   SOAK_G1_FAULTS=<a,b>      only these fault kinds (default: all)
//   SOAK_G1_SEED=1            the order of the trials and the fault times
//   SOAK_G1_OUT=<dir>         where g1-soak.json and g1-soak.md go (default a new folder in /tmp)
//   SOAK_G1_DOMAIN=<id>       the DDS domain (default 170 + pid % 50)
//   SOAK_G1_MAX_STARTS_REFUSED=20  give up after this many jobs that ended before a real trial
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { AdmittedPairDto, TrialQueueDto } from '../../src/api/contract';
import { ensureRendererBuilt, launchChromium } from '../helpers/browserHarness';
import { G1ConsoleRig, epochMs, sleep, type RigTrial } from '../helpers/g1ConsoleRig';
import { MOTIONBENCH_BIN } from '../helpers/runCli';
import { autogroupWarning, readKernelAutogroups } from '../../src/services/os/schedulerFacts';
import { REPO_ROOT, sharedData } from '../helpers/sharedData';

type Fault = 'none' | 'state_drop' | 'remote_estop' | 'interlock_estop' | 'runner_kill' | 'console_freeze';
const FAULTS: Exclude<Fault, 'none'>[] = [
  'state_drop',
  'remote_estop',
  'interlock_estop',
  'runner_kill',
  'console_freeze',
];

/** How each trial must end (docs/G1_RUNNER.md "Soak" and "Faults"). */
const DECLARED: Record<Fault, string> = {
  none: 'completed',
  state_drop: 'link_lost',
  remote_estop: 'estop',
  interlock_estop: 'estop',
  runner_kill: 'link_lost',
  console_freeze: 'completed',
};
const STATE_DROP_MS = 300;
const REMOTE_HOLD_MS = 500;
const CONSOLE_FREEZE_MS = 300;
/** How long after a console freeze's end a damp counts as the freeze's, ms (the clip outlasts it by ≥ 1.1 s). */
const CONSOLE_FREEZE_WAIT_MS = 600;
/** A fault lands this long after the runner reports tracking (uniform, seeded); the clip is 3.28 s. */
const FAULT_DELAY_MS: [number, number] = [300, 1800];
/** The trial machinery's limit of real trials per matched pair: one qualified campaign copy each. */
const TRIALS_PER_PAIR = 10;
/** How long after a fault the soak looks for the first damping LowCmd_ at the emulated G1, ms. */
const DAMP_WAIT_MS = 1500;

/** Faults to run (SOAK_G1_FAULTS, comma-separated); all by default. */
const faultsWanted = (): Exclude<Fault, 'none'>[] => {
  const v = process.env.SOAK_G1_FAULTS;
  if (!v) return FAULTS;
  const names = v.split(',').map((x) => x.trim());
  for (const n of names)
    if (!(FAULTS as string[]).includes(n))
      throw new Error(`SOAK_G1_FAULTS: unknown fault "${n}" (${FAULTS.join(', ')})`);
  return names as Exclude<Fault, 'none'>[];
};

const env = (name: string, fallback: number): number => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a whole number, found ${JSON.stringify(v)}`);
  return n;
};
const NO_FAULT_TRIALS = env('SOAK_G1_TRIALS', 30);
const FAULT_REPEATS = env('SOAK_G1_FAULT_REPEATS', 3);
const SEED = env('SOAK_G1_SEED', 1);
const DOMAIN = env('SOAK_G1_DOMAIN', 170 + (process.pid % 50));
/** The soak gives up after this many jobs that ended before a real trial. */
const MAX_STARTS_REFUSED = env('SOAK_G1_MAX_STARTS_REFUSED', 20);
const OUT = process.env.SOAK_G1_OUT || fs.mkdtempSync(path.join(os.tmpdir(), 'mb-soak-g1-out-'));
const POLICY = sharedData('policies/beyondmimic/Jump_wose.onnx');

/** mulberry32: a small seeded generator, so that a run's plan can be repeated. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface TrialRecord extends RigTrial {
  fault: Fault;
  declared: string;
  asDeclared: boolean;
  faultDelayMs: number | null;
  faultToDampMs: number | null;
  campaign: string;
}

const log = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${line}\n`);
};

function run(args: string[], what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MOTIONBENCH_BIN, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once('exit', (c) => (c === 0 ? resolve() : reject(new Error(`${what} exited ${c}: ${err}`))));
  });
}

/** A CPU hog pinned to core 1: one busy process for the whole soak. */
function startHog(): ChildProcess {
  return spawn('taskset', ['-c', '1', process.execPath, '-e', 'for(;;){}'], { stdio: 'ignore' });
}

/** `motionbench qualify` over core-v1 with the builtin tracker, started again whenever it ends. */
function startQualificationLoad(dir: string): { stop(): Promise<void>; runs(): number; kill(): void } {
  let child: ChildProcess | null = null;
  let stopped = false;
  let runs = 0;
  const next = (): void => {
    if (stopped) return;
    runs++;
    const campaign = path.join(dir, `load-${runs}`);
    child = spawn(
      process.execPath,
      [
        MOTIONBENCH_BIN,
        'qualify',
        '--workload',
        'core-v1',
        '--binding',
        'builtin',
        '--campaign',
        campaign,
        '--workers',
        '1',
      ],
      { cwd: REPO_ROOT, stdio: 'ignore' },
    );
    child.once('exit', () => {
      child = null;
      setTimeout(next, 500);
    });
  };
  next();
  return {
    runs: () => runs,
    kill: () => {
      stopped = true;
      child?.kill('SIGKILL');
    },
    stop: async () => {
      stopped = true;
      const c = child as ChildProcess | null;
      if (c && c.exitCode === null) {
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGINT');
        const k = setTimeout(() => c.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(k);
      }
    },
  };
}

/** Set by SIGINT/SIGTERM: no further pair is started; the parts are stopped and the results so far written. */
const stopRequested = { value: false };
/** What a second signal kills at once (the hog, the load, the rig), since it does not wait for the clean stop. */
const killOnExit: { hog: ChildProcess | null; load: { kill(): void } | null; rig: G1ConsoleRig | null } = {
  hog: null,
  load: null,
  rig: null,
};

function pct(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

function table(records: TrialRecord[]): string {
  const rows = (['none', ...FAULTS] as Fault[]).map((f) => {
    const rs = records.filter((r) => r.fault === f);
    const count = (key: (r: TrialRecord) => string): string => {
      const m = new Map<string, number>();
      for (const r of rs) m.set(key(r), (m.get(key(r)) ?? 0) + 1);
      return [...m].map(([k, n]) => `${k} ×${n}`).join('; ') || '—';
    };
    const damp = rs.map((r) => r.faultToDampMs).filter((x): x is number => x !== null);
    const fmt = (x: number | null): string => (x === null ? '—' : x.toFixed(1));
    return `| ${f} | ${DECLARED[f]} | ${rs.length} | ${count((r) => r.outcome)} | ${count((r) => (r.trip ? `${r.trip.cause}: ${r.trip.reason.slice(0, 90)}` : 'no trip'))} | ${fmt(pct(damp, 50))} / ${fmt(damp.length ? Math.max(...damp) : null)} |`;
  });
  return [
    '| Injected fault | Declared outcome | Trials | Outcomes | Trip causes | Fault → damping LowCmd_ p50 / max, ms |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

async function main(): Promise<number> {
  const random = rng(SEED);
  const plan: Fault[] = [...Array<Fault>(NO_FAULT_TRIALS).fill('none')];
  for (const f of faultsWanted()) for (let i = 0; i < FAULT_REPEATS; i++) plan.push(f);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-soak-g1-'));
  log(
    `plan: ${plan.length} trials (${NO_FAULT_TRIALS} without a fault, ${FAULT_REPEATS} of each fault), seed ${SEED}, DDS domain ${DOMAIN}, work ${dir}, out ${OUT}`,
  );

  const kernelAutogroups = readKernelAutogroups();
  const schedulerWarning = autogroupWarning({ kernelAutogroups });
  if (schedulerWarning) log(`warning: ${schedulerWarning}`);
  await ensureRendererBuilt();
  const t0 = Date.now();
  const base = path.join(dir, 'base');
  await run(['qualify', '--binding', POLICY, '--campaign', base], 'motionbench qualify (Jump_wose)');
  log(`qualified Jump_wose in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // The parts start on a machine without the soak's own load; the hog and the qualification then
  // run for every trial.
  let hog: ChildProcess | null = null;
  let load: ReturnType<typeof startQualificationLoad> | null = null;
  let rig: G1ConsoleRig | null = null;
  let browser: Browser | null = null;
  const records: TrialRecord[] = [];
  /** Why the soak stopped before its plan was done; null when it was not. */
  let abort: string | null = null;
  /** Jobs that ended before any real trial began (why), in order. */
  const startsRefused: string[] = [];
  /** The next planned trial (its fault is drawn when a trial reaches tracking). */
  const planned = { next: 0 };
  const startedAt = new Date().toISOString();
  try {
    rig = await G1ConsoleRig.start({ domainId: DOMAIN, host: 'command', log });
    killOnExit.rig = rig;
    hog = startHog();
    killOnExit.hog = hog;
    load = startQualificationLoad(dir);
    killOnExit.load = load;
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    log(`parts started: emulated G1, box, services, runner pid ${rig.runnerPid()}`);
    // The console page loads alongside the trials (it is part of the load, not a step of them).
    const pageT0 = Date.now();
    void page
      .goto(rig.server.url, { timeout: 600_000, waitUntil: 'domcontentloaded' })
      .then(() => log(`console open in Chromium after ${((Date.now() - pageT0) / 1000).toFixed(1)} s`))
      .catch((err: unknown) => log(`console page in Chromium did not load: ${(err as Error).message.split('\n')[0]}`));

    let campaignNo = 0;
    while (planned.next < plan.length && !stopRequested.value) {
      campaignNo++;
      const campaign = path.join(dir, `trials-${campaignNo}`);
      fs.cpSync(base, campaign, { recursive: true });
      const queue = await rig.api.call<TrialQueueDto>('trial.queue', { campaignDir: campaign });
      const pair: AdmittedPairDto | undefined = queue.pairs.find((p) => p.admitted);
      if (!pair) throw new Error(`no admitted pair in ${campaign}: ${JSON.stringify(queue.pairs)}`);
      let done = 0;
      while (done < TRIALS_PER_PAIR && planned.next < plan.length && !stopRequested.value) {
        const faults = new Map<
          string,
          { fault: Fault; atEpochMs: number | null; delayMs: number | null; dampMs: number | null }
        >();
        // The operator damps the robot before touching it (the console's STOP: no job runs now,
        // and a pair's last trial leaves the runner holding the clip's last targets), then puts
        // it back on its gantry at the start pose.
        await rig.api.call('trial.stop', { all: true, reason: 'the operator damps the robot before putting it back' });
        await rig.placeOnGantry();
        const rigRef = rig;
        const result = await rig.runPair(campaign, pair.pairId, TRIALS_PER_PAIR, async ({ runId }) => {
          if (planned.next >= plan.length) return;
          const fault = plan[planned.next++];
          if (fault === 'none') {
            faults.set(runId, { fault, atEpochMs: null, delayMs: null, dampMs: null });
            return;
          }
          const delayMs = Math.round(FAULT_DELAY_MS[0] + random() * (FAULT_DELAY_MS[1] - FAULT_DELAY_MS[0]));
          await sleep(delayMs);
          const at = epochMs();
          faults.set(runId, { fault, atEpochMs: at, delayMs, dampMs: null });
          if (fault === 'state_drop') await rigRef.emulatorControl({ action: 'drop', ms: STATE_DROP_MS });
          else if (fault === 'remote_estop')
            await rigRef.emulatorControl({ action: 'remote', buttons: ['L2', 'B'], ms: REMOTE_HOLD_MS });
          else if (fault === 'interlock_estop') rigRef.box.pressEstop();
          else if (fault === 'console_freeze') {
            const pid = rigRef.hostPid();
            if (pid === null) throw new Error('console_freeze: no services process');
            process.kill(pid, 'SIGSTOP');
            await sleep(CONSOLE_FREEZE_MS);
            process.kill(pid, 'SIGCONT');
          } else {
            const pid = rigRef.runnerPid();
            if (pid === null) throw new Error('runner_kill: no runner process under the services');
            process.kill(pid, 'SIGKILL');
          }
          // The first damping LowCmd_ the emulated G1 receives after the fault (none comes after a
          // SIGKILL: the robot keeps the last command until a runner is started again).
          // After a console freeze only a damp within the freeze and shortly after it would be the
          // stall's (the clip then still runs); later, the operator's damp after the clip is seen.
          const end = Date.now() + (fault === 'console_freeze' ? CONSOLE_FREEZE_WAIT_MS : DAMP_WAIT_MS);
          let damp: number | null = null;
          while (Date.now() < end) {
            const g = (await rigRef.emulatorStatus()).gains;
            if (g.lastDampAfterStiffAtEpochMs !== null && g.lastDampAfterStiffAtEpochMs >= at) {
              damp = g.lastDampAfterStiffAtEpochMs - at;
              break;
            }
            await sleep(20);
          }
          faults.set(runId, { fault, atEpochMs: at, delayMs, dampMs: damp });
          log(
            `trial ${runId}: injected ${fault} ${delayMs} ms after tracking began; damping ${damp === null ? 'not seen' : `after ${damp.toFixed(1)} ms`}`,
          );
        });
        for (const t of result.trials) {
          const f = faults.get(t.runId) ?? { fault: 'none' as Fault, atEpochMs: null, delayMs: null, dampMs: null };
          const faultToDampMs = f.dampMs;
          const rec: TrialRecord = {
            ...t,
            fault: f.fault,
            declared: DECLARED[f.fault],
            asDeclared: t.outcome === DECLARED[f.fault],
            faultDelayMs: f.delayMs,
            faultToDampMs,
            campaign: path.basename(campaign),
          };
          records.push(rec);
          log(
            `trial ${records.length}: ${rec.fault} → ${rec.outcome}${rec.asDeclared ? '' : ` (declared ${rec.declared})`}; trip ${rec.trip ? `${rec.trip.cause}: ${rec.trip.reason}` : 'none'}; fault→damp ${faultToDampMs === null ? '—' : `${faultToDampMs.toFixed(1)} ms`}; ${rec.frames} frames`,
          );
        }
        done += result.trials.length;
        if (result.status.state !== 'completed')
          log(
            `job ${result.status.jobId} ${result.status.state}: ${result.status.result?.stoppedEarly ?? result.status.error ?? ''}`,
          );
        if (result.trials.length === 0 && result.status.state !== 'completed') {
          // No real trial began (a refusal before motion, e.g. the interlock not arming): nothing
          // moved and no trial counts; recorded with its reason, and the pair is started again.
          const refusals = result.status.refusals.map((r) => r.message).join('; ');
          const why = `${result.status.result?.stoppedEarly ?? result.status.error ?? result.status.phaseMessage}${refusals ? ` (last refusal: ${refusals.slice(0, 300)})` : ''}`;
          startsRefused.push(why);
          log(`job ended before a real trial (${startsRefused.length} so far): ${why}`);
          if (startsRefused.length > MAX_STARTS_REFUSED)
            throw new Error(`more than ${MAX_STARTS_REFUSED} jobs ended before a real trial`);
          await rig.rearm();
        }
        // The operator after a fault: the box released and re-armed, the runner reconnected.
        const faultsHere = [...faults.values()].map((x) => x.fault);
        if (faultsHere.includes('interlock_estop')) await rig.rearm();
        if (faultsHere.includes('runner_kill') || rig.runnerPid() === null) {
          const attempts = await rig.restartRunner();
          log(`runner restarted by the console (reconnect, ${attempts} attempt(s)): pid ${rig.runnerPid()}`);
        }
        if (result.status.state === 'completed') break;
      }
    }
  } catch (err) {
    // The soak stopped early: what ran so far is still written, with the reason.
    abort = err instanceof Error ? err.message : String(err);
    log(`soak stopped early: ${abort}`);
  } finally {
    await browser?.close().catch(() => {});
    const emuErr = rig?.emu.stderr().split('\n').filter(Boolean).slice(-3).join(' | ');
    await rig?.close();
    await load?.stop();
    hog?.kill('SIGKILL');
    if (emuErr) log(`emulated G1: ${emuErr}`);
    log(`qualification load: ${load?.runs() ?? 0} run(s) of motionbench qualify`);
  }

  const failures = records.filter((r) => !r.asDeclared);
  const plannedNotRun = plan.length - planned.next;
  const doc = {
    format: 'motionbench-g1-soak/1',
    startedAt,
    endedAt: new Date().toISOString(),
    seed: SEED,
    knobs: { NO_FAULT_TRIALS, FAULT_REPEATS, STATE_DROP_MS, REMOTE_HOLD_MS, CONSOLE_FREEZE_MS, FAULT_DELAY_MS },
    declared: DECLARED,
    machine: { cpus: os.cpus().length, loadavg: os.loadavg(), kernelAutogroups },
    trials: records,
    startsRefused,
    abort,
    failures: failures.length,
    plannedNotRun,
  };
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'g1-soak.json'), `${JSON.stringify(doc, null, 2)}\n`);
  const refusedText = startsRefused.length
    ? `\n${startsRefused.length} job(s) ended before a real trial began (nothing moved): ${[...new Set(startsRefused)].join('; ')}\n`
    : '';
  const abortText = abort ? `\nStopped early: ${abort}\n` : '';
  const kernel = `kernel.sched_autogroup_enabled = ${kernelAutogroups === null ? 'not known' : kernelAutogroups ? 1 : 0}`;
  const md = `# G1 runner soak ${startedAt}\n\n${records.length} real trials (seed ${SEED}); ${failures.length} not as declared; ${plannedNotRun} planned trial(s) not run; ${os.cpus().length} CPUs, ${kernel}.\n\n${table(records)}\n${refusedText}${abortText}`;
  fs.writeFileSync(path.join(OUT, 'g1-soak.md'), md);
  process.stdout.write(`${md}\nJSON: ${path.join(OUT, 'g1-soak.json')}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  return failures.length === 0 && plannedNotRun === 0 && abort === null ? 0 : 1;
}

// Ctrl-C or a timeout's SIGTERM: the finally blocks stop every part (the hog above all).
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    if (interrupted) {
      killOnExit.hog?.kill('SIGKILL');
      killOnExit.rig?.killNow();
      killOnExit.load?.kill();
      process.exit(130);
    }
    interrupted = true;
    log(`${sig}: stopping the soak`);
    stopRequested.value = true;
  });

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
