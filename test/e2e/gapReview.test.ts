import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canvasColourBox, hostApiCall } from './e2eSupport';
import type { GapContractsDto, GapReplayDto, GapReportDto } from '../../src/api/contract';
import { AGGREGATE_KEYS } from '../../src/domain/metrics/aggregate';
import { READING_INFO } from '../../src/domain/metrics/readings';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { displayGap, displayValue, sortedClips, type GapSection } from '../../src/services/report/gapSection';
import { errorColorHex } from '../../renderer/src/overlay/errorScale';
import { runColorHex } from '../../renderer/src/overlay/runColors';
import { screenshot, SCREENSHOT_DIR } from '../helpers/browserHarness';
import { withConsole, withTempDir } from './consoleSession';
import { standInGapCampaign } from './projectFixtures';

// Gap review (DESIGN §8) against the real services (`motionbench host` in-process) and the real UI
// in Chromium, on a small real campaign of matched pairs built WITHOUT a robot
// (test/helpers/gapCampaign.ts: two 2.5 s clip excerpts, each with a real MuJoCo simulation
// branch and three SYNTHETIC STAND-INS FOR HARDWARE TRIALS — simulator runs with other
// controllers recorded as real_robot; they say nothing about a G1).
// Checks: the panel's Table 11 equals buildGapSection on the same store, a header click sorts the
// per-clip table as the report's rule, a clip click overlays reference + sim + three real trials
// and moves the playhead to the worst frame (whose MPJPE-l the overlay's own FK agrees with),
// each run drawn in its own identity colour (overlay colour mode "by run", checked on canvas
// pixels), and the per-clip table fits the centre column at 1600×1100 without horizontal scroll.

let server: HostServer;
let dir: string;
let section: GapSection;
/** Overlay id of the real trial with the worst frame (set by the replay test). */
let worstRun: string;
const tmp = withTempDir('mb-gap-e2e-');
beforeAll(async () => {
  dir = path.join(tmp(), 'campaign');
  section = await standInGapCampaign(dir);
}, 240_000);
const ui = withConsole(async () => (server = await startHostServer({ port: 0 })), {
  viewport: { width: 1600, height: 1100 },
});
const { page, state, overlay } = ui;
const pageErrors = ui.errors;

const rgbOf = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
/** Two '#rrggbb' within 2/255 per channel (the drawn colour goes through linear RGB and back). */
const hexClose = (a: string, b: string) => rgbOf(a).every((v, c) => Math.abs(v - rgbOf(b)[c]) <= 2);
function hueOf(hex: string): number {
  const [r, g, b] = rgbOf(hex).map((v) => v / 255);
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}
/** Saturated canvas pixels within ±35° of a colour's hue (shading, tone mapping and the ghost in front shift it a little). */
const pixelsOfHue = (hex: string) =>
  canvasColourBox(page, { kind: 'hue', min: (hueOf(hex) + 325) % 360, max: (hueOf(hex) + 35) % 360 }).then(
    (b) => b.count,
  );

