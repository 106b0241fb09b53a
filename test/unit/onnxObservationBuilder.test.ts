import { describe, expect, it } from 'vitest';
import {
  applyAction,
  buildObservation,
  createActionMap,
  describeObservation,
  observationLayout,
  observationSize,
  policyInterfaceProblems,
  writeProjectedGravity,
} from '../../src/domain/wbc/observationBuilder';
import type { PolicyInterface } from '../../src/domain/wbc/wbcBinding';
import { J, makeObservation, rampReference, standardInterface } from '../helpers/onnxBuilder';

const DEFAULT = Array.from({ length: J }, (_, j) => 0.05 * (j % 5) - 0.1);
const f32 = (x: number) => Math.fround(x);

function build(
  iface: PolicyInterface,
  seed = 3,
  step = 0,
  lastAction: ArrayLike<number> = new Float64Array(J),
  frames = 10,
) {
  const obs = makeObservation(rampReference(frames), DEFAULT, seed, step);
  const out = new Float32Array(observationSize(iface));
  buildObservation(iface, obs, { defaultJointPosRad: DEFAULT, lastAction }, out);
  return { obs, out };
}

describe('observation layout', () => {
  it('sizes each term and describes the layout', () => {
    const iface = standardInterface({}, 3);
    expect(observationSize(iface)).toBe(29 + 29 + 3 + 3 + 3 * 29 + 29);
    expect(describeObservation(iface)).toBe(
      'joint_pos_rel_default 29 + joint_vel 29 + base_ang_vel 3 + projected_gravity 3 + reference_joint_pos 3×29 + last_action 29',
    );
    const layout = observationLayout(iface);
    expect(layout.map((s) => [s.term, s.offset, s.size])).toEqual([
      ['joint_pos_rel_default', 0, 29],
      ['joint_vel', 29, 29],
      ['base_ang_vel', 58, 3],
      ['projected_gravity', 61, 3],
      ['reference_joint_pos', 64, 87],
      ['last_action', 151, 29],
    ]);
  });
});

