import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeMjlabNpz } from '../../src/domain/motion/mjlabNpz';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import {
  columnsToCanonical,
  orderFromFkResidual,
  orderFromJointNames,
  reorderToCanonical,
} from '../../src/domain/motion/npzJointOrder';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { seededUniform } from '../../src/domain/stats/prng';
import {
  canonicalToPolicy,
  G1_ISAACLAB_JOINT_NAMES,
  JointOrderError,
  jointOrderFromNames,
  policyToCanonical,
  toCanonical,
} from '../../src/domain/robot/jointOrder';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { sharedData } from '../helpers/sharedData';
import { expectInputError, J, npyStringBytes, npzBytes, npzMembersFor, syntheticClip } from './motionTestHelpers';

const CANON: readonly string[] = G1_JOINT_NAMES;
const ISAAC: readonly string[] = G1_ISAACLAB_JOINT_NAMES;

function shuffled<T>(a: readonly T[], seed: number): T[] {
  const r = seededUniform(seed);
  const out = [...a];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function expectJointOrderError(fn: () => unknown, message: RegExp): string {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(JointOrderError);
  const m = (caught as Error).message;
  expect(m).toMatch(message);
  return m;
}

describe('jointOrderFromNames', () => {
  it('the Isaac Lab list is a permutation of the canonical names', () => {
    expect(ISAAC.length).toBe(29);
    expect(new Set(ISAAC).size).toBe(29);
    expect([...ISAAC].sort()).toEqual([...CANON].sort());
    expect(ISAAC).not.toEqual(CANON);
  });

  it('canonical names → label canonical, identity table', () => {
    const m = jointOrderFromNames(CANON);
    expect(m.label).toBe('canonical');
    expect(Array.from(m.canonicalOf)).toEqual(CANON.map((_, i) => i));
    expect(m.policyNames).toEqual(CANON);
  });

  it('the Isaac Lab list → label isaaclab, each policy joint mapped to its canonical index by name', () => {
    const m = jointOrderFromNames(ISAAC);
    expect(m.label).toBe('isaaclab');
    expect(Array.from(m.canonicalOf)).toEqual(ISAAC.map((n) => CANON.indexOf(n)));
    // spot checks against the canonical table in SOURCES.md
    expect(m.canonicalOf[1]).toBe(6); // right_hip_pitch_joint
    expect(m.canonicalOf[2]).toBe(12); // waist_yaw_joint
    expect(m.canonicalOf[9]).toBe(3); // left_knee_joint
    expect(m.canonicalOf[28]).toBe(28); // right_wrist_yaw_joint
  });

  it('any other permutation → label custom', () => {
    for (const seed of [1, 2, 3]) {
      const names = shuffled(CANON, seed);
      const m = jointOrderFromNames(names);
      expect(m.label).toBe('custom');
      names.forEach((n, i) => expect(CANON[m.canonicalOf[i]]).toBe(n));
    }
    // a single swap is enough to be custom
    const swapped = [...CANON];
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
    expect(jointOrderFromNames(swapped).label).toBe('custom');
  });

  it('keeps its own copy of the names', () => {
    const names = [...ISAAC];
    const m = jointOrderFromNames(names);
    names[0] = 'changed';
    expect(m.policyNames[0]).toBe(ISAAC[0]);
  });

  it('an unknown name is refused, naming it and the model joint left out', () => {
    const names = [...CANON];
    names[3] = 'left_toe_joint';
    const m = expectJointOrderError(() => jointOrderFromNames(names), /no joint named "left_toe_joint"/);
    expect(m).toMatch(/the policy does not name left_knee_joint/);
    expect(m).toMatch(/29 joints/);
  });

  it('a missing name is refused, listing it', () => {
    const m = expectJointOrderError(
      () => jointOrderFromNames(CANON.filter((n) => n !== 'waist_roll_joint' && n !== 'left_elbow_joint')),
      /does not name waist_roll_joint, left_elbow_joint/,
    );
    expect(m).not.toMatch(/named twice|no joint named/);
  });

  it('a repeated name is refused, listing it (and the joint it pushed out)', () => {
    const names = [...ISAAC];
    names[names.indexOf('left_knee_joint')] = 'right_knee_joint';
    const m = expectJointOrderError(() => jointOrderFromNames(names), /named twice: right_knee_joint/);
    expect(m).toMatch(/does not name left_knee_joint/);
  });

  it('every problem is listed at once', () => {
    const names = [...CANON.slice(0, 27), 'foo_joint', 'left_hip_pitch_joint', 'bar_joint'];
    const m = expectJointOrderError(() => jointOrderFromNames(names), /no joint named "foo_joint", "bar_joint"/);
    expect(m).toMatch(/named twice: left_hip_pitch_joint/);
    expect(m).toMatch(/does not name right_wrist_pitch_joint, right_wrist_yaw_joint/);
  });

  it('an empty list names every model joint as missing', () => {
    const m = expectJointOrderError(() => jointOrderFromNames([]), /does not name/);
    for (const n of CANON) expect(m).toContain(n);
  });

  it("takes another model's joint list", () => {
    const model = ['a', 'b', 'c'];
    expect(jointOrderFromNames(['c', 'a', 'b'], model).canonicalOf).toEqual(Int32Array.from([2, 0, 1]));
    expect(jointOrderFromNames(['a', 'b', 'c'], model).label).toBe('canonical');
    expectJointOrderError(() => jointOrderFromNames(['a', 'b'], model), /model's 3 joints.*does not name c/);
  });
});

describe('policyToCanonical / canonicalToPolicy', () => {
  const values = (seed: number, n: number) => {
    const r = seededUniform(seed);
    return Float64Array.from({ length: n }, () => r() * 4 - 2);
  };

  it('Isaac Lab → canonical puts each value under its joint name', () => {
    const m = jointOrderFromNames(ISAAC);
    const src = Float64Array.from(ISAAC, (_, i) => i + 0.5); // value = policy index + 0.5
    const out = new Float64Array(29);
    policyToCanonical(m, src, out);
    CANON.forEach((n, c) => expect(out[c]).toBe(ISAAC.indexOf(n) + 0.5));
    expect(Array.from(toCanonical(m, Array.from(src)))).toEqual(Array.from(out));
  });

  it('round trip canonical → policy → canonical is the identity, for every order', () => {
    for (const names of [CANON, ISAAC, shuffled(CANON, 9)]) {
      const m = jointOrderFromNames(names);
      const x = values(4, 29);
      const p = new Float64Array(29);
      const back = new Float64Array(29);
      canonicalToPolicy(m, x, p);
      policyToCanonical(m, p, back);
      expect(Array.from(back)).toEqual(Array.from(x));
      // and policy order really is a reordering (except for the identity table)
      if (names !== CANON) expect(Array.from(p)).not.toEqual(Array.from(x));
      p.forEach((v, i) => expect(v).toBe(x[CANON.indexOf(names[i])]));
    }
  });

  it('honours source and output offsets (frame-strided buffers) and writes only its 29 slots', () => {
    const m = jointOrderFromNames(shuffled(CANON, 5));
    const frames = 3;
    const src = values(6, frames * J);
    const pol = new Float32Array(frames * J + 4).fill(-99);
    for (let f = 0; f < frames; f++) canonicalToPolicy(m, src, pol, f * J, 2 + f * J);
    expect([pol[0], pol[1], pol[pol.length - 2], pol[pol.length - 1]]).toEqual([-99, -99, -99, -99]);
    const back = new Float64Array(frames * J);
    for (let f = 0; f < frames; f++) policyToCanonical(m, pol, back, 2 + f * J, f * J);
    for (let i = 0; i < back.length; i++) expect(back[i]).toBeCloseTo(src[i], 6); // float32 in between
  });
});

// ---------------------------------------------------------------- NPZ joint order

describe('npzJointOrder: from joint_names', () => {
  it('recognises the two orders by name', () => {
    expect(orderFromJointNames(CANON, 'x.npz')).toEqual({ order: 'canonical', by: 'joint_names' });
    expect(orderFromJointNames(ISAAC, 'x.npz')).toEqual({ order: 'isaaclab', by: 'joint_names' });
  });

  it('refuses any other list, naming the key and the names', () => {
    const custom = shuffled(CANON, 2);
    const err = expectInputError(
      () => orderFromJointNames(custom, 'x.npz'),
      { file: 'x.npz', key: 'joint_names' },
      /neither the model's order nor Isaac Lab's/,
    );
    expect(err.reason).toContain(custom.join(', '));
    expectInputError(
      () => orderFromJointNames(CANON.slice(0, 28), 'x.npz'),
      { file: 'x.npz', key: 'joint_names' },
      /neither/,
    );
    expectInputError(() => orderFromJointNames([], 'x.npz'), { file: 'x.npz', key: 'joint_names' }, /neither/);
  });

  it('columnsToCanonical and reorderToCanonical move Isaac Lab columns under their names', () => {
    expect(Array.from(columnsToCanonical('canonical'))).toEqual(CANON.map((_, i) => i));
    expect(Array.from(columnsToCanonical('isaaclab'))).toEqual(ISAAC.map((n) => CANON.indexOf(n)));
    const frames = 2;
    const v = Float64Array.from({ length: frames * J }, (_, k) => 100 * Math.floor(k / J) + (k % J)); // frame*100 + file column
    reorderToCanonical(v, frames, 'isaaclab');
    for (let f = 0; f < frames; f++) CANON.forEach((n, c) => expect(v[f * J + c]).toBe(100 * f + ISAAC.indexOf(n)));
    const w = Float64Array.from({ length: J }, (_, k) => k);
    reorderToCanonical(w, 1, 'canonical');
    expect(Array.from(w)).toEqual(CANON.map((_, i) => i));
  });

  it('an NPZ naming its joints in Isaac Lab order is reordered by the decoder', () => {
    const c = syntheticClip(4);
    const members = npzMembersFor(c);
    const clip = decodeMjlabNpz(npzBytes({ ...members, joint_names: npyStringBytes(ISAAC) }), { file: 'isaac.npz' });
    expect(clip.provenance.jointOrder).toBe('isaaclab (from joint_names)');
    for (let k = 0; k < 4; k++)
      CANON.forEach((n, j) => expect(clip.jointPosRad[k * J + j]).toBe(c.joints[k][ISAAC.indexOf(n)]));
    const named = decodeMjlabNpz(npzBytes(members), { file: 'canon.npz' });
    expect(named.provenance.jointOrder).toBe('canonical (from joint_names)');
    expect(Array.from(named.jointPosRad.subarray(0, J))).toEqual(c.joints[0]);
  });
});

describe('npzJointOrder: from the FK residual against body_pos_w, on real files', () => {
  const fk = new ForwardKinematics(loadRobotProfile());
  const ERIC = sharedData('policies', 'beyondmimic', 'EricCamper04.npz');
  const FENCE = sharedData('motions', 'g1_moves', 'npz', 'B_Fence2.npz');
  const raw = new Map<string, MotionClip>();
  /** The file's columns as stored: decoded without kinematics, so nothing is reordered. */
  const rawClip = (f: string) => {
    let c = raw.get(f);
    if (!c) {
      c = decodeMjlabNpz(new Uint8Array(fs.readFileSync(f)), { file: f });
      raw.set(f, c);
    }
    return c;
  };
  const decide = (f: string, bodyPos?: Float64Array) => {
    const c = rawClip(f);
    return orderFromFkResidual(
      f,
      c.frameCount,
      c.rootPosM,
      c.rootQuatWxyz,
      c.jointPosRad,
      bodyPos ?? c.bodyPosW!.data,
      c.bodyPosW!.bodyCount,
      fk,
    );
  };
  /** body_pos_w with every body moved by its own fixed random offset of 3–6 cm (all frames alike). */
  const scrambled = (f: string, seed: number) => {
    const c = rawClip(f);
    const B = c.bodyPosW!.bodyCount;
    const r = seededUniform(seed);
    const off: number[] = [];
    for (let b = 0; b < B; b++) {
      const z = 2 * r() - 1;
      const a = 2 * Math.PI * r();
      const s = Math.sqrt(1 - z * z);
      const len = 0.03 + 0.03 * r();
      off.push(len * s * Math.cos(a), len * s * Math.sin(a), len * z);
    }
    const out = c.bodyPosW!.data.slice();
    for (let k = 0; k < c.frameCount; k++) for (let i = 0; i < 3 * B; i++) out[k * 3 * B + i] += off[i];
    return out;
  };

  it('the raw decode carries no order decision (the precondition of these tests)', () => {
    const c = rawClip(ERIC);
    expect(c.provenance.jointOrder).toBeUndefined();
    expect(c.warnings.map((w) => w.code)).toContain('joint_order_unverified');
    expect(c.bodyPosW?.bodyCount).toBe(30);
  });

  it("EricCamper04.npz (no joint_names) is decided 'isaaclab'", () => {
    const d = decide(ERIC);
    expect(d.order).toBe('isaaclab');
    expect(d.by).toBe('fk_residual');
    expect(d.residualM!.isaaclab).toBeLessThan(1e-4);
    expect(d.residualM!.canonical).toBeGreaterThan(0.03);
  });

  it("independent evidence: EricCamper04.npz's stored columns are the Isaac Lab-ordered joint_pos baked into EricCamper04.onnx", () => {
    const c = rawClip(ERIC);
    const { info } = readOnnxFile(sharedData('policies', 'beyondmimic', 'EricCamper04.onnx'));
    expect(info.metadata.joint_names.split(',')).toEqual(ISAAC);
    const baked = info.timeIndexed.joint_pos;
    expect(baked.dims).toEqual([c.frameCount, J]);
    let max = 0;
    for (let i = 0; i < baked.data.length; i++) max = Math.max(max, Math.abs(baked.data[i] - c.jointPosRad[i]));
    expect(max).toBeLessThan(1e-6);
  });

  it("B_Fence2.npz (mjlab, model order) is decided 'canonical'", () => {
    const d = decide(FENCE);
    expect(d.order).toBe('canonical');
    expect(d.residualM!.canonical).toBeLessThan(1e-4);
    expect(d.residualM!.isaaclab).toBeGreaterThan(0.03);
  });

  it('loadClipFile applies the decision: EricCamper04 reordered to canonical, B_Fence2 kept', () => {
    const eric = loadClipFile(ERIC);
    expect(eric.provenance.jointOrder).toMatch(/^isaaclab \(from FK against body_pos_w/);
    expect(eric.warnings.map((w) => w.code)).not.toContain('joint_order_unverified');
    const r = rawClip(ERIC);
    for (const k of [0, 400, eric.frameCount - 1])
      CANON.forEach((n, j) => expect(eric.jointPosRad[k * J + j]).toBe(r.jointPosRad[k * J + ISAAC.indexOf(n)]));
    const fence = loadClipFile(FENCE);
    expect(fence.provenance.jointOrder).toMatch(/^canonical \(from FK against body_pos_w/);
    expect(Array.from(fence.jointPosRad)).toEqual(Array.from(rawClip(FENCE).jointPosRad));
  });

  for (const [name, f] of [
    ['EricCamper04.npz', ERIC],
    ['B_Fence2.npz', FENCE],
  ] as const) {
    it(`negative control: ${name} with body_pos_w scrambled by a few cm per body is refused`, () => {
      for (const seed of [11, 12]) {
        expectInputError(() => decide(f, scrambled(f, seed)), { file: f, key: 'joint_pos' }, /cannot be decided/);
      }
    });
  }

  it('negative control: joint columns from another frame of the clip do not fit either order', () => {
    const c = rawClip(FENCE);
    const N = c.frameCount;
    const shifted = new Float64Array(c.jointPosRad.length);
    const lag = Math.floor(N / 3);
    for (let k = 0; k < N; k++)
      shifted.set(c.jointPosRad.subarray(((k + lag) % N) * J, ((k + lag) % N) * J + J), k * J);
    expectInputError(
      () =>
        orderFromFkResidual(FENCE, N, c.rootPosM, c.rootQuatWxyz, shifted, c.bodyPosW!.data, c.bodyPosW!.bodyCount, fk),
      { file: FENCE, key: 'joint_pos' },
      /cannot be decided/,
    );
  });
});
