import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QualificationReportDto, SimEndEvent } from '../../src/api/contract';
import type { PolicyInfoDto } from '../../src/api/policyContract';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { OUTCOME_TEXT, READING_ROWS } from '../../renderer/src/sim/readingsFormat';
import type { PolicyTestState } from '../../renderer/src/testing/testHooks';
import { SCREENSHOT_DIR, screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole, withTempDir } from './consoleSession';
import { hostApiCall } from './e2eSupport';

// A released policy in the console, against the real services (`motionbench
// host` in-process: the real policy reader, ONNX runtime and embedded MuJoCo) and the real UI in
// Chromium:
//   - a missing file: the Policy panel names it and keeps nothing open;
//   - BeyondMimic Jump_wose (the *_wose export: no root-velocity estimate) by path: family,
//     observation 154 (the terms with their sizes), physics, joint order remapped by name, needs
//     none, the baked motion (165 frames at 50 fps) becomes the clip on display;
//   - the Sim panel offers "policy: beyondmimic/Jump_wose" beside the builtin tracker; at max
//     speed the run ends completed (no hard failure) with its readings; another clip on display
//     refuses the policy in the form, and "Show its motion" puts the baked motion back;
//   - the Qualification board qualifies the policy on its own motion (workload policies, 1
//     rollout): 1 pair decided, and an admitted pair shows in the Trial runner's queue.

const POLICY = path.join(SHARED_DATA, 'policies/beyondmimic/Jump_wose.onnx');
const MISSING = path.join(SHARED_DATA, 'policies/beyondmimic/no_such_policy.onnx');
const OTHER_CLIP = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');

let server: HostServer;
const tmp = withTempDir('mb-policy-e2e-');
// The default backends: the real embedded simulator.
const ui = withConsole(async () => (server = await startHostServer({ port: 0 })), {
  viewport: { width: 1600, height: 960 },
  eventWarnings: true,
  env: ONE_SIM_WORKER,
});
const { page, state, overlay, sims } = ui;
const pageErrors = ui.errors;

const policy = (): Promise<PolicyTestState> => page.evaluate(() => window.__motionbench!.policy());
const text = (testId: string) => page.locator(`[data-testid="${testId}"]`).textContent();

async function openPolicyByPath(p: string, how: 'enter' | 'click'): Promise<void> {
  await page.locator('[data-testid=policy-path]').fill(p);
  if (how === 'enter') await page.locator('[data-testid=policy-path]').press('Enter');
  else await page.locator('[data-testid=policy-open]').click();
  await expect.poll(async () => (await policy()).opening, { timeout: 30_000 }).toBe(false);
}

async function waitForEnd(runId: string, timeout = 90_000): Promise<SimEndEvent> {
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    { timeout, polling: 50 },
  );
  return (await sims()).find((r) => r.runId === runId)!.end!;
}

