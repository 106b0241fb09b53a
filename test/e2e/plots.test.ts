import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimEndEvent, SimRunResult } from '../../src/api/contract';
import { ClipPairEvaluator, MB_METRICS_1, type ClipPairEvaluation } from '../../src/domain/metrics';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { loadWorkload } from '../../src/services/workload';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import type { ChartTestView } from '../../renderer/src/plots/timeChart';
import { SCREENSHOT_DIR, screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { buildStandInCampaign } from '../helpers/standInCampaign';
import { ONE_SIM_WORKER, withConsole, withTempDir } from './consoleSession';
import { executedMotion, hostApiCall } from './e2eSupport';

// Plots over time, against the real services (`motionbench host` in-process, the
// real embedded MuJoCo simulator) and the real UI in Chromium: B_HandsUp (60 fps) run in
// simulation with and without root assist; the Overlay panel's plots of the run show one point
// per frame of the mb-metrics/1 timeline (the batch evaluation of the recording, recomputed here),
// the contract's thresholds as lines and, for the run that falls, the failure at the contract's
// frame; a click in a plot moves the playhead to the time under the pointer (a click beside the
// plotting area does not); the plots draw nothing while idle; a joint picked in the Joints table
// gets its own plot. Gap review: a replayed matched pair (a small real campaign whose "real"
// trials are simulator stand-ins, test/helpers/standInCampaign.ts) plots the sim branch and each
// real trial on one time axis, one series per run, sized to the centre column.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');

let server: HostServer;
let handsUp: MotionClip;
const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
beforeAll(() => {
  handsUp = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: path.basename(NPZ) });
});
const ui = withConsole(async () => (server = await startHostServer({ port: 0 })), {
  viewport: { width: 1600, height: 1100 },
  env: ONE_SIM_WORKER,
});
const { page, state, sims } = ui;
const pageErrors = ui.errors;
const plots = (): Promise<ChartTestView[]> => page.evaluate(() => window.__motionbench!.plots());
const plot = async (id: string): Promise<ChartTestView | undefined> => (await plots()).find((p) => p.id === id);

async function runWith(binding: 'builtin' | 'assist'): Promise<string> {
  await page.locator('[data-testid=sim-binding]').selectOption(binding);
  if (binding === 'assist') await page.locator('[data-testid=sim-assist]').fill('3000');
  await page.locator('[data-testid=sim-pace]').selectOption('max');
  const before = (await sims()).length;
  await page.locator('[data-testid=sim-run]').click();
  await expect.poll(async () => (await sims()).length, { timeout: 20_000 }).toBe(before + 1);
  const runId = (await sims()).at(-1)!.runId;
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    { timeout: 60_000, polling: 50 },
  );
  return runId;
}

/** The batch evaluation of run `runId`'s recording against the clip (what the plot must show). */
async function evaluation(runId: string): Promise<{ end: SimEndEvent; ev: ClipPairEvaluation }> {
  const res = await hostApiCall<SimRunResult>(server, 'sim.result', { runId });
  const t = res.trajectory;
  const exec = executedMotion(t);
  return { end: res.end!, ev: new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(handsUp, exec) };
}

/**
 * Plot `id` scrolled into view (both sidebars and the bottom dock scroll: a plot can be below the
 * fold or scrolled out of its pane, where a click at its rectangle lands on whatever is shown
 * there), its view measured after the scroll.
 */
async function plotInView(id: string): Promise<ChartTestView> {
  await page.locator(`[data-testid=plot-${id}]`).scrollIntoViewIfNeeded();
  return (await plot(id))!;
}

/**
 * Clicks the plotting area of `v` at fraction `frac` of its width and returns the time under the
 * pointer. The click is on a whole CSS pixel: that is what a click's clientX is (Chromium
 * truncates a fractional position), and one pixel of a narrow plot of a long run is more than a
 * clip frame (B_HandsUp: 7.32 s over ~230 px, 32 ms a pixel, against 1/60 s a frame).
 */
async function clickPlot(v: ChartTestView, frac: number): Promise<number> {
  const [x0, x1] = v.xRange!;
  const r = v.plotRect;
  const x = Math.round(r.left + frac * r.width);
  await page.mouse.click(x, r.top + r.height / 2);
  return x0 + ((x - r.left) / r.width) * (x1 - x0);
}

/**
 * Waits until each of the plots has drawn all `K` frames. Each plot refreshes on its own ≤ 10 Hz
 * timer, so one can be a refresh behind another (under load, by more than 100 ms).
 */
async function allPointsDrawn(ids: string[], K: number): Promise<void> {
  await expect
    .poll(async () => Promise.all(ids.map(async (id) => (await plot(id))?.points ?? null)), { timeout: 10_000 })
    .toEqual(ids.map(() => K));
}

