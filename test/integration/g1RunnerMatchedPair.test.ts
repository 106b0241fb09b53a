// A matched pair through the console's own trial machinery against the G1 runner:
// console (runMatchedPair: qualification, pair calibration, safety gate, interlock over a real socat
// pty with the emulated box in its own process) → g1-bridge/1 → g1-runner → real Cyclone DDS
// (loopback) → `emulate-robot --dds` (the MuJoCo G1 on the wire, its own process, on its gantry).
// Two real trials each; the operator's reset stands the robot up on its gantry and holds it from
// the runner's side (G1Runner.hold) before the console checks the start pose.
// Once with the builtin tracker (with root assist, as the emulator tests qualify it: the runner
// cannot apply a simulator's virtual gantry and traces so; the real gantry holds the robot) and once
// with a released policy (BeyondMimic Jump_wose on board). Each: the sim branch and both real trials
// complete, frames are recorded at 500 Hz, the calibration is read through the runner, and the
// emulated G1 counts no LowCmd_ with a wrong CRC.
//
// Slow on purpose (a whole-system run): two pairs, each qualified, its simulation branch run, and two
// real trials at real time through the runner (the 8.5 s wave clip, > 4,000 frames each; the
// policy's own baked motion), the robot stood up on its gantry before each.
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  startInterlockEmulatorProcess,
  type InterlockBoxProcess,
} from '../../src/services/interlock/interlockEmulatorProcess';
import { SERVICES_NICE } from '../../src/services/console/consoleApiHandlers';
import { raiseThreadPriority, setAutogroupNice } from '../../src/services/os/threadPriority';
import { runQualification } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { sendEmulatorControl } from '../../src/services/robotEmulator/emulatorControlClient';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { openCampaign } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { openInterlockFeed, type InterlockFeed } from '../../src/services/trial/interlockFeed';
import { openTrialRobot } from '../../src/services/trial/openTrialRobot';
import type { OperatorPrompts } from '../../src/services/trial/trialTypes';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { loadWorkload } from '../../src/services/workload';
import { policyMotionsWorkload } from '../../src/services/workload/policyWorkload';
import { runPairOnRig } from '../helpers/matchedPairOnRig';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { qualifyWavePair, WAVE_CLIP } from '../helpers/qualifiedWavePair';
import { REPO_ROOT, sharedData } from '../helpers/sharedData';
import { startDdsG1Emulator, type DdsG1EmulatorProcess } from '../helpers/ddsG1EmulatorProcess';
import { spawnInOwnSession } from '../helpers/ownSession';
import { startTogether } from '../helpers/startTogether';
import { nodeArgsFor } from '../helpers/tsChild';
import { claimDdsDomains } from '../helpers/ddsDomain';

const profile = loadRobotProfile();
const DOMAIN = claimDdsDomains();

let emu: DdsG1EmulatorProcess;
let controlUrl = '';
const RUNNER_CHILD = fileURLToPath(new URL('./g1RunnerChild.ts', import.meta.url));
/** The runner in its own process (as on the robot's PC): its URL, stdin commands, stdout lines. */
let runnerProc: ChildProcess;
let runnerUrl = '';
const runnerLines: string[] = [];

