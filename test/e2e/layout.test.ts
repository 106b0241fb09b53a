import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { QualificationJobStatus } from '../../src/api/contract';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import {
  DOCK_DEFAULT_BODY_PX,
  DOCK_MIN_BODY_PX,
  SPLITTER_STEP_PX,
  VIEWPORT_MIN_HEIGHT_PX,
  VIEWPORT_MIN_WIDTH_PX,
} from '../../renderer/src/app/dockLayout';
import { screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole, withTempDir } from './consoleSession';
import { hostApiCall } from './e2eSupport';
import { standInGapCampaign } from './projectFixtures';

// A layout that never hides the robot: the real console (`motionbench host`
// in-process, real MuJoCo) in Chromium at 1366×768 and 1920×1080, with the Qualification board
// (a real campaign: core-v1 with two bindings, cancelled after its first decision, so it shows the
// pairs started by then) and the Gap review (the stand-in campaign of test/helpers/gapCampaign.ts) loaded into
// the bottom dock, and two simulation runs done so the right sidebar is long. In every dock state:
//   - the 3D viewport keeps VIEWPORT_MIN_HEIGHT_PX × VIEWPORT_MIN_WIDTH_PX and its canvas fills it;
//   - every button, input and select of every sidebar, the timeline, the dock and the top bar can
//     be brought into the window by scrolling the containers an operator can scroll (overflow auto
//     or scroll; never one that hides its overflow) and is then the element at its own centre;
//   - the timeline stays under the viewport.
// Negative controls: the same reachability check reports the right sidebar's lower controls once
// that sidebar is given the old `overflow: hidden`, and a drag of the splitter past either end is
// clamped. The top bar stays on one line at 1366 px with room for the safety lights.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const SIZES = [
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
] as const;

let server: HostServer;
let qualDir: string;
let gapDir: string;
const tmp = withTempDir('mb-layout-e2e-');
beforeAll(async () => {
  gapDir = path.join(tmp(), 'gap-campaign');
  await standInGapCampaign(gapDir);
}, 240_000);
const ui = withConsole(
  async () => {
    server = await startHostServer({ port: 0 });
    // A qualification campaign: core-v1's first 16 clips × two bindings, cancelled once a pair is
    // decided (the board shows the pairs that had started, decided or pending).
    qualDir = path.join(tmp(), 'qual-campaign');
    await hostApiCall(server, 'qualification.open', { campaignDir: qualDir, create: true });
    await hostApiCall(server, 'qualification.start', {
      campaignDir: qualDir,
      workload: 'core-v1',
      bindings: ['builtin', 'builtin:assist=3000'],
      rollouts: 1,
      limit: 16,
      workers: 1,
    });
    await jobUntil((j) => j.pairsDone > 0, 120_000);
    await hostApiCall(server, 'qualification.cancel', { all: true });
    await jobUntil((j) => j.state !== 'running', 60_000);
    return server;
  },
  { viewport: SIZES[0], env: ONE_SIM_WORKER, openTimeoutMs: 300_000 },
);
const { page, sims } = ui;
const pageErrors = ui.errors;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const box = async (selector: string): Promise<Box> => (await page.locator(selector).first().boundingBox())!;

/** Where the operator's page can be scrolled, and which controls stay out of reach: see reachability(). */
interface Reach {
  controls: number;
  unreachable: string[];
}

/**
 * Every visible button, input, select, textarea and focusable separator under `rootSelector`:
 * each scroll container an operator can scroll (computed overflow auto or scroll) is scrolled, from
 * the innermost out, to centre the control; then its centre must be inside the window and
 * document.elementFromPoint there must be the control (or inside it, or its label). A container
 * with overflow hidden or clip is not scrolled — the wheel cannot move it — so what it cuts off is
 * reported.
 */
