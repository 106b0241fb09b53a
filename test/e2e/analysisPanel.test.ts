import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hostApiCall } from './e2eSupport';
import type { AnalysisDocument, GapReplayDto, SensitivityDocument } from '../../src/api/contract';
import { analysisJson } from '../../src/services/analysis/analysisFormat';
import { runCampaignAnalysis } from '../../src/services/analysis/campaignAnalysisReader';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { openCampaign } from '../../src/services/trace';
import { screenshot } from '../helpers/browserHarness';
import { storeCalibratedStart } from '../helpers/calibratedPair';
import { motionbench } from '../helpers/runCli';
import { withConsole, withTempDir } from './consoleSession';
import { standInGapCampaign } from './projectFixtures';

// The Analysis panel against the real services (`motionbench host` in-process)
// and the real UI in Chromium, on one campaign holding a real qualification (child process qualify:
// real MuJoCo; three builtin bindings × four core-v1 clips) and the stand-in matched pairs of Gap
// review's test (test/helpers/gapCampaign.ts: SYNTHETIC STAND-INS FOR HARDWARE TRIALS, simulator
// runs recorded as real_robot). Checks: analysis.run gives the document `motionbench analyze
// --json` computes in-process from the same store; bad requests name the field; the panel draws the
// forest plot (a series per binding with a whisker per reading), the ρ heat map, the selection path
// (a bar per step) and the Bradley–Terry strengths, with screenshots; a clip's gap opens that pair
// in Gap review at its worst frame.

let server: HostServer;
const tmp = withTempDir('mb-analysis-e2e-');
let dir: string;
let calibratedPairId = '';
let uncalibratedPairId = '';