describe('buildObservation', () => {
  it('writes every term with its scale, in declared order', () => {
    const iface = standardInterface({}, 2);
    const last = Float64Array.from({ length: J }, (_, j) => 0.01 * j - 0.1);
    const { obs, out } = build(iface, 5, 4, last);
    const st = obs.state;
    const L = Object.fromEntries(observationLayout(iface).map((s) => [s.term, s.offset]));
    for (let j = 0; j < J; j++) {
      expect(out[L.joint_pos_rel_default + j]).toBe(f32(st.jointPosRad[j] - DEFAULT[j]));
      expect(out[L.joint_vel + j]).toBe(f32(st.jointVelRadS[j] * 0.05));
      expect(out[L.last_action + j]).toBe(f32(last[j]));
      // reference frames 5 and 6 (step 4 is at frame 4; the term starts at the next frame), frame-major
      expect(out[L.reference_joint_pos + j]).toBe(f32(0.01 * 5 + 0.001 * j));
      expect(out[L.reference_joint_pos + J + j]).toBe(f32(0.01 * 6 + 0.001 * j));
    }
    for (let i = 0; i < 3; i++) expect(out[L.base_ang_vel + i]).toBe(f32(st.imu.gyroRadS[i] * 0.25));
    const g = new Float64Array(3);
    writeProjectedGravity(st.imu.quatWxyz, g);
    for (let i = 0; i < 3; i++) expect(out[L.projected_gravity + i]).toBe(f32(g[i]));
  });

  it('follows the declared order (reordering terms reorders the vector)', () => {
    const a = standardInterface({}, 1);
    const b: PolicyInterface = { ...a, observation: [...a.observation].reverse() };
    const oa = build(a).out;
    const ob = build(b).out;
    const la = observationLayout(a);
    const lb = observationLayout(b);
    for (const seg of la) {
      const other = lb.find((s) => s.term === seg.term)!;
      expect(Array.from(ob.subarray(other.offset, other.offset + other.size))).toEqual(
        Array.from(oa.subarray(seg.offset, seg.offset + seg.size)),
      );
    }
    expect(lb[0].term).toBe('last_action');
  });

  it('applies per-term scales', () => {
    const one = standardInterface({}, 1);
    const scaled: PolicyInterface = { ...one, observation: one.observation.map((t) => ({ ...t, scale: 3 })) };
    const o1 = build(one).out;
    const o3 = build(scaled).out;
    const scales = one.observation.flatMap((t, i) => Array(observationLayout(one)[i].size).fill(t.scale) as number[]);
    for (let i = 0; i < o1.length; i++) expect(o3[i]).toBeCloseTo((o1[i] / scales[i]) * 3, 5);
  });

  const refFrames = (out: Float32Array, frames: number) =>
    Array.from({ length: frames }, (_, f) => Math.round(out[f * J] / 0.01));

  it('starts reference frames at the next frame, or at the declared offset', () => {
    const term = (offset?: number): PolicyInterface =>
      standardInterface({
        observation: [
          { term: 'reference_joint_pos', frames: 3, scale: 1, ...(offset === undefined ? {} : { offset }) },
        ],
      });
    expect(refFrames(build(term(), 1, 2).out, 3)).toEqual([3, 4, 5]);
    expect(refFrames(build(term(0), 1, 2).out, 3)).toEqual([2, 3, 4]);
    expect(refFrames(build(term(4), 1, 2).out, 3)).toEqual([6, 7, 8]);
  });

  it('clamps reference frames at the end of the clip', () => {
    const iface: PolicyInterface = standardInterface({
      observation: [{ term: 'reference_joint_pos', frames: 4, scale: 1, offset: 0 }],
    });
    const { out } = build(iface, 1, 8, undefined, 10); // frames 8, 9, 9, 9
    expect(refFrames(out, 4)).toEqual([8, 9, 9, 9]);
    for (let j = 0; j < J; j++) expect(out[3 * J + j]).toBe(f32(0.09 + 0.001 * j));
    const next = build(
      standardInterface({ observation: [{ term: 'reference_joint_pos', frames: 2, scale: 1 }] }),
      1,
      9,
      undefined,
      10,
    ).out;
    expect(refFrames(next, 2)).toEqual([9, 9]);
  });

  it('uses the given last action and zeros after reset', () => {
    const iface: PolicyInterface = standardInterface({ observation: [{ term: 'last_action', scale: 2 }] });
    expect(Array.from(build(iface).out).every((v) => v === 0)).toBe(true);
    const a = new Float64Array(J).fill(0.5);
    expect(Array.from(build(iface, 1, 0, a).out).every((v) => v === 1)).toBe(true);
  });

  it('clips after scaling when clipObservation is declared', () => {
    const iface: PolicyInterface = standardInterface({
      observation: [{ term: 'joint_vel', scale: 10 }],
      clipObservation: 5,
    });
    const { obs, out } = build(iface, 9);
    for (let j = 0; j < J; j++) expect(out[j]).toBe(f32(Math.max(-5, Math.min(5, obs.state.jointVelRadS[j] * 10))));
    expect(Array.from(out).some((v) => Math.abs(v) === 5)).toBe(true);
  });

  it('rejects a buffer of the wrong size and reuses the given buffer', () => {
    const iface = standardInterface();
    const obs = makeObservation(rampReference(5), DEFAULT);
    const ctx = { defaultJointPosRad: DEFAULT, lastAction: new Float64Array(J) };
    expect(() => buildObservation(iface, obs, ctx, new Float32Array(observationSize(iface) + 1))).toThrow(
      /builds 151 values, the buffer holds 152/,
    );
    const buf = new Float32Array(observationSize(iface));
    expect(buildObservation(iface, obs, ctx, buf)).toBe(buf);
  });
});