describe('console: Gap review', () => {
  it('the campaign has two matched pairs of 1 sim episode + 3 stand-in real trials', () => {
    expect(section.pairs).toHaveLength(2);
    for (const p of section.pairs) expect([p.sim.used, p.real.used]).toEqual([1, 3]);
  });

  it('gap.* refuses bad requests naming the field', async () => {
    await expect(hostApiCall(server, 'gap.report', { campaignDir: 'relative' })).rejects.toThrow(
      /campaignDir.*absolute/,
    );
    await expect(hostApiCall(server, 'gap.report', { campaignDir: path.join(tmp(), 'nope') })).rejects.toThrow(
      /no campaign/,
    );
    await expect(
      hostApiCall(server, 'gap.replay', { campaignDir: dir, parentTraceId: 'pt-doesnotexist' }),
    ).rejects.toThrow(/no matched pair/);
  });

  it('shows Table 11 per binding with the numbers of buildGapSection', async () => {
    await page.locator('[data-testid=dock-tab-gap]').click(); // the bottom dock shows Gap review instead of the Qualification board
    await page.locator('[data-testid=gap-dir]').fill(dir);
    await page.locator('[data-testid=gap-open]').click();
    const w = section.report.wbcs[0];
    const prefix = `gap-t11-${w.wbc}`;
    await page.locator(`[data-testid="${prefix}-table"]`).waitFor();
    await expect(page.locator('[data-testid=gap-summary]').textContent()).resolves.toContain('2 matched pairs');
    for (const row of w.rows) {
      const json = READING_INFO[row.key].json;
      const cell = (s: string) => page.locator(`[data-testid="${prefix}-${json}-${s}"]`);
      for (const [side, r] of [
        ['sim', row.sim],
        ['real', row.real],
      ] as const) {
        const want = r.available ? displayValue(row.key, r) : 'n/a';
        await expect(cell(side).textContent(), `${json} ${side}`).resolves.toBe(want);
        await expect(cell(side).getAttribute('data-value')).resolves.toBe(r.available ? String(r.value) : '');
      }
      await expect(cell('gap').textContent(), `${json} gap`).resolves.toBe(
        row.gapPercent.available ? displayGap(row.gapPercent) : 'n/a',
      );
      await expect(cell('clips').textContent()).resolves.toBe(String(row.clips));
    }
    // Per-clip trial counts.
    for (const p of section.pairs)
      await expect(page.locator(`[data-testid="gap-clip-${p.clipName}-real-trials"]`).textContent()).resolves.toMatch(
        /^3/,
      );
    // Per-clip readings: every cell shows the clip's Gap % and "sim → real", as the report does.
    for (const clip of w.clips) {
      const name = section.pairs.find((p) => p.clipId === clip.clipId)!.clipName;
      for (const row of w.rows) {
        const key = row.key;
        const json = READING_INFO[key].json;
        const cell = page.locator(`[data-testid="gap-clip-${name}-${json}"]`);
        const side = (r: (typeof clip.sim.readings)[typeof key]) => (r.available ? displayValue(key, r) : 'n/a');
        await expect(cell.locator('.gap-pct').textContent(), `${name} ${json} gap`).resolves.toBe(
          clip.gapPercent[key].available ? displayGap(clip.gapPercent[key]) : 'n/a',
        );
        const simReal = (await cell.locator('.gap-sim-real').textContent())!.replace(/\s+/g, ' ');
        expect(simReal, `${name} ${json} sim → real`).toBe(
          `${side(clip.sim.readings[key])} → ${side(clip.real.readings[key])}`,
        );
      }
    }
    // The per-clip table fits the centre column: no horizontal scroll, nothing past its right edge.
    const fit = await page.locator(`[data-testid="gap-clips-${w.wbc}"]`).evaluate((t) => {
      const body = t.closest('.gap-body')!;
      const panel = t.closest('[data-testid=gap-review]')!;
      return {
        bodyScroll: body.scrollWidth,
        bodyClient: body.clientWidth,
        tableRight: t.getBoundingClientRect().right,
        panelRight: panel.getBoundingClientRect().right,
        tableWidth: t.getBoundingClientRect().width,
      };
    });
    expect(fit.bodyScroll, JSON.stringify(fit)).toBeLessThanOrEqual(fit.bodyClient);
    expect(fit.tableRight).toBeLessThanOrEqual(fit.panelRight);
    expect(fit.tableWidth).toBeGreaterThan(600); // the centre column, not a collapsed table
    await screenshot(page, 'gap-review-table');
  });

  it('sorts the per-clip table by a clicked column as the report does, reversed on a second click', async () => {
    const wbc = section.report.wbcs[0].wbc;
    const order = () =>
      page
        .locator(`[data-testid="gap-clips-${wbc}"] tbody tr`)
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid')!.replace(/^gap-clip-/, '')));
    await expect(order()).resolves.toEqual(sortedClips(section, wbc, 'mpjpeLMm').map((x) => x.pair.clipName));
    await page.locator('[data-testid=gap-sort-joint_jerk_p95]').click();
    const byJerk = sortedClips(section, wbc, 'jointJerkP95RadS3').map((x) => x.pair.clipName);
    await expect(order()).resolves.toEqual(byJerk);
    await page.locator('[data-testid=gap-sort-joint_jerk_p95]').click();
    await expect(order()).resolves.toEqual([...byJerk].reverse());
    await page.locator('[data-testid=gap-sort-clip]').click();
    await expect(order()).resolves.toEqual(section.pairs.map((p) => p.clipName).sort());
    expect(AGGREGATE_KEYS).toContain('jointJerkP95RadS3');
  });

  it('a clip click overlays the reference, the sim branch and the three real trials at the worst frame', async () => {
    const pair = section.pairs.find((p) => p.clipName.startsWith('dyn_jump_forward'))!;
    await page.locator(`[data-testid="gap-replay-${pair.clipName}"]`).click();
    await page.locator('[data-testid=gap-replay]').waitFor();
    const replay = await hostApiCall<GapReplayDto>(server, 'gap.replay', {
      campaignDir: dir,
      parentTraceId: pair.parentTraceId,
    });
    expect(replay.sim?.domain).toBe('simulation');
    expect(replay.real.map((r) => r.trialIndex)).toEqual([0, 1, 2]);
    expect(replay.worst).not.toBeNull();
    expect(replay.worst!.measure).toBe('mpjpe_l'); // the stand-ins have a global root (a simulator)
    await expect.poll(async () => (await overlay()).runs.length).toBe(4);
    const o = await overlay();
    expect(o.runs.map((r) => r.id)).toEqual([`gap:${replay.sim!.runId}`, ...replay.real.map((r) => `gap:${r.runId}`)]);
    expect(o.runs.every((r) => r.valid && r.visible && r.samples === replay.reference.frameCount)).toBe(true);
    expect(o.showReference).toBe(true);
    const s = await state();
    expect(s.clipId).toBe(pair.clipId);
    expect(s.frame).toBe(replay.worst!.frame);
    await expect(page.locator('[data-testid=gap-worst-frame]').textContent()).resolves.toBe(
      String(replay.worst!.frame),
    );
    // The overlay's own FK at the playhead agrees with the worst frame's MPJPE-l.
    worstRun = `gap:${replay.worst!.runId}`;
    const shownCm = Number(await page.locator(`[data-testid="run-mpjpe-${worstRun}"]`).textContent());
    expect(Math.abs(shownCm - replay.worst!.value / 10)).toBeLessThan(0.06);
    // The legend names every run and where its root comes from.
    const legend = await page.locator('[data-testid=gap-legend]').textContent();
    expect(legend).toContain('reference');
    expect(legend).toContain('sim branch');
    // Trials numbered from 1, as the Trial runner and the CLI number them (stored indices 0, 1, 2).
    for (const t of [1, 2, 3]) expect(legend).toContain(`real trial ${t}`);
    expect(legend).not.toContain('real trial 0');
    expect(legend).toContain('root measured (motion capture)');
    // Table report of the same campaign from the API matches the section too.
    const rep = await hostApiCall<GapReportDto>(server, 'gap.report', { campaignDir: dir, sort: 'clip' });
    expect(rep.bindings[0].clips.map((c) => c.clip)).toEqual(section.pairs.map((p) => p.clipName).sort());
    await screenshot(page, 'gap-review-replay');
  });

  it('colours the replayed runs by run: sim branch and real trials in distinct swatch colours, by error on request', async () => {
    const ids = (await overlay()).runs.map((r) => r.id);
    const [simId, real0] = ids;
    const mode = page.locator('[data-testid=color-mode]');
    await expect(mode.getAttribute('data-mode')).resolves.toBe('run'); // the replay switched it
    // Swatches: slot k's colour per run, in the replay legend and the viewport legend alike; all different.
    const swatch = (id: string) => page.locator(`[data-testid="gap-swatch-${id}"]`).getAttribute('data-color');
    const colours: string[] = [];
    for (const [k, id] of ids.entries()) {
      const c = (await swatch(id))!;
      expect(c).toBe(runColorHex(k));
      await expect(page.locator(`[data-testid="run-color-${id}"]`).getAttribute('data-color')).resolves.toBe(c);
      await expect(page.locator(`[data-testid="run-swatch-${id}"]`).getAttribute('data-color')).resolves.toBe(c); // the Overlay panel's list
      colours.push(c);
    }
    expect(new Set(colours).size).toBe(ids.length);
    // What is drawn: every body of a run in its swatch colour.
    await expect
      .poll(async () =>
        (await overlay()).runs.every(
          (r, k) => r.drawn && r.drawnColors !== null && r.drawnColors.every((d) => hexClose(d, colours[k])),
        ),
      )
      .toBe(true);

    // Canvas pixels: the sim branch alone shows its hue and not the real trial's, and the other way
    // round. While counting, the ghost is off (its light blue, layered where its bodies overlap,
    // would count as blue) and the HTML over the canvas hidden (the element screenshot has its
    // swatches and buttons).
    await page.locator('[data-testid=show-reference]').uncheck();
    const overCanvas = (visibility: string) =>
      page.evaluate(
        (v) =>
          document
            .querySelectorAll<HTMLElement>('.viewport-overlay, .error-legend')
            .forEach((e) => (e.style.visibility = v)),
        visibility,
      );
    await overCanvas('hidden');
    const simHex = colours[0];
    const realHex = colours[1];
    expect(Math.abs(hueOf(simHex) - hueOf(realHex))).toBeGreaterThan(90);
    const shown = async (visible: string[]) => {
      await expect.poll(async () => (await overlay()).runs.filter((r) => r.drawn).map((r) => r.id)).toEqual(visible);
      await page.waitForTimeout(200);
    };
    await page.locator(`[data-testid="gap-solo-${simId}"]`).click();
    await shown([simId]);
    const simAlone = { sim: await pixelsOfHue(simHex), real: await pixelsOfHue(realHex) };
    await screenshot(page, 'gap-review-by-run-sim');
    await page.locator(`[data-testid="gap-solo-${real0}"]`).click();
    await shown([real0]);
    const realAlone = { sim: await pixelsOfHue(simHex), real: await pixelsOfHue(realHex) };
    await screenshot(page, 'gap-review-by-run-real0');
    expect(simAlone.sim, JSON.stringify({ simAlone, realAlone })).toBeGreaterThan(1500);
    expect(simAlone.real).toBeLessThan(simAlone.sim / 10);
    expect(realAlone.real, JSON.stringify({ simAlone, realAlone })).toBeGreaterThan(1500);
    expect(realAlone.sim).toBeLessThan(realAlone.real / 10);
    await page.locator(`[data-testid="gap-solo-${real0}"]`).click(); // again: all
    await shown(ids);
    await overCanvas('');

    // Back to "by error": bodies in the error scale, the sim branch's blue gone from the canvas.
    await page.locator('[data-testid=color-mode-error]').click();
    await expect(mode.getAttribute('data-mode')).resolves.toBe('error');
    await expect(page.locator(`[data-testid="gap-swatch-${simId}"]`).getAttribute('data-color')).resolves.toBe('');
    await expect(page.locator(`[data-testid="run-swatch-${simId}"]`).count()).resolves.toBe(0); // identity swatches only in "by run"
    await expect
      .poll(async () => {
        const r = (await overlay()).runs[0];
        return (
          r.drawnColors !== null &&
          r.bodyErrM.length > 0 &&
          r.drawnColors.every((d, b) => hexClose(d, errorColorHex(r.bodyErrM[b])))
        );
      })
      .toBe(true);
    await page.waitForTimeout(200);
    await overCanvas('hidden');
    const byError = await pixelsOfHue(simHex);
    expect(byError, JSON.stringify({ byError, simAlone })).toBeLessThan(simAlone.sim / 10);
    await overCanvas('');
    await page.locator('[data-testid=color-mode-run]').click();
    await expect(mode.getAttribute('data-mode')).resolves.toBe('run');
    await page.locator('[data-testid=show-reference]').check();
    await screenshot(page, 'gap-review-by-run');
    await expect
      .poll(async () => (await overlay()).runs[0].drawnColors?.every((d) => hexClose(d, simHex)) ?? false)
      .toBe(true);
  });

  it('"solo" shows the worst trial alone', async () => {
    await page.locator(`[data-testid="gap-solo-${worstRun}"]`).click();
    await expect.poll(async () => (await overlay()).runs.filter((r) => r.visible).map((r) => r.id)).toEqual([worstRun]);
    await screenshot(page, 'gap-review-solo-worst');
    expect(pageErrors).toEqual([]);
  });

  it('metric contracts: "Score and compare" scores the sim and stand-in real episodes under sonic-eval/1 and holomotion-eval/1 and shows them beside mb-metrics/1', async () => {
    // nothing stored yet: the comparison names the unscored episodes
    const before = await hostApiCall<GapContractsDto>(server, 'gap.contracts', {
      campaignDir: dir,
      contracts: ['sonic-eval/1', 'holomotion-eval/1'],
      score: false,
    });
    expect(before.unscored.map((u) => u.contract)).toEqual(['sonic-eval/1', 'holomotion-eval/1']);
    await expect(
      hostApiCall(server, 'gap.contracts', { campaignDir: dir, contracts: ['smplsim/1'], score: false }),
    ).rejects.toThrow(/contracts/);
    await page.locator('[data-testid=gap-contracts]').scrollIntoViewIfNeeded();
    await page.locator('[data-testid=gap-contracts-score]').click();
    await page.locator('[data-testid=gap-contracts-table]').waitFor();
    const after = await hostApiCall<GapContractsDto>(server, 'gap.contracts', {
      campaignDir: dir,
      contracts: ['sonic-eval/1', 'holomotion-eval/1'],
      score: false,
    });
    expect(after.unscored).toEqual([]);
    expect(new Set(after.rows.map((r) => r.domain))).toEqual(new Set(['simulation', 'real_robot']));
    for (const r of after.rows) {
      const id = `${r.binding}-${r.domain}`;
      expect(r.sonic!.scored).toBe(r.mb.episodes);
      await expect(page.locator(`[data-testid="contracts-${id}-sonic-mpjpe-l"]`).textContent()).resolves.toBe(
        r.sonic!.mpjpeLMm!.toFixed(1),
      );
      await expect(page.locator(`[data-testid="contracts-${id}-holo-mpjpe-l"]`).textContent()).resolves.toBe(
        r.holomotion!.mpjpeLMm!.toFixed(1),
      );
      await expect(page.locator(`[data-testid="contracts-${id}-mb-mpjpe-l"]`).textContent()).resolves.toBe(
        r.mb.mpjpeLMm!.toFixed(1),
      );
    }
    await expect(page.locator('[data-testid=gap-contracts-note]').textContent()).resolves.toMatch(
      /episode results scored and stored now/,
    );
    await page
      .locator('[data-testid=gap-contracts]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, 'gap-review-contracts.png') });
    // one contract only: its columns alone
    await page.locator('[data-testid=gap-contracts-select]').selectOption({ index: 1 });
    await page.locator('[data-testid=gap-contracts-compare]').click();
    await page.locator('[data-testid=gap-contracts-table]').waitFor();
    await expect(page.locator('[data-testid=gap-contracts-table] thead').textContent()).resolves.not.toMatch(
      /holomotion-eval/,
    );
    expect(pageErrors).toEqual([]);
  });
});
