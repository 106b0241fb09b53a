import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { SimEndEvent } from '../../src/api/contract';
import { startHostServer } from '../../src/services/host/hostServer';
import { STOP_KEYS_LABEL, STOP_KEYS_TITLE } from '../../renderer/src/safety/stopKeys';
import type { SimRunTestState } from '../../renderer/src/testing/testHooks';
import { screenshot, SCREENSHOT_DIR, SHARED_DATA } from '../helpers/browserHarness';
import { ONE_SIM_WORKER, withConsole } from './consoleSession';

// Typing a space into a text field must not fire the operator STOP (it damps the
// robot), while Escape still stops from inside the field and Space stops with focus on the page.
// Against the real services (`motionbench host` in-process, the real embedded MuJoCo simulator)
// and the real UI in Chromium: a simulation run is going on (a STOP would end it
// aborted_by_operator in the services), and real key presses (key-down, key-up, input) type
// values with spaces into the Bindings field, the campaign folder fields and the calibration's
// clip-name field: each field holds exactly what was typed, no stop was requested and the run
// goes on. Then Escape inside the Bindings field ends the run aborted_by_operator
// (key:Escape); a new run, focus on the page body, Space ends it (key:Space).

const DANCE = path.join(SHARED_DATA, 'motions/lafan1_g1_csv/dance1_subject2.csv');

const ui = withConsole(() => startHostServer({ port: 0 }), {
  viewport: { width: 1600, height: 960 },
  eventWarnings: true,
  env: ONE_SIM_WORKER,
});
const { page, tid, sims } = ui;
const pageErrors = ui.errors;
const runOf = async (runId: string): Promise<SimRunTestState> => (await sims()).find((r) => r.runId === runId)!;
const operatorStops = (): Promise<number> => page.evaluate(() => window.__motionbench!.operatorStops());
const activeTestId = (): Promise<string | null> =>
  page.evaluate(
    () => (document.activeElement as HTMLElement | null)?.dataset.testid ?? document.activeElement?.tagName ?? null,
  );

/** A 20 s simulation run of the loaded clip at real time, with at least 30 frames on screen. */
async function startLongRun(): Promise<string> {
  const before = (await sims()).length;
  await tid('sim-run').click();
  await expect.poll(async () => (await sims()).length, { timeout: 20_000 }).toBe(before + 1);
  const runId = (await sims()).at(-1)!.runId;
  await page.waitForFunction(
    (id) => (window.__motionbench!.sim().find((r) => r.runId === id)?.framesReceived ?? 0) >= 30,
    runId,
    { timeout: 20_000 },
  );
  return runId;
}

async function waitForEnd(runId: string): Promise<SimEndEvent> {
  await page.waitForFunction(
    (id) => window.__motionbench!.sim().find((r) => r.runId === id)?.state === 'ended',
    runId,
    { timeout: 5_000, polling: 20 },
  );
  return (await runOf(runId)).end!;
}

/** Clicks into a field, clears it, and types `text` key by key (Space included) as a person does. */
async function typeInto(id: string, text: string): Promise<void> {
  await tid(id).click();
  await tid(id).fill('');
  await page.keyboard.type(text);
}

beforeAll(async () => {
  await tid('fps-input').fill('30');
  await tid('clip-file-input').setInputFiles(DANCE);
  await page.waitForFunction(() => window.__motionbench!.state().clipId !== null);
  await tid('sim-binding').selectOption('assist');
  await tid('sim-pace').selectOption('1');
  await tid('sim-max-seconds').fill('20');
});

describe('console: STOP keys', () => {
  it('shows its keys on the STOP button, with a tooltip saying Space is ignored while typing', async () => {
    await expect(tid('stop-keys').textContent()).resolves.toBe(STOP_KEYS_LABEL);
    await expect(tid('stop-button').getAttribute('title')).resolves.toBe(STOP_KEYS_TITLE);
    expect(STOP_KEYS_TITLE).toMatch(/Esc works everywhere/);
    expect(STOP_KEYS_TITLE).toMatch(/Space works unless the cursor is in a text field/);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await tid('stop-button').screenshot({ path: path.join(SCREENSHOT_DIR, 'stop-keys-button.png') });
  });

  it('spaces typed into the Bindings, folder and clip-name fields do not STOP a running simulation', async () => {
    onTestFailed(async () => {
      await screenshot(page, 'stop-keys-typing-failed').catch(() => undefined);
    });
    const runId = await startLongRun();
    const framesBefore = (await runOf(runId)).framesReceived;
    expect(await operatorStops()).toBe(0);

    const typed: [string, string][] = [
      // The Bindings field's own default has a space after the comma.
      ['qual-bindings', 'builtin, builtin:assist=3000 builtin:assist=1500'],
      ['qual-dir', '/tmp/my campaigns/g1 wave day 2'],
      ['qual-clips', 'ub_wave_right, dyn_fast_punches'],
      ['trial-dir', '/srv/campaigns/lab b/week 12'],
      ['cal-clip', 'ub wave right'],
    ];
    for (const [id, text] of typed) {
      await typeInto(id, text);
      expect(await activeTestId()).toBe(id);
      // Every space reached the field (a STOP key is swallowed: a space-less value would be today's bug too).
      await expect(tid(id).inputValue()).resolves.toBe(text);
    }
    // Key-up of the last space and any stop request have had time to reach the services and back.
    await page.waitForTimeout(500);
    expect(await operatorStops()).toBe(0);
    await expect(tid('last-stop').count()).resolves.toBe(0);
    const run = await runOf(runId);
    expect(run.stopRequestedAtMs).toBeNull();
    expect(run.state).not.toBe('ended');
    expect(run.framesReceived).toBeGreaterThan(framesBefore + 10); // the simulation went on
    await screenshot(page, 'stop-keys-typed');

    // Escape inside the Bindings field: STOP, the run ends aborted by the operator; the text stays.
    await tid('qual-bindings').click();
    expect(await activeTestId()).toBe('qual-bindings');
    await page.keyboard.press('Escape');
    const end = await waitForEnd(runId);
    expect(end.outcome).toBe('aborted_by_operator');
    expect(end.reason).toBe('operator stop (key:Escape)');
    expect(await operatorStops()).toBe(1);
    await expect(tid('last-stop').textContent()).resolves.toMatch(/\(Escape\) · 1 total$/);
    await expect(tid('qual-bindings').inputValue()).resolves.toBe(typed[0][1]);
  }, 90_000);

  it('Space with focus on the page body is STOP', async () => {
    const runId = await startLongRun();
    // Focus leaves the Run button for the page itself.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    expect(await activeTestId()).toBe('BODY');
    const runsBefore = (await sims()).length;
    await page.keyboard.press('Space');
    const end = await waitForEnd(runId);
    expect(end.outcome).toBe('aborted_by_operator');
    expect(end.reason).toBe('operator stop (key:Space)');
    expect(await operatorStops()).toBe(2);
    expect((await sims()).length).toBe(runsBefore); // Space started nothing
    await expect(tid('last-stop').textContent()).resolves.toMatch(/\(Space\) · 2 total$/);
    await page.waitForTimeout(200);
    await screenshot(page, 'stop-keys-space-on-body');
    await page.locator('header.topbar').screenshot({ path: path.join(SCREENSHOT_DIR, 'stop-keys-topbar.png') });
  }, 60_000);

  it('logged no page errors and no invalid events', () => {
    expect(pageErrors).toEqual([]);
  });
});
