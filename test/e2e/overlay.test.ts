import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { slerpWxyzInto } from '../../src/domain/motion/resample';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { bodyIndexByName, type RobotProfile } from '../../src/domain/robot/robotProfile';
import { startHostServer } from '../../src/services/host/hostServer';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { errorColorHex } from '../../renderer/src/overlay/errorScale';
import { screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { e2eBrowser, withConsole } from './consoleSession';
import { canvasColourBox, syntheticFrames, syntheticRun, type SyntheticTrajectory } from './e2eSupport';

// Reference versus executed: executed runs of one clip drawn as solids over the reference ghost,
// each body coloured by its error. Until episodes load through the API, runs are injected
// through the dev hook (page URL with dev=1): the reference clip itself with known joint offsets,
// so the expected errors are forward kinematics computed here, independently of the page.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const LAFAN_CSV = path.join(SHARED_DATA, 'motions/lafan1_g1_csv/walk1_subject1.csv');
const L_SHOULDER_PITCH = 15;
const L_ELBOW = 18;
const R_ELBOW = 25;

let profile: RobotProfile;
let fk: ForwardKinematics;
let clip: MotionClip;
let runA: SyntheticTrajectory;
let runB: SyntheticTrajectory;

beforeAll(() => {
  profile = loadRobotProfile(DEFAULT_MODEL_FILE);
  fk = new ForwardKinematics(profile);
  clip = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: path.basename(NPZ) });
  runA = syntheticRun(clip, { [L_SHOULDER_PITCH]: 0.6 });
  runB = syntheticRun(clip, { [R_ELBOW]: 0.35 });
});
const ui = withConsole(() => startHostServer({ port: 0, backends: {} }), {
  viewport: { width: 1600, height: 960 },
  dev: true,
});
const { page, state, overlay } = ui;
const pageErrors = ui.errors;

/** Per-body world error of FK(executed pose) against FK(reference frame). */
function expectedErrors(
  refFrame: number,
  exec: { root: ArrayLike<number>; quat: ArrayLike<number>; q: ArrayLike<number> },
): Float64Array {
  return expectedBoth(refFrame, exec).world;
}

/** World and root-relative (MPJPE-l's) per-body errors. */
function expectedBoth(
  refFrame: number,
  exec: { root: ArrayLike<number>; quat: ArrayLike<number>; q: ArrayLike<number> },
) {
  const n = fk.bodyCount;
  const r = new Float64Array(3 * n);
  const e = new Float64Array(3 * n);
  fk.computeClipFrame(clip, refFrame, r, new Float64Array(4 * n));
  fk.compute(exec.root, exec.quat, exec.q, e, new Float64Array(4 * n));
  const p = profile.rootBodyIndex;
  const d = (b: number, c: number) => e[3 * b + c] - r[3 * b + c];
  return {
    world: Float64Array.from({ length: n }, (_, b) => Math.hypot(d(b, 0), d(b, 1), d(b, 2))),
    local: Float64Array.from({ length: n }, (_, b) =>
      Math.hypot(d(b, 0) - d(p, 0), d(b, 1) - d(p, 1), d(b, 2) - d(p, 2)),
    ),
  };
}

/** The synthetic run sampled at time t as the overlay does: lerp joints and root, slerp orientation. */
function sampleRun(t: SyntheticTrajectory, timeS: number) {
  const k = Math.floor(timeS * 50 + 1e-9);
  const a = timeS * 50 - k;
  const lerp = (arr: number[], w: number) =>
    Array.from({ length: w }, (_, c) => arr[w * k + c] + (arr[w * (k + 1) + c] - arr[w * k + c]) * a);
  const quat = new Float64Array(4);
  slerpWxyzInto(quat, 0, Float64Array.from(t.rootQuatWxyz), 4 * k, Float64Array.from(t.rootQuatWxyz), 4 * k + 4, a);
  return { root: lerp(t.rootPosM, 3), quat, q: lerp(t.jointPosRad, 29) };
}

function hexClose(a: string, b: string): boolean {
  const p = (h: string) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
  return p(a).every((v, i) => Math.abs(v - p(b)[i]) <= 1);
}

async function seek(frame: number): Promise<void> {
  await page.locator('[data-testid=scrubber]').fill(String(frame));
  await expect.poll(async () => (await state()).frame).toBe(frame);
}

beforeAll(async () => {
  await page.locator('[data-testid=clip-file-input]').setInputFiles(NPZ);
  await page.waitForFunction((id) => window.__motionbench!.state().clipId === id, clip.id);
});

