import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, inject } from 'vitest';
import type {
  LiveRobotTestState,
  MotionbenchTestState,
  OverlayTestState,
  SimRunTestState,
} from '../../renderer/src/testing/testHooks';
import { launchChromium } from '../helpers/browserHarness';

// The console in a page of the e2e project's one browser, opened on a host a test file starts:
// what every end-to-end file needs before it states what it tests.

declare module 'vitest' {
  export interface ProvidedContext {
    /** The project's browser (test/e2e/projectSetup.ts); absent when the file runs without that setup. */
    e2eBrowserWsEndpoint?: string;
  }
}

let browser: Promise<Browser> | undefined;

/**
 * The project's one Chromium (launched by the global setup, connected to here), or, when a file
 * runs without that setup, one of its own. One connection per test worker: a page's own context
 * is closed with the page, the browser outlives the file.
 */
export function e2eBrowser(): Promise<Browser> {
  browser ??= (async () => {
    const endpoint = inject('e2eBrowserWsEndpoint');
    return endpoint ? chromium.connect(endpoint) : launchChromium();
  })();
  return browser;
}

/** The services' environment of the files that run simulations: two cores here, one simulator worker and one for the rest. */
export const ONE_SIM_WORKER = { MOTIONBENCH_SIM_WORKERS: '1' };

/**
 * A fresh temporary folder for the current suite (made before its tests, removed after them with
 * what is in it); the returned function gives its path.
 */
export function withTempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error(`the temporary folder ${prefix}… is made before the suite's tests`);
    return dir;
  };
}

/** What serves the console: `startHostServer`'s server (close) or `startHostCommand`'s process (stop). */
export interface ConsoleHost {
  /** Includes `?token=…`. */
  url: string;
  close?(): Promise<void>;
  stop?(): Promise<void>;
}

export interface ConsoleOptions {
  viewport: { width: number; height: number };
  /** Opened with `&dev=1`: the page's dev hook (window.__motionbenchDev) is installed. */
  dev?: boolean;
  /** Also record the warnings of the console's event handling (an invalid or failed push). */
  eventWarnings?: boolean;
  /** Environment of the in-process services while the console is open (restored after). */
  env?: Record<string, string>;
  /** Time for `start` and the page to open, ms (default: the project's hook timeout). */
  openTimeoutMs?: number;
}

export interface ConsoleSession<H extends ConsoleHost> {
  /** The host `start` returned; valid once the console opened. */
  readonly host: H;
  /** The console's page; usable in tests and in hooks that run after the console opened. */
  readonly page: Page;
  /** The page's uncaught errors and console errors (and event warnings when asked), as they arrive. */
  readonly errors: string[];
  tid(testId: string): Locator;
  attr(testId: string, name: string): Promise<string | null>;
  state(): Promise<MotionbenchTestState>;
  overlay(): Promise<OverlayTestState>;
  sims(): Promise<SimRunTestState[]>;
  /** The live robot models the 3D view draws (one per connected robot). */
  liveRobots(): Promise<LiveRobotTestState[]>;
}

/**
 * Registers the hooks of one console session in the current suite: before its tests `start()` the
 * host, open a page of `options.viewport` on it and wait for the console to say Connected; after
 * them close the page and stop the host. beforeAll hooks registered earlier (fixtures the host
 * needs) run before these, afterAll hooks registered earlier run after.
 */
export function withConsole<H extends ConsoleHost>(
  start: () => Promise<H>,
  options: ConsoleOptions,
): ConsoleSession<H> {
  let host: H | undefined;
  let page: Page | undefined;
  const errors: string[] = [];
  const savedEnv = new Map<string, string | undefined>();
  const current = (): Page => {
    if (!page) throw new Error('the console is not open: use the page in a test or a later hook');
    return page;
  };
  // The page as a value the test file can hold at its top level: every use reaches the page opened.
  const pageHandle = new Proxy({} as Page, {
    get: (_target, key) => {
      const p = current();
      const value: unknown = Reflect.get(p, key, p);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(p) : value;
    },
  });

  beforeAll(async () => {
    for (const [k, v] of Object.entries(options.env ?? {})) {
      savedEnv.set(k, process.env[k]);
      process.env[k] = v;
    }
    host = await start();
    page = await (await e2eBrowser()).newPage({ viewport: options.viewport });
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' || (options.eventWarnings && msg.type() === 'warning' && /event/.test(msg.text())))
        errors.push(`${msg.type()}: ${msg.text()}`);
    });
    await page.goto(options.dev ? `${host.url}&dev=1` : host.url);
    await page.locator('[data-testid=connection-status]', { hasText: 'Connected' }).waitFor();
  }, options.openTimeoutMs);

  afterAll(async () => {
    await page?.close();
    await (host?.close ?? host?.stop)?.call(host);
    for (const [k, v] of savedEnv) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  const tid = (testId: string): Locator => current().locator(`[data-testid="${testId}"]`);
  return {
    get host(): H {
      if (!host) throw new Error('the console is not open: its host has not started');
      return host;
    },
    page: pageHandle,
    errors,
    tid,
    attr: (testId, name) => tid(testId).getAttribute(name),
    state: () => current().evaluate(() => window.__motionbench!.state()),
    overlay: () => current().evaluate(() => window.__motionbench!.overlay()),
    sims: () => current().evaluate(() => window.__motionbench!.sim()),
    liveRobots: () => current().evaluate(() => window.__motionbench!.liveRobots()),
  };
}