/** Waits until no plot has redrawn for 1 s, then counts redraws over the next `ms`. */
async function drawsWhileIdle(ms = 1500): Promise<number> {
  const total = async () => (await plots()).reduce((s, p) => s + p.draws, 0);
  let last = await total();
  for (let stillSince = Date.now(), t0 = Date.now(); Date.now() - stillSince < 1000;) {
    if (Date.now() - t0 > 20_000) throw new Error('the plots never stopped drawing');
    await page.waitForTimeout(100);
    const now = await total();
    if (now !== last) stillSince = Date.now();
    last = now;
  }
  await page.waitForTimeout(ms);
  return (await total()) - last;
}

async function elementShot(testid: string, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.locator(`[data-testid=${testid}]`).screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

beforeAll(async () => {
  await page.locator('[data-testid=clip-file-input]').setInputFiles(NPZ);
  await page.waitForFunction((id) => window.__motionbench!.state().clipId === id, handsUp.id);
}, 120_000);

describe('console: plots over time', () => {
  it('no run, no plot', async () => {
    expect(await plots()).toEqual([]);
    await expect(page.locator('[data-testid=run-plots]').count()).resolves.toBe(0);
  });

  it('a sim run: MPJPE-l and joint RMSE per contract frame, the failure thresholds as lines, no failure mark', async () => {
    const runId = await runWith('assist');
    const { end, ev } = await evaluation(runId);
    expect(end.outcome).toBe('completed');
    await allPointsDrawn(['run-tracking', 'run-failure'], ev.K);
    const tracking = (await plot('run-tracking'))!;
    expect(tracking.series).toEqual([
      { label: 'MPJPE-l mm', points: ev.K },
      { label: 'joint RMSE rad', points: ev.K },
    ]);
    expect(tracking.thresholds).toEqual([]);
    const failure = (await plot('run-failure'))!;
    expect(failure.points).toBe(ev.K);
    const t = MB_METRICS_1.thresholds;
    expect(failure.thresholds.map((l) => [l.scale, l.value])).toEqual([
      ['m', t.rootHeightM], // root and end-effector height share 0.25 m: one line
      ['rad', t.rootOrientationRad],
    ]);
    expect(failure.failureTimeS).toBeNull();
    expect(ev.metrics.failure).toEqual({ available: true, value: null });
    await elementShot('runs-panel', 'plots-run-completed');
  });

  it('a run that falls: the failure mark at the contract’s first failing frame', async () => {
    const runId = await runWith('builtin');
    const { end, ev } = await evaluation(runId);
    expect(end.outcome).toBe('hard_failure');
    const f = ev.metrics.failure.available ? ev.metrics.failure.value : null;
    expect(f).not.toBeNull();
    // The newest run is the one plotted.
    // (Frames skipped for display on the way are replaced by the recording: the plot then has them all.)
    await allPointsDrawn(['run-tracking', 'run-failure'], ev.K);
    expect((await plot('run-failure'))!.failureTimeS).toBe(f!.timeS);
    expect((await plot('run-tracking'))!.failureTimeS).toBe(f!.timeS);
    await expect(page.locator('[data-testid=plot-run-select]').inputValue()).resolves.toBe(runId);
    await elementShot('runs-panel', 'plots-run-failed');
  });

  it('a click in the plot moves the playhead there; a click beside the plotting area does not', async () => {
    const before = await plotInView('run-tracking');
    const r = before.plotRect;
    const want = await clickPlot(before, 0.4);
    // The playhead goes to the clip frame at or before that time.
    await expect.poll(async () => Math.abs((await state()).timeS - want)).toBeLessThanOrEqual(1 / handsUp.fps + 1e-9);
    const s = await state();
    expect(s.playing).toBe(false);
    // The playhead line is drawn at the new time, in every plot.
    for (const p of await plots()) {
      expect(p.playheadS, p.id).toBe(s.timeS);
      const [a, b] = p.xRange!;
      expect(Math.abs(p.playheadLeftPx! - ((s.timeS - a) / (b - a)) * p.plotRect.width), p.id).toBeLessThan(2);
    }
    // Negative controls: on the y axis left of the plotting area, and on the legend below it.
    await page.mouse.click(r.left - 20, r.top + r.height / 2);
    await page.mouse.click(r.left + 0.8 * r.width, r.top + r.height + 40);
    await page.waitForTimeout(300);
    expect((await state()).timeS).toBe(s.timeS);
    // Another point in the plot does move it (the control above can fail).
    await page.mouse.click(r.left + 0.1 * r.width, r.top + r.height / 2);
    await expect.poll(async () => (await state()).timeS).not.toBe(s.timeS);
  });

  it('the plots draw nothing while idle; a seek moves the playhead line without redrawing them', async () => {
    expect(await drawsWhileIdle()).toBe(0);
    const drawsBefore = (await plots()).map((p) => p.draws);
    await page.locator('[data-testid=scrubber]').fill('120');
    await expect.poll(async () => (await plot('run-tracking'))!.playheadS).toBe(120 / handsUp.fps);
    await page.waitForTimeout(500);
    expect((await plots()).map((p) => p.draws)).toEqual(drawsBefore);
    // Positive control: new data does redraw (the counter moves).
    await page.locator('[data-testid=plot-run-select]').selectOption({ index: 0 });
    await expect.poll(async () => (await plot('run-tracking'))!.draws).toBeGreaterThan(0);
    await expect.poll(async () => (await plot('run-failure'))!.failureTimeS).toBeNull();
  });

  it('a joint picked in the Joints table gets its error plot; picked again, it goes', async () => {
    expect(await plot('run-joint')).toBeUndefined();
    await expect(page.locator('[data-testid=plot-joint-hint]').count()).resolves.toBe(1);
    await page.locator('[data-testid=joint-row-left_knee_joint]').click();
    await expect.poll(async () => (await plot('run-joint'))?.points, { timeout: 10_000 }).toBeGreaterThan(300);
    const j = (await plot('run-joint'))!;
    expect(j.series).toEqual([{ label: 'left_knee q_E − q_R rad', points: j.points }]);
    expect(j.points).toBe((await plot('run-tracking'))!.points);
    await expect(page.locator('[data-testid=joint-row-left_knee_joint]').getAttribute('aria-selected')).resolves.toBe(
      'true',
    );
    await elementShot('runs-panel', 'plots-run-joint');
    await screenshot(page, 'plots-console');
    await page.locator('[data-testid=joint-row-left_knee_joint]').click();
    await expect.poll(async () => await plot('run-joint')).toBeUndefined();
  });

  describe('Gap review', () => {
    let dir: string;
    let clipName: string;
    const tmp = withTempDir('mb-plots-e2e-');
    beforeAll(async () => {
      dir = path.join(tmp(), 'campaign');
      const wl = loadWorkload('core-v1', { profile });
      const [clip] = await buildStandInCampaign({
        dir,
        profile,
        clips: [wl.clips[wl.snapshot.clips.findIndex((c) => c.name === 'ub_wave_right')]],
        excerptS: 2.5,
        simSpec: 'builtin:assist=3000',
        standInSpecs: ['builtin:assist=1000', 'builtin:assist=300', 'builtin'],
      });
      clipName = clip.name;
    }, 180_000);

    it('plots the sim branch and each real trial on one time axis, one series per run', async () => {
      // The bottom dock shows Gap review instead of the Qualification board.
      if ((await page.locator('[data-testid=dock-tab-gap]').getAttribute('aria-selected')) !== 'true')
        await page.locator('[data-testid=dock-tab-gap]').click();
      await page.locator('[data-testid=gap-dir]').fill(dir);
      await page.locator('[data-testid=gap-open]').click();
      await page.locator(`[data-testid="gap-replay-${clipName}"]`).click();
      await page.locator('[data-testid=gap-replay]').waitFor();
      const N = Number(await page.locator('[data-testid=gap-replay]').getAttribute('data-runs'));
      expect(N).toBe(4); // 1 sim branch + 3 real trials
      await expect.poll(async () => (await plot('gap-runs'))?.series.length, { timeout: 20_000 }).toBe(N);
      const g = (await plot('gap-runs'))!;
      const o = await page.evaluate(() => window.__motionbench!.overlay());
      const K = o.runs[0].samples; // every run of the pair has the reference's 50 Hz frame count
      expect(o.runs.every((r) => r.samples === K)).toBe(true);
      expect(g.points).toBe(K);
      expect(g.series.map((s) => s.points)).toEqual([K, K, K, K]); // the stand-ins have a global root: MPJPE-l everywhere
      expect(g.series.map((s) => s.label)).toEqual(o.runs.map((r) => `${r.label} mm`));
      await elementShot('gap-review', 'plots-gap-review');
      // The other reading: joint RMSE, in rad.
      await page.locator('[data-testid=gap-plot-reading]').selectOption('jointRmseRad');
      await expect.poll(async () => (await plot('gap-runs'))!.series[0].label).toMatch(/ rad$/);
      expect((await plot('gap-runs'))!.series.map((s) => s.points)).toEqual([K, K, K, K]);
    });

    it('a click in it seeks; it follows the centre column’s width', async () => {
      const g = await plotInView('gap-runs');
      const r = g.plotRect;
      const want = await clickPlot(g, 0.75);
      await expect.poll(async () => Math.abs((await state()).timeS - want)).toBeLessThanOrEqual(0.02 + 1e-9);
      await page.setViewportSize({ width: 1300, height: 1100 });
      await expect
        .poll(async () => (await plot('gap-runs'))!.plotRect.width, { timeout: 5000 })
        .toBeLessThan(r.width - 200);
      await page.setViewportSize({ width: 1600, height: 1100 });
      // (A relayout and a ResizeObserver round on a loaded 2-core machine: allow a few seconds.)
      await expect
        .poll(async () => Math.abs((await plot('gap-runs'))!.plotRect.width - r.width), { timeout: 5000 })
        .toBeLessThan(2);
      const g2 = (await plot('gap-runs'))!;
      expect(g2.chartWidthPx).toBe(g2.containerWidthPx);
      await screenshot(page, 'plots-gap-console');
    });
  });

  it('no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
