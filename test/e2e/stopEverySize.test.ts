import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { screenshot } from '../helpers/browserHarness';
import { withConsole } from './consoleSession';
import { withEmulatedRobot } from './emulatedRobot';
import { startHostCommand } from './e2eSupport';

// STOP and the safety lights at every window size an operator may use, from 800×600 up: the real
// console (`motionbench host`) in Chromium with the top bar at its fullest — a robot emulator
// connected (WBC, tilt, timing chips and its reset button with the reset's answer beside it) and an
// operator stop recorded (the last-stop note). At each size the STOP button and every safety light
// lie wholly inside the window and are the elements at their own centres (nothing covers them),
// STOP is clicked with the mouse and the console counts one more operator stop, and the top bar
// stays one row inside the window.
// Negative control: with the top bar's pinned group given back to the cut-off part of the bar
// (its content overflowing, as an unpinned bar does), STOP at 800×600 is reported outside.

const SIZES = [
  { width: 800, height: 600 },
  { width: 1024, height: 640 },
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
] as const;

const robot = withEmulatedRobot(['--seed', '5']);
const ui = withConsole(() => startHostCommand([]), { viewport: { width: 1920, height: 1080 } });
const { page, tid } = ui;
const pageErrors = ui.errors;
const operatorStops = (): Promise<number> => page.evaluate(() => window.__motionbench!.operatorStops());

interface Placement {
  inside: boolean;
  onTop: boolean;
  rect: { left: number; top: number; right: number; bottom: number };
}

/** Where `selector`'s elements lie: wholly inside the window, and each the element at its centre. */
function placements(selector: string): Promise<Placement[]> {
  return page.evaluate((sel) => {
    return [...document.querySelectorAll<HTMLElement>(sel)].map((el) => {
      const r = el.getBoundingClientRect();
      const inside = r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
      const hit = inside ? document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) : null;
      return {
        inside,
        onTop: !!hit && (hit === el || el.contains(hit)),
        rect: { left: r.left, top: r.top, right: r.right, bottom: r.bottom },
      };
    });
  }, selector);
}

beforeAll(async () => {
  // The fullest top bar: a robot emulator (its chips and reset), a reset answered, a stop recorded.
  await tid('endpoint-kind').selectOption('robot');
  await tid('endpoint-url').fill(robot.emu.url);
  await tid('endpoint-add').click();
  await tid('endpoint-presence-robot-1')
    .filter({ hasText: /^present$/ })
    .waitFor({ timeout: 10_000 });
  await tid('emulator-reset').click();
  await tid('emulator-reset-result').waitFor({ timeout: 10_000 });
  await tid('stop-button').click();
  await tid('last-stop').waitFor();
}, 120_000);

describe('STOP and the safety lights at every window size', () => {
  for (const size of SIZES) {
    it(`${size.width}×${size.height}: STOP and every light inside the window, uncovered; a click on STOP counts`, async () => {
      onTestFailed(() => void screenshot(page, `stop-size-fail-${size.width}x${size.height}`));
      await page.setViewportSize(size);
      await page.waitForTimeout(150); // one layout after the resize
      const [stop] = await placements('[data-testid=stop-button]');
      expect(stop, JSON.stringify(stop)).toMatchObject({ inside: true, onTop: true });
      const lights = await placements('.topbar .safety-lights .light');
      expect(lights.length).toBeGreaterThanOrEqual(2);
      for (const l of lights) expect(l, JSON.stringify(l)).toMatchObject({ inside: true, onTop: true });
      // The bar is one row and no wider than the window.
      const bar = await page.locator('.topbar').boundingBox();
      expect(bar!.width).toBeLessThanOrEqual(size.width);
      expect(bar!.height).toBeLessThanOrEqual(56);
      // A real mouse click at the centre measured above (Playwright's own click also waits for two
      // equal animation frames, which a loaded 2-core machine can delay by seconds).
      const before = await operatorStops();
      await page.mouse.click((stop.rect.left + stop.rect.right) / 2, (stop.rect.top + stop.rect.bottom) / 2);
      await expect.poll(operatorStops, { timeout: 5_000 }).toBe(before + 1);
      await screenshot(page, `stop-size-${size.width}x${size.height}`);
    });
  }

  it('negative control: a bar whose STOP is not pinned loses it at 800×600', async () => {
    await page.setViewportSize({ width: 800, height: 600 });
    // The page's CSP allows no inline <style>; the CSSOM sets the same two properties.
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.topbar')!.style.overflow = 'hidden';
      document.querySelector<HTMLElement>('.topbar-status')!.style.flex = 'none';
    });
    await page.waitForTimeout(150);
    const [stop] = await placements('[data-testid=stop-button]');
    expect(stop.inside && stop.onTop).toBe(false);
  });

  it('no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