function reachability(rootSelector: string): Promise<Reach> {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    if (!root) throw new Error(`no ${sel}`);
    const name = (el: Element | null): string =>
      !el
        ? 'nothing'
        : `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''}${
            el.textContent?.trim() ? ` "${el.textContent.trim().slice(0, 30)}"` : ''
          }`;
    const userScrollable = (el: Element): boolean => {
      if (el === document.body || el === document.documentElement) return false; // body is overflow hidden
      const cs = getComputedStyle(el);
      return /auto|scroll/.test(cs.overflowY) || /auto|scroll/.test(cs.overflowX);
    };
    const controls = [
      ...root.querySelectorAll<HTMLElement>('button, input, select, textarea, [role=separator][tabindex]'),
    ].filter(
      (el) =>
        el.getClientRects().length > 0 &&
        getComputedStyle(el).visibility !== 'hidden' &&
        !(el instanceof HTMLInputElement && el.type === 'hidden'),
    );
    const unreachable: string[] = [];
    for (const el of controls) {
      for (let a = el.parentElement; a; a = a.parentElement) {
        if (!userScrollable(a)) continue;
        const r = el.getBoundingClientRect();
        const ar = a.getBoundingClientRect();
        a.scrollTop += r.top + r.height / 2 - (ar.top + a.clientTop + a.clientHeight / 2);
        a.scrollLeft += r.left + r.width / 2 - (ar.left + a.clientLeft + a.clientWidth / 2);
      }
      const r = el.getBoundingClientRect();
      const cx = r.left + r.width / 2;
      const cy = r.top + r.height / 2;
      const inWindow = cx >= 0 && cy >= 0 && cx < window.innerWidth && cy < window.innerHeight;
      const hit = inWindow ? document.elementFromPoint(cx, cy) : null;
      const labels = 'labels' in el ? [...((el as HTMLInputElement).labels ?? [])] : [];
      const ok = !!hit && (hit === el || el.contains(hit) || labels.some((l) => l.contains(hit)));
      if (!ok) unreachable.push(`${name(el)} at (${cx.toFixed(0)}, ${cy.toFixed(0)}): ${name(hit)} there`);
    }
    return { controls: controls.length, unreachable };
  }, rootSelector);
}

/** The parts of the page whose controls must all be reachable. */
const REGIONS = ['.topbar', '.sidebar:not(.sidebar-right)', '.sidebar-right', '.viewport', '.timeline', '.dock'];

/** Viewport at least its minimum, canvas filling its box (the viewport less the legend bar under it), timeline right under it and in the window. */
async function expectViewportKept(what: string): Promise<Box> {
  // The canvas follows its container (R3F measures it through a ResizeObserver, a frame or a few
  // after the layout settles): same box within a pixel.
  const mismatch = async () => {
    const [vp, canvas] = [await box('[data-testid=viewport-canvas]'), await box('[data-testid=viewport] canvas')];
    return Math.max(...(['x', 'y', 'width', 'height'] as const).map((k) => Math.abs(canvas[k] - vp[k])));
  };
  await expect
    .poll(mismatch, { message: `${what}: canvas box vs viewport box`, timeout: 10_000 })
    .toBeLessThanOrEqual(1);
  const vp = await box('[data-testid=viewport]');
  expect(vp.height, `${what}: viewport height`).toBeGreaterThanOrEqual(VIEWPORT_MIN_HEIGHT_PX);
  expect(vp.width, `${what}: viewport width`).toBeGreaterThanOrEqual(VIEWPORT_MIN_WIDTH_PX);
  const timeline = await box('.timeline');
  expect(Math.abs(timeline.y - (vp.y + vp.height)), `${what}: timeline under the viewport`).toBeLessThanOrEqual(1);
  const win = page.viewportSize()!;
  expect(timeline.y + timeline.height, `${what}: timeline in the window`).toBeLessThanOrEqual(win.height);
  return vp;
}

