import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startHostServer } from '../../src/services/host/hostServer';
import { SCREENSHOT_DIR, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole, withTempDir } from './consoleSession';
import { standInGapCampaign } from './projectFixtures';

// Every dock tab and every panel readable at 1366×768 and 800×600: the real console
// (`motionbench host` in-process) in Chromium with a clip loaded and the stand-in gap campaign open
// in Gap review and Analysis. For the top bar, both sidebars, the timeline and each dock tab:
//   - no element with text of its own is cut — wider than its box where that box does not scroll,
//     ended with an ellipsis, or reaching past an ancestor that hides its overflow (which no wheel
//     scrolls) or past the window;
//   - every scroll container, scrolled to its end, shows its last child inside its box.
// A screenshot per size and group lands in test-results/e2e (panels-<w>x<h>-<group>.png).
// Negative controls: the same checks report a heading narrowed in the page (overflow hidden,
// ellipsis) and a sidebar whose scrolling is turned off.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const SIZES = [
  { width: 1366, height: 768 },
  { width: 800, height: 600 },
] as const;
/** The parts of the page checked outside the dock, each with its name in the screenshots. */
const REGIONS = [
  { name: 'topbar', selector: '.topbar' },
  { name: 'left', selector: '.sidebar:not(.sidebar-right)' },
  { name: 'right', selector: '.sidebar-right' },
  { name: 'timeline', selector: '.timeline-slot' },
] as const;
const DOCK_TABS = ['qualification', 'gap', 'analysis'] as const;

let gapDir: string;
const tmp = withTempDir('mb-panels-e2e-');
beforeAll(async () => {
  gapDir = path.join(tmp(), 'gap-campaign');
  await standInGapCampaign(gapDir);
}, 240_000);
const ui = withConsole(() => startHostServer({ port: 0 }), {
  viewport: SIZES[0],
  env: ONE_SIM_WORKER,
});
const { page, tid } = ui;
const pageErrors = ui.errors;

/**
 * Elements under `rootSelector` whose own text is cut, each with the reason. An element's own text
 * is a non-blank text node child; SVG text (plots) is left out. A box narrower than its content
 * counts when the box does not scroll; an ancestor that scrolls lets the operator bring the element
 * into view, from there on that ancestor's box is what must not be cut.
 */
function cutTexts(rootSelector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    if (!root) throw new Error(`no ${sel}`);
    const scrolls = (v: string) => /auto|scroll/.test(v);
    const hides = (v: string) => /hidden|clip/.test(v);
    const cut: string[] = [];
    for (const el of [root, ...root.querySelectorAll<HTMLElement>('*')]) {
      if (!(el instanceof HTMLElement) || el.closest('svg')) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '');
      if (!own || el.getClientRects().length === 0) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      const what = `${el.tagName.toLowerCase()}${el.dataset.testid ? `[${el.dataset.testid}]` : el.className ? `.${String(el.className).split(' ')[0]}` : ''} "${el.textContent!.trim().slice(0, 28)}"`;
      const boxed = cs.display !== 'inline';
      if (boxed && !scrolls(cs.overflowX) && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
        const how = cs.textOverflow === 'ellipsis' ? 'ellipsis' : hides(cs.overflowX) ? 'hidden' : 'spills';
        if (how !== 'spills') {
          cut.push(`${what}: ${el.scrollWidth} px of text in ${el.clientWidth} px (${how})`);
          continue;
        }
      }
      let r = el.getBoundingClientRect();
      let scrolled = false;
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const as = getComputedStyle(a);
        if (as.overflowX === 'visible' && as.overflowY === 'visible') continue;
        const ar = a.getBoundingClientRect();
        const box = {
          left: ar.left + a.clientLeft,
          top: ar.top + a.clientTop,
          right: ar.left + a.clientLeft + a.clientWidth,
          bottom: ar.top + a.clientTop + a.clientHeight,
        };
        const outX = r.left < box.left - 0.5 || r.right > box.right + 0.5;
        const outY = r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5;
        if ((outX && hides(as.overflowX)) || (outY && hides(as.overflowY))) {
          cut.push(
            `${what}: ${r.left.toFixed(0)}–${r.right.toFixed(0)} × ${r.top.toFixed(0)}–${r.bottom.toFixed(0)} cut by ${a.tagName.toLowerCase()}.${String(a.className).split(' ')[0]} (${box.left.toFixed(0)}–${box.right.toFixed(0)} × ${box.top.toFixed(0)}–${box.bottom.toFixed(0)}, overflow ${as.overflowX}/${as.overflowY})`,
          );
          r = new DOMRect(0, 0, 0, 0);
          break;
        }
        if (scrolls(as.overflowX) || scrolls(as.overflowY)) {
          r = ar; // the operator scrolls the element into this box; the box itself must be visible
          scrolled = true;
        }
      }
      if (r.width > 0 && !scrolled && (r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5))
        cut.push(`${what}: past the window (${r.right.toFixed(0)}, ${r.bottom.toFixed(0)})`);
    }
    // A select shows its chosen option's text in its own box, which never scrolls: that text
    // (measured in the select's font) must fit between its padding and the drop-down arrow.
    const ctx = document.createElement('canvas').getContext('2d')!;
    for (const sel of root.querySelectorAll<HTMLSelectElement>('select')) {
      if (sel.getClientRects().length === 0 || sel.selectedIndex < 0) continue;
      const cs = getComputedStyle(sel);
      ctx.font = cs.font;
      const text = sel.options[sel.selectedIndex].text;
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16; // the arrow
      const need = ctx.measureText(text).width;
      if (need > room + 1)
        cut.push(
          `select[${sel.dataset.testid ?? ''}] "${text.slice(0, 28)}": ${need.toFixed(0)} px of text in ${room.toFixed(0)} px`,
        );
    }
    return cut;
  }, rootSelector);
}

