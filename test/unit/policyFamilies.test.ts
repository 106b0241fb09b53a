import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { findInput, vectorWidth, type OnnxModelInfo } from '../../src/domain/wbc/onnxModelInfo';
import {
  ADAPTER_VERSIONS,
  beyondmimicSpec,
  holosomaSpec,
  unitreeDeploySpec,
  wbcMjlabSpec,
  type ConfigSource,
} from '../../src/domain/wbc/policyFamilies';
import type { TrackingPolicySpec } from '../../src/domain/wbc/trackingPolicy';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { sharedData } from '../helpers/sharedData';
import { expectInputError } from './motionTestHelpers';

// The family adapters, fed the OnnxModelInfo of the real released policies
// (../shared/data/policies, read once with readOnnxFile) and in-memory variants of it: a cloned
// metadata record, a reshaped obs input, or a parsed deploy/config YAML with one field changed.
// Every expected per-joint value is computed from the file's own joint names, never from an
// assumed index mapping.

const file = (...p: string[]) => sharedData('policies', ...p);
const infoCache = new Map<string, OnnxModelInfo>();
function info(...p: string[]): OnnxModelInfo {
  const f = file(...p);
  let i = infoCache.get(f);
  if (!i) {
    i = readOnnxFile(f).info;
    infoCache.set(f, i);
  }
  return i;
}

/** A copy of `base` with metadata keys replaced (null deletes) and, optionally, the obs input reshaped. */
function variant(
  base: OnnxModelInfo,
  meta: Record<string, string | null> = {},
  obsShape?: (number | string)[],
): OnnxModelInfo {
  const metadata = { ...base.metadata };
  for (const [k, v] of Object.entries(meta)) {
    if (v === null) delete metadata[k];
    else metadata[k] = v;
  }
  return {
    ...base,
    metadata,
    inputs: base.inputs.map((i) => ({ ...i, shape: i.name === 'obs' && obsShape ? [...obsShape] : [...i.shape] })),
    outputs: base.outputs.map((o) => ({ ...o, shape: [...o.shape] })),
  };
}

const csv = (s: string) => s.split(',').map((x) => x.trim());
const csvNum = (s: string) => csv(s).map(Number);
const obsWidth = (i: OnnxModelInfo) => vectorWidth(findInput(i, 'obs')!);

/** spec[j] for canonical joint j equals the file's value for the joint of that name. */
function expectCanonicalByName(
  actual: ArrayLike<number>,
  policyNames: readonly string[],
  policyValues: readonly number[],
) {
  expect(actual.length).toBe(29);
  const want = G1_JOINT_NAMES.map((n) => {
    const i = policyNames.indexOf(n);
    expect(i, `the file names ${n}`).toBeGreaterThanOrEqual(0);
    return policyValues[i];
  });
  expect(Array.from(actual)).toEqual(want);
}

// ---------------------------------------------------------------- BeyondMimic

const BM = [
  { name: 'Violin', width: 160, needs: ['base_lin_vel', 'root_pose'], frames: 612 },
  { name: 'Jump_wose', width: 154, needs: [], frames: 165 },
  { name: 'EricCamper04', width: 154, needs: [], frames: 804 },
  { name: 'Waltz', width: 160, needs: ['base_lin_vel', 'root_pose'], frames: 945 },
] as const;

const violin = () => info('beyondmimic', 'Violin.onnx');
const jumpWose = () => info('beyondmimic', 'Jump_wose.onnx');

