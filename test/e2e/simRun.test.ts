import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimEndEvent, SimRunResult } from '../../src/api/contract';
import {
  ClipPairEvaluator,
  episodeMetricsJson,
  MB_METRICS_1,
  type EpisodeMetrics,
  type HardFailure,
} from '../../src/domain/metrics';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { placedClip } from '../../src/domain/sim/referencePlacement';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { errorColorHex } from '../../renderer/src/overlay/errorScale';
import {
  conditionText,
  formatReadingValue,
  OUTCOME_TEXT,
  READING_ROWS,
  UNAVAILABLE_TEXT,
} from '../../renderer/src/sim/readingsFormat';
import type { SimRunTestState } from '../../renderer/src/testing/testHooks';
import { REPO_ROOT, screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole } from './consoleSession';
import { canvasColourBox, executedMotion, hostApiCall } from './e2eSupport';

// The viewport runs a clip in simulation and shows executed (solid) over reference
// (ghost) with per-body error colour. Against the real services (`motionbench host` in-process,
// the real embedded MuJoCo simulator) and the real UI in Chromium:
//   - B_HandsUp with builtin:assist=3000 at real time: live frames in the overlay, then the end;
//     the readings shown are the batch mb-metrics/1 reduction of the recording (recomputed here),
//     the trajectory hash is the one `motionbench sim` prints; scrubbing shows the recorded pose
//     and body colours follow |FK(exec) − FK(ref)| (root-relative)
//   - a second run without assist, overlaid on the first: a hard failure
//   - LAFAN1 dance1 (30 fps), first 4 s, no assist: a hard failure with its condition
//   - a very short run: readings that need more frames are "—" with the reason, never 0
//   - Space during a run: aborted_by_operator within 0.5 s

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const DANCE = path.join(SHARED_DATA, 'motions/lafan1_g1_csv/dance1_subject2.csv');

let server: HostServer;
let profile: RobotProfile;
let fk: ForwardKinematics;
let handsUp: MotionClip;
let dance: MotionClip;
beforeAll(() => {
  profile = loadRobotProfile(DEFAULT_MODEL_FILE);
  fk = new ForwardKinematics(profile);
  handsUp = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: path.basename(NPZ) });
  dance = decodeMotionFile(new Uint8Array(fs.readFileSync(DANCE)), { file: path.basename(DANCE), fps: 30 });
});
// The default backends: the real embedded simulator.
const ui = withConsole(async () => (server = await startHostServer({ port: 0 })), {
  viewport: { width: 1600, height: 960 },
  eventWarnings: true,
  env: ONE_SIM_WORKER,
});
const { page, state, overlay, sims } = ui;
const pageErrors = ui.errors;
const lastSim = async (): Promise<SimRunTestState> => (await sims()).at(-1)!;

const apiCall = <T>(method: string, params: unknown): Promise<T> => hostApiCall<T>(server, method, params);

/** `motionbench sim … --json`, for the trajectory hash and readings it prints. */
function cliSim(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/motionbench.mjs'), 'sim', ...args, '--json'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as Record<string, unknown>)
        : reject(new Error(`motionbench sim exited ${code}: ${err}`)),
    );
  });
}

async function seek(frame: number): Promise<void> {
  await page.locator('[data-testid=scrubber]').fill(String(frame));
  await expect.poll(async () => (await state()).frame).toBe(frame);
}

async function loadClip(file: string, fps: string): Promise<void> {
  await page.locator('[data-testid=fps-input]').fill(fps);
  await page.locator('[data-testid=clip-file-input]').setInputFiles(file);
}

async function runWith(opts: {
  binding: 'builtin' | 'assist';
  assist?: string;
  pace: '1' | '2' | '5' | 'max';
  first?: string;
}): Promise<string> {
  await page.locator('[data-testid=sim-binding]').selectOption(opts.binding);
  if (opts.assist !== undefined) await page.locator('[data-testid=sim-assist]').fill(opts.assist);
  await page.locator('[data-testid=sim-pace]').selectOption(opts.pace);
  await page.locator('[data-testid=sim-max-seconds]').fill(opts.first ?? '');
  const before = (await sims()).length;
  await page.locator('[data-testid=sim-run]').click();
  await expect.poll(async () => (await sims()).length, { timeout: 20_000 }).toBe(before + 1);
  return (await lastSim()).runId;
}