async function expectAllReachable(what: string): Promise<number> {
  let total = 0;
  for (const region of REGIONS) {
    const r = await reachability(region);
    expect(r.unreachable, `${what}: ${region}`).toEqual([]);
    total += r.controls;
  }
  return total;
}

const splitterValue = async () => {
  const s = page.locator('[data-testid=dock-splitter]');
  return {
    now: Number(await s.getAttribute('aria-valuenow')),
    max: Number(await s.getAttribute('aria-valuemax')),
  };
};

/** Drags the splitter by `dy` window px from its centre (pointer events, as an operator's mouse). */
async function dragSplitterBy(dy: number): Promise<void> {
  const s = await box('[data-testid=dock-splitter]');
  const [x, y] = [s.x + s.width / 2, s.y + s.height / 2];
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x, y + dy, { steps: 6 });
  await page.mouse.up();
}

async function showTab(tab: 'qualification' | 'gap'): Promise<void> {
  const t = page.locator(`[data-testid=dock-tab-${tab}]`);
  if ((await t.getAttribute('aria-selected')) !== 'true') await t.click();
  await expect.poll(() => t.getAttribute('aria-selected')).toBe('true');
}

async function runSim(binding: 'builtin' | 'assist'): Promise<void> {
  await page.locator('[data-testid=sim-binding]').selectOption(binding);
  await page.locator('[data-testid=sim-pace]').selectOption('max');
  await page.locator('[data-testid=sim-max-seconds]').fill('2');
  const before = (await sims()).length;
  await page.locator('[data-testid=sim-run]').click();
  await expect.poll(async () => (await sims()).length, { timeout: 20_000 }).toBe(before + 1);
  await page.waitForFunction((n) => window.__motionbench!.sim()[n]?.state === 'ended', before, {
    timeout: 60_000,
    polling: 50,
  });
}

