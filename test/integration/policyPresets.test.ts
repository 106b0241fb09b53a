import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { holosomaSpec } from '../../src/domain/wbc/policyFamilies';
import { findPreset, type PolicyPreset } from '../../src/domain/wbc/policyPresets';
import type { TrackingPolicySpec } from '../../src/domain/wbc/trackingPolicy';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { loadTrackingPolicy } from '../../src/services/wbc/loadPolicy';
import { SimEngine } from '../../src/services/sim/simEngine';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import { HOLOSOMA_WBT, withoutExperimentConfig, writeHolosomaVariant } from '../helpers/holosomaVariants';
import { rolloutInThread } from '../helpers/policyRollout';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

// Declared presets on the released holosoma whole-body-tracking export: a copy without its
// experiment_config (the metadata entry removed, every other byte the release's) is refused
// without a preset, and under holosoma/g1-29dof-wbt reads to the same interface the release's
// own experiment_config gives and tracks its baked motion the same way in the embedded MuJoCo
// simulator. Beside it the hostile cases: a preset whose terms do not build the graph's width,
// dof_names permuted or renamed, an unknown preset name, a preset for a file that carries its
// own interface or for a policy folder.

const PRESET = 'holosoma/g1-29dof-wbt';
const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let dir: string;
let stripped: string;

const refusal = (run: () => unknown): InputError => {
  try {
    run();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
};

/** The spec's running parts (what the simulator and the observation builder read). */
function runningParts(s: TrackingPolicySpec) {
  return {
    family: s.family,
    adapter: s.adapter,
    observation: s.observation.map((t) => ({ ...t, checkedAgainst: '' })),
    observationSize: s.observationSize,
    controlRateHz: s.controlRateHz,
    physics: { ...s.physics, source: '' },
    kp: Array.from(s.kp),
    kd: Array.from(s.kd),
    defaultJointPosRad: Array.from(s.defaultJointPosRad),
    action: { ...s.action, scale: Array.from(s.action.scale), offset: Array.from(s.action.offset) },
    anchorBody: s.anchorBody,
    alignment: s.alignment,
    jointOrder: s.jointOrder.policyNames,
    baked: s.baked,
    needs: s.needs,
  };
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-presets-'));
  stripped = writeHolosomaVariant(path.join(dir, 'stripped', 'model_39999.onnx'), withoutExperimentConfig);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('holosoma export without experiment_config', () => {
  it('is refused without a preset, naming the missing experiment_config and the presets to choose from', () => {
    const e = refusal(() => loadTrackingPolicy(stripped));
    expect(e.location).toEqual({ file: stripped, key: 'metadata_props.experiment_config' });
    expect(e.reason).toMatch(/^missing: .*dof_names, kp and kd .*--preset <family>\/<name>.*holosoma\/g1-29dof-wbt/);
  });

  it('reads under holosoma/g1-29dof-wbt to the interface the release’s own experiment_config gives', () => {
    const under = loadTrackingPolicy(stripped, PRESET);
    const own = loadTrackingPolicy(HOLOSOMA_WBT);
    expect(under.preset).toBe('holosoma/g1-29dof-wbt@1');
    expect(own.preset).toBe(null);
    expect(runningParts(under.spec)).toEqual(runningParts(own.spec));
    expect(under.spec.observationSize).toBe(154);
    expect(under.spec.notes[0]).toMatch(/^no experiment_config in the file: interface from the declared preset/);
    // The preset is part of the identity: another hash than the same bytes read without it would have.
    expect(under.contentHash).not.toBe(own.contentHash);
  });

  it('tracks its baked motion in MuJoCo as the release with experiment_config does', async () => {
    const sim = new EmbeddedSimulator({ modelFile: DEFAULT_MODEL_FILE, workers: 1 });
    try {
      await sim.ready();
      const runs = [];
      for (const [name, plan] of [
        ['preset', planPolicy(stripped, profile, PRESET)],
        ['experiment_config', planPolicy(HOLOSOMA_WBT, profile)],
      ] as const) {
        const t0 = performance.now();
        const r = await runSimEpisode(sim, {
          clip: plan.baked!.clip,
          binding: plan.binding,
          profile,
          keepFrames: false,
        });
        const m = r.metrics;
        const failT = r.end.failure ? r.end.failure.timeS : null;
        console.log(
          `holosoma ${name} (${plan.binding.id}): ${r.end.frames}/${r.end.plannedFrames} frames, ${r.end.outcome}, first failure ${r.end.failure ? `frame ${r.end.failure.frame} (${failT!.toFixed(2)} s) ${r.end.failure.condition} of ${r.end.failure.body}` : 'none'}, progress-soft ${m.progressSoft.available ? m.progressSoft.value.toFixed(3) : 'n/a'}, MPJPE-l ${m.mpjpeLMm.available ? m.mpjpeLMm.value.toFixed(1) : 'n/a'} mm, ${((performance.now() - t0) / 1000).toFixed(1)} s wall`,
        );
        runs.push({ binding: plan.binding, end: r.end, metrics: m, failT });
      }
      const [p, c] = runs;
      expect(p.binding.id).toBe('holosoma-wbt/model_39999+holosoma/g1-29dof-wbt');
      expect(p.binding.preset).toBe('holosoma/g1-29dof-wbt@1');
      expect(c.binding.preset).toBeUndefined();
      expect(p.binding.version).not.toBe(c.binding.version);
      // The crawl was trained on a slope (releasedPolicies.test.ts): it must track for 5 s at least.
      expect(p.failT === null || p.failT > 5).toBe(true);
      // One interface, one simulation: the same frames, failure and metrics.
      expect(p.end.frames).toBe(c.end.frames);
      expect(p.end.failure).toEqual(c.end.failure);
      expect(p.metrics.progressSoft).toEqual(c.metrics.progressSoft);
      expect(p.metrics.mpjpeLMm).toEqual(c.metrics.mpjpeLMm);
    } finally {
      await sim.close();
    }
  }, 180_000);

  it('negative control: under the preset with the joints read in the Isaac Lab order it falls far earlier', async () => {
    const engine = await SimEngine.load(DEFAULT_MODEL_FILE);
    try {
      const plan = planPolicy(stripped, profile, PRESET);
      const clip = plan.baked!.clip;
      const run = (fault?: 'wrong_joint_order') =>
        rolloutInThread(
          engine,
          plan.binding,
          createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded, ...(fault && { fault }) }),
          clip,
        );
      const good = run();
      const bad = run('wrong_joint_order');
      console.log(
        `holosoma preset, joints in the Isaac Lab order: first failure ${bad.failureFrame === null ? 'none' : `frame ${bad.failureFrame} (${(bad.failureFrame / 50).toFixed(2)} s)`}, mean live MPJPE-l ${bad.meanLiveMpjpeMm.toFixed(1)} mm (intact: ${good.failureFrame === null ? 'no failure' : `frame ${good.failureFrame}`}, ${good.meanLiveMpjpeMm.toFixed(1)} mm)`,
      );
      expect(good.failureFrame === null || good.failureFrame > 250).toBe(true);
      expect(bad.failureFrame).not.toBeNull();
      expect(bad.failureFrame!).toBeLessThan((good.failureFrame ?? clip.frameCount) / 2);
    } finally {
      engine.dispose();
    }
  }, 180_000);
});

