import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { decodeWireBinding } from '../../src/domain/bridge/g1BridgeValidate';
import { findPreset, POLICY_PRESETS, presetIdOf, presetIds, presetKey } from '../../src/domain/wbc/policyPresets';

// The preset registry is consistent with itself and with its sources' arithmetic: ids in the
// `<project>/<name>` form, each value stated once per joint, the control rate the peer runner's
// rl_rate (simFps / decimation), and the observation width the graph must have.

describe('declared policy presets', () => {
  it('ids are unique <project>/<name>; keys round-trip', () => {
    expect(new Set(presetIds()).size).toBe(POLICY_PRESETS.length);
    for (const p of POLICY_PRESETS) {
      expect(p.id).toMatch(/^[a-z0-9_-]+\/[a-z0-9_.-]+$/);
      expect(presetIdOf(presetKey(p))).toBe(p.id);
      expect(p.sources.length).toBeGreaterThan(0);
      for (const s of p.sources) expect(s).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{7} \S+/);
    }
    expect(presetIdOf(undefined)).toBe(null);
  });

  it('holosoma/g1-29dof-wbt: 29 G1 joints, 154-wide observation, 50 Hz (holosoma_inference rl_rate)', () => {
    const h = findPreset('holosoma/g1-29dof-wbt', 'x.onnx').holosoma;
    expect([...h.jointNames].sort()).toEqual([...G1_JOINT_NAMES].sort());
    expect(h.effortLimitNm).toHaveLength(29);
    expect(Object.keys(h.defaultJointAnglesRad).sort()).toEqual([...h.jointNames].sort());
    expect(new Set(h.terms.map((t) => t.name)).size).toBe(h.terms.length);
    expect(h.terms.reduce((a, t) => a + t.size, 0) * h.historyLength).toBe(154);
    expect(h.simFps / h.controlDecimation).toBe(50);
    expect(h.defaultJointAnglesRad.left_knee_joint).toBe(0.669);
    expect(h.defaultJointAnglesRad.right_shoulder_roll_joint).toBe(-0.2);
  });

  it('an unknown name is refused with the list, located at the file and key preset', () => {
    let err: unknown;
    try {
      findPreset('holosoma/g1-29dof', 'p.onnx');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toBe(
      'p.onnx [preset]: unknown preset "holosoma/g1-29dof"; the declared presets are: holosoma/g1-29dof-wbt',
    );
  });

  it('a policy binding carries its preset over the robot bridge (the robot reads the file under it again)', () => {
    const wire = {
      kind: 'onnx',
      id: 'holosoma-wbt/model_39999+holosoma/g1-29dof-wbt',
      version: 'holosoma-wbt/1+ebb1f6c8ce74@holosoma-g1/1@5ms×4',
      controlRateHz: 50,
      family: 'holosoma-wbt',
      policyPath: '/p/model_39999.onnx',
      modelFile: '/p/model_39999.onnx',
      checkpointHash: 'ebb1f6c8ce745aa8a90303f48ea41f7c5aa92fbd982d694c618ead3a3ff575dd',
      adapter: 'holosoma-wbt/1',
      physicsId: 'holosoma-g1/1@5ms×4',
      bakedClipId: 'clip-de276f5527ab339c',
    };
    const withPreset = decodeWireBinding({ ...wire, preset: 'holosoma/g1-29dof-wbt@1' });
    expect(withPreset.ok && withPreset.value).toMatchObject({ preset: 'holosoma/g1-29dof-wbt@1' });
    const without = decodeWireBinding(wire);
    expect(without.ok && 'preset' in without.value).toBe(false);
    const bad = decodeWireBinding({ ...wire, preset: 7 });
    expect(bad.ok).toBe(false);
  });
});