describe('beyondmimic adapter on the real exports', () => {
  for (const c of BM) {
    it(`${c.name}: ${c.width} wide, needs [${c.needs.join(', ')}], ${c.frames} baked frames, gains in canonical order`, () => {
      const i = info('beyondmimic', `${c.name}.onnx`);
      const s = beyondmimicSpec(i);
      expect(s.family).toBe('beyondmimic');
      expect(s.adapter).toBe(ADAPTER_VERSIONS.beyondmimic);
      expect(obsWidth(i)).toBe(c.width);
      expect(s.observationSize).toBe(c.width);
      expect(s.observation.map((t) => t.name)).toEqual(csv(i.metadata.observation_names));
      expect(s.observation.reduce((a, t) => a + t.size * t.history, 0)).toBe(c.width);
      expect(s.needs).toEqual(c.needs);
      expect(s.jointOrder.label).toBe('isaaclab');
      expect(s.baked?.frames).toBe(c.frames);
      expect(s.baked?.bodyNames).toEqual(csv(i.metadata.body_names));
      expect(s.baked?.fps).toBe(50);
      expect(s.obsInput).toBe('obs');
      expect(s.timeInput).toBe('time_step');
      expect(s.actionOutput).toBe('actions');
      expect(s.anchorBody).toBe('torso_link');
      expect(s.controlRateHz).toBeCloseTo(50, 9);
      expect([s.physics.timestepS, s.physics.decimation]).toEqual([0.005, 4]);

      const names = csv(i.metadata.joint_names);
      const kp = csvNum(i.metadata.joint_stiffness);
      const def = csvNum(i.metadata.default_joint_pos);
      expectCanonicalByName(s.kp, names, kp);
      expectCanonicalByName(s.kd, names, csvNum(i.metadata.joint_damping));
      expectCanonicalByName(s.defaultJointPosRad, names, def);
      expectCanonicalByName(s.action.scale, names, csvNum(i.metadata.action_scale));
      expectCanonicalByName(s.action.offset, names, def);
      expect(s.action.mode).toBe('default_offset');
      // The remap matters: read by position, the gains would be wrong.
      expect(Array.from(s.kp)).not.toEqual(kp);
      // left_knee_joint is canonical index 3; its kp is the file's value for that name.
      expect(G1_JOINT_NAMES[3]).toBe('left_knee_joint');
      expect(s.kp[3]).toBe(kp[names.indexOf('left_knee_joint')]);
      expect(s.defaultJointPosRad[3]).toBe(def[names.indexOf('left_knee_joint')]);
      expect(s.defaultJointPosRad[3], 'position 3 of the file is another joint').not.toBe(def[3]);
    });
  }

  it('reads joints by name: the same file with every per-joint list permuted gives the same canonical spec, labelled custom', () => {
    const base = violin();
    const ref = beyondmimicSpec(base);
    const perm = Array.from({ length: 29 }, (_, k) => (k * 7 + 3) % 29); // a fixed permutation of 0..28
    const permute = (key: string) => perm.map((p) => csv(base.metadata[key])[p]).join(',');
    const s = beyondmimicSpec(
      variant(base, {
        joint_names: permute('joint_names'),
        joint_stiffness: permute('joint_stiffness'),
        joint_damping: permute('joint_damping'),
        default_joint_pos: permute('default_joint_pos'),
        action_scale: permute('action_scale'),
      }),
    );
    expect(s.jointOrder.label).toBe('custom');
    for (const k of ['kp', 'kd', 'defaultJointPosRad'] as const) expect(Array.from(s[k])).toEqual(Array.from(ref[k]));
    expect(Array.from(s.action.scale)).toEqual(Array.from(ref.action.scale));
    // and the table maps the new policy order: policy joint 0 is the old joint perm[0]
    expect(s.jointOrder.canonicalOf[0]).toBe(ref.jointOrder.canonicalOf[perm[0]]);
  });
});

describe('the 154/160 variant is chosen by observation_names, not by width', () => {
  const wose = () => jumpWose().metadata.observation_names;
  const full = () => violin().metadata.observation_names;

  it('a 160-wide export whose observation_names drops base_lin_vel is refused, naming the widths and the terms', () => {
    const names = csv(full()).filter((n) => n !== 'base_lin_vel');
    const err = expectInputError(
      () => beyondmimicSpec(variant(violin(), { observation_names: names.join(',') })),
      { file: violin().file, key: 'inputs.obs' },
      /has width 160 \(\[1, 160\]\); the declared terms build 157/,
    );
    expect(err.reason).toContain(
      'command 58 + motion_anchor_pos_b 3 + motion_anchor_ori_b 6 + base_ang_vel 3 + joint_pos 29 + joint_vel 29 + actions 29',
    );
    expect(err.reason).not.toContain('base_lin_vel');
  });

  it('a 160-wide export with the wose term list (154) is refused, not reread as the other variant', () => {
    expectInputError(
      () => beyondmimicSpec(variant(violin(), { observation_names: wose() })),
      { file: violin().file, key: 'inputs.obs' },
      /has width 160 .*build 154/,
    );
  });

  it('a 154-wide export with the full term list (160) is refused', () => {
    expectInputError(
      () => beyondmimicSpec(variant(jumpWose(), { observation_names: full() })),
      { file: jumpWose().file, key: 'inputs.obs' },
      /has width 154 .*build 160/,
    );
  });

  it('names decide the layout: a wose file reshaped to 160 with the full names reads as the full variant, and vice versa', () => {
    const a = beyondmimicSpec(variant(jumpWose(), { observation_names: full() }, [1, 160]));
    expect(a.observationSize).toBe(160);
    expect(a.needs).toEqual(['base_lin_vel', 'root_pose']);
    expect(a.observation.map((t) => t.kind)).toContain('base_lin_vel_b');
    const b = beyondmimicSpec(variant(violin(), { observation_names: wose() }, [1, 154]));
    expect(b.observationSize).toBe(154);
    expect(b.needs).toEqual([]);
    expect(b.observation.map((t) => t.kind)).not.toContain('ref_anchor_pos_b');
  });

  it('observation_history_lengths multiplies a term: history 2 on base_ang_vel builds 157 against 154 and is refused', () => {
    const i = info('beyondmimic', 'EricCamper04.onnx');
    expect(i.metadata.observation_history_lengths).toBeDefined();
    const h = csv(i.metadata.observation_history_lengths);
    h[csv(i.metadata.observation_names).indexOf('base_ang_vel')] = '2';
    expectInputError(
      () => beyondmimicSpec(variant(i, { observation_history_lengths: h.join(',') })),
      { file: i.file, key: 'inputs.obs' },
      /width 154 .*build 157.*base_ang_vel 3×2/,
    );
  });
});