describe('a preset that does not fit is refused', () => {
  it('a preset whose terms build another width than the graph’s obs input', () => {
    const info = loadTrackingPolicy(stripped, PRESET).info;
    const p = findPreset(PRESET, stripped);
    // A term the adapter does not know is refused by name, before any width.
    const unknownTerm: PolicyPreset = {
      ...p,
      holosoma: {
        ...p.holosoma,
        terms: [...p.holosoma.terms, { name: 'base_lin_vel_w', size: 3, scale: 1, clip: null }],
      },
    };
    expect(refusal(() => holosomaSpec(info, unknownTerm)).location.key).toMatch(/terms\.base_lin_vel_w$/);
    // Two steps of history build 308 for the graph's 154.
    const twoSteps: PolicyPreset = { ...p, holosoma: { ...p.holosoma, historyLength: 2 } };
    const e = refusal(() => holosomaSpec(info, twoSteps));
    expect(e.location.key).toBe('inputs.obs');
    expect(e.reason).toMatch(/^has width 154 .*the declared terms build 308/);
    const misdeclared: PolicyPreset = {
      ...p,
      holosoma: {
        ...p.holosoma,
        terms: p.holosoma.terms.map((t) => (t.name === 'motion_command' ? { ...t, size: 46 } : t)),
      },
    };
    const m = refusal(() => holosomaSpec(info, misdeclared));
    expect(m.location.key).toBe(`preset ${PRESET} observation.groups.actor_obs.terms.motion_command.size`);
    expect(m.reason).toBe('the preset declares 46 values; the term computes 58');
  });

  it('dof_names permuted (two joints swapped) or renamed', () => {
    const swapped = writeHolosomaVariant(path.join(dir, 'swapped', 'model_39999.onnx'), (m) => {
      const names = JSON.parse(m.dof_names) as string[];
      [names[0], names[6]] = [names[6], names[0]];
      m.dof_names = JSON.stringify(names);
      return withoutExperimentConfig(m);
    });
    const e = refusal(() => loadTrackingPolicy(swapped, PRESET));
    expect(e.location.key).toBe('metadata_props.dof_names[0]');
    expect(e.reason).toMatch(
      /^is "right_hip_pitch_joint"; preset holosoma\/g1-29dof-wbt drives "left_hip_pitch_joint" at index 0/,
    );
    const renamed = writeHolosomaVariant(path.join(dir, 'renamed', 'model_39999.onnx'), (m) => {
      m.dof_names = m.dof_names.replace('"waist_yaw_joint"', '"torso_joint"');
      return withoutExperimentConfig(m);
    });
    const r = refusal(() => loadTrackingPolicy(renamed, PRESET));
    expect(r.location.key).toMatch(/^metadata_props\.dof_names/);
    expect(r.message).toMatch(/torso_joint/);
  });

  it('an unknown preset name, with the list of presets', () => {
    const e = refusal(() => loadTrackingPolicy(stripped, 'holosoma/g1-23dof-wbt'));
    expect(e.location.key).toBe('preset');
    expect(e.reason).toBe('unknown preset "holosoma/g1-23dof-wbt"; the declared presets are: holosoma/g1-29dof-wbt');
  });

  it('a preset for a file that carries its own interface, or for a policy folder', () => {
    const e = refusal(() => loadTrackingPolicy(HOLOSOMA_WBT, PRESET));
    expect(e.location.key).toBe('metadata_props.experiment_config');
    expect(e.reason).toMatch(/^present: the file carries its own interface/);
    const f = refusal(() => loadTrackingPolicy(sharedData('policies/unitree_rl_mjlab_mimic_dance1_subject2'), PRESET));
    expect(f.location.key).toBe('preset');
    expect(f.reason).toMatch(/unitree-deploy policy folder whose deploy\.yaml states it; run it without --preset$/);
    const beyondmimic = refusal(() => loadTrackingPolicy(sharedData('policies/beyondmimic/Violin.onnx'), PRESET));
    expect(beyondmimic.location.key).toBe('metadata_props.dof_names');
  });
});

