import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { startHostServer } from '../../src/services/host/hostServer';
import { screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { withConsole } from './consoleSession';
import { syntheticFrames, syntheticRun } from './e2eSupport';

// The 3D view renders on demand (renderer/src/viewport/renderOnDemand.tsx).
// Frames are counted by the page's own hook (window.__motionbench.viewportFrames(): r3f frames
// rendered). Each "nothing renders while idle" check stands beside one that makes a change and
// sees frames rendered, so an idle count of 0 cannot come from a counter that never moves; and the
// "renders while playing / streaming" checks also compare what is drawn (the pose, the canvas
// pixels), so they fail if the view stops updating.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const L_ELBOW = 18;
const IDLE_MS = 2000;

let clip: MotionClip;
beforeAll(() => {
  clip = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: path.basename(NPZ) });
});
const ui = withConsole(() => startHostServer({ port: 0, backends: {} }), {
  viewport: { width: 1600, height: 960 },
  dev: true,
});
const { page, state, overlay } = ui;
const pageErrors = ui.errors;

const frames = (): Promise<number> => page.evaluate(() => window.__motionbench!.viewportFrames());

/**
 * Waits until the frame count has stood still for 1.5 s (the last change drawn, the orbit's
 * damping run out; one change can take a few frames — a run added draws, then its robot is built,
 * then the reference turns ghost — and with software GL on a busy machine a frame can take a few
 * hundred ms), then counts the frames rendered over the next `ms`.
 */
async function framesWhileIdle(ms = IDLE_MS): Promise<number> {
  let last = await frames();
  for (let stillSince = Date.now(), t0 = Date.now(); Date.now() - stillSince < 1500;) {
    if (Date.now() - t0 > 20_000) throw new Error('the viewport never stopped rendering');
    await page.waitForTimeout(100);
    const now = await frames();
    if (now !== last) stillSince = Date.now();
    last = now;
  }
  await page.waitForTimeout(ms);
  return (await frames()) - last;
}

/** A screenshot of the canvas, as bytes. */
const canvasPng = (): Promise<Buffer> => page.locator('canvas').first().screenshot();

/** Share of the bytes of two same-sized PNG decodes that differ (decoded in the page). */
async function pixelsChanged(a: Buffer, b: Buffer): Promise<number> {
  return page.evaluate(
    async ({ a, b }) => {
      const decode = async (src: string) => {
        const img = new Image();
        img.src = src;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        const ctx = c.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        return ctx.getImageData(0, 0, c.width, c.height).data;
      };
      const [da, db] = [await decode(a), await decode(b)];
      let changed = 0;
      for (let i = 0; i < da.length; i += 4)
        if (Math.abs(da[i] - db[i]) + Math.abs(da[i + 1] - db[i + 1]) + Math.abs(da[i + 2] - db[i + 2]) > 30) changed++;
      return changed / (da.length / 4);
    },
    { a: `data:image/png;base64,${a.toString('base64')}`, b: `data:image/png;base64,${b.toString('base64')}` },
  );
}

beforeAll(async () => {
  await page.locator('[data-testid=clip-file-input]').setInputFiles(NPZ);
  await page.waitForFunction((id) => window.__motionbench!.state().clipId === id, clip.id);
});

describe('console: the 3D view renders on demand', () => {
  it('renders nothing while idle; a seek renders (negative control: the counter moves)', async () => {
    expect(await frames()).toBeGreaterThan(0); // the clip on display was drawn
    expect(await framesWhileIdle()).toBe(0);
    const before = await frames();
    await page.locator('[data-testid=scrubber]').fill('120');
    await expect.poll(async () => (await state()).frame).toBe(120);
    await expect.poll(frames).toBeGreaterThan(before);
    expect(await framesWhileIdle()).toBe(0);
  });

  it('renders while playing and the drawn pose moves; nothing again once paused', async () => {
    await page.locator('[data-testid=scrubber]').fill('0');
    expect(await framesWhileIdle()).toBe(0);
    const still = await canvasPng();
    const f0 = await frames();
    await page.locator('[data-testid=play-pause]').click();
    await page.waitForTimeout(1500);
    const playing = await state();
    const rendered = (await frames()) - f0;
    await page.locator('[data-testid=play-pause]').click();
    await expect.poll(async () => (await state()).playing).toBe(false);
    expect(playing.playing).toBe(true);
    expect(playing.frame).toBeGreaterThan(30); // 60 fps clip at 1×: the playhead moved ~1.5 s
    expect(rendered).toBeGreaterThan(2); // software GL on a shared machine: a few frames at least
    expect(await framesWhileIdle()).toBe(0);
    // What is drawn now is the paused pose, not frame 0's: the view followed the playhead.
    expect(await pixelsChanged(still, await canvasPng())).toBeGreaterThan(0.002);
    await screenshot(page, '70-render-on-demand-paused');
  });

  it('renders while a run streams and draws it; nothing once the stream ends', async () => {
    const live = syntheticRun(clip, { [L_ELBOW]: 0.5 });
    await page.evaluate(() =>
      window.__motionbenchDev!.addRun({ id: 'stream', label: 'streamed', live: true, source: 'synthetic' }),
    );
    await page.locator('[data-testid=scrubber]').fill('0');
    expect(await framesWhileIdle()).toBe(0);
    const f0 = await frames();
    // 40 batches of 5 samples (50 Hz recording), 25 batches a second: as a paced sim.run pushes them.
    for (let k = 0; k < 200; k += 5) {
      await page.evaluate((f) => window.__motionbenchDev!.appendFrames('stream', f), syntheticFrames(live, k, k + 5));
      await page.waitForTimeout(40);
    }
    const rendered = (await frames()) - f0;
    expect(rendered).toBeGreaterThan(2);
    const run = (await overlay()).runs.find((r) => r.id === 'stream')!;
    expect(run).toMatchObject({ live: true, samples: 200, valid: true, drawn: true });
    expect((await state()).frame).toBe(Math.floor(live.timeS[199] * 60 + 1e-6)); // follow-live
    await page.evaluate(() => window.__motionbenchDev!.endRun('stream', 'completed'));
    expect(await framesWhileIdle()).toBe(0);
    await screenshot(page, '71-render-on-demand-streamed');
    await page.evaluate(() => window.__motionbenchDev!.removeRun('stream'));
  });

  it('renders for camera input until its damping settles, and for a resize', async () => {
    expect(await framesWhileIdle()).toBe(0);
    const box = (await page.locator('canvas').first().boundingBox())!;
    const f0 = await frames();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 + 20, { steps: 8 });
    await page.mouse.up();
    await expect.poll(frames).toBeGreaterThan(f0);
    await page.mouse.move(5, 5);
    expect(await framesWhileIdle()).toBe(0);
    const f1 = await frames();
    await page.setViewportSize({ width: 1400, height: 900 });
    await expect.poll(frames).toBeGreaterThan(f1);
    await page.setViewportSize({ width: 1600, height: 960 });
    expect(await framesWhileIdle()).toBe(0);
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
