import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import {
  MJLAB_NATURAL_FREQ_RAD_S,
  mjlabG1Armature,
  mjlabG1Physics,
  physicsProblems,
  reflectedInertiaTwoStage,
} from '../../src/domain/sim/physicsProfile';
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