describe('beyondmimic refusals', () => {
  for (const key of [
    'joint_names',
    'joint_stiffness',
    'joint_damping',
    'default_joint_pos',
    'action_scale',
    'observation_names',
    'anchor_body_name',
    'body_names',
  ]) {
    it(`metadata ${key} missing → metadata_props.${key}`, () => {
      expectInputError(
        () => beyondmimicSpec(variant(violin(), { [key]: null })),
        { file: violin().file, key: `metadata_props.${key}` },
        /missing/,
      );
    });
  }

  it('a blank metadata value counts as missing', () => {
    expectInputError(
      () => beyondmimicSpec(variant(violin(), { joint_stiffness: '  ' })),
      { file: violin().file, key: 'metadata_props.joint_stiffness' },
      /missing/,
    );
  });

  it('an observation term the adapter does not know is refused at its index, listing the known terms', () => {
    const names = csv(violin().metadata.observation_names);
    const at = names.indexOf('base_ang_vel');
    names[at] = 'foo_term';
    const err = expectInputError(
      () => beyondmimicSpec(variant(violin(), { observation_names: names.join(',') })),
      { file: violin().file, key: `metadata_props.observation_names[${at}]` },
      /observation term "foo_term" is not one the beyondmimic adapter knows/,
    );
    expect(err.reason).toMatch(/known: .*base_lin_vel/);
  });

  it('obs width ≠ the sum of the terms → inputs.obs', () => {
    expectInputError(
      () => beyondmimicSpec(variant(violin(), {}, [1, 150])),
      { file: violin().file, key: 'inputs.obs' },
      /has width 150 \(\[1, 150\]\); the declared terms build 160/,
    );
    expectInputError(
      () => beyondmimicSpec(variant(violin(), {}, [1, 'D'])),
      { file: violin().file, key: 'inputs.obs' },
      /has width \?/,
    );
  });

  describe('joint names that do not match the model', () => {
    const names = () => csv(violin().metadata.joint_names);
    const kneeAt = () => names().indexOf('left_knee_joint');
    it('an unknown name', () => {
      const n = names();
      n[kneeAt()] = 'left_toe_joint';
      const err = expectInputError(
        () => beyondmimicSpec(variant(violin(), { joint_names: n.join(',') })),
        { file: violin().file, key: 'metadata_props.joint_names' },
        /no joint named "left_toe_joint"/,
      );
      expect(err.reason).toMatch(/does not name left_knee_joint/);
    });
    it('a missing name (28 names)', () => {
      const n = names().filter((x) => x !== 'left_knee_joint');
      const err = expectInputError(
        () => beyondmimicSpec(variant(violin(), { joint_names: n.join(',') })),
        { file: violin().file, key: 'metadata_props.joint_names' },
        /does not name left_knee_joint/,
      );
      expect(err.reason).not.toMatch(/named twice|no joint named/);
    });
    it('a duplicated name', () => {
      const n = names();
      n[kneeAt()] = 'right_knee_joint';
      const err = expectInputError(
        () => beyondmimicSpec(variant(violin(), { joint_names: n.join(',') })),
        { file: violin().file, key: 'metadata_props.joint_names' },
        /named twice: right_knee_joint/,
      );
      expect(err.reason).toMatch(/does not name left_knee_joint/);
    });
  });

  describe('csv number lists', () => {
    const stiff = () => csv(violin().metadata.joint_stiffness);
    it('one value short → the whole key, naming both counts', () => {
      expectInputError(
        () => beyondmimicSpec(variant(violin(), { joint_stiffness: stiff().slice(0, 28).join(',') })),
        { file: violin().file, key: 'metadata_props.joint_stiffness' },
        /expected 29 comma-separated numbers \(one per joint\), got 28/,
      );
    });
    it('a trailing comma (30 fields) → refused', () => {
      expectInputError(
        () => beyondmimicSpec(variant(violin(), { default_joint_pos: violin().metadata.default_joint_pos + ',' })),
        { file: violin().file, key: 'metadata_props.default_joint_pos' },
        /got 30/,
      );
    });
    for (const [bad, shown] of [
      ['abc', '"abc"'],
      ['', '""'],
      ['NaN', '"NaN"'],
      ['Infinity', '"Infinity"'],
    ] as const) {
      it(`a non-number (${shown}) → the element key`, () => {
        const v = stiff();
        v[5] = bad;
        expectInputError(
          () => beyondmimicSpec(variant(violin(), { joint_stiffness: v.join(',') })),
          { file: violin().file, key: 'metadata_props.joint_stiffness[5]' },
          new RegExp(`not a number: ${shown}`),
        );
      });
    }
    it('a non-number history length → observation_history_lengths[i]', () => {
      const i = info('beyondmimic', 'EricCamper04.onnx');
      const h = csv(i.metadata.observation_history_lengths);
      h[2] = 'one';
      expectInputError(
        () => beyondmimicSpec(variant(i, { observation_history_lengths: h.join(',') })),
        { file: i.file, key: 'metadata_props.observation_history_lengths[2]' },
        /not a number/,
      );
    });
  });

  it('an anchor not among body_names, or a body list not starting at the pelvis, is refused', () => {
    expectInputError(
      () => beyondmimicSpec(variant(violin(), { anchor_body_name: 'head_link' })),
      { file: violin().file, key: 'metadata_props.anchor_body_name' },
      /"head_link" is not among body_names/,
    );
    const b = csv(violin().metadata.body_names);
    [b[0], b[7]] = [b[7], b[0]];
    expectInputError(
      () => beyondmimicSpec(variant(violin(), { body_names: b.join(',') })),
      { file: violin().file, key: 'metadata_props.body_names' },
      /first body must be the pelvis/,
    );
  });

  it('body_names that disagree with the baked body count are refused', () => {
    const b = csv(violin().metadata.body_names).slice(0, 13);
    expectInputError(
      () => beyondmimicSpec(variant(violin(), { body_names: b.join(',') })),
      { file: violin().file },
      /has 14 bodies; body_names lists 13/,
    );
  });
});