interface RunnerReport {
  stats: { crcErrors: number; lowCmdSent: number } | null;
  modes: string[];
  traces: string[];
  /** Worst LowCmd period p99 and max over the runner's 1 s windows since the previous report. */
  periodWorst: { p99Ms: number; maxMs: number } | null;
}
async function runnerReport(): Promise<RunnerReport> {
  const n = runnerLines.length;
  runnerProc.stdin!.write('stats\n');
  const end = Date.now() + 5000;
  while (runnerLines.length === n && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return JSON.parse(runnerLines[n]) as RunnerReport;
}
let pty: TestPtyPair;
let box: InterlockBoxProcess;
let interlock: InterlockFeed;
let sim: EmbeddedSimulator;
let dir: string;

async function emulatedG1Status(): Promise<{ link: { received: number; crcErrors: number } }> {
  const a = await sendEmulatorControl(controlUrl, { action: 'status' } as never);
  return JSON.parse(a.message) as { link: { received: number; crcErrors: number } };
}

/**
 * What the operator does to put the robot at its start pose on a runner: stands it up, lifts it
 * onto the gantry, and holds it there from the runner's side (the joints stiff at the pose
 * measured now), so that it stays where the pair calibration saw it.
 */
async function placeOnGantryAndHold(): Promise<void> {
  await sendEmulatorControl(controlUrl, { action: 'human_reset' });
  await sendEmulatorControl(controlUrl, { action: 'gantry', lift: true } as never);
  runnerProc.stdin!.write('hold\n');
  await new Promise((r) => setTimeout(r, 300));
}

/** The operator: confirms each trial; a reset is the robot put back standing and lifted onto its gantry. */
function gantryOperator(resets: string[]): OperatorPrompts {
  return {
    confirmTrial: async () => true,
    confirmReset: async (info) => {
      await placeOnGantryAndHold();
      resets.push(`trial ${info.trialIndex} after ${info.afterOutcome}`);
      return `robot put back on its gantry by the test operator before trial ${info.trialIndex + 1}`;
    },
  };
}

// Each part where it runs in the lab, with the priority it has there (docs/G1_RUNNER.md "A matched
// pair through the console"): this process stands for the console's services (their session
// raised, their main thread at SERVICES_NICE, as createConsoleApi raises it); the runner in a
// session of its own, as g1RunnerProcess.ts starts it, raising it as the CLI does; the emulated G1
// in a session of its own, as the robot's own computer. Left in this session, the runner and the
// MuJoCo G1 shared the console's CPU share, and its loop (which kicks the interlock keeper) went
// 183 ms without a CPU under load.
beforeAll(async () => {
  setAutogroupNice(-10);
  raiseThreadPriority(SERVICES_NICE);
  dir = await mkdtemp(path.join(tmpdir(), 'mb-runner-pair-'));
  // The parts do not need each other to start (the runner finds the G1 on the wire when a trial
  // begins): started together, each kept for afterAll even when another fails.
  runnerProc = spawnInOwnSession(
    process.execPath,
    [...nodeArgsFor(RUNNER_CHILD), String(DOMAIN)],
    { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    { sessionNice: -10 },
  );
  createInterface({ input: runnerProc.stdout! }).on('line', (l) => runnerLines.push(l));
  sim = new EmbeddedSimulator({ modelFile: profile.sourceFile, workers: 1 });
  await startTogether(
    startDdsG1Emulator(DOMAIN, ['--gantry'], { ownSession: true }).then((e) => {
      emu = e;
      controlUrl = e.controlUrl;
    }),
    (async () => {
      const end = Date.now() + 60_000;
      while (runnerLines.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      runnerUrl = runnerLines[0];
    })(),
    makePtyPair().then(async (p) => {
      pty = p;
      box = await startInterlockEmulatorProcess({ path: pty.devicePath });
      interlock = await openInterlockFeed({ path: pty.consolePath, log: () => {} });
    }),
    sim.ready(),
  );
}, 120_000);

afterAll(async () => {
  await interlock?.close().catch(() => {});
  await box?.close();
  await pty?.dispose();
  await sim?.close();
  if (runnerProc && runnerProc.exitCode === null) {
    const gone = new Promise((r) => runnerProc.once('exit', r));
    runnerProc.kill('SIGINT');
    await gone;
  }
  await emu?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function pairThroughRunner(
  label: string,
  campaign: string,
  setup: () => Promise<{
    workload: ReturnType<typeof loadWorkload>;
    bindingId: string;
    clipMatch: (p: { clipName: string; clipId: string }) => boolean;
    minFrames: number;
  }>,
) {
  const { workload, bindingId, clipMatch, minFrames } = await setup();
  const store = await openCampaign(path.join(dir, campaign));
  const pair = listAdmittedPairs(store).find((p) => clipMatch(p))!;
  expect(pair?.admitted).toBe(true);
  await placeOnGantryAndHold();
  const before = await emulatedG1Status();
  await runnerReport(); // starts the runner's worst-period window for this pair
  // The interlock's silence as the gate judges it: between consecutive statuses, by the keeper's
  // receipt times (the gate reads every status that arrived before it judges, so a late turn of
  // this loop is not silence; over the whole pair, armed or not). And how late statuses reached
  // this loop (the keeper's console watchdog trips past 100 ms without this loop's kicks).
  let lastStatusAtMs: number | null = null;
  let maxStatusGapMs = 0;
  let maxDeliveryMs = 0;
  const unsubscribe = interlock.subscribe((e) => {
    if (e.type !== 'interlock_status') return;
    if (lastStatusAtMs !== null) maxStatusGapMs = Math.max(maxStatusGapMs, e.atMs - lastStatusAtMs);
    maxDeliveryMs = Math.max(maxDeliveryMs, performance.now() - e.atMs);
    lastStatusAtMs = e.atMs;
  });
  const link = await openTrialRobot(runnerUrl, { robotUnit: 'g1-emulated-dds-001' });
  const resets: string[] = [];
  try {
    const rig = { store, link, interlock, sim, profile };
    const r = await runPairOnRig(rig, pair, {
      trials: 2,
      workload,
      operator: gantryOperator(resets),
      label: `${label} `,
    });
    const after = await emulatedG1Status();
    const rep = await runnerReport();
    console.log(
      `${label}: sim ${r.sim.outcome}; real ${r.real.map((t) => `${t.outcome} (${t.frames} frames${t.outcome === 'completed' ? '' : `: ${t.reason}`})`).join(', ')}; interlock status gap max ${maxStatusGapMs.toFixed(1)} ms (delivered up to ${maxDeliveryMs.toFixed(1)} ms late); LowCmd period worst p99 ${rep.periodWorst?.p99Ms.toFixed(2)} ms, max ${rep.periodWorst?.maxMs.toFixed(2)} ms; runner ${JSON.stringify(rep.stats)}; emulated G1 LowCmd_ ${after.link.received - before.link.received} received, CRC errors ${after.link.crcErrors}; modes ${rep.modes.slice(-4).join(' → ')}`,
    );
    expect(r.stoppedEarly, rep.traces.slice(-10).join('\n')).toBeNull();
    expect(r.binding.id).toBe(bindingId);
    expect(r.sim.outcome).toBe('completed');
    expect(r.real).toHaveLength(2);
    // One human-gated reset before the second trial (the robot back on its gantry, held).
    expect(resets.length).toBeGreaterThanOrEqual(1);
    for (const t of r.real) {
      expect(t.outcome, JSON.stringify(t)).toBe('completed');
      expect(t.frames).toBeGreaterThan(minFrames);
    }
    // The pair calibration was captured from the robot's lowstate through the runner.
    const cal = store.getCalibration(r.calibrationId)!.record;
    expect(cal.measured.jointPosRad).toHaveLength(29);
    expect(cal.residuals.measuredVsClipStart).not.toBeNull();
    expect(cal.measured.rootPosM).toBeNull(); // a G1's lowstate carries no root position
    // The runner's LowCmd_ went through with a valid CRC every time.
    expect(after.link.received - before.link.received).toBeGreaterThan(1000);
    expect(after.link.crcErrors).toBe(0);
    expect(rep.stats!.crcErrors).toBe(0);
  } finally {
    unsubscribe();
    await link.close();
    store.close();
  }
}

describe('matched pair: console → g1-runner → Cyclone DDS (loopback) → emulated G1 on its gantry', () => {
  it('builtin tracker with root assist: the assist is not applied on the robot (traced); sim and both real trials complete', async () => {
    await pairThroughRunner('builtin', 'builtin', async () => {
      const { summary, binding } = await qualifyWavePair(path.join(dir, 'builtin'), { simulator: sim });
      expect(summary.pairsDecided).toBe(1);
      return {
        workload: loadWorkload('core-v1'),
        bindingId: binding.id,
        clipMatch: (p) => p.clipName === WAVE_CLIP,
        minFrames: 4000,
      };
    });
    const rep = await runnerReport();
    expect(rep.traces.some((l) => /root assist 3000 N\/m not applied/.test(l))).toBe(true);
  }, 240_000);

  it('a released policy (BeyondMimic Jump_wose) on board: sim and both real trials complete', async () => {
    const plan = planPolicy(sharedData('policies/beyondmimic/Jump_wose.onnx'), profile);
    await pairThroughRunner('policy', 'policy', async () => {
      const workload = policyMotionsWorkload([plan], profile);
      const q = await runQualification({
        campaignDir: path.join(dir, 'policy'),
        workload,
        bindings: [plan.binding],
        profile,
        simulator: sim,
      });
      expect(q.pairsDecided).toBe(1);
      return {
        workload,
        bindingId: plan.binding.id,
        clipMatch: (p) => p.clipId === plan.baked!.clip.id,
        minFrames: 1500,
      };
    });
  }, 240_000);
});
