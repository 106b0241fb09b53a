// `npx tsx bench/rendererCpu.ts`: how much CPU the console's renderer costs in Chromium, idle and
// while frames stream into the 3D view. Not part of `npm run bench` (it needs Chromium and takes
// minutes).
//
// Each session builds the renderer afresh with Vite (into a temporary folder, so neither a stale
// out/renderer nor another engineer's build is measured), serves it with the real loopback host
// and its embedded MuJoCo simulator (in this process), opens it in Debian's Chromium as the e2e
// tests do (software WebGL), loads a long clip (LAFAN1 walk1, 30 fps, 261 s) and measures, for
// `--seconds` each:
//   idle       the clip on display, nothing playing or streaming
//   playing    the clip playing at 1×
//   stream50   a simulation run of the clip at real time: 50 frames/s pushed into the view
//   stream500  the same at 10× real time: 500 frames/s (the panel offers 1, 2, 5 and max; the
//              bench adds a "10" option to its pace list in the page, which the form sends as
//              paceRealTime 10)
// Figures per scenario: CPU % (100 % = one core) of Chromium's processes from /proc/<pid>/stat
// (utime + stime of every process descended from this one, grouped by --type: renderer, gpu,
// browser, other), the page's main-thread TaskDuration and ScriptDuration (CDP
// Performance.getMetrics) as % of the wall time, the WebGL frames drawn per second (draw calls
// counted by a wrapper installed before the page loads, grouped into frames by 4 ms gaps; no
// requestAnimationFrame of its own, which would itself keep Chromium producing frames) and the
// sim frames received per second.
//
// Options:
//   --seconds N        measurement window per scenario (default 20)
//   --repeats N        sessions per source tree (default 3); the spread is min..max
//   --scenarios a,b    subset of idle,playing,stream50,stream500
//   --baseline DIR     also measure the renderer in DIR/renderer (e.g. a `git archive` of an older
//                      commit with src/ and node_modules linked to this tree's), interleaved with
//                      this tree session by session, so both see the same machine load
//   --json             one JSON document on stdout (progress on stderr)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHostServer } from '../src/services/host/hostServer';
import { launchChromium, REPO_ROOT, SHARED_DATA } from '../test/helpers/browserHarness';

type Scenario = 'idle' | 'playing' | 'stream50' | 'stream500';
const ALL_SCENARIOS: Scenario[] = ['idle', 'playing', 'stream50', 'stream500'];
const CLIP = path.join(SHARED_DATA, 'motions/lafan1_g1_csv/walk1_subject1.csv');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const SECONDS = Number(arg('seconds') ?? 20);
const REPEATS = Number(arg('repeats') ?? 3);
const SCENARIOS = (arg('scenarios')?.split(',') ?? ALL_SCENARIOS) as Scenario[];
const BASELINE = arg('baseline');
const JSON_OUT = process.argv.includes('--json');
const log = (s: string): void => void process.stderr.write(`${s}\n`);