// ---------------------------------------------------------------- holosoma

const HOLO = ['holosoma_wbt_locomotion', 'model_39999.onnx'] as const;
const holo = () => info(...HOLO);
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
/** The holosoma info with its experiment_config (parsed, mutated, re-serialised) and metadata changed. */
function holoVariant(mutate: (cfg: Json) => void, meta: Record<string, string | null> = {}): OnnxModelInfo {
  const cfg = JSON.parse(holo().metadata.experiment_config) as Json;
  mutate(cfg);
  return variant(holo(), { experiment_config: JSON.stringify(cfg), ...meta });
}

describe('holosoma adapter on the real export', () => {
  it('154 wide, terms in sorted name order, canonical joints, 1159 baked frames, gains and default pose by name', () => {
    const i = holo();
    const s = holosomaSpec(i);
    const cfg = JSON.parse(i.metadata.experiment_config) as Json;
    expect(s.family).toBe('holosoma-wbt');
    expect(s.adapter).toBe(ADAPTER_VERSIONS['holosoma-wbt']);
    expect(obsWidth(i)).toBe(154);
    expect(s.observationSize).toBe(154);
    const sorted = ['actions', 'base_ang_vel', 'dof_pos', 'dof_vel', 'motion_command', 'motion_ref_ori_b'];
    expect(s.observation.map((t) => t.name)).toEqual(sorted);
    // the training config lists them in another order: the sort is what the adapter adds
    expect(Object.keys(cfg.observation.groups.actor_obs.terms)).not.toEqual(sorted);
    expect(s.observation.map((t) => t.size)).toEqual([29, 3, 29, 29, 58, 6]);
    expect(s.jointOrder.label).toBe('canonical');
    expect(s.baked?.frames).toBe(1159);
    expect(s.baked?.fps).toBeCloseTo(50, 9);
    expect(s.timeInput).toBe('time_step');
    expect(s.needs).toEqual([]);
    expect(s.anchorBody).toBe('torso_link');
    expect([s.physics.timestepS, s.physics.decimation]).toEqual([
      1 / cfg.simulator.config.sim.fps,
      cfg.simulator.config.sim.control_decimation,
    ]);
    const dof = JSON.parse(i.metadata.dof_names) as string[];
    expectCanonicalByName(s.kp, dof, JSON.parse(i.metadata.kp));
    expectCanonicalByName(s.kd, dof, JSON.parse(i.metadata.kd));
    const defMap = cfg.robot.init_state.default_joint_angles as Record<string, number>;
    expect(Array.from(s.defaultJointPosRad)).toEqual(G1_JOINT_NAMES.map((n) => defMap[n]));
    expect(Array.from(s.action.offset)).toEqual(Array.from(s.defaultJointPosRad));
    expect(Array.from(s.action.scale)).toEqual(new Array(29).fill(cfg.robot.control.action_scale));
    expect(s.action.clip).toBe(cfg.robot.control.clip_actions ? cfg.robot.control.action_clip_value : null);
    expectCanonicalByName(s.physics.effortLimitNm, dof, cfg.robot.dof_effort_limit_list);
  });

  it('reads joints by name: dof_names, kp, kd and effort limits permuted together give the same canonical spec (custom)', () => {
    const ref = holosomaSpec(holo());
    const perm = Array.from({ length: 29 }, (_, k) => 28 - k);
    const p = <T>(a: T[]) => perm.map((k) => a[k]);
    const dof = JSON.parse(holo().metadata.dof_names) as string[];
    const v = holoVariant(
      (cfg) => {
        cfg.robot.dof_names = p(cfg.robot.dof_names);
        cfg.robot.dof_effort_limit_list = p(cfg.robot.dof_effort_limit_list);
      },
      {
        dof_names: JSON.stringify(p(dof)),
        kp: JSON.stringify(p(JSON.parse(holo().metadata.kp))),
        kd: JSON.stringify(p(JSON.parse(holo().metadata.kd))),
      },
    );
    const s = holosomaSpec(v);
    expect(s.jointOrder.label).toBe('custom');
    for (const k of ['kp', 'kd', 'defaultJointPosRad'] as const) expect(Array.from(s[k])).toEqual(Array.from(ref[k]));
    expect(s.physics.effortLimitNm).toEqual(ref.physics.effortLimitNm);
  });
});

