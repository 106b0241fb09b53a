import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import {
  MJLAB_NATURAL_FREQ_RAD_S,
  mjlabG1Armature,
  mjlabG1Physics,
  physicsProblems,
  reflectedInertiaTwoStage,
  UNITREE_RL_LAB_G1_VELOCITY_LIMIT_RAD_S,
  unitreeRlLabG1Physics,
} from '../../src/domain/robot/physicsProfile';
import fs from 'node:fs';
import { parse } from 'yaml';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { sharedData } from '../helpers/sharedData';

// The mjlab G1 physics profile against what the released files themselves say: the BeyondMimic
// exports' joint_stiffness is armature·(2π·10 Hz)² per joint (mjlab's PD rule), and holosoma's
// training config lists the same armature values (its gains equal them by the same rule).

const byName = (names: string[], values: number[]) => new Map(names.map((n, i) => [n, values[i]]));

describe('mjlab G1 physics profile', () => {
  it('armature per motor class: the two-stage planetary rule of mjlab (5020: 3.6097e-3 kg·m²)', () => {
    expect(reflectedInertiaTwoStage([0.139e-4, 0.017e-4, 0.169e-4], [1, 1 + 46 / 18, 1 + 56 / 16])).toBeCloseTo(
      0.003609725,
      9,
    );
    expect(() => reflectedInertiaTwoStage([1, 1, 1], [2, 1, 1])).toThrow(/first gear ratio/);
  });

  it("each joint's stiffness in the BeyondMimic Violin export equals armature × (2π·10 Hz)², to its 3 decimals", () => {
    const { info } = readOnnxFile(sharedData('policies/beyondmimic/Violin.onnx'));
    const names = info.metadata.joint_names.split(',');
    const kp = byName(names, info.metadata.joint_stiffness.split(',').map(Number));
    const kd = byName(names, info.metadata.joint_damping.split(',').map(Number));
    const arm = mjlabG1Armature();
    G1_JOINT_NAMES.forEach((n, j) => {
      expect(Math.abs(kp.get(n)! - arm[j] * MJLAB_NATURAL_FREQ_RAD_S ** 2), n).toBeLessThan(6e-4);
      expect(Math.abs(kd.get(n)! - 2 * 2 * arm[j] * MJLAB_NATURAL_FREQ_RAD_S), n).toBeLessThan(6e-4);
    });
  });

  it('effort limits by class, no friction or damping, and a valid profile; a bad one is refused', () => {
    const p = mjlabG1Physics();
    const e = byName([...G1_JOINT_NAMES], [...p.effortLimitNm]);
    expect([
      e.get('left_hip_pitch_joint'),
      e.get('left_knee_joint'),
      e.get('left_ankle_pitch_joint'),
      e.get('left_elbow_joint'),
      e.get('left_wrist_yaw_joint'),
    ]).toEqual([88, 139, 50, 25, 5]);
    expect(p.frictionLossNm.every((v) => v === 0) && p.dampingNmsPerRad.every((v) => v === 0)).toBe(true);
    expect(p.id).toBe('mjlab-g1/1@5ms×4');
    expect(physicsProblems(p, 29)).toEqual([]);
    expect(physicsProblems({ ...p, decimation: 0, armatureKgM2: p.armatureKgM2.slice(1) }, 29)).toHaveLength(2);
  });
});

describe('unitree_rl_lab (Isaac Lab) G1 physics profile', () => {
  const p = unitreeRlLabG1Physics();

  it("is its own profile, 5 ms × 4, valid; armature equals mjlab's to 1e-9 kg·m², effort limits equal", () => {
    expect(p.id).toBe('unitree-rl-lab-g1/1@5ms×4');
    expect(p.source).toMatch(/unitree_rl_lab/);
    expect(physicsProblems(p, 29)).toEqual([]);
    const m = mjlabG1Physics();
    G1_JOINT_NAMES.forEach((n, j) => {
      expect(Math.abs(p.armatureKgM2[j] - m.armatureKgM2[j]), n).toBeLessThan(1e-9);
      expect(p.effortLimitNm[j], n).toBe(m.effortLimitNm[j]);
    });
    expect(p.frictionLossNm.every((v) => v === 0)).toBe(true);
    expect(UNITREE_RL_LAB_G1_VELOCITY_LIMIT_RAD_S[G1_JOINT_NAMES.indexOf('left_knee_joint')]).toBe(20);
  });

  it("dance_102's deploy.yaml stiffness, in SDK motor order, is armature × (2π·10 Hz)² per joint to its 3 significant digits", () => {
    const d = parse(
      fs.readFileSync(sharedData('policies/unitree_rl_lab_mimic_dance_102/params/deploy.yaml'), 'utf8'),
    ) as { stiffness: number[]; damping: number[] };
    G1_JOINT_NAMES.forEach((n, j) => {
      const kp = p.armatureKgM2[j] * MJLAB_NATURAL_FREQ_RAD_S ** 2;
      const kd = 2 * 2 * p.armatureKgM2[j] * MJLAB_NATURAL_FREQ_RAD_S;
      expect(Math.abs(d.stiffness[j] - kp) / kp, n).toBeLessThan(5e-3);
      expect(Math.abs(d.damping[j] - kd) / kd, n).toBeLessThan(5e-3);
    });
  });

  it('negative control: the same stiffness read through joint_ids_map (policy order) disagrees on 13 joints', () => {
    const d = parse(
      fs.readFileSync(sharedData('policies/unitree_rl_lab_mimic_dance_102/params/deploy.yaml'), 'utf8'),
    ) as { stiffness: number[]; joint_ids_map: number[] };
    const wrong = new Array<number>(29);
    d.joint_ids_map.forEach((m, i) => (wrong[m] = d.stiffness[i]));
    const off = G1_JOINT_NAMES.filter((_, j) => {
      const kp = p.armatureKgM2[j] * MJLAB_NATURAL_FREQ_RAD_S ** 2;
      return Math.abs(wrong[j] - kp) / kp > 5e-3;
    });
    expect(off).toHaveLength(13);
  });
});