async function waitForEnd(runId: string, timeout = 60_000): Promise<SimEndEvent> {
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    { timeout, polling: 20 },
  );
  return (await sims()).find((r) => r.runId === runId)!.end!;
}

/** Per-body root-relative and world errors of FK(executed pose) against FK(reference frame). */
function bodyErrors(
  ref: MotionClip,
  refFrame: number,
  exec: { root: ArrayLike<number>; quat: ArrayLike<number>; q: ArrayLike<number> },
) {
  const n = fk.bodyCount;
  const r = new Float64Array(3 * n);
  const e = new Float64Array(3 * n);
  fk.computeClipFrame(ref, refFrame, r, new Float64Array(4 * n));
  fk.compute(exec.root, exec.quat, exec.q, e, new Float64Array(4 * n));
  const p = profile.rootBodyIndex;
  const d = (b: number, c: number) => e[3 * b + c] - r[3 * b + c];
  return Float64Array.from({ length: n }, (_, b) =>
    Math.hypot(d(b, 0) - d(p, 0), d(b, 1) - d(p, 1), d(b, 2) - d(p, 2)),
  );
}

function hexClose(a: string, b: string, tol = 2): boolean {
  const p = (h: string) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
  return p(a).every((v, i) => Math.abs(v - p(b)[i]) <= tol);
}

/** The readings table's cells of one run agree with `metrics`: exact value behind, formatted text shown, "—" + reason when unavailable. */
async function expectReadingsShown(runId: string, metrics: EpisodeMetrics): Promise<void> {
  for (const row of READING_ROWS) {
    const cell = page.locator(`[data-testid=sim-reading-${row.key}-${runId}]`);
    const r = metrics[row.key];
    if (r.available) {
      await expect(cell.getAttribute('data-value')).resolves.toBe(String(r.value));
      await expect(cell.textContent()).resolves.toBe(formatReadingValue(r.value, row));
    } else {
      await expect(cell.textContent()).resolves.toBe(UNAVAILABLE_TEXT);
      await expect(cell.getAttribute('title')).resolves.toBe(`unavailable: ${r.reason}`);
      await expect(cell.getAttribute('data-value')).resolves.toBe('');
    }
  }
}

/** The failure rows of one run: failed = yes, then its condition, body and frame. */
async function expectFailureShown(runId: string, f: HardFailure): Promise<void> {
  await expect(page.locator(`[data-testid=sim-failed-${runId}]`).textContent()).resolves.toBe('yes');
  await expect(page.locator(`[data-testid=sim-failure-condition-${runId}]`).textContent()).resolves.toBe(
    conditionText(f.condition),
  );
  await expect(page.locator(`[data-testid=sim-failure-body-${runId}]`).textContent()).resolves.toBe(
    f.body.replace(/_link$/, ''),
  );
  await expect(page.locator(`[data-testid=sim-failure-frame-${runId}]`).textContent()).resolves.toBe(
    `${f.frame} (${f.timeS.toFixed(2)} s)`,
  );
}

/** The recording from the services, and the batch readings recomputed from it here. */
async function recordingAndReadings(runId: string, ref: MotionClip) {
  const res = await apiCall<SimRunResult>('sim.result', { runId });
  const t = res.trajectory;
  const exec = executedMotion(t);
  expect(t.timeS).toEqual(Array.from({ length: t.frames }, (_, k) => k / 50));
  // Against the reference as placed for the run (the end's lift; docs/METRICS.md).
  const lift = res.end!.referenceLiftM;
  const metrics = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(placedClip(ref, lift), exec).metrics;
  return { res, exec, metrics };
}

beforeAll(async () => {
  await loadClip(NPZ, '');
  await page.waitForFunction((id) => window.__motionbench!.state().clipId === id, handsUp.id);
});