describe('holosoma refusals', () => {
  const termsKey = 'metadata_props.experiment_config.observation.groups.actor_obs.terms';
  it("experiment_config's robot.dof_names missing → its full key", () => {
    expectInputError(
      () => holosomaSpec(holoVariant((c) => delete c.robot.dof_names)),
      { file: holo().file, key: 'metadata_props.experiment_config.robot.dof_names' },
      /missing \(the robot joint order\)/,
    );
  });
  it('robot.dof_names that differ from metadata dof_names are refused', () => {
    expectInputError(
      () => holosomaSpec(holoVariant((c) => c.robot.dof_names.reverse())),
      { file: holo().file, key: 'metadata_props.experiment_config.robot.dof_names' },
      /differs from metadata dof_names/,
    );
  });
  for (const key of ['dof_names', 'kp', 'kd', 'experiment_config']) {
    it(`metadata ${key} missing → metadata_props.${key}`, () => {
      expectInputError(
        () => holosomaSpec(variant(holo(), { [key]: null })),
        { file: holo().file, key: `metadata_props.${key}` },
        /missing/,
      );
    });
  }
  it('experiment_config that is not JSON → refused as such', () => {
    expectInputError(
      () => holosomaSpec(variant(holo(), { experiment_config: '{"robot": ' })),
      { file: holo().file, key: 'metadata_props.experiment_config' },
      /not valid JSON/,
    );
  });
  it('an unknown observation term is refused at its key', () => {
    expectInputError(
      () =>
        holosomaSpec(
          holoVariant(
            (c) => (c.observation.groups.actor_obs.terms.foo_term = { scale: 1, clip: null, noise: 0, params: {} }),
          ),
        ),
      { file: holo().file, key: `${termsKey}.foo_term` },
      /observation term "foo_term" is not one the holosoma-wbt adapter knows/,
    );
  });
  it('obs width ≠ sum of terms (a term removed; the input reshaped)', () => {
    expectInputError(
      () => holosomaSpec(holoVariant((c) => delete c.observation.groups.actor_obs.terms.base_ang_vel)),
      { file: holo().file, key: 'inputs.obs' },
      /has width 154 .*build 151/,
    );
    expectInputError(
      () => holosomaSpec(variant(holo(), {}, [1, 160])),
      { file: holo().file, key: 'inputs.obs' },
      /has width 160 .*build 154/,
    );
  });
  it('dof_names with an unknown, a missing or a duplicated joint', () => {
    const dof = JSON.parse(holo().metadata.dof_names) as string[];
    const unknown = [...dof];
    unknown[3] = 'left_toe_joint';
    expectInputError(
      () => holosomaSpec(variant(holo(), { dof_names: JSON.stringify(unknown) })),
      { file: holo().file, key: 'metadata_props.dof_names' },
      /no joint named "left_toe_joint".*does not name left_knee_joint/,
    );
    expectInputError(
      () => holosomaSpec(variant(holo(), { dof_names: JSON.stringify(dof.slice(1)) })),
      { file: holo().file, key: 'metadata_props.dof_names' },
      /does not name left_hip_pitch_joint/,
    );
    const dup = [...dof];
    dup[3] = dup[9];
    expectInputError(
      () => holosomaSpec(variant(holo(), { dof_names: JSON.stringify(dup) })),
      { file: holo().file, key: 'metadata_props.dof_names' },
      /named twice: right_knee_joint/,
    );
  });
  it('kp of the wrong length, with a non-number or a negative value', () => {
    const kp = JSON.parse(holo().metadata.kp) as unknown[];
    expectInputError(
      () => holosomaSpec(variant(holo(), { kp: JSON.stringify(kp.slice(0, 28)) })),
      { file: holo().file, key: 'metadata_props.kp' },
      /expected 29 numbers \(one per joint\), got 28/,
    );
    const s = [...kp];
    s[3] = 'x';
    expectInputError(
      () => holosomaSpec(variant(holo(), { kp: JSON.stringify(s) })),
      { file: holo().file, key: 'metadata_props.kp[3]' },
      /not a finite number: "x"/,
    );
    const n = [...kp];
    n[4] = -1;
    expectInputError(
      () => holosomaSpec(variant(holo(), { kp: JSON.stringify(n) })),
      { file: holo().file, key: 'metadata_props.kp[4]' },
      /negative/,
    );
  });
  it('a default pose that does not name a joint is refused at that joint', () => {
    expectInputError(
      () => holosomaSpec(holoVariant((c) => delete c.robot.init_state.default_joint_angles.left_elbow_joint)),
      {
        file: holo().file,
        key: 'metadata_props.experiment_config.robot.init_state.default_joint_angles.left_elbow_joint',
      },
      /missing or not a number/,
    );
  });
  it('a numeric term scale other than 1 is refused (unsupported by this adapter version)', () => {
    expectInputError(
      () => holosomaSpec(holoVariant((c) => (c.observation.groups.actor_obs.terms.base_ang_vel.scale = 0.25))),
      { file: holo().file, key: `${termsKey}.base_ang_vel.scale` },
      /a scale other than the number 1 is not supported/,
    );
  });
  // A scale that is not the number 1 (a list such as [0.25, 0.25, 0.25], or a string) is refused
  // too, never read as 1.
  for (const bad of [[0.25, 0.25, 0.25], '0.25']) {
    it(`a non-numeric term scale (${JSON.stringify(bad)}) is refused, not silently read as 1`, () => {
      expectInputError(
        () => holosomaSpec(holoVariant((c) => (c.observation.groups.actor_obs.terms.base_ang_vel.scale = bad))),
        { file: holo().file, key: `${termsKey}.base_ang_vel.scale` },
      );
    });
  }
});

