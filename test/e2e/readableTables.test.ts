import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startHostServer } from '../../src/services/host/hostServer';
import { screenshot, SCREENSHOT_DIR, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole } from './consoleSession';

// Every number readable at 1366×768: the Sim trial's readings table with three runs of one clip
// (the right sidebar's narrowest useful width) shows each cell whole — the table may scroll
// sideways inside its own box, never be cut by a box that hides its overflow — and the viewport's
// colour legend sits outside the 3D canvas (below it), so it never covers the robot, and folds to
// one line. Real services (`motionbench host` in-process, the embedded MuJoCo simulator) and the
// real UI in Chromium. Negative control: the same check reports the cells once the table's box
// hides its overflow.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');

const ui = withConsole(() => startHostServer({ port: 0 }), {
  viewport: { width: 1366, height: 768 },
  env: ONE_SIM_WORKER,
});
const { page, tid, sims } = ui;
const pageErrors = ui.errors;

/**
 * Cells under `rootSelector` whose text is cut: a cell narrower than its own text, or one whose
 * box reaches past an ancestor that hides its overflow (overflow hidden or clip, which no wheel
 * scrolls) or past the window. An ancestor that scrolls (auto, scroll) lets the operator bring the
 * cell into its box: from there on the scroller's own box is what must stay visible.
 */
function cutCells(rootSelector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    if (!root) throw new Error(`no ${sel}`);
    const cut: string[] = [];
    for (const cell of root.querySelectorAll<HTMLElement>('td, th')) {
      const text = cell.textContent?.trim() ?? '';
      if (text === '' || cell.getClientRects().length === 0) continue;
      const what = `"${text.slice(0, 24)}"${cell.dataset.testid ? ` (${cell.dataset.testid})` : ''}`;
      if (cell.scrollWidth > cell.clientWidth + 1) {
        cut.push(`${what}: ${cell.scrollWidth} px of text in ${cell.clientWidth} px`);
        continue;
      }
      let r = cell.getBoundingClientRect();
      for (let a = cell.parentElement; a && a !== document.body; a = a.parentElement) {
        const cs = getComputedStyle(a);
        if (cs.overflowX === 'visible') continue;
        const ar = a.getBoundingClientRect();
        const left = ar.left + a.clientLeft;
        const right = left + a.clientWidth;
        if (/auto|scroll/.test(cs.overflowX)) {
          r = ar; // scrolled into view by the operator; the scroller itself must be visible
          continue;
        }
        if (r.left < left - 0.5 || r.right > right + 0.5) {
          cut.push(
            `${what}: ${r.left.toFixed(0)}–${r.right.toFixed(0)} px cut by ${a.tagName.toLowerCase()}.${a.className} (${left.toFixed(0)}–${right.toFixed(0)}, overflow-x ${cs.overflowX})`,
          );
          break;
        }
      }
      if (r.right > window.innerWidth + 0.5) cut.push(`${what}: past the window (${r.right.toFixed(0)} px)`);
    }
    return cut;
  }, rootSelector);
}

async function runWith(binding: 'builtin' | 'assist', assist?: string): Promise<string> {
  await tid('sim-binding').selectOption(binding);
  if (assist !== undefined) await tid('sim-assist').fill(assist);
  await tid('sim-pace').selectOption('max');
  await tid('sim-max-seconds').fill('3.3');
  const before = (await sims()).length;
  await tid('sim-run').click();
  await expect.poll(async () => (await sims()).length, { timeout: 20_000 }).toBe(before + 1);
  const runId = (await sims()).at(-1)!.runId;
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    {
      timeout: 90_000,
      polling: 50,
    },
  );
  return runId;
}

beforeAll(async () => {
  await tid('clip-file-input').setInputFiles(NPZ);
  await page.waitForFunction(() => window.__motionbench!.state().clipId !== null, null, { timeout: 30_000 });
}, 90_000);

