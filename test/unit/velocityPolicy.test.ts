import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { G1_NUM_JOINTS as J } from '../../src/domain/robot/g1Joints';
import { projectedGravity, VelocityObservation, velocityPolicySpec } from '../../src/domain/wbc/velocityPolicy';

// The pure adapter of unitree_rl_lab's velocity deploy.yaml: term-wise history (oldest → newest),
// joint_ids_map as "policy joint i ↔ SDK motor map[i]", stiffness in SDK order, the command clamped.

const ids = Array.from({ length: J }, (_, i) => (i * 7) % J); // a permutation (7 and 29 are coprime)
function deploy(over: Record<string, unknown> = {}) {
  const ones = new Array<number>(J).fill(1);
  return {
    file: 'deploy.yaml',
    data: {
      joint_ids_map: ids,
      step_dt: 0.02,
      stiffness: Array.from({ length: J }, (_, m) => 100 + m),
      damping: new Array<number>(J).fill(2),
      default_joint_pos: Array.from({ length: J }, (_, i) => i / 100),
      commands: { base_velocity: { ranges: { lin_vel_x: [-0.5, 1], lin_vel_y: [-0.3, 0.3], ang_vel_z: [0.1, 0.2] } } },
      actions: {
        JointPositionAction: {
          clip: null,
          scale: new Array<number>(J).fill(0.25),
          offset: Array.from({ length: J }, (_, i) => i / 100),
        },
      },
      observations: {
        base_ang_vel: { scale: [0.2, 0.2, 0.2], clip: null, history_length: 2 },
        joint_pos_rel: { scale: ones, clip: null, history_length: 2 },
        velocity_commands: {
          params: { command_name: 'base_velocity' },
          scale: [1, 1, 1],
          clip: null,
          history_length: 2,
        },
        last_action: { scale: ones, clip: null, history_length: 2 },
      },
      ...over,
    },
  };
}

function state(t: number) {
  const q = Array.from({ length: J }, (_, m) => m + t * 1000);
  return { jointPosRad: q, jointVelRadS: q, imu: { quatWxyz: [1, 0, 0, 0], gyroRadS: [t, 2 * t, 3 * t] } };
}

describe('unitree_rl_lab velocity deploy.yaml adapter', () => {
  it('reads the SDK motor of policy joint i from joint_ids_map[i], terms in order, history oldest first', () => {
    const spec = velocityPolicySpec(deploy());
    expect(spec.observationSize).toBe(2 * (3 + J + 3 + J));
    expect(spec.kp[3]).toBe(103); // stiffness stays indexed by motor
    const o = new VelocityObservation(spec);
    o.reset(state(1));
    const v = o.update(state(2));
    // base_ang_vel: frames t=1 then t=2, scaled 0.2.
    expect(Array.from(v.slice(0, 6))).toEqual([0.2, 0.4, 0.6, 0.4, 0.8, 1.2].map(Math.fround));
    // joint_pos_rel, oldest (t=1) frame: policy joint i = q[motor ids[i]] − default[i].
    for (let i = 0; i < J; i++) expect(v[6 + i]).toBeCloseTo(ids[i] + 1000 - i / 100, 3);
    for (let i = 0; i < J; i++) expect(v[6 + J + i]).toBeCloseTo(ids[i] + 2000 - i / 100, 3);
    // velocity_commands: zero clamped into the ranges (ang_vel_z range starts at 0.1).
    expect(Array.from(v.slice(6 + 2 * J, 12 + 2 * J))).toEqual([0, 0, 0.1, 0, 0, 0.1].map(Math.fround));
    // last_action after reset: zeros.
    expect(v.slice(12 + 2 * J).every((x) => x === 0)).toBe(true);
  });

  it('the action drives motor joint_ids_map[i] and becomes the next last_action', () => {
    const spec = velocityPolicySpec(deploy());
    const o = new VelocityObservation(spec);
    o.reset(state(0));
    const a = Array.from({ length: J }, (_, i) => i);
    const target = new Float64Array(J);
    o.applyAction(a, target);
    for (let i = 0; i < J; i++) expect(target[ids[i]]).toBeCloseTo(i * 0.25 + i / 100, 12);
    const v = o.update(state(1));
    const la = v.slice(v.length - 2 * J);
    expect(la[0 + J + 5]).toBe(5); // newest frame holds the action
    expect(la[5]).toBe(0); // oldest frame: the reset's zero
  });

  it('negative controls: the inverse table and a frame-wise history give different observations', () => {
    const spec = velocityPolicySpec(deploy());
    const right = new VelocityObservation(spec);
    const inv = new VelocityObservation(spec, [0, 0, 0], 'inverse_joint_ids_map');
    const fw = new VelocityObservation(spec, [0, 0, 0], 'frame_wise_history');
    for (const o of [right, inv, fw]) o.reset(state(1));
    const r = Array.from(right.update(state(2)));
    expect(Array.from(inv.update(state(2)))).not.toEqual(r);
    expect(Array.from(fw.update(state(2)))).not.toEqual(r);
  });

  it('projected gravity is world −z in the body frame', () => {
    const g = new Float64Array(3);
    projectedGravity([1, 0, 0, 0], g);
    expect(Array.from(g)).toEqual([-0, -0, -1]);
    const h = Math.SQRT1_2; // 90° about x: R(q)ᵀ·(0, 0, −1) = (0, −1, 0)
    projectedGravity([h, h, 0, 0], g);
    expect(g[0]).toBeCloseTo(0, 12);
    expect(g[1]).toBeCloseTo(-1, 12);
    expect(g[2]).toBeCloseTo(0, 12);
  });

  it('refuses an unknown term, a repeated motor and a clip, naming the key', () => {
    const bad = (over: Record<string, unknown>, key: string) => {
      try {
        velocityPolicySpec(deploy(over));
        throw new Error('accepted');
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        expect((e as InputError).location.key).toBe(key);
      }
    };
    bad({ observations: { gait_phase: { history_length: 1 } } }, 'observations.gait_phase');
    bad({ joint_ids_map: [0, ...ids.slice(1, J - 1), 0] }, `joint_ids_map[${J - 1}]`);
    bad(
      {
        actions: { JointPositionAction: { clip: [[0, 1]], scale: new Array(J).fill(1), offset: new Array(J).fill(0) } },
      },
      'actions.JointPositionAction.clip',
    );
  });
});
