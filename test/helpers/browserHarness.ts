import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

// End-to-end harness: build the renderer when it is missing or older than its sources, and
// launch Debian's Chromium headless with software WebGL (SwiftShader), as CI does.

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_DATA = path.resolve(REPO_ROOT, '../shared/data');
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-results', 'e2e');
export const CHROMIUM = process.env.MOTIONBENCH_CHROMIUM ?? '/usr/bin/chromium';

const RENDERER_OUT = path.join(REPO_ROOT, 'out', 'renderer', 'index.html');
const RENDERER_SOURCES = ['renderer', 'src/api', 'src/domain', 'electron.vite.config.ts'];

function newestMtimeMs(p: string): number {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtimeMs(path.join(p, entry)));
  return newest;
}

/** Builds out/renderer with Vite unless it is newer than every renderer source. */
export async function ensureRendererBuilt(): Promise<void> {
  const built = fs.statSync(RENDERER_OUT, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = Math.max(...RENDERER_SOURCES.map((s) => newestMtimeMs(path.join(REPO_ROOT, s))));
  if (built > sources) return;
  const { build } = await import('vite');
  const { rendererViteConfig } = await import('../../electron.vite.config');
  await build({ ...rendererViteConfig, configFile: false, logLevel: 'warn' });
}

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's Chromium (apt-get install -y chromium) or set MOTIONBENCH_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

export interface CanvasPixelStats {
  width: number;
  height: number;
  /** Share of pixels differing from the background colour by more than 24 in any channel. */
  nonBackground: number;
  /** Share of bright pixels (luma > 110): the robot's light shell, not the dark floor and grid. */
  bright: number;
}

/**
 * Pixel statistics of what the WebGL canvas shows, from a screenshot of it decoded in the page
 * (the page's CSP allows data: images), so it works whatever preserveDrawingBuffer is.
 */
export async function canvasPixelStats(page: Page, background: [number, number, number]): Promise<CanvasPixelStats> {
  const png = await page.locator('canvas').first().screenshot();
  return page.evaluate(
    async ({ dataUrl, bg }) => {
      const img = new Image();
      img.src = dataUrl;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.naturalWidth;
      c.height = img.naturalHeight;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const { data } = ctx.getImageData(0, 0, c.width, c.height);
      let nonBackground = 0;
      let bright = 0;
      const n = c.width * c.height;
      for (let i = 0; i < data.length; i += 4) {
        const r = data[i];
        const g = data[i + 1];
        const b = data[i + 2];
        if (Math.abs(r - bg[0]) > 24 || Math.abs(g - bg[1]) > 24 || Math.abs(b - bg[2]) > 24) nonBackground++;
        if (0.299 * r + 0.587 * g + 0.114 * b > 110) bright++;
      }
      return { width: c.width, height: c.height, nonBackground: nonBackground / n, bright: bright / n };
    },
    { dataUrl: `data:image/png;base64,${png.toString('base64')}`, bg: background },
  );
}
