import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { SimRunResult } from '../../src/api/contract';
import { resampleClip } from '../../src/domain/motion/resample';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { REPO_ROOT } from '../helpers/browserHarness';
import { spawnInOwnSession } from '../helpers/ownSession';
import { openHostApiSocket } from '../helpers/hostApiClient';

// Shared pieces of the console's end-to-end tests: the real `motionbench host` command as a child
// process, synthetic executed runs, and pixel measurements of the viewport.

export interface HostProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs `node bin/motionbench.mjs host --port 0 …args` and resolves with the URL it prints. The
 * services run in a session of their own (ownSession.ts), not in the test runner's, at autogroup
 * nice `sessionNice` (0: even with the browser's and the runner's sessions).
 */
export function startHostCommand(args: string[], sessionNice = 0): Promise<HostProcess> {
  const child = spawnInOwnSession(
    process.execPath,
    [path.join(REPO_ROOT, 'bin/motionbench.mjs'), 'host', '--port', '0', ...args],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    { sessionNice },
  );
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`host did not start within 60 s\nstdout: ${out}\nstderr: ${err}`)),
      60_000,
    );
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /MotionBench Console: (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1],
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`host exited with ${code}\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

export interface SyntheticTrajectory {
  timeS: number[];
  rootPosM: number[];
  rootQuatWxyz: number[];
  jointPosRad: number[];
}

/**
 * An "executed" run made from the reference itself: the clip resampled to 50 Hz (the contract
 * rate, like a recorded episode) with constant offsets added to some joints.
 */
export function syntheticRun(
  clip: MotionClip,
  jointOffsetsRad: Record<number, number>,
  rateHz = 50,
): SyntheticTrajectory {
  const r = resampleClip(clip, rateHz);
  const q = Array.from(r.jointPosRad);
  for (let k = 0; k < r.frameCount; k++)
    for (const [j, d] of Object.entries(jointOffsetsRad)) q[29 * k + Number(j)] += d;
  return {
    timeS: Array.from({ length: r.frameCount }, (_, k) => k / rateHz),
    rootPosM: Array.from(r.rootPosM),
    rootQuatWxyz: Array.from(r.rootQuatWxyz),
    jointPosRad: q,
  };
}

/** Frames k0..k1-1 of a synthetic run, as the dev hook's appendFrames takes them. */
export function syntheticFrames(t: SyntheticTrajectory, k0: number, k1: number) {
  return Array.from({ length: k1 - k0 }, (_, i) => {
    const k = k0 + i;
    return {
      timeS: t.timeS[k],
      rootPosM: t.rootPosM.slice(3 * k, 3 * k + 3),
      rootQuatWxyz: t.rootQuatWxyz.slice(4 * k, 4 * k + 4),
      jointPosRad: t.jointPosRad.slice(29 * k, 29 * k + 29),
    };
  });
}

export interface ColourBox {
  /** Pixels matching. */
  count: number;
  /**
   * Box in canvas pixels (x right, y down) holding the matched pixels between their 1st and 99th
   * percentiles in x and in y (stray pixels of grid lines do not stretch it); null when none.
   */
  box: { x0: number; y0: number; x1: number; y1: number } | null;
}

/**
 * Pixels of the viewport canvas that are "robot": bright and unsaturated (the model's grey
 * shell) or, with `hue`, saturated pixels of that hue range (degrees). From a screenshot decoded
 * in the page (its CSP allows data: images).
 */
export async function canvasColourBox(
  page: Page,
  match: { kind: 'bright' } | { kind: 'hue'; min: number; max: number },
): Promise<ColourBox> {
  // The viewport's canvas only: the DOM drawn over it (the overlay line's white text, the error
  // legend) is masked out in black, which neither match counts; with a short viewport the text
  // would otherwise hold more than the 1 % the box's percentiles drop.
  const png = await page
    .locator('[data-testid=viewport] canvas')
    .first()
    .screenshot({ mask: [page.locator('.viewport-overlay'), page.locator('.error-legend')], maskColor: '#000000' });
  return page.evaluate(
    async ({ dataUrl, match }) => {
      const img = new Image();
      img.src = dataUrl;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.naturalWidth;
      c.height = img.naturalHeight;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const { data } = ctx.getImageData(0, 0, c.width, c.height);
      let count = 0;
      const xs = new Uint32Array(c.width);
      const ys = new Uint32Array(c.height);
      for (let i = 0; i < data.length; i += 4) {
        const r = data[i] / 255;
        const g = data[i + 1] / 255;
        const b = data[i + 2] / 255;
        const max = Math.max(r, g, b);
        const min = Math.min(r, g, b);
        let ok: boolean;
        if (match.kind === 'bright') ok = 0.299 * r + 0.587 * g + 0.114 * b > 0.43 && max - min < 0.12;
        else {
          const d = max - min;
          if (d < 0.25 || max < 0.3) ok = false;
          else {
            const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
            const hue = (h * 60 + 360) % 360;
            ok = match.min <= match.max ? hue >= match.min && hue <= match.max : hue >= match.min || hue <= match.max;
          }
        }
        if (!ok) continue;
        count++;
        const p = i / 4;
        xs[p % c.width]++;
        ys[Math.floor(p / c.width)]++;
      }
      const quantile = (hist: Uint32Array, q: number): number => {
        let acc = 0;
        for (let i = 0; i < hist.length; i++) {
          acc += hist[i];
          if (acc >= q * count) return i;
        }
        return hist.length - 1;
      };
      return {
        count,
        box:
          count > 0
            ? { x0: quantile(xs, 0.01), y0: quantile(ys, 0.01), x1: quantile(xs, 0.99), y1: quantile(ys, 0.99) }
            : null,
      };
    },
    { dataUrl: `data:image/png;base64,${png.toString('base64')}`, match },
  );
}

/**
 * One console API call over the host's WebSocket, as a client independent of the page: same
 * token and same-origin header as the page uses; rejects with the API error's message.
 */
export async function hostApiCall<T>(
  server: { port: number; token: string },
  method: string,
  params: unknown,
): Promise<T> {
  const ws = await openHostApiSocket(server);
  try {
    return await new Promise<T>((resolve, reject) => {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { id?: number; result?: T; error?: { message: string } };
        if (m.id !== 1) return;
        if (m.error) reject(new Error(m.error.message));
        else resolve(m.result as T);
      });
      ws.send(JSON.stringify({ id: 1, method, params }));
    });
  } finally {
    ws.close();
  }
}

/**
 * Presses a button that moves the robot (Start matched pair: `trial-start`; Confirm — robot moves:
 * `trial-confirm`) as an operator who accepts the timing: when TIMING reads BAD the console asks a
 * second time with the measured gap (`<warning>-go`), and that is pressed too. Returns the warning's
 * measured figure when one was shown, else null.
 */
export async function pressThroughTimingWarning(
  page: Page,
  buttonTestId: string,
  warningTestId: string,
): Promise<string | null> {
  await page.locator(`[data-testid=${buttonTestId}]`).click();
  const warning = page.locator(`[data-testid=${warningTestId}]`);
  // The warning replaces the press at once (same React update); a short wait covers the repaint.
  const shown = await warning
    .waitFor({ timeout: 500 })
    .then(() => true)
    .catch(() => false);
  if (!shown) return null;
  const figure = await page.locator(`[data-testid=${warningTestId}-figure]`).textContent();
  await page.locator(`[data-testid=${warningTestId}-go]`).click();
  console.log(`e2e operator: TIMING was BAD at ${buttonTestId}; pressed it anyway (${figure})`);
  return figure;
}

/**
 * Presses the Calibration panel's Accept as an operator who has read the verdict: when the start
 * pose is outside tolerance the panel asks again (`cal-accept-confirm`) and Accept anyway is
 * pressed. Returns the verdict's line.
 */
export async function acceptCalibrationThroughVerdict(page: Page): Promise<string> {
  const verdict = (await page.locator('[data-testid=cal-verdict]').textContent()) ?? '';
  await page.locator('[data-testid=cal-accept]').click();
  if ((await page.locator('[data-testid=cal-verdict]').getAttribute('data-within')) === 'false') {
    await page.locator('[data-testid=cal-accept-anyway]').click();
    console.log(`e2e operator: accepted a start pose outside tolerance (${verdict})`);
  }
  return verdict;
}

/** A recorded sim run's trajectory as the 50 Hz executed motion the batch evaluator reads. */
export function executedMotion(t: SimRunResult['trajectory']) {
  return {
    fps: 50,
    frameCount: t.frames,
    rootPosM: Float64Array.from(t.rootPosM!),
    rootQuatWxyz: Float64Array.from(t.rootQuatWxyz!),
    jointPosRad: Float64Array.from(t.jointPosRad),
  };
}

/** Input-to-frame latencies of clicks in the page, ms (see measureClickLatency). */
export interface ClickLatencies {
  /** Per click: from the pointerdown's timestamp to the first frame after its handlers ran. */
  inputToFrameMs: number[];
  /** Per click: how long the event waited in the renderer's queue before its handlers ran. */
  queuedMs: number[];
  /** The page's frame intervals over the clicks (requestAnimationFrame), ms: the floor of any response. */
  frameIntervalMs: number[];
  /** The same over 2 s before the clicks, the page left alone. */
  idleFrameIntervalMs: number[];
}

/**
 * Clicks the given tabs in turn `n` times as an operator does, each waiting for the tab to show as
 * selected, and measures in the page what the operator feels: from the input event's own timestamp
 * (when the browser received it) to the next animation frame after its handlers ran, the
 * event-to-next-paint figure of the Event Timing API's INP, measured here without that API so it
 * works in every Chromium build. A click Playwright could not deliver within `timeoutMs` rejects.
 */
export async function measureClickLatency(
  page: Page,
  tabTestIds: string[],
  n: number,
  timeoutMs = 5_000,
): Promise<ClickLatencies> {
  type Store = { frame: number[]; queued: number[]; intervals: number[]; on: boolean };
  await page.evaluate(() => {
    const w = window as unknown as { __clickLatency?: Store };
    if (!w.__clickLatency) {
      const s: Store = { frame: [], queued: [], intervals: [], on: false };
      w.__clickLatency = s;
      document.addEventListener(
        'pointerdown',
        (ev) => {
          if (!s.on) return;
          const t0 = ev.timeStamp;
          s.queued.push(performance.now() - t0);
          // after this event's handlers and React's update: the frame that shows it
          setTimeout(() => requestAnimationFrame(() => s.frame.push(performance.now() - t0)), 0);
        },
        { capture: true },
      );
    }
    const store = w.__clickLatency;
    store.frame.length = 0;
    store.queued.length = 0;
    store.intervals.length = 0;
    store.on = true;
    let last = performance.now();
    const tick = (t: number) => {
      if (!store.on) return;
      store.intervals.push(t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  // first the page alone for a while: its frame cadence without the clicks' work
  await page.waitForTimeout(2000);
  const idle = await page.evaluate(() => {
    const store = (window as unknown as { __clickLatency: Store }).__clickLatency;
    return store.intervals.splice(0).slice(1);
  });
  for (let i = 0; i < n; i++) {
    const id = tabTestIds[i % tabTestIds.length];
    await page.locator(`[data-testid=${id}]`).click({ timeout: timeoutMs });
    await page.locator(`[data-testid=${id}][aria-selected=true]`).waitFor({ timeout: timeoutMs });
  }
  await page.waitForTimeout(100); // the last click's frame
  const r = await page.evaluate(() => {
    const store = (window as unknown as { __clickLatency: Store }).__clickLatency;
    store.on = false;
    return store;
  });
  return { inputToFrameMs: r.frame, queuedMs: r.queued, frameIntervalMs: r.intervals, idleFrameIntervalMs: idle };
}