for (const s of SCENARIOS) if (!ALL_SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}`);

// ---- Chromium's processes -----------------------------------------------------------------------

interface ProcTimes {
  /** CPU seconds (user + system) per process group. */
  byType: Record<string, number>;
}

/** CPU seconds of every Chromium process descended from this process, by its --type. */
function chromiumCpu(): ProcTimes {
  const parent = new Map<number, number>();
  const stat = new Map<number, string>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // pid (comm) state ppid … : comm may hold spaces, so split after its closing parenthesis.
      const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(rest[1]));
      stat.set(Number(d), s);
    } catch {
      // the process ended meanwhile
    }
  }
  const mine = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  const byType: Record<string, number> = { renderer: 0, gpu: 0, browser: 0, other: 0 };
  for (const [pid, s] of stat) {
    if (!mine(pid)) continue;
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('chrom')) continue;
    const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser';
    const group =
      type === 'renderer' ? 'renderer' : type === 'gpu-process' ? 'gpu' : type === 'browser' ? type : 'other';
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // fields 14 and 15 of /proc/<pid>/stat (utime, stime) are rest[11], rest[12]
    byType[group] += (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  }
  return { byType };
}

// ---- the page -----------------------------------------------------------------------------------

/** Installed before the page's scripts: counts WebGL draw calls and the frames they form. */
const GL_COUNTER = `(() => {
  const c = { draws: 0, frames: 0, last: -1 };
  Object.defineProperty(window, '__benchGl', { value: c });
  for (const proto of [WebGL2RenderingContext.prototype, WebGLRenderingContext.prototype]) {
    for (const name of ['drawElements', 'drawArrays', 'drawElementsInstanced', 'drawArraysInstanced']) {
      const f = proto[name];
      if (typeof f !== 'function') continue;
      proto[name] = function (...args) {
        const now = performance.now();
        if (now - c.last > 4) c.frames++;
        c.last = now;
        c.draws++;
        return f.apply(this, args);
      };
    }
  }
})();`;

interface Sample {
  cpuPct: Record<string, number>;
  taskPct: number;
  scriptPct: number;
  glFramesPerS: number;
  simFramesPerS: number;
}

async function measure(page: Page, seconds: number): Promise<Sample> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async (): Promise<Record<string, number>> => {
    const r = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    return Object.fromEntries(r.metrics.map((m) => [m.name, m.value]));
  };
  const pageCounts = (): Promise<{ frames: number; simFrames: number }> =>
    page.evaluate(() => ({
      frames: (window as unknown as { __benchGl: { frames: number } }).__benchGl.frames,
      simFrames: window.__motionbench!.sim().reduce((n, r) => n + r.framesReceived, 0),
    }));
  const m0 = await metrics();
  const p0 = await pageCounts();
  const c0 = chromiumCpu();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const c1 = chromiumCpu();
  const wallS = (performance.now() - t0) / 1000;
  const p1 = await pageCounts();
  const m1 = await metrics();
  await cdp.detach();
  const cpuPct: Record<string, number> = {};
  let total = 0;
  for (const k of Object.keys(c1.byType)) {
    const d = Math.max(0, c1.byType[k] - (c0.byType[k] ?? 0));
    cpuPct[k] = (100 * d) / wallS;
    total += d;
  }
  cpuPct.total = (100 * total) / wallS;
  return {
    cpuPct,
    taskPct: (100 * (m1.TaskDuration - m0.TaskDuration)) / wallS,
    scriptPct: (100 * (m1.ScriptDuration - m0.ScriptDuration)) / wallS,
    glFramesPerS: (p1.frames - p0.frames) / wallS,
    simFramesPerS: (p1.simFrames - p0.simFrames) / wallS,
  };
}

async function startStream(page: Page, pace: '1' | '10', seconds: number): Promise<string> {
  if (pace === '10') {
    await page.evaluate(() => {
      const select = document.querySelector<HTMLSelectElement>('[data-testid=sim-pace]')!;
      if (!select.querySelector('option[value="10"]')) select.add(new Option('10× (bench)', '10'));
    });
  }
  await page.locator('[data-testid=sim-binding]').selectOption('assist');
  await page.locator('[data-testid=sim-assist]').fill('3000');
  await page.locator('[data-testid=sim-pace]').selectOption(pace);
  // Long enough for the settling time and the window, at the pace asked for.
  await page.locator('[data-testid=sim-max-seconds]').fill(String(Number(pace) * (seconds + 8)));
  const before = await page.evaluate(() => window.__motionbench!.sim().length);
  await page.locator('[data-testid=sim-run]').click();
  await page.waitForFunction((n) => window.__motionbench!.sim().length === n + 1, before, { timeout: 30_000 });
  const runId = await page.evaluate(() => window.__motionbench!.sim().at(-1)!.runId);
  await page.waitForFunction(
    (id) => (window.__motionbench!.sim().find((r) => r.runId === id)?.framesReceived ?? 0) > 50,
    runId,
    { timeout: 30_000 },
  );
  return runId;
}

async function endStream(page: Page, runId: string): Promise<string> {
  const state = await page.evaluate((id) => window.__motionbench!.sim().find((r) => r.runId === id)!.state, runId);
  await page.locator('[data-testid=stop-button]').click();
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    { timeout: 30_000 },
  );
  // Off the overlay, so every idle window draws the same scene.
  await page.locator(`[data-testid=run-remove-${runId}]`).click();
  await page.waitForFunction(() => window.__motionbench!.overlay().runs.length === 0);
  return state;
}

async function session(browser: Browser, url: string): Promise<Record<Scenario, Sample>> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 960 } });
  await page.addInitScript(GL_COUNTER);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.locator('[data-testid=connection-status]', { hasText: 'Connected' }).waitFor();
  await page.locator('[data-testid=fps-input]').fill('30');
  await page.locator('[data-testid=clip-file-input]').setInputFiles(CLIP);
  await page.waitForFunction(() => window.__motionbench!.state().frameCount > 0, undefined, { timeout: 60_000 });
  const out = {} as Record<Scenario, Sample>;
  for (const s of SCENARIOS) {
    await page.mouse.move(5, 5); // the pointer off the canvas
    await page.locator('[data-testid=scrubber]').fill('0');
    await page.waitForTimeout(3000); // settle: damping, throttled panels, garbage collection
    if (s === 'idle') out[s] = await measure(page, SECONDS);
    else if (s === 'playing') {
      await page.locator('[data-testid=play-pause]').click();
      await page.waitForFunction(() => window.__motionbench!.state().playing);
      out[s] = await measure(page, SECONDS);
      await page.locator('[data-testid=play-pause]').click();
    } else {
      const runId = await startStream(page, s === 'stream50' ? '1' : '10', SECONDS);
      out[s] = await measure(page, SECONDS);
      const state = await endStream(page, runId);
      if (state !== 'running') log(`  warning: the ${s} run was ${state} before the window ended`);
    }
    log(`  ${s.padEnd(9)} ${fmt(out[s])}`);
  }
  if (errors.length > 0) log(`  page errors: ${errors.join(' | ')}`);
  await page.close();
  return out;
}

function fmt(s: Sample): string {
  const c = s.cpuPct;
  return (
    `CPU total ${c.total.toFixed(1)}% (renderer ${c.renderer.toFixed(1)}, gpu ${c.gpu.toFixed(1)}, ` +
    `browser ${c.browser.toFixed(1)}, other ${c.other.toFixed(1)}) · main thread task ${s.taskPct.toFixed(1)}% ` +
    `script ${s.scriptPct.toFixed(1)}% · GL frames ${s.glFramesPerS.toFixed(1)}/s · sim frames ${s.simFramesPerS.toFixed(0)}/s`
  );
}

// ---- building ----------------------------------------------------------------------------------

/** Builds `sourceRoot`/renderer with this tree's Vite config into a fresh temporary folder. */
async function buildRenderer(sourceRoot: string): Promise<string> {
  const { build } = await import('vite');
  const { rendererE2eViteConfig: rendererViteConfig } = await import('../electron.vite.config');
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-renderer-cpu-'));
  const root = path.join(sourceRoot, 'renderer');
  await build({
    ...rendererViteConfig,
    root,
    configFile: false,
    logLevel: 'warn',
    build: {
      ...rendererViteConfig.build,
      outDir,
      rollupOptions: { ...rendererViteConfig.build!.rollupOptions, input: path.join(root, 'index.html') },
    },
  });
  return outDir;
}

// ---- main ---------------------------------------------------------------------------------------

interface Tree {
  label: string;
  rendererDir: string;
  samples: Record<Scenario, Sample>[];
}

process.env.MOTIONBENCH_SIM_WORKERS = '1'; // two cores here: one simulator worker
const trees: Tree[] = [];
for (const [label, root] of [
  ...(BASELINE ? [['baseline', path.resolve(BASELINE)] as const] : []),
  ['this tree', REPO_ROOT] as const,
]) {
  log(`building the renderer of ${label} (${root})…`);
  trees.push({ label, rendererDir: await buildRenderer(root), samples: [] });
}
const browser = await launchChromium();
try {
  for (let r = 0; r < REPEATS; r++) {
    for (const t of trees) {
      const server = await startHostServer({ port: 0, rendererDir: t.rendererDir });
      log(`session ${r + 1}/${REPEATS}, ${t.label}:`);
      try {
        t.samples.push(await session(browser, server.url));
      } finally {
        await server.close();
      }
    }
  }
} finally {
  await browser.close();
  for (const t of trees) fs.rmSync(t.rendererDir, { recursive: true, force: true });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const spread = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: xs });
const summary = trees.map((t) => ({
  tree: t.label,
  scenarios: Object.fromEntries(
    SCENARIOS.map((s) => {
      const xs = t.samples.map((x) => x[s]);
      return [
        s,
        {
          cpuTotalPct: spread(xs.map((x) => x.cpuPct.total)),
          cpuRendererPct: spread(xs.map((x) => x.cpuPct.renderer)),
          cpuGpuPct: spread(xs.map((x) => x.cpuPct.gpu)),
          cpuBrowserPct: spread(xs.map((x) => x.cpuPct.browser)),
          mainThreadTaskPct: spread(xs.map((x) => x.taskPct)),
          mainThreadScriptPct: spread(xs.map((x) => x.scriptPct)),
          glFramesPerS: spread(xs.map((x) => x.glFramesPerS)),
          simFramesPerS: spread(xs.map((x) => x.simFramesPerS)),
        },
      ];
    }),
  ),
}));

if (JSON_OUT) process.stdout.write(`${JSON.stringify({ seconds: SECONDS, repeats: REPEATS, summary }, null, 2)}\n`);
else {
  const f = (v: { median: number; min: number; max: number }, d = 1): string =>
    `${v.median.toFixed(d)} (${v.min.toFixed(d)}–${v.max.toFixed(d)})`;
  console.log(`Renderer CPU, ${REPEATS} sessions × ${SECONDS} s per scenario; median (min–max); 100 % = one core`);
  for (const t of summary) {
    console.log(`\n${t.tree}`);
    console.log(
      'scenario   Chromium total %   renderer %        gpu %             main-thread task %   GL frames/s      sim frames/s',
    );
    for (const [s, v] of Object.entries(t.scenarios))
      console.log(
        `${s.padEnd(10)} ${f(v.cpuTotalPct).padEnd(18)} ${f(v.cpuRendererPct).padEnd(17)} ${f(v.cpuGpuPct).padEnd(17)} ` +
          `${f(v.mainThreadTaskPct).padEnd(20)} ${f(v.glFramesPerS).padEnd(16)} ${f(v.simFramesPerS, 0)}`,
      );
  }
}