describe('projected gravity', () => {
  const pg = (q: number[]) => {
    const g = new Float64Array(3);
    writeProjectedGravity(q, g);
    return Array.from(g);
  };
  const s = Math.SQRT1_2;
  const close = (a: number[], b: number[]) => a.forEach((v, i) => expect(v).toBeCloseTo(b[i], 12));

  it('is (0, 0, −1) upright', () => close(pg([1, 0, 0, 0]), [0, 0, -1]));
  it('is (0, −1, 0) after a +90° roll about x (body y points up)', () => close(pg([s, s, 0, 0]), [0, -1, 0]));
  it('is (1, 0, 0) after a +90° pitch about y (body x points down)', () => close(pg([s, 0, s, 0]), [1, 0, 0]));
  it('does not change with yaw', () => close(pg([Math.cos(0.6), 0, 0, Math.sin(0.6)]), [0, 0, -1]));
  it('normalises the quaternion', () => close(pg([2 * s, 2 * s, 0, 0]), [0, -1, 0]));
  it('is read from the IMU quaternion', () => {
    const iface: PolicyInterface = standardInterface({ observation: [{ term: 'projected_gravity', scale: 1 }] });
    const obs = makeObservation(rampReference(3), DEFAULT);
    obs.state.imu.quatWxyz.set([s, s, 0, 0]);
    const out = buildObservation(
      iface,
      obs,
      { defaultJointPosRad: DEFAULT, lastAction: new Float64Array(J) },
      new Float32Array(3),
    );
    close(Array.from(out), [0, -1, 0]);
  });
});

describe('action mapping', () => {
  it('target = default + scale·action + offset, with clipAction and last action', () => {
    const scale = Array.from({ length: J }, (_, j) => 0.1 + 0.01 * j);
    const iface = standardInterface({ actionScale: scale, actionOffset: 0.02, clipAction: 1.5 });
    const map = createActionMap(iface, DEFAULT);
    const raw = Float32Array.from({ length: J }, (_, j) => (j - 14) * 0.2);
    const last = new Float64Array(J);
    const targets = new Float64Array(J);
    expect(applyAction(raw, map, last, targets)).toBe(true);
    for (let j = 0; j < J; j++) {
      const a = Math.max(-1.5, Math.min(1.5, raw[j]));
      expect(last[j]).toBe(a);
      expect(targets[j]).toBeCloseTo(DEFAULT[j] + scale[j] * a + 0.02, 12);
    }
  });

  it('uses the policy default pose when declared', () => {
    const policyDefault = Array.from({ length: J }, () => 0.3);
    const map = createActionMap(standardInterface({ defaultJointPosRad: policyDefault }), DEFAULT);
    const targets = new Float64Array(J);
    applyAction(new Float32Array(J), map, new Float64Array(J), targets);
    expect(Array.from(targets)).toEqual(policyDefault);
  });

  it('refuses non-finite actions without writing', () => {
    const map = createActionMap(standardInterface(), DEFAULT);
    const raw = new Float32Array(J);
    raw[7] = NaN;
    const targets = new Float64Array(J).fill(9);
    expect(applyAction(raw, map, new Float64Array(J), targets)).toBe(false);
    expect(targets[0]).toBe(9);
  });
});

describe('policyInterfaceProblems', () => {
  it('accepts the standard interface', () => expect(policyInterfaceProblems(standardInterface())).toEqual([]));
  it('names each bad field', () => {
    const p = policyInterfaceProblems(
      standardInterface({
        observation: [{ term: 'reference_joint_pos', frames: 0, scale: NaN, offset: -1 }],
        actionScale: [1, 2],
        gains: { kp: -1, kd: 1 },
        clipAction: 0,
      }),
    );
    expect(p).toEqual([
      'observation[0].scale: not a finite number',
      'observation[0].frames: expected an integer ≥ 1, got 0',
      'observation[0].offset: expected an integer ≥ 0, got -1',
      'actionScale: expected one number or 29 (one per joint), got 2',
      'gains.kp: negative (-1)',
      'clipAction: expected a positive number, got 0',
    ]);
  });
});