/**
 * Scroll containers under `rootSelector` (itself included) that, scrolled to their end, do not
 * show their last visible child whole inside their box; the scroll positions are put back after.
 */
function unreachableEnds(rootSelector: string): Promise<{ containers: number; short: string[] }> {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    if (!root) throw new Error(`no ${sel}`);
    const short: string[] = [];
    let containers = 0;
    for (const el of [root, ...root.querySelectorAll<HTMLElement>('*')]) {
      if (!(el instanceof HTMLElement) || el.getClientRects().length === 0) continue;
      const cs = getComputedStyle(el);
      const y = /auto|scroll/.test(cs.overflowY) && el.scrollHeight > el.clientHeight + 1;
      const x = /auto|scroll/.test(cs.overflowX) && el.scrollWidth > el.clientWidth + 1;
      if (!x && !y) continue;
      containers++;
      const kids = [...el.children].filter((c) => c.getClientRects().length > 0);
      const last = kids.at(-1);
      if (!last) continue;
      const saved = [el.scrollLeft, el.scrollTop];
      el.scrollTop = el.scrollHeight;
      el.scrollLeft = el.scrollWidth;
      const r = last.getBoundingClientRect();
      const er = el.getBoundingClientRect();
      const bottom = er.top + el.clientTop + el.clientHeight;
      const right = er.left + el.clientLeft + el.clientWidth;
      const name = `${el.tagName.toLowerCase()}.${String(el.className).split(' ')[0]}`;
      if (y && r.bottom > bottom + 1)
        short.push(`${name}: last child ends at ${r.bottom.toFixed(0)}, box at ${bottom.toFixed(0)}`);
      if (x && r.right > right + 1)
        short.push(`${name}: last child ends at x ${r.right.toFixed(0)}, box at ${right.toFixed(0)}`);
      // The container's own box, where the last child shows, must not be cut by an ancestor that
      // hides its overflow (up to the next one that scrolls) or, failing that, by the window.
      const shown = { bottom: Math.min(r.bottom, bottom), right: Math.min(r.right, right) };
      let limit: { bottom: number; right: number; by: string } | null = {
        bottom: innerHeight,
        right: innerWidth,
        by: 'the window',
      };
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const as = getComputedStyle(a);
        if (/auto|scroll/.test(as.overflowY) || /auto|scroll/.test(as.overflowX)) {
          limit = null;
          break;
        }
        const ar = a.getBoundingClientRect();
        const ab = ar.top + a.clientTop + a.clientHeight;
        const aright = ar.left + a.clientLeft + a.clientWidth;
        const by = `${a.tagName.toLowerCase()}.${String(a.className).split(' ')[0]}`;
        if (/hidden|clip/.test(as.overflowY) && shown.bottom > ab + 1)
          short.push(`${name}: its end at ${shown.bottom.toFixed(0)} cut by ${by} at ${ab.toFixed(0)}`);
        if (/hidden|clip/.test(as.overflowX) && shown.right > aright + 1)
          short.push(`${name}: its end at x ${shown.right.toFixed(0)} cut by ${by} at ${aright.toFixed(0)}`);
      }
      if (limit && shown.bottom > limit.bottom + 1)
        short.push(`${name}: its end at ${shown.bottom.toFixed(0)} past ${limit.by}`);
      if (limit && shown.right > limit.right + 1)
        short.push(`${name}: its end at x ${shown.right.toFixed(0)} past ${limit.by}`);
      [el.scrollLeft, el.scrollTop] = saved;
    }
    return { containers, short };
  }, rootSelector);
}