describe('console: a released policy, opened, run and qualified', () => {
  let info: PolicyInfoDto;

  it('names a missing policy file in the Policy panel and opens nothing', async () => {
    await openPolicyByPath(MISSING, 'enter');
    const p = await policy();
    expect(p.info).toBeNull();
    expect(p.errorCode).toBe('input_error');
    expect(p.error).toBe(`${MISSING}: no such policy file or folder`);
    await expect(text('policy-error')).resolves.toContain(MISSING);
    await expect(text('policy-error')).resolves.toContain('no such policy file or folder');
    await expect(page.locator('[data-testid=policy-info]').count()).resolves.toBe(0);
    expect((await state()).clipId).toBeNull();
    await page
      .locator('[data-testid=policy-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '49-policy-missing-file.png') });
  });

  it('opens Jump_wose by path: family, interface, physics, needs and the baked motion, which becomes the clip on display', async () => {
    await openPolicyByPath(POLICY, 'click');
    const p = await policy();
    expect(p.error).toBeNull();
    expect(p.info).not.toBeNull();
    info = { ...p.info!, bakedClip: null };
    expect(info).toMatchObject({
      family: 'beyondmimic',
      adapter: 'beyondmimic/1',
      bindingId: 'beyondmimic/Jump_wose',
      observationSize: 154,
      needs: [],
      jointOrder: 'isaaclab',
      controlRateHz: 50,
      decimation: 4,
    });
    expect(info.policyId).toMatch(/^policy-[0-9a-f]{16}$/);
    expect(info.motion).toMatchObject({ frames: 165, fps: 50 });
    // The same answer as the API gives any client (same content, same id).
    const api = await hostApiCall<PolicyInfoDto>(server, 'policies.open', { path: POLICY });
    expect(api.policyId).toBe(info.policyId);
    expect(api.motion).toEqual(info.motion);

    // The panel.
    await expect(text('policy-family')).resolves.toBe('beyondmimic');
    await expect(text('policy-adapter')).resolves.toContain('beyondmimic/1');
    await expect(text('policy-binding')).resolves.toBe(`${info.bindingId}@${info.bindingVersion}`);
    await expect(page.locator('[data-testid=policy-observation]').getAttribute('data-size')).resolves.toBe('154');
    await expect(text('policy-observation')).resolves.toBe(
      `154 = ${info.observation.map((t) => `${t.term} ${t.size}`).join(' + ')}`,
    );
    await expect(text('policy-control')).resolves.toBe('50 Hz (5 ms × 4)');
    await expect(text('policy-physics')).resolves.toBe(info.physicsId);
    await expect(text('policy-joint-order')).resolves.toBe('Isaac Lab order, remapped by name');
    await expect(page.locator('[data-testid=policy-needs]').getAttribute('data-value')).resolves.toBe('');
    await expect(text('policy-needs')).resolves.toBe('none beyond joints and IMU');
    await expect(text('policy-motion')).resolves.toMatch(
      /^165 frames at 50 fps \(3\.28 s\) · FK residual (< 0\.001|\d+\.\d+) mm$/,
    );
    await expect(page.locator('[data-testid=policy-notes] summary').textContent()).resolves.toBe(
      `${info.notes.length} notes`,
    );
    await expect(page.locator('[data-testid=policy-show-motion]').count()).resolves.toBe(0); // its motion is on display
    await expect(page.locator('[data-testid=policy-error]').count()).resolves.toBe(0);

    // The baked motion is the clip on display.
    const s = await state();
    expect(s.clipId).toBe(info.motion!.clipId);
    expect(s.frameCount).toBe(165);
    expect(p.bakedClipId).toBe(info.motion!.clipId);
    await expect(text('clip-name')).resolves.toBe('Jump_wose');
    await expect(page.locator('[data-testid=clip-info]').textContent()).resolves.toContain(
      'reference baked into a policy',
    );

    await page.locator('[data-testid=policy-notes] summary').click();
    await page.waitForTimeout(150);
    await screenshot(page, '50-policy-opened');
    await page
      .locator('[data-testid=policy-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '51-policy-panel.png') });
    await page.locator('[data-testid=policy-notes] summary').click();
  });

  it('runs the policy in simulation at max speed: completed, no hard failure, readings shown', async () => {
    const binding = page.locator('[data-testid=sim-binding]');
    await expect(binding.locator('option[value=policy]').textContent()).resolves.toBe('policy: beyondmimic/Jump_wose');
    await binding.selectOption('policy');
    await expect(text('sim-note')).resolves.toBe(
      `released policy beyondmimic, physics ${info.physicsId}, no root assist`,
    );
    await expect(page.locator('[data-testid=sim-assist]').count()).resolves.toBe(0);
    await page.locator('[data-testid=sim-pace]').selectOption('max');
    await page.locator('[data-testid=sim-max-seconds]').fill('');
    await expect(page.locator('[data-testid=sim-run]').isEnabled()).resolves.toBe(true);
    await page.locator('[data-testid=sim-run]').click();
    await expect.poll(async () => (await sims()).length, { timeout: 30_000 }).toBe(1);
    const run = (await sims())[0];
    expect(run.bindingSpec).toBe(info.policyId);
    expect(run.clipId).toBe(info.motion!.clipId);
    expect(run.plannedFrames).toBe(165);

    const end = await waitForEnd(run.runId);
    expect(end.outcome, end.reason).toBe('completed');
    expect(end.failure).toBeNull();
    expect(end.frames).toBe(165);
    expect(end.metrics.failure).toEqual({ available: true, value: null });
    await expect(page.locator('[data-testid=sim-status]').getAttribute('data-outcome')).resolves.toBe('completed');
    await expect(text(`sim-outcome-${run.runId}`)).resolves.toBe(OUTCOME_TEXT.completed);
    await expect(text(`sim-failed-${run.runId}`)).resolves.toBe('no');
    await expect(page.locator(`[data-testid=sim-col-${run.runId}] .col-sub`).textContent()).resolves.toBe('Jump_wose');
    for (const row of READING_ROWS) {
      const r = end.metrics[row.key];
      expect(r.available, row.key).toBe(true);
      await expect(
        page.locator(`[data-testid=sim-reading-${row.key}-${run.runId}]`).getAttribute('data-value'),
      ).resolves.toBe(String(r.available && r.value));
    }
    // The tracking policy tracks its own motion (MPJPE-l within 10 cm), and the run is overlaid for replay.
    expect(end.metrics.mpjpeLMm.available && end.metrics.mpjpeLMm.value).toBeLessThan(100);
    await expect
      .poll(async () => (await overlay()).runs[0], { timeout: 10_000 })
      .toMatchObject({ id: run.runId, live: false, outcome: 'completed', samples: 165 });
    const ov = (await overlay()).runs[0];
    expect(ov.label).toBe('#1 Jump_wose · seed 0');
    expect(ov.note).toBe(run.bindingLabel); // the policy's label, never the builtin note
    await expect(text('sim-readings-note')).resolves.toBe('readings: batch mb-metrics/1 over the recorded run');
    await page.locator('[data-testid=scrubber]').fill('80');
    await expect.poll(async () => (await overlay()).runs[0].drawn, { timeout: 10_000 }).toBe(true);
    await page.waitForTimeout(200);
    await screenshot(page, '52-policy-sim-run');
    await page.locator('[data-testid=runs-panel]').scrollIntoViewIfNeeded();
    await page
      .locator('[data-testid=sim-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '52b-policy-sim-panel.png') });
    await page
      .locator('[data-testid=runs-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '52c-policy-runs-panel.png') });
  });

  it('refuses the policy on another clip in the form, and puts its motion back on request', async () => {
    await page.locator('[data-testid=fps-input]').fill('');
    await page.locator('[data-testid=clip-file-input]').setInputFiles(OTHER_CLIP);
    await expect.poll(async () => (await state()).clipName, { timeout: 30_000 }).toBe('B_HandsUp'); // decoded in the file worker
    await expect(text('sim-error')).resolves.toBe(
      'policy beyondmimic/Jump_wose tracks only the motion baked into it (Jump_wose): show its motion (Policy panel) to run it',
    );
    await expect(page.locator('[data-testid=sim-run]').isDisabled()).resolves.toBe(true);
    await page.locator('[data-testid=policy-show-motion]').click();
    await expect.poll(async () => (await state()).clipId).toBe(info.motion!.clipId);
    await expect(page.locator('[data-testid=sim-error]').count()).resolves.toBe(0);
    await expect(page.locator('[data-testid=sim-run]').isEnabled()).resolves.toBe(true);
    // The builtin choices still carry the builtin note.
    await page.locator('[data-testid=sim-binding]').selectOption('assist');
    await expect(text('sim-note')).resolves.toBe('builtin = reference tracker, not a policy');
    await page.locator('[data-testid=sim-binding]').selectOption('policy');
  });

  it('qualifies the policy on its own motion from the board (1 rollout): 1 pair decided, shown in the Trial runner', async () => {
    const dir = path.join(tmp(), 'campaign');
    await page.locator('[data-testid=qual-dir]').fill(dir);
    await page.locator('[data-testid=qual-create]').click();
    await expect.poll(() => fs.existsSync(path.join(dir, 'campaign.sqlite')), { timeout: 20_000 }).toBe(true);
    await page.locator('[data-testid=qual-rollouts]').fill('1');
    await expect(page.locator('[data-testid=qual-policy-start]').textContent()).resolves.toContain(
      'beyondmimic/Jump_wose',
    );
    await page.locator('[data-testid=qual-start-policy]').click();
    await page.locator('[data-testid=qual-progress]').waitFor();
    await expect.poll(() => text('qual-job-state'), { timeout: 60_000, interval: 250 }).toBe('completed');
    await expect(text('qual-pairs')).resolves.toBe('1/1 pairs');
    const report = await hostApiCall<QualificationReportDto>(server, 'qualification.report', { campaignDir: dir });
    expect(report.cells).toHaveLength(1);
    const cell = report.cells[0];
    expect(cell.bindingKey).toBe(`${info.bindingId}@${info.bindingVersion}`);
    expect(cell.clipId).toBe(info.motion!.clipId);
    expect(cell.state).not.toBe('pending');
    const clipName = report.clips.find((c) => c.id === cell.clipId)!.name;
    await expect
      .poll(() => page.locator(`[data-testid="qual-cell-${cell.bindingKey}-${clipName}"]`).getAttribute('data-state'), {
        timeout: 10_000,
      })
      .toBe(cell.state);
    // A click on the cell replays the rollout over its reference (the baked motion).
    await page.locator(`[data-testid="qual-cell-${cell.bindingKey}-${clipName}"]`).click();
    await page.locator('[data-testid=qual-replay]').waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await state()).clipId, { timeout: 10_000 }).toBe(info.motion!.clipId);
    await expect.poll(async () => (await overlay()).runs.map((r) => r.live), { timeout: 10_000 }).toEqual([false]);
    await page.waitForTimeout(200);
    await screenshot(page, '53-policy-qualified');
    // Matched trials pick admitted pairs from the campaign: the policy's pair is listed.
    await page.locator('[data-testid=trial-dir]').fill(dir);
    await page.locator('[data-testid=trial-load]').click();
    await page.locator(`[data-testid="trial-pair-${clipName}"]`).waitFor();
    await expect(page.locator(`[data-testid="trial-pair-${clipName}"]`).getAttribute('data-admitted')).resolves.toBe(
      cell.state === 'admitted' ? 'true' : 'false',
    );
    await page
      .locator('[data-testid=trial-queue]')
      .locator('..')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '54-policy-trial-queue.png') });
  }, 120_000);

  it('logged no page errors and no invalid events', () => {
    expect(pageErrors).toEqual([]);
  });
});
