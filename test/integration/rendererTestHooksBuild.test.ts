// The test hooks (renderer/src/testing/testHooks.ts: window.__motionbench and the dev hook) are in
// the end-to-end build of the renderer and nowhere in the production build: both flavours are
// built from this tree with the configs electron.vite.config.ts exports, and their bundles are
// searched for strings only the hooks' code holds (property names survive minification). The
// end-to-end build finding them is the negative control: the search would see the hooks if the
// production bundle had them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserConfig } from 'vite';
import { RENDERER_FLAVOUR_FILE } from '../../scripts/rendererBundle.mjs';

/** Strings that only the test hooks' code puts into a bundle. */
const HOOK_MARKERS = ['__motionbench', '__motionbenchDev', 'analysisXyPlots', 'analysisPlots', 'viewportFrames'];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-renderer-flavours-'));
const bundles: Record<'production' | 'e2e', string> = { production: '', e2e: '' };

/** All JavaScript and HTML the build wrote, concatenated. */
function bundleText(dir: string): string {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|mjs|html)$/.test(e.name)) out.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out.join('\n');
}

async function buildInto(config: UserConfig, outDir: string): Promise<string> {
  const { build } = await import('vite');
  await build({ ...config, configFile: false, logLevel: 'error', build: { ...config.build, outDir } });
  return outDir;
}

beforeAll(async () => {
  const { rendererViteConfig, rendererE2eViteConfig } = await import('../../electron.vite.config');
  // as `npm run build` does it (vitest runs with NODE_ENV=test, which would give React's development build)
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  let prod: string, e2e: string;
  try {
    prod = await buildInto(rendererViteConfig, path.join(tmp, 'production'));
    e2e = await buildInto(rendererE2eViteConfig, path.join(tmp, 'e2e'));
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
  expect(fs.readFileSync(path.join(prod, RENDERER_FLAVOUR_FILE), 'utf8').trim()).toBe('production');
  expect(fs.readFileSync(path.join(e2e, RENDERER_FLAVOUR_FILE), 'utf8').trim()).toBe('e2e');
  bundles.production = bundleText(prod);
  bundles.e2e = bundleText(e2e);
}, 300_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the test hooks are built into the end-to-end renderer only', () => {
  it('the end-to-end bundle holds every marker of the test hooks (negative control)', () => {
    expect(bundles.e2e.length).toBeGreaterThan(100_000);
    for (const m of HOOK_MARKERS) expect(bundles.e2e, m).toContain(m);
  });

  it('the production bundle holds none of them, and is otherwise the same console', () => {
    expect(bundles.production.length).toBeGreaterThan(100_000);
    for (const m of HOOK_MARKERS) expect(bundles.production, m).not.toContain(m);
    // the console itself is there: the root element and the panels' names
    for (const s of ['MotionBench Console', 'Connections', 'Policy']) expect(bundles.production, s).toContain(s);
    expect(bundles.production.length).toBeLessThan(bundles.e2e.length);
  });
});