// ---------------------------------------------------------------- unitree_rl_mjlab deploy folder

const MJLAB_DIR = 'unitree_rl_mjlab_mimic_dance1_subject2';
const mjlabInfo = () => info(MJLAB_DIR, 'exported', 'policy.onnx');
const DEPLOY = file(MJLAB_DIR, 'params', 'deploy.yaml');
type Cfg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const deploy = (mutate: (d: Cfg) => void = () => {}): ConfigSource => {
  const data = parse(fs.readFileSync(DEPLOY, 'utf8')) as Cfg;
  mutate(data);
  return { file: DEPLOY, data };
};

describe('unitree-rl-lab adapter on the real dance_102 folder', () => {
  const LAB_DEPLOY = file('unitree_rl_lab_mimic_dance_102', 'params', 'deploy.yaml');
  const labInfo = () => info('unitree_rl_lab_mimic_dance_102', 'exported', 'policy.onnx');
  const lab = (mutate: (d: Cfg) => void = () => {}): ConfigSource => {
    const data = parse(fs.readFileSync(LAB_DEPLOY, 'utf8')) as Cfg;
    mutate(data);
    return { file: LAB_DEPLOY, data };
  };

  it('Isaac Lab joint order → family unitree-rl-lab on the unitree_rl_lab physics; gains in SDK order, pose and action in policy order', () => {
    const src = lab();
    const d = src.data as Cfg;
    const s = unitreeDeploySpec(labInfo(), src);
    expect(s.family).toBe('unitree-rl-lab');
    expect(s.adapter).toBe(ADAPTER_VERSIONS['unitree-rl-lab']);
    expect(s.jointOrder.label).toBe('isaaclab');
    expect(s.physics.id).toBe('unitree-rl-lab-g1/1@5ms×4');
    expect(s.observationSize).toBe(154);
    expect(s.observation.map((t) => t.kind)).toEqual([
      'ref_joint_pos_vel',
      'ref_anchor_ori_b',
      'base_ang_vel_b',
      'joint_pos_rel',
      'joint_vel_rel',
      'last_action',
    ]);
    for (const t of s.observation) expect(t.checkedAgainst).toMatch(/unitree_rl_lab/);
    const names = (d.joint_ids_map as number[]).map((m) => G1_JOINT_NAMES[m]);
    expectCanonicalByName(s.kp, G1_JOINT_NAMES, d.stiffness);
    expectCanonicalByName(s.kd, G1_JOINT_NAMES, d.damping);
    expectCanonicalByName(s.defaultJointPosRad, names, d.default_joint_pos);
    expectCanonicalByName(s.action.scale, names, d.actions.JointPositionAction.scale);
    expectCanonicalByName(s.action.offset, names, d.actions.JointPositionAction.offset);
    // The file's own evidence for the gains' order: in SDK order the knees get the 7520-22's
    // 99.1 and the ankles twice the 5020's 14.25, as g1.py's actuator groups give them.
    const at = (n: string) => s.kp[G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number])];
    expect(at('left_knee_joint')).toBeCloseTo(99.1, 6);
    expect(at('right_hip_pitch_joint')).toBeCloseTo(40.2, 6);
    expect(at('left_ankle_roll_joint')).toBeCloseTo(28.5, 6);
    expect(at('waist_pitch_joint')).toBeCloseTo(28.5, 6);
    expect(at('right_wrist_yaw_joint')).toBeCloseTo(16.8, 6);
  });

  it('negative control: the same file read with the gains in policy order puts 99.1 on a hip pitch', () => {
    // What the mjlab-deploy/1 reading did: stiffness[i] to motor joint_ids_map[i].
    const d = lab().data as Cfg;
    const ids = d.joint_ids_map as number[];
    const wrong = new Float64Array(29);
    ids.forEach((m, i) => (wrong[m] = d.stiffness[i]));
    expect(wrong[G1_JOINT_NAMES.indexOf('right_hip_pitch_joint')]).toBeCloseTo(99.1, 6);
    const s = unitreeDeploySpec(labInfo(), lab());
    expect(Array.from(s.kp)).not.toEqual(Array.from(wrong));
  });
});