describe('console: run a clip in simulation', () => {
  it('offers the run with the embedded simulator and builtin + 3000 N/m assist by default, labelled as a reference tracker', async () => {
    await expect(page.locator('[data-testid=sim-connection]').inputValue()).resolves.toBe('embedded-sim');
    await expect(page.locator('[data-testid=sim-binding]').inputValue()).resolves.toBe('assist');
    await expect(page.locator('[data-testid=sim-assist]').inputValue()).resolves.toBe('3000');
    await expect(page.locator('[data-testid=sim-note]').textContent()).resolves.toBe(
      'builtin = reference tracker, not a policy',
    );
    // A bad field is named, and Run stays off.
    await page.locator('[data-testid=sim-assist]').fill('-5');
    await expect(page.locator('[data-testid=sim-error]').textContent()).resolves.toContain('root assist');
    await expect(page.locator('[data-testid=sim-run]').isDisabled()).resolves.toBe(true);
    await page.locator('[data-testid=sim-assist]').fill('3000');
    await expect(page.locator('[data-testid=sim-run]').isEnabled()).resolves.toBe(true);
  });

  it('B_HandsUp with builtin:assist=3000: live frames over the ghost, then the end with the batch readings and the CLI’s trajectory hash', async () => {
    const runId = await runWith({ binding: 'assist', assist: '3000', pace: '1' });
    // Live: frames arrive at real time and the playhead follows them.
    await page.waitForFunction(
      (id) => (window.__motionbench!.sim().find((r) => r.runId === id)?.framesReceived ?? 0) > 150,
      runId,
      { timeout: 20_000 },
    );
    const mid = await overlay();
    const run = mid.runs.find((r) => r.id === runId)!;
    expect(run).toMatchObject({
      live: true,
      visible: true,
      valid: true,
      note: 'builtin = reference tracker, not a policy',
    });
    expect(run.label).toBe('#1 builtin + assist 3000 N/m · seed 0');
    expect(run.samples).toBeGreaterThan(150);
    expect((await lastSim()).state).toBe('running');
    expect((await state()).timeS).toBeGreaterThan(2.5); // follow live
    await expect.poll(async () => (await overlay()).runs[0].drawn).toBe(true);
    await expect(page.locator('[data-testid=sim-live]').textContent()).resolves.toContain('MPJPE-l');
    await expect(page.locator('[data-testid=endpoint-embedded-sim]').textContent()).resolves.toContain('in use');
    await page.waitForTimeout(150);
    await screenshot(page, '40-sim-live-run');

    const end = await waitForEnd(runId);
    const s = await lastSim();
    expect(end).toMatchObject({
      outcome: 'completed',
      frames: 367,
      plannedFrames: 367,
      failure: null,
      droppedFrames: 0,
    });
    expect(s.framesReceived).toBe(367);
    expect(s.replayFromRecording).toBe(false);
    await expect(page.locator('[data-testid=sim-status]').getAttribute('data-outcome')).resolves.toBe('completed');
    await expect(page.locator(`[data-testid=sim-outcome-${runId}]`).textContent()).resolves.toBe(
      OUTCOME_TEXT.completed,
    );
    await expect(page.locator(`[data-testid=sim-failed-${runId}]`).textContent()).resolves.toBe('no');
    await expect(page.locator(`[data-testid=sim-failure-condition-${runId}]`).textContent()).resolves.toBe('—');
    await expect
      .poll(async () => (await overlay()).runs[0])
      .toMatchObject({ live: false, outcome: 'completed', samples: 367 });

    // The readings are the batch reduction (mb-metrics/1) of the recording, recomputed here.
    const { res, exec, metrics } = await recordingAndReadings(runId, handsUp);
    expect(res.state).toBe('ended');
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
    expect(metrics.mpjpeLMm.available && metrics.mpjpeLMm.value).toBeLessThan(50); // tracks within 5 cm with the assist
    await expectReadingsShown(runId, metrics);
    // …and what `motionbench sim` prints for the same clip and binding: the same numbers, the same trajectory.
    const cli = await cliSim(['--clip', NPZ, '--binding', 'builtin:assist=3000']);
    expect(cli.trajectory_sha256).toBe(end.trajectorySha256);
    expect(cli.outcome).toBe('completed');
    for (const [k, v] of Object.entries(episodeMetricsJson(metrics))) expect(cli[k], k).toEqual(v);
    expect(cli.reference_lift_m).toBe(res.end!.referenceLiftM);
    await expect(page.locator(`[data-testid=sim-sha-${runId}]`).getAttribute('title')).resolves.toBe(
      end.trajectorySha256,
    );

    // Replay: reference frame 300 (60 fps) is t = 5 s = recorded frame 250.
    await seek(300);
    const o = (await overlay()).runs[0];
    const k = 250;
    expect(o.clamped).toBeNull();
    expect(o.jointPosRad).toEqual(Array.from(exec.jointPosRad.subarray(29 * k, 29 * k + 29)));
    expect(o.rootPosM).toEqual(Array.from(exec.rootPosM.subarray(3 * k, 3 * k + 3)));
    expect(o.rootQuatWxyz).toEqual(Array.from(exec.rootQuatWxyz.subarray(4 * k, 4 * k + 4)));
    const expected = bodyErrors(handsUp, 300, {
      root: exec.rootPosM.subarray(3 * k),
      quat: exec.rootQuatWxyz.subarray(4 * k),
      q: exec.jointPosRad.subarray(29 * k),
    });
    expect(Math.max(...expected)).toBeGreaterThan(0.005); // the tracker is not perfect: something to colour
    for (let b = 0; b < fk.bodyCount; b++) expect(o.bodyErrLocalM[b]).toBeCloseTo(expected[b], 9);
    // Each body is drawn in the colour of its error.
    await expect
      .poll(async () => {
        const d = (await overlay()).runs[0].drawnColors;
        return d !== null && d.every((c, b) => hexClose(c, errorColorHex(expected[b])));
      })
      .toBe(true);
    // Between two recorded frames (frame 301 = 5.0167 s) the pose is interpolated, and colours follow.
    await seek(301);
    const between = (await overlay()).runs[0];
    const a = (301 / 60) * 50 - 250;
    for (let j = 0; j < 29; j++) {
      const q0 = exec.jointPosRad[29 * 250 + j];
      expect(between.jointPosRad[j]).toBeCloseTo(q0 + (exec.jointPosRad[29 * 251 + j] - q0) * a, 12);
    }
    await seek(300);
    await page.waitForTimeout(200);
    await screenshot(page, '41-sim-end-readings');
  });

  it('a second run without assist is overlaid on the first: the PD tracker alone falls (hard failure)', async () => {
    const runId = await runWith({ binding: 'builtin', pace: 'max' });
    const end = await waitForEnd(runId);
    expect(end.outcome).toBe('hard_failure');
    expect(end.failure).not.toBeNull();
    const f = end.failure!;
    const { metrics } = await recordingAndReadings(runId, handsUp);
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
    expect(metrics.failure).toEqual({ available: true, value: f });
    await expectReadingsShown(runId, metrics);
    await expect(page.locator(`[data-testid=sim-failed-${runId}]`).textContent()).resolves.toBe('yes');
    await expectFailureShown(runId, f);
    // Both runs overlaid, both labelled as a reference tracker, one column each in the readings.
    const o = await overlay();
    expect(o.runs.map((r) => [r.label, r.outcome, r.note])).toEqual([
      ['#1 builtin + assist 3000 N/m · seed 0', 'completed', 'builtin = reference tracker, not a policy'],
      ['#2 builtin, no assist · seed 0', 'hard_failure', 'builtin = reference tracker, not a policy'],
    ]);
    await expect(page.locator('[data-testid=sim-readings] thead th').count()).resolves.toBe(3);
    // Jump to the failure from the table, then look a second later: the unassisted robot is down.
    await page.locator(`[data-testid=sim-failure-frame-${runId}] button`).click();
    await expect.poll(async () => (await state()).frame).toBe(Math.floor((f.frame / 50) * 60 + 1e-6));
    await seek(Math.floor((f.frame / 50 + 1) * 60));
    const after = await overlay();
    expect(after.runs[1].maxErrM!).toBeGreaterThan(0.25);
    expect(after.runs[0].maxErrM!).toBeLessThan(0.1);
    await expect.poll(async () => (await overlay()).runs.every((r) => r.drawn)).toBe(true);
    await page.waitForTimeout(200);
    const red = await canvasColourBox(page, { kind: 'hue', min: 345, max: 12 });
    const green = await canvasColourBox(page, { kind: 'hue', min: 100, max: 160 });
    expect(red.count).toBeGreaterThan(300);
    expect(green.count).toBeGreaterThan(300);
    await screenshot(page, '42-sim-two-runs-overlaid');
  });

  it('LAFAN1 dance1 at 30 fps, first 4 s, without assist: a hard failure, its condition shown', async () => {
    await loadClip(DANCE, '30');
    await page.waitForFunction((id) => window.__motionbench!.state().clipId === id, dance.id);
    await expect.poll(async () => (await overlay()).runs).toEqual([]); // another clip: the runs of the last one go
    await expect(page.locator('[data-testid=sim-readings]').count()).resolves.toBe(0);
    const runId = await runWith({ binding: 'builtin', pace: '5', first: '4' });
    const end = await waitForEnd(runId);
    expect(end).toMatchObject({ outcome: 'hard_failure', plannedFrames: 201 });
    expect(end.reason).toMatch(/^hard failure at frame \d+/);
    const f = end.failure!;
    expect(['root_height', 'root_orientation', 'end_effector_height']).toContain(f.condition);
    const { metrics } = await recordingAndReadings(runId, clipHead(dance, 4));
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
    await expectReadingsShown(runId, metrics);
    await expectFailureShown(runId, f);
    await expect(page.locator(`[data-testid=sim-outcome-${runId}]`).textContent()).resolves.toBe('hard failure');
    await expect(page.locator(`[data-testid=run-status-${runId}]`).textContent()).resolves.toBe('hard failure');
    await screenshot(page, '43-sim-dance-hard-failure');
  });

  it('shows readings a run is too short for as "—" with the reason, never 0', async () => {
    // The first 0.04 s of the 30 fps dance: 2 frames at 50 Hz, too few for velocities and beyond.
    const runId = await runWith({ binding: 'assist', assist: '3000', pace: 'max', first: '0.04' });
    const end = await waitForEnd(runId);
    expect(end).toMatchObject({ outcome: 'completed', frames: 2 });
    const { metrics } = await recordingAndReadings(runId, clipHead(dance, 0.04));
    expect(metrics.jointVelRmseRadS.available).toBe(false);
    expect(metrics.jointJerkP95RadS3.available).toBe(false);
    expect(metrics.mpjpeLMm.available).toBe(true);
    await expectReadingsShown(runId, metrics);
    const cell = page.locator(`[data-testid=sim-reading-jointJerkRmsRadS3-${runId}]`);
    await expect(cell.getAttribute('title')).resolves.toContain('needs at least');
    // Too short to look at: the operator takes it off the overlay (its readings stay in the table).
    const before = (await overlay()).runs.length;
    await page.locator(`[data-testid=run-remove-${runId}]`).click();
    await expect.poll(async () => (await overlay()).runs.length).toBe(before - 1);
    await expect(page.locator(`[data-testid=sim-col-${runId}]`).count()).resolves.toBe(1);
  });

  it('Space during a run stops it: aborted_by_operator within 0.5 s, frames kept for replay', async () => {
    const runId = await runWith({ binding: 'assist', assist: '3000', pace: '1', first: '20' });
    await page.waitForFunction(
      (id) => (window.__motionbench!.sim().find((r) => r.runId === id)?.framesReceived ?? 0) >= 60,
      runId,
      { timeout: 20_000 },
    );
    const stopsBefore = await page.evaluate(() => window.__motionbench!.operatorStops());
    // Focus is on the Run button: Space must not click it, it is the STOP key.
    const t0 = Date.now();
    await page.keyboard.press('Space');
    const end = await waitForEnd(runId, 5000);
    const elapsedMs = Date.now() - t0;
    const s = (await sims()).find((r) => r.runId === runId)!;
    expect(end.outcome).toBe('aborted_by_operator');
    expect(end.reason).toBe('operator stop (key:Space)');
    expect(s.endReceivedAtMs! - s.stopRequestedAtMs!).toBeLessThan(500);
    expect(elapsedMs).toBeLessThan(1000); // including the test's own round trips to the browser
    expect(end.frames).toBeGreaterThanOrEqual(60);
    expect(end.frames).toBeLessThan(end.plannedFrames);
    expect(await page.evaluate(() => window.__motionbench!.operatorStops())).toBe(stopsBefore + 1);
    expect((await sims()).length).toBe(5); // Space did not start another run
    await expect(page.locator(`[data-testid=sim-outcome-${runId}]`).textContent()).resolves.toBe('aborted by operator');
    await expect(page.locator('[data-testid=last-stop]').textContent()).resolves.toContain('Space');
    const run = (await overlay()).runs.find((r) => r.id === runId)!;
    expect(run).toMatchObject({ live: false, outcome: 'aborted_by_operator', samples: end.frames });
    const { metrics } = await recordingAndReadings(runId, clipHead(dance, 20));
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
    await expectReadingsShown(runId, metrics);
    // The simulator is free again.
    await expect
      .poll(async () => (await page.evaluate(() => window.__motionbench!.connections()))[0].leasedRunId)
      .toBeNull();
    await page.waitForTimeout(200);
    await screenshot(page, '44-sim-operator-stop');
  });

  it('logged no page errors and no invalid events', () => {
    expect(pageErrors).toEqual([]);
  });
});
