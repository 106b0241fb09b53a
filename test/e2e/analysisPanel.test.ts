import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostApiCall } from './e2eSupport';
import type { AnalysisDocument, GapReplayDto } from '../../src/api/contract';
import { analysisJson } from '../../src/services/analysis/analysisFormat';
import { runCampaignAnalysis } from '../../src/services/analysis/campaignAnalysisReader';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { openCampaign } from '../../src/services/trace';
import type { MotionbenchTestState, OverlayTestState } from '../../renderer/src/testing/testHooks';
import { ensureRendererBuilt, launchChromium, screenshot } from '../helpers/browserHarness';
import { buildStandInGapCampaign } from '../helpers/gapCampaign';
import { motionbench } from '../helpers/runCli';

// The Analysis panel (issue 14 item 8) against the real services (`motionbench host` in-process)
// and the real UI in Chromium, on one campaign holding a real qualification (child process qualify:
// real MuJoCo; three builtin bindings × four core-v1 clips) and the stand-in matched pairs of Gap
// review's test (test/helpers/gapCampaign.ts: SYNTHETIC STAND-INS FOR HARDWARE TRIALS, simulator
// runs recorded as real_robot). Checks: analysis.run gives the document `motionbench analyze
// --json` computes in-process from the same store; bad requests name the field; the panel draws the
// forest plot (a series per binding with a whisker per reading), the ρ heat map, the selection path
// (a bar per step) and the Bradley–Terry strengths, with screenshots; a clip's gap opens that pair
// in Gap review at its worst frame.

let server: HostServer;
let browser: Browser;
let page: Page;
let tmp: string;
let dir: string;

