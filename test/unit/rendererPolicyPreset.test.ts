import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiMethod } from '../../src/api/contract';
import { createConsoleApi, type ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { useConnectionStore } from '../../renderer/src/api/connectionStore';
import { formatApiError } from '../../renderer/src/api/formatApiError';
import {
  openPolicy,
  patchPolicyPath,
  patchPolicyPreset,
  reopenPolicy,
} from '../../renderer/src/policies/policyActions';
import { PolicyPanel } from '../../renderer/src/policies/PolicyPanel';
import { usePolicyStore } from '../../renderer/src/policies/policyStore';
import { HOLOSOMA_WBT, withoutExperimentConfig, writeHolosomaVariant } from '../helpers/holosomaVariants';
import { inProcessConsoleClient } from '../helpers/inProcessConsoleClient';

// The Policy panel's preset selector against the real policies.open of the console services: the
// released holosoma export without its experiment_config is refused with the reason (and the
// preset list) as the panel shows it, opens under the preset picked in the selector (its info
// names the preset), and re-opens under it. An unknown preset is refused where the
// request enters (the zod schema), a preset for a file that carries its interface by the services.

const PRESET = 'holosoma/g1-29dof-wbt';
let api: ConsoleApi;
let dir: string;
let stripped: string;
const sent: { method: ApiMethod; params: unknown }[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-preset-panel-'));
  stripped = writeHolosomaVariant(path.join(dir, 'model_39999.onnx'), withoutExperimentConfig);
  api = createConsoleApi({ transport: 'host' });
  const client = inProcessConsoleClient(api, (method, params) => void sent.push({ method, params }));
  useConnectionStore.setState({ client, status: 'connected' });
});

afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The panel as first drawn (a server render sees the stores' initial state). */
const panel = () => renderToStaticMarkup(createElement(PolicyPanel));

describe('the Policy panel preset selector', () => {
  it('lists the declared presets, with none selected by default', () => {
    const html = panel();
    expect(html).toContain('data-testid="policy-preset-select"');
    expect(html).toMatch(/<option value="" selected="">none: the file states its interface<\/option>/);
    expect(html).toContain(`<option value="${PRESET}"`);
  });

  it('shows the refusal of a file without its interface, then opens it under the picked preset', async () => {
    patchPolicyPath(stripped);
    patchPolicyPreset('');
    await openPolicy();
    const refused = usePolicyStore.getState();
    expect(refused.info).toBeNull();
    expect(refused.error).toMatchObject({
      code: 'input_error',
      location: { file: stripped, key: 'metadata_props.experiment_config' },
    });
    const text = formatApiError(refused.error!);
    expect(text).toContain('--preset');
    expect(text).toContain(PRESET);

    patchPolicyPreset(PRESET);
    await openPolicy();
    const s = usePolicyStore.getState();
    expect(s.error).toBeNull();
    expect(sent.at(-1)).toEqual({ method: 'policies.open', params: { path: stripped, preset: PRESET } });
    expect(s.info).toMatchObject({
      family: 'holosoma-wbt',
      preset: 'holosoma/g1-29dof-wbt@1',
      bindingId: 'holosoma-wbt/model_39999+holosoma/g1-29dof-wbt',
      observationSize: 154,
      motion: { frames: 1159, fps: 50 },
    });
    // A re-open (services restarted) names the same preset and comes back under the same id.
    expect(await reopenPolicy(useConnectionStore.getState().client!)).toBe(true);
    expect(sent.at(-1)).toEqual({ method: 'policies.open', params: { path: stripped, preset: PRESET } });
  }, 60_000);

  it('refuses an unknown preset where the request enters, and a preset for a file with its own interface', async () => {
    const unknown = await api.invoke('policies.open', { path: stripped, preset: 'holosoma/none' });
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.error).toMatchObject({ code: 'bad_params', field: 'params.preset' });
    expect(!unknown.ok && unknown.error.message).toContain(PRESET);

    patchPolicyPath(HOLOSOMA_WBT);
    patchPolicyPreset(PRESET);
    await openPolicy();
    const s = usePolicyStore.getState();
    expect(s.error).toMatchObject({
      code: 'input_error',
      location: { file: HOLOSOMA_WBT, key: 'metadata_props.experiment_config' },
    });
    expect(s.info?.preset).toBe('holosoma/g1-29dof-wbt@1'); // the previous policy stays open
  }, 60_000);
});
