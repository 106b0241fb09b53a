import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startHostServer } from '../../src/services/host/hostServer';
import type { PolicyTestState } from '../../renderer/src/testing/testHooks';
import { SCREENSHOT_DIR } from '../helpers/browserHarness';
import { withoutExperimentConfig, writeHolosomaVariant } from '../helpers/holosomaVariants';
import { ONE_SIM_WORKER, withConsole, withTempDir } from './consoleSession';

// A declared preset in the console, against the real services (`motionbench host` in-process: the
// real policy reader, the file worker, ONNX runtime) and the real UI in Chromium: the released
// holosoma export without its experiment_config, opened by path with no preset, is refused in
// the Policy panel with the missing key and the preset list; picked in the Preset selector, the
// same path opens under holosoma/g1-29dof-wbt and the panel names the preset.

const PRESET = 'holosoma/g1-29dof-wbt';
const tmp = withTempDir('mb-preset-e2e-');
let stripped: string;
beforeAll(() => {
  stripped = writeHolosomaVariant(path.join(tmp(), 'model_39999.onnx'), withoutExperimentConfig);
});
const ui = withConsole(() => startHostServer({ port: 0 }), {
  viewport: { width: 1600, height: 960 },
  env: ONE_SIM_WORKER,
});
const page = ui.page;
const pageErrors = ui.errors;

const policy = (): Promise<PolicyTestState> => page.evaluate(() => window.__motionbench!.policy());
const text = (testId: string) => page.locator(`[data-testid="${testId}"]`).textContent();

async function openByPath(p: string): Promise<void> {
  await page.locator('[data-testid=policy-path]').fill(p);
  await page.locator('[data-testid=policy-open]').click();
  await expect.poll(async () => (await policy()).opening, { timeout: 30_000 }).toBe(false);
}

describe('console: a policy file without its interface, opened under a declared preset', () => {
  it('refuses it without a preset, naming experiment_config and the presets', async () => {
    await expect(page.locator('[data-testid=policy-preset-select]').inputValue()).resolves.toBe('');
    await expect(
      page.locator('[data-testid=policy-preset-select] option').evaluateAll((opts) => opts.map((o) => o.textContent)),
    ).resolves.toEqual(['none: the file states its interface', PRESET]);
    await openByPath(stripped);
    const p = await policy();
    expect(p.info).toBeNull();
    expect(p.errorCode).toBe('input_error');
    const shown = await text('policy-error');
    expect(shown).toContain('[metadata_props.experiment_config]');
    expect(shown).toContain(`declared presets: ${PRESET}`);
    await page
      .locator('[data-testid=policy-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '55-policy-preset-needed.png') });
  }, 60_000);

  it('opens it under the preset picked in the selector; the panel names the preset', async () => {
    await page.locator('[data-testid=policy-preset-select]').selectOption(PRESET);
    await openByPath(stripped);
    const p = await policy();
    expect(p.errorCode ?? null).toBeNull();
    expect(p.info).toMatchObject({ family: 'holosoma-wbt', preset: `${PRESET}@1`, observationSize: 154 });
    await expect(text('policy-preset')).resolves.toBe(`${PRESET}@1`);
    await expect(text('policy-binding')).resolves.toContain(`holosoma-wbt/model_39999+${PRESET}`);
    await expect(page.locator('[data-testid=policy-error]').count()).resolves.toBe(0);
    await page
      .locator('[data-testid=policy-panel]')
      .screenshot({ path: path.join(SCREENSHOT_DIR, '56-policy-opened-under-preset.png') });
  }, 60_000);

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
