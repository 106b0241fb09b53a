// `motionbench sensitivity` on a real pair in real MuJoCo: a qualification pair (in-process
// qualify), a calibration of it stored as the matched-pair runner stores one (measured at the clip's
// first frame, bound to the clip by withClip), then the CLI. Checked: the axes by joint name with
// their σ sources, the replay audit (bit-identical repeats, ICC 1), the Grams symmetric and positive
// semi-definite with unit dominant directions, and — the property that could fail — the Gram
// predicting held-out directions better than the isotropic reference at the smallest scale.
// A pair without a calibration is refused with the reason.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { createConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { openCampaign } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { storeCalibratedStart } from '../helpers/calibratedPair';
import { motionbenchInProcess as motionbench } from '../helpers/runCli';
import { qualifyArgs } from '../helpers/qualifyArgs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-sensitivity-'));
const campaign = path.join(root, 'campaign');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let calibrated = '';
let uncalibrated = '';

beforeAll(async () => {
  const clips = ['ub_wave_right', 'ip_torso_twist'];
  const q = await motionbench(...qualifyArgs({ bindings: ['builtin:assist=3000'], clips, rollouts: 1, campaign }));
  expect(q.code, q.stderr).toBe(0);
  const store = await openCampaign(campaign);
  try {
    const pairs = listAdmittedPairs(store);
    calibrated = pairs.find((p) => p.clipName === 'ub_wave_right')!.pairId;
    uncalibrated = pairs.find((p) => p.clipName === 'ip_torso_twist')!.pairId;
  } finally {
    store.close();
  }
  // One joint measured noisier than the floor: its σ must be the measured one.
  await storeCalibratedStart(campaign, calibrated, { left_knee_joint: 0.004 });
}, 240_000);

describe('motionbench sensitivity (real MuJoCo)', () => {
  it('axes by name, a bit-identical replay, PSD Grams, and a geometry that beats the isotropic reference', async () => {
    const r = await motionbench(
      'sensitivity',
      '--campaign',
      campaign,
      '--pair',
      calibrated,
      '--scales',
      '1,10',
      '--seconds',
      '1',
      '--held-out',
      '6',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/sensitivity: scale 10 σ: 34 axis runs and 6 held-out directions/);
    const doc = JSON.parse(r.stdout);
    expect(doc.format).toBe('motionbench-sensitivity/1');
    const axes = doc.axes as { axis: string; sigma_rad: number; sigma_source: string }[];
    // The sensitivity axes are the leg and waist joints, the first 15 of the canonical order, then the root.
    expect(axes.map((a) => a.axis)).toEqual([...G1_JOINT_NAMES.slice(0, 15), 'root_roll', 'root_pitch']);
    expect(G1_JOINT_NAMES[14]).toBe('waist_pitch_joint');
    expect(axes.find((a) => a.axis === 'left_knee_joint')).toMatchObject({
      sigma_rad: 0.004,
      sigma_source: 'measured',
    });
    expect(axes.find((a) => a.axis === 'right_knee_joint')).toMatchObject({ sigma_rad: 0.001, sigma_source: 'floor' });
    expect(doc.runs).toBe(3 + 2 * (34 + 6));
    expect(doc.replay).toMatchObject({ repeats: 3, bit_identical: true, icc: 1 });
    for (const resp of doc.responses) {
      for (const s of resp.scales) {
        const g = s.gram as number[][];
        for (let i = 0; i < g.length; i++) for (let j = 0; j < g.length; j++) expect(g[i][j]).toBeCloseTo(g[j][i], 12);
        for (const e of s.eigenvalues) expect(e).toBeGreaterThan(-1e-9 * s.eigenvalues[0]);
        const w = (s.dominant_direction as { weight: number }[]).reduce((a, x) => a + x.weight ** 2, 0);
        expect(w).toBeCloseTo(1, 4);
      }
      const first = resp.scales[0];
      expect(first.held_out.wape).toBeLessThan(first.held_out.wape_isotropic);
      expect(resp.across_scales).toHaveLength(1);
    }
  }, 180_000);

  it('a pair without a calibration is refused, naming what to do', async () => {
    const r = await motionbench('sensitivity', '--campaign', campaign, '--pair', uncalibrated, '--scales', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/has no calibration with a simulator initial state: capture one first/);
    const bad = await motionbench('sensitivity', '--campaign', campaign, '--pair', calibrated, '--scales', '1,-3');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--scales must be positive numbers/);
  });

  it('from the console API: the field of a refusal, and one batch at a time with the trials and qualifications', async () => {
    const api = createConsoleApi({ transport: 'host' });
    try {
      const none = await api.invoke('analysis.sensitivity', { campaignDir: campaign, pairId: uncalibrated });
      expect(none).toMatchObject({ ok: false, error: { code: 'bad_params', field: 'params.pairId' } });
      const running = api.invoke('analysis.sensitivity', {
        campaignDir: campaign,
        pairId: calibrated,
        scales: [1],
        seconds: 0.5,
        heldOut: 2,
      });
      // While it runs, neither a qualification nor a robot trial starts (nor a second sensitivity).
      const qual = await api.invoke('qualification.start', {
        campaignDir: campaign,
        workload: 'core-v1',
        bindings: ['builtin'],
        clips: ['ub_wave_right'],
      });
      expect(qual).toMatchObject({ ok: false, error: { code: 'conflict' } });
      expect(!qual.ok && qual.error.message).toMatch(/sensitivity of pair .* is running/);
      const trial = await api.invoke('trial.start', {
        campaignDir: campaign,
        pairId: calibrated,
        connectionId: 'robot',
      });
      expect(trial).toMatchObject({ ok: false, error: { code: 'conflict' } });
      expect(!trial.ok && trial.error.message).toMatch(/sensitivity of pair .* is running.*before a robot trial/);
      const done = await running;
      expect(done.ok, JSON.stringify(done)).toBe(true);
      // The control: with the batch over, the same qualification request is no longer refused for it.
      const after = await api.invoke('qualification.start', {
        campaignDir: campaign,
        workload: 'core-v1',
        bindings: ['builtin'],
        clips: ['ub_wave_right'],
      });
      expect(after.ok ? '' : after.error.message).not.toMatch(/sensitivity/);
      if (after.ok) await api.invoke('qualification.cancel', { all: true });
    } finally {
      await api.close();
    }
  }, 180_000);
});