describe('mjlab-deploy adapter on the real folder', () => {
  it('154 wide, canonical joints, deploy.yaml gains/pose/action placed by joint_ids_map', () => {
    const i = mjlabInfo();
    const src = deploy();
    const d = src.data as Cfg;
    const s = unitreeDeploySpec(i, src);
    expect(s.family).toBe('mjlab-deploy');
    expect(s.adapter).toBe(ADAPTER_VERSIONS['mjlab-deploy']);
    expect(obsWidth(i)).toBe(154);
    expect(s.observationSize).toBe(154);
    expect(s.observation.map((t) => t.name)).toEqual(Object.keys(d.observations));
    expect(s.jointOrder.label).toBe('canonical');
    expect(s.baked).toBeNull();
    expect(s.timeInput).toBeNull();
    expect(s.needs).toEqual([]);
    expect(s.controlRateHz).toBeCloseTo(1 / d.step_dt, 9);
    const names = (d.joint_ids_map as number[]).map((m) => G1_JOINT_NAMES[m]);
    // stiffness/damping are in SDK motor order (the canonical order) whatever the map says.
    expectCanonicalByName(s.kp, G1_JOINT_NAMES, d.stiffness);
    expectCanonicalByName(s.kd, G1_JOINT_NAMES, d.damping);
    expectCanonicalByName(s.defaultJointPosRad, names, d.default_joint_pos);
    expectCanonicalByName(s.action.scale, names, d.actions.JointPositionAction.scale);
    expectCanonicalByName(s.action.offset, names, d.actions.JointPositionAction.offset);
  });

  it('a permuted joint_ids_map with the policy-order lists permuted alike (gains stay in SDK order) gives the same canonical spec (custom)', () => {
    const ref = unitreeDeploySpec(mjlabInfo(), deploy());
    const rev = <T>(a: T[]) => [...a].reverse();
    const s = unitreeDeploySpec(
      mjlabInfo(),
      deploy((d) => {
        d.joint_ids_map = rev(d.joint_ids_map);
        d.default_joint_pos = rev(d.default_joint_pos);
        d.actions.JointPositionAction.scale = rev(d.actions.JointPositionAction.scale);
        d.actions.JointPositionAction.offset = rev(d.actions.JointPositionAction.offset);
      }),
    );
    expect(s.jointOrder.label).toBe('custom');
    for (const k of ['kp', 'kd', 'defaultJointPosRad'] as const) expect(Array.from(s[k])).toEqual(Array.from(ref[k]));
    expect(Array.from(s.action.offset)).toEqual(Array.from(ref.action.offset));
  });

  it('refusals name the YAML key', () => {
    const f = DEPLOY;
    const run = (m: (d: Cfg) => void) => () => unitreeDeploySpec(mjlabInfo(), deploy(m));
    expectInputError(
      run((d) => delete d.stiffness),
      { file: f, key: 'stiffness' },
      /missing/,
    );
    expectInputError(
      run((d) => delete d.observations),
      { file: f, key: 'observations' },
      /missing/,
    );
    expectInputError(
      run((d) => (d.stiffness = d.stiffness.slice(0, 28))),
      { file: f, key: 'stiffness' },
      /expected 29 numbers \(one per joint\), got 28/,
    );
    expectInputError(
      run((d) => (d.damping[4] = 'x')),
      { file: f, key: 'damping[4]' },
      /not a finite number: "x"/,
    );
    expectInputError(
      run((d) => (d.stiffness[2] = -1)),
      { file: f, key: 'stiffness[2]' },
      /negative/,
    );
    expectInputError(
      run((d) => (d.joint_ids_map[3] = 2)),
      { file: f, key: 'joint_ids_map' },
      /named twice: left_hip_yaw_joint.*does not name left_knee_joint/,
    );
    expectInputError(
      run((d) => (d.joint_ids_map[3] = 29)),
      { file: f, key: 'joint_ids_map[3]' },
      /not a motor index 0\.\.28: 29/,
    );
    expectInputError(
      run((d) => (d.joint_ids_map[3] = 2.5)),
      { file: f, key: 'joint_ids_map[3]' },
      /not a motor index/,
    );
    expectInputError(
      run((d) => (d.step_dt = 0.021)),
      { file: f, key: 'step_dt' },
      /does not divide/,
    );
    expectInputError(
      run((d) => (d.actions.JointPositionAction.clip = 5)),
      { file: f, key: 'actions.JointPositionAction.clip' },
      /not supported/,
    );
  });

  it('an unknown observation term → observations.<term>', () => {
    expectInputError(
      () =>
        unitreeDeploySpec(
          mjlabInfo(),
          deploy((d) => (d.observations.foo_term = { params: {}, clip: null, scale: [1, 1, 1], history_length: 1 })),
        ),
      { file: DEPLOY, key: 'observations.foo_term' },
      /observation term "foo_term" is not one the mjlab-deploy adapter knows/,
    );
  });

  it('obs width ≠ sum of terms: history 2 on base_ang_vel builds 157 against 154', () => {
    expectInputError(
      () =>
        unitreeDeploySpec(
          mjlabInfo(),
          deploy((d) => (d.observations.base_ang_vel.history_length = 2)),
        ),
      { file: mjlabInfo().file, key: 'inputs.obs' },
      /has width 154 .*build 157/,
    );
  });

  it('a term scale of the wrong length is refused', () => {
    expectInputError(
      () =>
        unitreeDeploySpec(
          mjlabInfo(),
          deploy((d) => (d.observations.base_ang_vel.scale = [1, 1])),
        ),
      { file: DEPLOY, key: 'observations.base_ang_vel.scale' },
      /expected 3 numbers/,
    );
  });
});