describe('console: reference vs executed overlay', () => {
  it('offers the dev hook only with dev=1', async () => {
    const other = await (await e2eBrowser()).newPage();
    await other.goto(ui.host.url);
    expect(await other.evaluate(() => typeof window.__motionbenchDev)).toBe('undefined');
    expect(await page.evaluate(() => typeof window.__motionbenchDev)).toBe('object');
    await other.close();
  });

  it('shows two executed runs over the ghost, each body coloured by its error', async () => {
    expect(await overlay()).toMatchObject({ runs: [] });
    await expect(page.locator('[data-testid=error-legend]').count()).resolves.toBe(0);
    await page.evaluate(
      ({ a, b }) => {
        const dev = window.__motionbenchDev!;
        dev.addRun({
          id: 'sim-a',
          label: 'synthetic · left shoulder pitch +0.6 rad',
          live: false,
          source: 'synthetic',
        });
        dev.setTrajectory('sim-a', a);
        dev.addRun({ id: 'sim-b', label: 'synthetic · right elbow +0.35 rad', live: false, source: 'synthetic' });
        dev.setTrajectory('sim-b', b);
      },
      { a: runA, b: runB },
    );
    // 5.000 s: reference frame 300 (60 fps) is exactly executed sample 250 (50 Hz).
    await seek(300);
    const q = (offsets: Record<number, number>) => {
      const v = Array.from(clip.jointPosRad.subarray(29 * 300, 29 * 301));
      for (const [j, d] of Object.entries(offsets)) v[Number(j)] += d;
      return v;
    };
    const refRoot = clip.rootPosM.subarray(900, 903);
    const refQuat = clip.rootQuatWxyz.subarray(1200, 1204);
    const expA = expectedErrors(300, { root: refRoot, quat: refQuat, q: q({ [L_SHOULDER_PITCH]: 0.6 }) });
    const expB = expectedErrors(300, { root: refRoot, quat: refQuat, q: q({ [R_ELBOW]: 0.35 }) });
    const lw = bodyIndexByName(profile, 'left_wrist_yaw_link');
    const rw = bodyIndexByName(profile, 'right_wrist_yaw_link');
    const pelvis = bodyIndexByName(profile, 'pelvis');
    expect(expA[lw]).toBeGreaterThan(0.2); // the offset arm's wrist: orange-red
    expect(expB[rw]).toBeGreaterThan(0.05);
    expect(expB[rw]).toBeLessThan(0.2); // yellow-ish

    // Wait for a rendered frame that coloured the bodies.
    await expect
      .poll(async () => (await overlay()).runs.map((r) => r.drawnColors?.[lw] ?? null))
      .not.toContain('#888888');
    const o = await overlay();
    expect(o.errorMode).toBe('local');
    const [a, b] = o.runs;
    expect(a).toMatchObject({
      id: 'sim-a',
      valid: true,
      visible: true,
      live: false,
      drawn: true,
      clamped: null,
      samples: runA.timeS.length,
    });
    for (let i = 0; i < fk.bodyCount; i++) {
      expect(a.bodyErrLocalM[i]).toBeCloseTo(expA[i], 9);
      expect(a.bodyErrGlobalM[i]!).toBeCloseTo(expA[i], 9);
      expect(b.bodyErrLocalM[i]).toBeCloseTo(expB[i], 9);
    }
    // The colour each wrist is drawn with is the scale's colour for its error.
    expect(
      hexClose(a.drawnColors![lw], errorColorHex(expA[lw])),
      `${a.drawnColors![lw]} vs ${errorColorHex(expA[lw])}`,
    ).toBe(true);
    expect(hexClose(b.drawnColors![rw], errorColorHex(expB[rw]))).toBe(true);
    expect(hexClose(a.drawnColors![pelvis], '#22c55e')).toBe(true); // untouched body: green
    expect(hexClose(a.drawnColors![rw], '#22c55e')).toBe(true);

    // The panel: largest body error and which body, MPJPE-l at this frame.
    const maxA = Math.max(...expA);
    const maxBody = profile.bodies[expA.indexOf(maxA)].name;
    expect(a.maxErrBody).toBe(maxBody);
    await expect.poll(() => page.locator('[data-testid=run-max-sim-a]').textContent()).toBe((maxA * 100).toFixed(1));
    const mpjpeA = expA.reduce((s, v) => s + v, 0) / fk.bodyCount; // no root offset: local = world
    await expect
      .poll(() => page.locator('[data-testid=run-mpjpe-sim-a]').textContent())
      .toBe((mpjpeA * 100).toFixed(1));
    await expect(page.locator('[data-testid=run-sim-a]').textContent()).resolves.toContain(
      maxBody.replace(/_link$/, ''),
    );
    await expect(page.locator('[data-testid=error-legend]').textContent()).resolves.toContain('≥25');
    await page.waitForTimeout(300);
    await screenshot(page, '20-overlay-two-runs');

    // Pixels: the red end of the scale is on screen (run A's left hand), and green (the rest).
    const red = await canvasColourBox(page, { kind: 'hue', min: 345, max: 12 });
    const green = await canvasColourBox(page, { kind: 'hue', min: 100, max: 160 });
    expect(red.count).toBeGreaterThan(100);
    expect(green.count).toBeGreaterThan(1000);
  });

  it('interpolates the executed run between its 50 Hz samples at a 60 fps reference frame', async () => {
    await seek(301); // 5.0167 s, between samples 250 and 251
    const exp = expectedBoth(301, sampleRun(runA, 301 / 60));
    const o = await overlay();
    expect(exp.world[profile.rootBodyIndex]).toBeGreaterThan(1e-6); // the 50 Hz run is not the 60 fps frame
    for (let i = 0; i < fk.bodyCount; i++) {
      expect(o.runs[0].bodyErrLocalM[i]).toBeCloseTo(exp.local[i], 9);
      expect(o.runs[0].bodyErrGlobalM[i]!).toBeCloseTo(exp.world[i], 9);
    }
  });

  it('hides and shows a run, switches the error measure, hides the ghost', async () => {
    await seek(300);
    await page.locator('[data-testid=run-visible-sim-b]').uncheck();
    await expect.poll(async () => (await overlay()).runs[1]).toMatchObject({ visible: false, drawn: false });
    expect((await overlay()).runs[0].drawn).toBe(true);
    await page.locator('[data-testid=error-mode]').selectOption('global');
    await expect.poll(async () => (await overlay()).errorMode).toBe('global');
    await page.locator('[data-testid=show-reference]').uncheck();
    await expect.poll(async () => (await overlay()).showReference).toBe(false);
    await page.waitForTimeout(300);
    await screenshot(page, '21-overlay-one-run-no-ghost-world');
    await page.locator('[data-testid=show-reference]').check();
    await page.locator('[data-testid=error-mode]').selectOption('local');
    await page.locator('[data-testid=run-visible-sim-b]').check();
    await expect.poll(async () => (await overlay()).runs[1].drawn).toBe(true);
  });

  it('live: frames arriving move the shared playhead; the same store serves replay', async () => {
    const live = syntheticRun(clip, { [L_ELBOW]: 0.5 });
    await page.evaluate(() => {
      window.__motionbenchDev!.removeRun('sim-b');
      window.__motionbenchDev!.addRun({
        id: 'live-1',
        label: 'live · left elbow +0.5 rad',
        live: true,
        source: 'synthetic',
      });
    });
    await seek(0);
    let k = 0;
    for (let batch = 0; batch < 12; batch++) {
      const frames = syntheticFrames(live, k, k + 10);
      k += 10;
      await page.evaluate((f) => window.__motionbenchDev!.appendFrames('live-1', f), frames);
      const lastT = live.timeS[k - 1];
      await expect.poll(async () => (await state()).frame).toBe(Math.floor(lastT * 60 + 1e-6));
      await page.waitForTimeout(40);
    }
    const o = await overlay();
    const run = o.runs.find((r) => r.id === 'live-1')!;
    expect(run).toMatchObject({ live: true, samples: 120, valid: true, clamped: null });
    const frame = (await state()).frame;
    const exp = expectedBoth(frame, sampleRun(live, frame / 60));
    const le = bodyIndexByName(profile, 'left_wrist_yaw_link');
    expect(run.bodyErrLocalM[le]).toBeCloseTo(exp.local[le], 9);
    expect(run.bodyErrGlobalM[le]!).toBeCloseTo(exp.world[le], 9);
    await expect.poll(() => page.locator('[data-testid=run-live-1]').textContent()).toContain('live');
    await page.waitForTimeout(300);
    await screenshot(page, '22-overlay-live');

    // Scrubbing past the newest frame shows the last one and says so.
    await page.locator('[data-testid=follow-live]').uncheck();
    await seek(400);
    await expect.poll(async () => (await overlay()).runs.find((r) => r.id === 'live-1')!.clamped).toBe('after');
    await expect.poll(() => page.locator('[data-testid=run-live-1]').textContent()).toContain("past the run's end");
    await page.evaluate(() => window.__motionbenchDev!.endRun('live-1', 'completed'));
    await expect.poll(() => page.locator('[data-testid=run-live-1]').textContent()).toContain('completed');
    await page.locator('[data-testid=follow-live]').check();
  });

  it('drops the runs when another clip is loaded; STOP stays visible', async () => {
    await page.locator('[data-testid=fps-input]').fill('30');
    await page.locator('[data-testid=clip-file-input]').setInputFiles(LAFAN_CSV);
    // A 261 s CSV decoded in the file worker (nice 10): with a busy loop on the other core that takes
    // seconds, not the poll's default 1 s (npm test keeps one core busy).
    await expect.poll(async () => (await state()).clipName, { timeout: 20_000 }).toContain('walk1_subject1');
    await expect.poll(async () => (await overlay()).runs).toEqual([]);
    await expect(page.locator('[data-testid=error-legend]').count()).resolves.toBe(0);
    await expect(page.locator('[data-testid=stop-button]').isVisible()).resolves.toBe(true);
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