async function showTab(tab: (typeof DOCK_TABS)[number]): Promise<void> {
  if ((await tid(`dock-tab-${tab}`).getAttribute('aria-selected')) !== 'true') await tid(`dock-tab-${tab}`).click();
  await tid('dock-splitter').focus();
  await page.keyboard.press('PageUp'); // the tallest dock the viewport's minimum allows
}

beforeAll(async () => {
  await tid('clip-file-input').setInputFiles(NPZ);
  await page.waitForFunction(() => window.__motionbench!.state().clipId !== null, null, { timeout: 30_000 });
  await showTab('gap');
  await tid('gap-dir').fill(gapDir);
  await tid('gap-open').click();
  await tid('gap-summary').waitFor({ timeout: 60_000 });
  await showTab('analysis');
  await tid('analysis-campaign-dir').fill(gapDir);
  await tid('analysis-run').click();
  await tid('analysis-summary').waitFor({ timeout: 120_000 });
}, 240_000);

describe('every dock tab and panel readable', () => {
  for (const size of SIZES) {
    const tag = `${size.width}x${size.height}`;
    it(`${size.width}×${size.height}: no text cut, every scroll container reaches its last child`, async () => {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const problems: string[] = [];
      let containers = 0;
      for (const tab of DOCK_TABS) {
        await showTab(tab);
        await page.waitForTimeout(100);
        problems.push(...(await cutTexts('.dock')).map((p) => `dock ${tab}: ${p}`));
        const ends = await unreachableEnds('.dock');
        containers += ends.containers;
        problems.push(...ends.short.map((p) => `dock ${tab}: ${p}`));
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `panels-${tag}-dock-${tab}.png`) });
      }
      for (const region of REGIONS) {
        problems.push(...(await cutTexts(region.selector)).map((p) => `${region.name}: ${p}`));
        const ends = await unreachableEnds(region.selector);
        containers += ends.containers;
        problems.push(...ends.short.map((p) => `${region.name}: ${p}`));
      }
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `panels-${tag}-top.png`) });
      // The sidebars scrolled to their ends (their lower panels) for the operator's look.
      await page.evaluate(() => {
        for (const s of document.querySelectorAll<HTMLElement>('.sidebar')) s.scrollTop = s.scrollHeight;
      });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `panels-${tag}-sidebars-end.png`) });
      await page.evaluate(() => {
        for (const s of document.querySelectorAll<HTMLElement>('.sidebar')) s.scrollTop = 0;
      });
      console.log(`${tag}: ${containers} scroll containers checked`);
      expect(problems).toEqual([]);
      expect(containers).toBeGreaterThan(0);
    }, 60_000);
  }

  it('negative control: a narrowed heading, a sidebar that no longer scrolls and one taller than the window are reported', async () => {
    await page.setViewportSize(SIZES[1]);
    await page.evaluate(() => {
      const h = document.querySelector<HTMLElement>('.sidebar-right .panel h2')!;
      Object.assign(h.style, { maxWidth: '40px', overflow: 'hidden', whiteSpace: 'nowrap', textOverflow: 'ellipsis' });
      document.querySelector<HTMLElement>('.sidebar-right')!.style.overflowY = 'hidden';
    });
    const cut = (await cutTexts('.sidebar-right')).join('\n');
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.sidebar-right .panel h2')!.removeAttribute('style');
      const side = document.querySelector<HTMLElement>('.sidebar-right')!;
      side.style.overflowY = '';
      // Taller than what the window shows of it yet shorter than its content: it still scrolls,
      // but its end lies below the window, where the workspace (no longer scrolling) hides it.
      document.querySelector<HTMLElement>('.workspace')!.style.overflow = 'hidden';
      side.style.height = `${side.scrollHeight - 20}px`;
      side.style.alignSelf = 'start';
    });
    const ends = await unreachableEnds('.sidebar-right');
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.workspace')!.style.overflow = '';
      document.querySelector<HTMLElement>('.sidebar-right')!.removeAttribute('style');
    });
    expect(cut).toMatch(/h2 .*\(ellipsis\)/);
    expect(cut).toMatch(/cut by aside\.sidebar/);
    expect(ends.containers).toBeGreaterThan(0);
    expect(ends.short.join('\n')).toMatch(/aside\.sidebar: its end at \d+ cut by div\.workspace/);
  });

  it('no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