describe('console at 1366×768: numbers never cut, the legend never over the robot', () => {
  const runs: string[] = [];

  it('three sim runs of one clip: every reading of the table is shown whole (wrapped or scrolled, never cut)', async () => {
    runs.push(await runWith('assist', '3000'));
    runs.push(await runWith('builtin'));
    runs.push(await runWith('assist', '500'));
    await expect.poll(() => page.locator('[data-testid=sim-readings] thead th').count()).toBe(4);
    const jerk = await tid(`sim-reading-jointJerkP95RadS3-${runs[1]}`).textContent();
    console.log(
      `readings: jerk p95 of the run without assist ${jerk}; frames ${(await sims()).map((r) => r.end?.frames).join(', ')}`,
    );
    await tid('sim-panel').scrollIntoViewIfNeeded();
    await tid('sim-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'readable-sim-readings-3-runs.png') });
    expect(await cutCells('[data-testid=sim-readings]')).toEqual([]);
    // Three runs fit the sidebar whole: no column hidden behind a sideways scroll at this size.
    const fit = await page.evaluate(() => {
      const wrap = document.querySelector<HTMLElement>('.sim-readings-wrap')!;
      return { scroll: wrap.scrollWidth, client: wrap.clientWidth };
    });
    expect(fit.scroll, `table ${fit.scroll} px in its ${fit.client} px box`).toBeLessThanOrEqual(fit.client);
  }, 300_000);

  it('no table cell anywhere on the page is cut (joint table, readings, boards)', async () => {
    const cut = await cutCells('body');
    console.log(`cells checked on the page: ${await page.locator('td, th').count()}`);
    expect(cut).toEqual([]);
  });

  it('the policy check of a released policy (KungfuBot, its own motion named by its config): its tables scroll, never cut; it runs on its own motion, not on the clip on display', async () => {
    await tid('policy-path').fill(path.join(SHARED_DATA, 'policies/pbhc_horse_stance_pose'));
    await tid('policy-open').click();
    await tid('policy-check-run').waitFor({ timeout: 60_000 });
    await expect(tid('policy-configured-motion').textContent()).resolves.toContain('Horse-stance_pose.pkl at 30 fps');
    await tid('policy-check-run').click();
    await tid('policy-check-verdict').waitFor({ timeout: 120_000 });
    // B_HandsUp stays on display; the check ran on the policy's own motion.
    expect((await page.evaluate(() => window.__motionbench!.state())).clipId).not.toBeNull();
    await expect(tid('policy-check-clip').textContent()).resolves.toMatch(/^Horse-stance_pose.*: first 5\.00 s/);
    await expect(tid('policy-check-verdict').getAttribute('data-kind')).resolves.toBe('normal_reading_tracks');
    await tid('policy-check').scrollIntoViewIfNeeded();
    await tid('policy-check').screenshot({ path: path.join(SCREENSHOT_DIR, 'readable-policy-check.png') });
    expect(await cutCells('[data-testid=policy-check]')).toEqual([]);
  }, 300_000);

  it('negative control: the same check reports the cells once the table box hides its overflow and is narrowed', async () => {
    await page.evaluate(() => {
      const wrap = document.querySelector<HTMLElement>('.sim-readings-wrap')!;
      wrap.style.overflow = 'hidden';
      wrap.style.maxWidth = '160px';
    });
    const cut = await cutCells('[data-testid=sim-readings]');
    await page.evaluate(() => {
      const wrap = document.querySelector<HTMLElement>('.sim-readings-wrap')!;
      wrap.style.overflow = '';
      wrap.style.maxWidth = '';
    });
    expect(cut.length).toBeGreaterThan(3);
    expect(cut.join('\n')).toMatch(/cut by div\.sim-readings-wrap/);
  });

  it('the colour legend sits below the 3D canvas, never over it, and folds to one line', async () => {
    const canvas = (await tid('viewport').locator('canvas').first().boundingBox())!;
    const legend = (await tid('error-legend').boundingBox())!;
    expect(legend.y, 'the legend starts at or below the canvas bottom').toBeGreaterThanOrEqual(
      canvas.y + canvas.height - 0.5,
    );
    const open = legend.height;
    await screenshot(page, 'readable-legend-open');
    await tid('legend-fold').click();
    await expect.poll(async () => (await tid('error-legend').boundingBox())!.height).toBeLessThan(open);
    const folded = (await tid('error-legend').boundingBox())!;
    // The canvas takes the room the legend gave back (R3F follows its box through a ResizeObserver).
    await expect
      .poll(async () => (await tid('viewport').locator('canvas').first().boundingBox())!.height, { timeout: 10_000 })
      .toBeGreaterThan(canvas.height + open - folded.height - 2);
    const grown = (await tid('viewport').locator('canvas').first().boundingBox())!;
    console.log(
      `legend: open ${open.toFixed(0)} px tall, folded ${folded.height.toFixed(0)} px; canvas ${canvas.height.toFixed(0)} → ${grown.height.toFixed(0)} px`,
    );
    expect(await tid('color-mode').count(), 'folded: the controls are hidden').toBe(0);
    await screenshot(page, 'readable-legend-folded');
    await tid('legend-fold').click();
    await tid('color-mode').waitFor();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
