import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserServer, type Page } from 'playwright-core';
import { rendererBundleState } from '../../scripts/rendererBundle.mjs';

// End-to-end harness: build the renderer when it is missing or older than its sources, and
// launch Debian's Chromium headless with software WebGL (SwiftShader), as CI does — at a lower
// priority, as docs/CONSOLE.md asks of the browser (Electron's main does the same to its renderer
// and GPU processes): SwiftShader takes up to a core and a half while the robot streams, and the
// safety chain's timing (the services' loop, the interlock keeper, the pty relay, the box, the
// robot) must not wait behind the drawing of it. Playwright starts the browser in a session of its
// own, and the kernel shares the CPUs between sessions first (autogroup;
// src/services/os/threadPriority.ts): so the browser's session yields (its autogroup nice), not
// only its processes (their nice).

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_DATA = path.resolve(REPO_ROOT, '../shared/data');
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-results', 'e2e');
export const CHROMIUM = process.env.MOTIONBENCH_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Builds out/renderer with Vite, as the end-to-end flavour (with the test hooks the tests read the
 * console through), when it is missing, the production build, or older than a renderer source.
 */
export async function ensureRendererBuilt(): Promise<void> {
  if (rendererBundleState(REPO_ROOT, 'e2e') === 'fresh') return;
  const { build } = await import('vite');
  const { rendererE2eViteConfig } = await import('../../electron.vite.config');
  await build({ ...rendererE2eViteConfig, configFile: false, logLevel: 'warn' });
}

/** The browser's niceness, of its session and of its processes: below everything that keeps time. */
const BROWSER_NICE = 10;

/** A shell script that runs `executable` with its session and itself at `nice` (children inherit it). */
function niceWrapper(executable: string, nice: number): string {
  const file = path.join(os.tmpdir(), `motionbench-chromium-nice${nice}-${process.pid}.sh`);
  if (!fs.existsSync(file))
    fs.writeFileSync(
      file,
      `#!/bin/sh\necho ${nice} > /proc/self/autogroup 2>/dev/null\nexec nice -n ${nice} '${executable}' "$@"\n`,
      { mode: 0o755 },
    );
  return file;
}

/** Headless Chromium with software WebGL (SwiftShader), at BROWSER_NICE. */
function chromiumLaunchOptions(): { executablePath: string; args: string[] } {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} not found: install Debian's Chromium (apt-get install -y chromium) or set MOTIONBENCH_CHROMIUM`,
    );
  }
  return {
    executablePath: niceWrapper(CHROMIUM, BROWSER_NICE),
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
  };
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch(chromiumLaunchOptions());
}

/**
 * The same browser as launchChromium, as a server other processes connect to
 * (`chromium.connect(server.wsEndpoint())`): the e2e project's one browser (test/e2e/e2eBrowser.globalSetup.ts).
 */
export async function launchChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer(chromiumLaunchOptions());
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