describe('the command line', () => {
  it('policy info and sim --preset --json; refusals are one located line with exit 1, misuse exit 2', async () => {
    const ok = await motionbench('policy', 'info', stripped, '--preset', PRESET, '--json');
    expect(ok.code).toBe(0);
    const j = JSON.parse(ok.stdout) as Record<string, unknown>;
    expect(j.preset).toBe('holosoma/g1-29dof-wbt@1');
    expect(j.id).toBe('holosoma-wbt/model_39999+holosoma/g1-29dof-wbt');
    expect(j.observation_size).toBe(154);

    const bare = await motionbench('policy', 'info', stripped);
    expect(bare.code).toBe(1);
    expect(bare.stderr.trim().split('\n')).toHaveLength(1);
    expect(bare.stderr).toContain(`${stripped} [metadata_props.experiment_config]: missing:`);

    const unknown = await motionbench('policy', 'info', stripped, '--preset', 'nope/none');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      '[preset]: unknown preset "nope/none"; the declared presets are: holosoma/g1-29dof-wbt',
    );

    const sim = await motionbench('sim', '--binding', stripped, '--preset', PRESET, '--json');
    expect(sim.code).toBe(0);
    const run = JSON.parse(sim.stdout) as {
      binding: { id: string; preset: string };
      policy: { preset: string };
      failure: { frame: number } | null;
    };
    expect(run.binding).toMatchObject({ id: 'holosoma-wbt/model_39999+holosoma/g1-29dof-wbt', preset: `${PRESET}@1` });
    expect(run.policy.preset).toBe(`${PRESET}@1`);
    expect(run.failure === null || run.failure.frame > 250).toBe(true);

    const simMisuse = await motionbench('sim', '--clip', 'x.csv', '--preset', PRESET);
    expect(simMisuse.code).toBe(2);
    expect(simMisuse.stderr).toContain('--preset applies to a released policy --binding');
    const qualifyMisuse = await motionbench('qualify', '--binding', 'builtin', '--campaign', dir, '--preset', PRESET);
    expect(qualifyMisuse.code).toBe(2);
    expect(qualifyMisuse.stderr).toContain('give exactly one policy --binding with it (got 0)');
  }, 180_000);
});