beforeAll(async () => {
  dir = path.join(tmp(), 'campaign');
  await standInGapCampaign(dir);
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
  // A calibrated start for one qualification pair (ub_wave_right × assist 3000): what sensitivity perturbs.
  const listed = await motionbench('trial', '--list', '--campaign', dir, '--json');
  expect(listed.code, listed.stderr).toBe(0);
  const pairs = (JSON.parse(listed.stdout) as { pairs: { pairId: string; clipName: string; bindingName: string }[] })
    .pairs;
  calibratedPairId = pairs.find((p) => p.clipName === 'ub_wave_right' && /assist 3000/.test(p.bindingName))!.pairId;
  uncalibratedPairId = pairs.find((p) => p.clipName === 'ub_arm_circles')!.pairId;
  await storeCalibratedStart(dir, calibratedPairId);
}, 300_000);
const ui = withConsole(async () => (server = await startHostServer({ port: 0 })), {
  viewport: { width: 1600, height: 1000 },
});
const { page, state, overlay } = ui;
const plots = () => page.evaluate(() => window.__motionbench!.analysisPlots());

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
    await expect(hostApiCall(server, 'analysis.run', { campaignDir: path.join(tmp(), 'nope') })).rejects.toThrow(
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

  it('at 1366×768 the wheel reaches every section, down to the sensitivity study; a panel that hides its overflow does not (negative control)', async () => {
    await page.setViewportSize({ width: 1366, height: 768 });
    const panel = page.locator('[data-testid=analysis-panel]');
    const lastHeading = page.locator('[data-testid=analysis-panel] section h4').last();
    await expect(lastHeading.textContent()).resolves.toMatch(/Start-state sensitivity/);
    /** Scrolls the panel to its top, wheels down over it, and says whether the last heading is in the dock. */
    const wheelReaches = async (): Promise<boolean> => {
      await panel.evaluate((el) => (el.scrollTop = 0));
      const p = (await panel.boundingBox())!;
      await page.mouse.move(p.x + p.width / 2, p.y + Math.min(p.height / 2, 60));
      for (let i = 0; i < 40; i++) await page.mouse.wheel(0, 400);
      await page.waitForTimeout(200);
      return page.evaluate(() => {
        const body = document.getElementById('dock-body')!.getBoundingClientRect();
        const hs = document.querySelectorAll('[data-testid=analysis-panel] section h4');
        const h = hs[hs.length - 1].getBoundingClientRect();
        return h.top >= body.top && h.bottom <= body.bottom;
      });
    };
    expect(await wheelReaches()).toBe(true);
    await screenshot(page, '83-analysis-scrolled-1366');
    await panel.evaluate((el) => (el.style.overflow = 'hidden'));
    try {
      expect(await wheelReaches()).toBe(false);
    } finally {
      await panel.evaluate((el) => (el.style.overflow = ''));
      await page.setViewportSize({ width: 1600, height: 1000 });
    }
  }, 60_000);

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

  it('runs a pair’s start-state sensitivity: the CLI’s document, refusals, the dominant-direction bars and the ellipses', async () => {
    const doc = await hostApiCall<AnalysisDocument>(server, 'analysis.run', { campaignDir: dir, replicates: 300 });
    // The pairs sensitivity accepts: the one with a calibrated start (the stand-in matched pairs are
    // not qualification pairs: their excerpts were never qualified).
    expect(doc.sensitivity_pairs.map((p) => p.pair_id)).toEqual([calibratedPairId]);
    const params = { campaignDir: dir, pairId: calibratedPairId, scales: [1, 3], seconds: 1, heldOut: 4 };
    // One at a time: a second request while the first runs is refused (the first goes on).
    const first = hostApiCall<SensitivityDocument>(server, 'analysis.sensitivity', params);
    await expect(hostApiCall(server, 'analysis.sensitivity', params)).rejects.toThrow(
      /sensitivity of pair .* is running/,
    );
    const viaApi = await first;
    // The same document `motionbench sensitivity --json` prints for the same pair and settings.
    const cli = await motionbench(
      ...['sensitivity', '--campaign', dir, '--pair', calibratedPairId, '--scales', '1,3'],
      ...['--seconds', '1', '--held-out', '4', '--json'],
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(viaApi).toEqual(JSON.parse(cli.stdout));
    expect(viaApi.replay.bit_identical).toBe(true);
    expect(viaApi.axes).toHaveLength(17);
    expect(viaApi.runs).toBe(3 + 2 * (2 * 17 + 4));
    // Refusals name the field: a pair that is not one, a qualification pair with no calibration, bad scales.
    await expect(
      hostApiCall(server, 'analysis.sensitivity', { ...params, pairId: 'feedfacefeedface' }),
    ).rejects.toThrow(/feedfacefeedface/);
    // A qualification pair with no calibration: nothing to perturb.
    await expect(
      hostApiCall(server, 'analysis.sensitivity', { ...params, pairId: uncalibratedPairId }),
    ).rejects.toThrow(/no calibration/);
    await expect(hostApiCall(server, 'analysis.sensitivity', { ...params, scales: [] })).rejects.toThrow(/scales/);

    // The panel: choose the pair, two scales, one second.
    await page.locator('[data-testid=analysis-plot-bt-strengths]').scrollIntoViewIfNeeded();
    await page.locator('[data-testid=sensitivity-pair]').selectOption(calibratedPairId);
    await page.locator('[data-testid=sensitivity-scales-input]').fill('1, 3, x');
    await page.locator('[data-testid=sensitivity-seconds]').fill('1');
    await page.locator('[data-testid=sensitivity-run]').click();
    await expect(page.locator('[data-testid=sensitivity-error]').textContent()).resolves.toMatch(/"x" is not a number/);
    await page.locator('[data-testid=sensitivity-scales-input]').fill('1, 3');
    await page.locator('[data-testid=sensitivity-run]').click();
    await page.locator('[data-testid=sensitivity-summary]').waitFor({ timeout: 120_000 });
    await expect(page.locator('[data-testid=sensitivity-summary]').textContent()).resolves.toMatch(
      /17 axes; \d+ runs.*bit-identical, ICC\(A,1\) 1\.000/,
    );
    const bars = (await plots()).find((p) => p.id === 'sensitivity-dominant')!;
    expect(bars.categories).toHaveLength(17);
    expect(bars.categories).toContain('L knee');
    expect(bars.series.map((x) => [x.kind, x.points])).toEqual([
      ['bars', 17],
      ['points', 17],
    ]);
    const xy = () => page.evaluate(() => window.__motionbench!.analysisXyPlots());
    const [ellipses] = await xy();
    expect(ellipses.curves.map((c) => c.label)).toEqual(['1 σ', '3 σ', 'isotropic']);
    expect(ellipses.curves[2].maxRadius).toBeCloseTo(1 / Math.sqrt(17), 9);
    // Trace-normalised: no semi-axis beyond 1; the smallest scale's major one is √(dominant share),
    // which is above the isotropic circle (a Gram that is not isotropic).
    const share = viaApi.responses[0].scales[0].dominant_share;
    expect(ellipses.curves[0].maxRadius).toBeCloseTo(Math.sqrt(share), 2);
    expect(ellipses.curves[0].maxRadius).toBeGreaterThan(ellipses.curves[2].maxRadius);
    // Equal units on both axes: a circle is drawn round.
    expect(ellipses.unitsPerPx.x / ellipses.unitsPerPx.y).toBeCloseTo(1, 2);
    await page.locator('[data-testid=sensitivity-section]').scrollIntoViewIfNeeded();
    await screenshot(page, '84-analysis-sensitivity');
    // The joint-angle response's Grams: charts rebuilt from the other response.
    await page.locator('[data-testid=sensitivity-response-joint_position_rad]').check();
    await expect
      .poll(async () => (await xy())[0]?.curves[0].maxRadius)
      .toBeCloseTo(Math.sqrt(viaApi.responses[1].scales[0].dominant_share), 2);
    await screenshot(page, '85-analysis-sensitivity-joints');
  }, 300_000);

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