/** Polls qualification.status until `done` holds (expect.poll works only inside a test). */
async function jobUntil(done: (j: QualificationJobStatus) => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const j = await hostApiCall<QualificationJobStatus>(server, 'qualification.status', {});
    if (done(j)) return;
    if (Date.now() - t0 > timeoutMs) throw new Error(`qualification job still ${j.state}: ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('console layout: the robot stays in view', () => {
  it('loads both boards into the dock and runs two simulations (a long right sidebar)', async () => {
    await showTab('qualification');
    await page.locator('[data-testid=qual-dir]').fill(qualDir);
    await page.locator('[data-testid=qual-open]').click();
    await expect.poll(() => page.locator('[data-testid^=qual-row-]').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await showTab('gap');
    await page.locator('[data-testid=gap-dir]').fill(gapDir);
    await page.locator('[data-testid=gap-open]').click();
    await expect.poll(() => page.locator('[data-testid^=gap-t11-]').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await page.locator('[data-testid=fps-input]').fill('');
    await page.locator('[data-testid=clip-file-input]').setInputFiles(NPZ);
    await page.waitForFunction(() => window.__motionbench!.state().clipId !== null, null, { timeout: 30_000 });
    await runSim('assist');
    await runSim('builtin');
    // The right sidebar is now taller than the window: it must scroll, not cut off.
    const right = await page
      .locator('.sidebar-right')
      .evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight }));
    expect(right.scroll).toBeGreaterThan(right.client);
  }, 180_000);

  for (const size of SIZES) {
    const tag = `${size.width}x${size.height}`;
    it(`${tag}: with each board, at its default and its tallest dock, and folded, the viewport keeps its minimum and every control is reachable`, async () => {
      await page.setViewportSize(size);
      const measured: Record<string, string> = {};
      for (const state of [
        'qualification',
        'qualification-tallest',
        'gap-tallest',
        'both-boards-switch',
        'folded',
      ] as const) {
        await page.locator('[data-testid=dock-splitter]').focus();
        if (state === 'qualification') {
          await showTab('qualification');
          await page.locator('[data-testid=dock-splitter]').press('PageDown');
          for (let i = 0; i < (DOCK_DEFAULT_BODY_PX - DOCK_MIN_BODY_PX) / SPLITTER_STEP_PX; i++)
            await page.locator('[data-testid=dock-splitter]').press('ArrowUp'); // from the shortest back to the default
        } else if (state === 'qualification-tallest') {
          await page.locator('[data-testid=dock-splitter]').press('PageUp');
        } else if (state === 'gap-tallest') {
          await showTab('gap');
          await page.locator('[data-testid=dock-splitter]').press('PageUp');
        } else if (state === 'both-boards-switch') {
          // Both boards loaded: switching back keeps the dock's height and the viewport's minimum.
          await showTab('qualification');
        } else {
          await page.locator('[data-testid=dock-tab-qualification]').click();
          await expect.poll(() => page.locator('#dock-body').count()).toBe(0);
        }
        const vp = await expectViewportKept(`${tag} ${state}`);
        const dock = state === 'folded' ? 0 : (await splitterValue()).now;
        if (state.includes('tallest')) expect(dock).toBe((await splitterValue()).max);
        const controls = await expectAllReachable(`${tag} ${state}`);
        measured[state] = `viewport ${vp.width}×${vp.height} px, dock body ${dock} px, ${controls} controls reachable`;
        await screenshot(page, `layout-${tag}-${state}`);
      }
      console.log(
        `layout ${tag}:\n${Object.entries(measured)
          .map(([k, v]) => `  ${k}: ${v}`)
          .join('\n')}`,
      );
      // Unfold for the next size.
      await page.locator('[data-testid=dock-tab-qualification]').click();
      await expect.poll(() => page.locator('#dock-body').count()).toBe(1);
    }, 120_000);
  }

  it('a window made smaller keeps the viewport: the dock that was tallest at 1920×1080 is clamped at 1366×768', async () => {
    await page.setViewportSize(SIZES[1]);
    await page.locator('[data-testid=dock-splitter]').focus();
    await page.locator('[data-testid=dock-splitter]').press('PageUp');
    const tall = await splitterValue();
    await page.setViewportSize(SIZES[0]);
    // The column's ResizeObserver, then a render: give a loaded machine time.
    await expect.poll(async () => (await splitterValue()).max, { timeout: 10_000 }).toBeLessThan(tall.max);
    await expectViewportKept('shrunk window');
    expect((await splitterValue()).now).toBe((await splitterValue()).max);
    // Back to the big window: the height asked for comes back.
    await page.setViewportSize(SIZES[1]);
    await expect.poll(async () => (await splitterValue()).now, { timeout: 10_000 }).toBe(tall.now);
    await page.setViewportSize(SIZES[0]);
  });

  it('the splitter: a drag past the top stops at the viewport minimum, past the bottom at the dock minimum; keys move it', async () => {
    await page.setViewportSize(SIZES[0]);
    await dragSplitterBy(-SIZES[0].height); // far past the top of the window
    await expect.poll(async () => (await splitterValue()).now - (await splitterValue()).max).toBe(0);
    const vp = await box('[data-testid=viewport]');
    expect(Math.abs(vp.height - VIEWPORT_MIN_HEIGHT_PX)).toBeLessThanOrEqual(1);
    await screenshot(page, 'layout-splitter-dragged-past-top');
    await dragSplitterBy(SIZES[0].height); // far past the bottom
    await expect.poll(async () => (await splitterValue()).now).toBe(DOCK_MIN_BODY_PX);
    await expect.poll(async () => (await box('#dock-body')).height).toBe(DOCK_MIN_BODY_PX);
    await dragSplitterBy(-50); // an ordinary drag: 50 px taller
    await expect.poll(async () => (await splitterValue()).now).toBe(DOCK_MIN_BODY_PX + 50);
    // Keyboard: ↑ one step, Shift+↓ four back, Enter folds and unfolds.
    const splitter = page.locator('[data-testid=dock-splitter]');
    await splitter.focus();
    await splitter.press('ArrowUp');
    await expect.poll(async () => (await splitterValue()).now).toBe(DOCK_MIN_BODY_PX + 50 + SPLITTER_STEP_PX);
    await splitter.press('Shift+ArrowDown');
    await expect
      .poll(async () => (await splitterValue()).now)
      .toBe(DOCK_MIN_BODY_PX + 50 + SPLITTER_STEP_PX - 4 * SPLITTER_STEP_PX);
    const before = (await box('[data-testid=viewport]')).height;
    await splitter.press('Enter');
    await expect.poll(() => page.locator('#dock-body').count()).toBe(0);
    expect((await box('[data-testid=viewport]')).height).toBeGreaterThan(before);
    await splitter.press('Enter');
    await expect.poll(() => page.locator('#dock-body').count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it('negative control: the same check reports the right sidebar’s lower controls when that sidebar hides its overflow (the old bug)', async () => {
    const sidebar = page.locator('.sidebar-right');
    const ok = await reachability('.sidebar-right');
    expect(ok.unreachable).toEqual([]);
    await sidebar.evaluate((el) => {
      el.style.overflow = 'hidden';
      el.scrollTop = 0;
    });
    try {
      const hidden = await reachability('.sidebar-right');
      expect(hidden.controls).toBe(ok.controls);
      expect(hidden.unreachable.length).toBeGreaterThan(0);
      expect(hidden.unreachable.join('\n')).toMatch(/runs-|run-|sim-/); // the Overlay panel and the readings at the bottom
      await screenshot(page, 'layout-negative-right-sidebar-overflow-hidden');
    } finally {
      await sidebar.evaluate((el) => (el.style.overflow = ''));
    }
    expect((await reachability('.sidebar-right')).unreachable).toEqual([]);
  });

  it('the top bar stays one line at 1366 px with the safety lights, the robot state and an operator stop noted', async () => {
    await page.setViewportSize(SIZES[0]);
    await page.locator('[data-testid=stop-button]').click();
    await page.locator('[data-testid=last-stop]').waitFor();
    const bar = await page.locator('.topbar').evaluate((el) => {
      const r = el.getBoundingClientRect();
      return {
        height: r.height,
        scroll: el.scrollWidth,
        client: el.clientWidth,
        spacer: el.querySelector('.spacer')!.getBoundingClientRect().width,
        children: [...el.children].map((c) => {
          const b = c.getBoundingClientRect();
          return { cls: c.className, top: b.top, bottom: b.bottom, right: b.right };
        }),
      };
    });
    expect(bar.scroll, JSON.stringify(bar)).toBeLessThanOrEqual(bar.client);
    for (const c of bar.children) {
      expect(c.top, c.cls).toBeGreaterThanOrEqual(0);
      expect(c.bottom, c.cls).toBeLessThanOrEqual(bar.height);
      expect(c.right, c.cls).toBeLessThanOrEqual(SIZES[0].width);
    }
    expect(bar.spacer, 'free room in the top bar').toBeGreaterThanOrEqual(0);
    // The INTERLOCK and LINK lights are in it and wholly visible (not cut by the ellipsis rules).
    for (const id of ['light-interlock', 'light-link']) {
      const light = await page.locator(`.topbar [data-testid=${id}]`).evaluate((el) => {
        const b = el.getBoundingClientRect();
        return { width: b.width, scroll: el.scrollWidth, client: el.clientWidth, right: b.right };
      });
      expect(light.width, id).toBeGreaterThan(0);
      expect(light.scroll, id).toBeLessThanOrEqual(light.client);
      expect(light.right, id).toBeLessThanOrEqual(SIZES[0].width);
    }
    await screenshot(page, 'layout-topbar-1366');
    expect(pageErrors).toEqual([]);
  });
});