const state = (): Promise<MotionbenchTestState> => page.evaluate(() => window.__motionbench!.state());
const overlay = (): Promise<OverlayTestState> => page.evaluate(() => window.__motionbench!.overlay());
const plots = () => page.evaluate(() => window.__motionbench!.analysisPlots());

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-analysis-e2e-'));
  dir = path.join(tmp, 'campaign');
  await buildStandInGapCampaign(dir);
  const q = await motionbench(
    'qualify',
    '--workload',
    'core-v1',
    ...['builtin', 'builtin:assist=1000', 'builtin:assist=3000'].flatMap((b) => ['--binding', b]),
    ...['ub_wave_right', 'ip_torso_twist', 'ub_arm_circles', 'loco_walk_forward'].flatMap((c) => ['--clip', c]),
    '--rollouts',
    '1',
    '--workers',
    '2',
    '--campaign',
    dir,
  );
  expect(q.code, q.stderr).toBe(0);
  await ensureRendererBuilt();
  server = await startHostServer({ port: 0 });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(server.url);
  await page.locator('[data-testid=connection-status]', { hasText: 'Connected' }).waitFor();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('console: Analysis panel', () => {
  it('analysis.run is the document motionbench analyze computes; bad requests name the field', async () => {
    const doc = await hostApiCall<AnalysisDocument>(server, 'analysis.run', { campaignDir: dir, replicates: 300 });
    const store = await openCampaign(dir, { readOnly: true });
    let here: AnalysisDocument;
    try {
      here = analysisJson(runCampaignAnalysis(store, { reading: 'mpjpeLMm', share: 0.8, seed: 1, B: 300, btB: 150 }));
    } finally {
      store.close();
    }
    expect(doc).toEqual(here);
    expect(doc.gaps).toHaveLength(1);
    expect(doc.matrix_used.bindings).toHaveLength(3);
    await expect(hostApiCall(server, 'analysis.run', { campaignDir: 'relative' })).rejects.toThrow(
      /campaignDir.*absolute/,
    );
    await expect(hostApiCall(server, 'analysis.run', { campaignDir: dir, reading: 'speed' })).rejects.toThrow(
      /reading/,
    );
    await expect(hostApiCall(server, 'analysis.run', { campaignDir: dir, share: 0 })).rejects.toThrow(/share/);
    await expect(hostApiCall(server, 'analysis.run', { campaignDir: path.join(tmp, 'nope') })).rejects.toThrow(
      /no campaign/,
    );
  });

  it('draws the forest plot, the heat map, the selection path and the strengths', async () => {
    await page.locator('[data-testid=dock-tab-analysis]').click();
    await page.locator('[data-testid=analysis-campaign-dir]').fill(dir);
    await page.locator('[data-testid=analysis-run]').click();
    await page.locator('[data-testid=analysis-summary]').waitFor({ timeout: 120_000 });
    await expect(page.locator('[data-testid=analysis-summary]').textContent()).resolves.toMatch(
      /3 bindings × 4 clips .*1 bindings with matched pairs/,
    );
    const byId = new Map((await plots()).map((p) => [p.id, p]));
    const forest = byId.get('gap-forest')!;
    expect(forest.categories).toHaveLength(9);
    expect(forest.series).toHaveLength(1);
    // Both pairs have every error reading: a CI on each but SR and progress (equal everywhere).
    expect(forest.series[0].whiskers).toBeGreaterThanOrEqual(7);
    expect(forest.plotRect.width).toBeGreaterThan(300);
    const pathPlot = byId.get('selection-path')!;
    expect(pathPlot.categories).toHaveLength(4);
    expect(pathPlot.series.map((s) => [s.kind, s.points])).toEqual([
      ['bars', 4],
      ['line', 4],
    ]);
    const bt = byId.get('bt-strengths')!;
    expect(bt.categories).toHaveLength(3);
    expect(bt.series[0].whiskers).toBe(3);
    await expect(page.locator('[data-testid=analysis-heatmap] td[data-testid^=analysis-rho-]').count()).resolves.toBe(
      49,
    );
    await page.locator('[data-testid=dock-splitter]').focus();
    await page.keyboard.press('PageUp');
    await page.keyboard.press('PageUp');
    await screenshot(page, '80-analysis-panel');
    await page.locator('[data-testid=analysis-heatmap]').scrollIntoViewIfNeeded();
    await screenshot(page, '81-analysis-heatmap-path');
    await page.locator('[data-testid=analysis-plot-bt-strengths]').scrollIntoViewIfNeeded();
    await screenshot(page, '82-analysis-strengths');
  }, 180_000);

  it('the Trial runner can queue exactly the minimal clip set of the analysis', async () => {
    const doc = await hostApiCall<AnalysisDocument>(server, 'analysis.run', { campaignDir: dir, replicates: 300 });
    if (!('minimal_set' in doc.selection)) throw new Error('no minimal set');
    const set = doc.selection.minimal_set_names;
    await page.locator('[data-testid=trial-dir]').fill(dir);
    await page.locator('[data-testid=trial-load]').click();
    await page.locator('[data-testid=trial-queue]').waitFor();
    const all = await page.locator('[data-testid=trial-queue] li[data-testid^=trial-pair-]').count();
    expect(all).toBe(12); // 3 bindings × 4 clips
    await page.locator('[data-testid=trial-minimal-set]').check();
    const shown = await page
      .locator('[data-testid=trial-queue] li[data-testid^=trial-pair-]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace('trial-pair-', '')));
    expect(shown).toEqual(set.flatMap((c) => [c, c, c]));
    await page.locator('[data-testid=trial-minimal-set]').uncheck();
  }, 60_000);

  it('a clip’s gap opens its matched pair in Gap review at the worst frame', async () => {
    const first = page.locator('[data-testid=analysis-clip-gaps] button[data-testid^=analysis-open-]').first();
    const id = (await first.getAttribute('data-testid'))!.replace('analysis-open-', '');
    await first.click();
    await page.locator('[data-testid=dock-tab-gap][aria-selected=true]').waitFor();
    await page.locator('[data-testid=gap-replay]').waitFor({ timeout: 60_000 });
    const replay = await hostApiCall<GapReplayDto>(server, 'gap.replay', { campaignDir: dir, parentTraceId: id });
    await expect.poll(async () => (await overlay()).runs.length).toBe(1 + replay.real.length);
    await expect.poll(async () => (await state()).frame).toBe(replay.worst!.frame);
    await expect(page.locator('[data-testid=gap-worst-frame]').textContent()).resolves.toBe(
      String(replay.worst!.frame),
    );
    await screenshot(page, '83-analysis-open-in-gap-review');
  }, 120_000);
});