// ---------------------------------------------------------------- wbc-mjlab folder

const wbcInfo = () => info('wbc_mjlab', 'policy.onnx');
const WBC_CFG = file('wbc_mjlab', 'config.yaml');
const wbc = (mutate: (d: Cfg) => void = () => {}): ConfigSource => {
  const data = parse(fs.readFileSync(WBC_CFG, 'utf8')) as Cfg;
  mutate(data);
  return { file: WBC_CFG, data };
};

describe('wbc-mjlab adapter on the real folder', () => {
  it('132 wide, canonical joints, reference_residual, config.yaml gains by joint_names', () => {
    const i = wbcInfo();
    const src = wbc();
    const d = src.data as Cfg;
    const s: TrackingPolicySpec = wbcMjlabSpec(i, src);
    expect(s.family).toBe('wbc-mjlab');
    expect(s.adapter).toBe(ADAPTER_VERSIONS['wbc-mjlab']);
    expect(obsWidth(i)).toBe(132);
    expect(s.observationSize).toBe(132);
    expect(s.observation.map((t) => t.name)).toEqual(d.tracking.actor_observation_names);
    expect(s.jointOrder.label).toBe('canonical');
    expect(s.action.mode).toBe('reference_residual');
    expect(Array.from(s.action.offset)).toEqual(new Array(29).fill(0));
    expect(s.baked).toBeNull();
    expect(s.anchorBody).toBe(d.tracking.anchor_body_name);
    expectCanonicalByName(s.kp, d.joint_names, d.stiffness);
    expectCanonicalByName(s.kd, d.joint_names, d.damping);
    expectCanonicalByName(s.defaultJointPosRad, d.joint_names, d.default_joint_pos);
    expectCanonicalByName(s.action.scale, d.joint_names, d.action.scale);
  });

  it('refusals: schema version, joint order disagreeing with the metadata, wrong dim, wrong list length', () => {
    const f = WBC_CFG;
    const run =
      (m: (d: Cfg) => void, i = wbcInfo()) =>
      () =>
        wbcMjlabSpec(i, wbc(m));
    expectInputError(
      run((d) => (d.schema_version = 'wbc_tracking_params_v2')),
      { file: f, key: 'schema_version' },
      /expected wbc_tracking_params_v1, got "wbc_tracking_params_v2"/,
    );
    expectInputError(
      run((d) => d.joint_names.reverse()),
      { file: wbcInfo().file, key: 'metadata_props.joint_names' },
      /disagree on the joint order/,
    );
    expectInputError(
      run((d) => (d.joint_names[3] = 'left_toe_joint'), variant(wbcInfo(), { joint_names: null })),
      { file: f, key: 'joint_names' },
      /no joint named "left_toe_joint"/,
    );
    expectInputError(
      run((d) => (d.actor_observations.base_ang_vel.dim = 4)),
      { file: f, key: 'actor_observations.base_ang_vel.dim' },
      /the term computes 3 values/,
    );
    expectInputError(
      run((d) => (d.damping = d.damping.slice(1))),
      { file: f, key: 'damping' },
      /got 28/,
    );
    expectInputError(
      run((d) => (d.action.action_mode = 'default_offset')),
      { file: f, key: 'action.action_mode' },
      /expected reference_residual/,
    );
  });

  const withFoo = (term: Cfg) => (d: Cfg) => {
    d.actor_observations.foo_term = term;
    d.tracking.actor_observation_names.push('foo_term');
  };
  const fooInfo = () => variant(wbcInfo(), { observation_names: `${wbcInfo().metadata.observation_names},foo_term` });

  it('an unknown observation term without a scale → actor_observations.<term>', () => {
    expectInputError(
      () => wbcMjlabSpec(fooInfo(), wbc(withFoo({ dim: 3, params: {} }))),
      { file: WBC_CFG, key: 'actor_observations.foo_term' },
      /observation term "foo_term" is not one the wbc-mjlab adapter knows/,
    );
  });

  // An unknown term is refused as unknown, before its scale is read (a scale list sized for no term).
  it('an unknown observation term with a scale list (as every real term has) is refused as unknown, at actor_observations.<term>', () => {
    expectInputError(
      () => wbcMjlabSpec(fooInfo(), wbc(withFoo({ dim: 3, scale: [1, 1, 1], params: {} }))),
      { file: WBC_CFG, key: 'actor_observations.foo_term' },
      /not one the wbc-mjlab adapter knows/,
    );
  });
});
