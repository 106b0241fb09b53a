import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { createControlCommand, type ControlReference } from '../../src/domain/wbc/controller';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/wbc/jointOrder';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { planPolicy } from '../../src/services/wbc/policyRun';
import {
  createTrackingPolicyController,
  type TrackingControllerOptions,
} from '../../src/services/wbc/trackingPolicyController';
import {
  encodeHoloMotionProbe,
  holomotionConfigYaml,
  holomotionJointValues,
  holomotionMetadata,
  HOLOMOTION_KV_DIMS,
  writeHoloMotionFolder,
  type HoloMotionProbe,
} from '../helpers/holomotionFixture';
import { makeObservation } from '../helpers/onnxBuilder';
import {
  angVel,
  conj,
  movingReference,
  qmul,
  refP,
  refQ,
  rot6d,
  rotInv,
  yaw,
  yawQ,
  type Q,
} from '../helpers/referenceTestMath';
import { expectInputError } from './motionTestHelpers';

// The HoloMotion binding (issue 16 item 2) on interface-exposing exports: graphs with the v1.4
// exporter's exact input/output names, shapes and metadata whose weights copy chosen observation
// entries into the action. Each of the 604 entries is read back through the graph and compared
// with a value this test computes itself from the robot state and the reference, using the
// formulas of HoloMotion's observation kernel (holomotion/src/motion_tracking/actor_observation.py)
// and the layout published by its config (obs_schema term order; 134 current values, 10 future
// frames × 47). A deliberately wrong joint order must not pass.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-holomotion-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let seq = 0;
function folder(p: Partial<HoloMotionProbe> & Pick<HoloMotionProbe, 'probe'>, config?: string): string {
  const model = encodeHoloMotionProbe({ D: 604, kvDims: HOLOMOTION_KV_DIMS, metadata: holomotionMetadata(), ...p });
  return writeHoloMotionFolder(path.join(tmp, `run${seq++}`), model, config);
}

// ---- the published layout (offsets derived from the kernel's term widths, in obs_schema order)
const LAYOUT: [string, number, number][] = [
  ['actor_ref_gravity_projection_cur', 0, 3],
  ['actor_ref_base_linvel_cur', 3, 3],
  ['actor_ref_base_angvel_cur', 6, 3],
  ['actor_ref_dof_pos_cur', 9, 29],
  ['actor_ref_root_height_cur', 38, 1],
  ['actor_ref_robot_yaw_error_sin_cos', 39, 2],
  ['actor_projected_gravity', 41, 3],
  ['actor_rel_robot_root_ang_vel', 44, 3],
  ['actor_dof_pos', 47, 29],
  ['actor_dof_vel', 76, 29],
  ['actor_last_action', 105, 29],
  ['actor_ref_dof_pos_fut', 134, 290],
  ['actor_ref_root_height_fut', 424, 10],
  ['actor_ref_gravity_projection_fut', 434, 30],
  ['actor_ref_base_linvel_fut', 464, 30],
  ['actor_ref_base_angvel_fut', 494, 30],
  ['actor_ref_future_yaw_delta_sin_cos', 524, 20],
  ['actor_ref_future_root_ori_robot_frame_6d', 544, 60],
];

/** The 604 values HoloMotion's kernel computes, policy joints in `names` order. */
function expectedObservation(
  r: ControlReference,
  k: number,
  robotQ: Q,
  alignYaw: number,
  q: ArrayLike<number>,
  dq: ArrayLike<number>,
  gyro: ArrayLike<number>,
  lastAction: ArrayLike<number>,
  names: readonly string[],
): number[] {
  const F = r.frameCount;
  const dt = 1 / r.rateHz;
  const cl = (f: number) => Math.max(0, Math.min(F - 1, f));
  const ci = names.map((n) => (G1_JOINT_NAMES as readonly string[]).indexOf(n));
  const def = names.map((n) => Number(holomotionJointValues(n).def.toFixed(3)));
  const gravity = (f: number) => rotInv(refQ(r, f), [0, 0, -1]);
  const lin = (f: number) => {
    const a = cl(f - 1),
      b = cl(f + 1);
    const pa = refP(r, a),
      pb = refP(r, b);
    return rotInv(
      refQ(r, f),
      [0, 1, 2].map((c) => (pb[c] - pa[c]) / ((b - a) * dt)),
    );
  };
  const ang = (f: number) => {
    const a = cl(f - 1),
      b = cl(f + 1);
    return rotInv(refQ(r, f), angVel(refQ(r, a), refQ(r, b), (b - a) * dt));
  };
  const dof = (f: number) => ci.map((c) => r.jointPosRad[29 * f + c]);
  const align = yawQ(alignYaw);
  const e = yaw(qmul(align, refQ(r, k))) - yaw(robotQ);
  const fut = Array.from({ length: 10 }, (_, i) => cl(k + 1 + i));
  return [
    ...gravity(k),
    ...lin(k),
    ...ang(k),
    ...dof(k),
    r.rootPosM[3 * k + 2],
    Math.sin(e),
    Math.cos(e),
    ...rotInv(robotQ, [0, 0, -1]),
    ...Array.from(gyro),
    ...ci.map((c, i) => q[c] - def[i]),
    ...ci.map((c) => dq[c]),
    ...Array.from(lastAction),
    ...fut.flatMap(dof),
    ...fut.map((f) => r.rootPosM[3 * f + 2]),
    ...fut.flatMap(gravity),
    ...fut.flatMap(lin),
    ...fut.flatMap(ang),
    ...fut.flatMap((f) => {
      const d = yaw(refQ(r, f)) - yaw(refQ(r, k));
      return [Math.sin(d), Math.cos(d)];
    }),
    ...fut.flatMap((f) => rot6d(qmul(conj(robotQ), qmul(align, refQ(r, f))))),
  ];
}

/**
 * Steps a probe export (window w: entries 29w … 29w+28) over `steps` and compares every exposed
 * entry with the independently computed observation; returns the largest deviation.
 */
function probeWindow(
  w: number,
  ref: ControlReference,
  steps: number[],
  fault?: TrackingControllerOptions['fault'],
): number {
  const index = Array.from({ length: 29 }, (_, a) => (29 * w + a < 604 ? 29 * w + a : -1));
  const plan = planPolicy(folder({ probe: { kind: 'obs', index } }), profile);
  const ctrl = createTrackingPolicyController(plan.binding, profile, {
    loaded: plan.loaded,
    ...(fault ? { fault } : {}),
  });
  const out = createControlCommand();
  let alignYaw = NaN;
  let worst = 0;
  for (const [i, k] of steps.entries()) {
    const obs = makeObservation(ref, profile.defaultPose.jointPosRad, 11 + i, k);
    obs.referenceFrame = k;
    const robotQ = Array.from(obs.state.rootQuatWxyz!) as Q;
    if (i === 0) alignYaw = yaw(robotQ) - yaw(refQ(ref, k));
    const prev = Float64Array.from(ctrl.lastAction);
    ctrl.step(obs, out);
    const want = expectedObservation(
      ref,
      k,
      robotQ,
      alignYaw,
      obs.state.jointPosRad,
      obs.state.jointVelRadS,
      obs.state.imu.gyroRadS,
      prev,
      G1_ISAACLAB_JOINT_NAMES,
    );
    index.forEach((d, a) => {
      if (d < 0) return;
      worst = Math.max(worst, Math.abs(ctrl.lastAction[a] - want[d]));
    });
  }
  ctrl.dispose();
  return worst;
}

describe('HoloMotion v1.4 export (transformer with key/value cache), read from its files', () => {
  it('reads the layout from config.yaml: 604 values in the published order and offsets, future frames k+1…k+10', () => {
    const plan = planPolicy(folder({ probe: { kind: 'obs', index: [] } }), profile);
    const s = plan.loaded.spec;
    expect(s.family).toBe('holomotion');
    expect(s.observationSize).toBe(604);
    let o = 0;
    const got = s.observation.map((t) => {
      const w = t.size * t.history * (t.frameOffsets?.length ?? 1);
      const row: [string, number, number] = [t.name, o, w];
      o += w;
      return row;
    });
    expect(got).toEqual(LAYOUT);
    for (const t of s.observation.slice(11)) expect(t.frameOffsets).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(s.recurrent).toEqual([
      expect.objectContaining({ input: 'past_key_values', output: 'present_key_values', dims: HOLOMOTION_KV_DIMS }),
    ]);
    expect(s.stepCounter).toEqual(expect.objectContaining({ input: 'step_idx', resetAt: 8192 - 64 }));
    expect(s.ignoredOutputs.map((x) => x.name)).toEqual(['moe_layer_0_expert_indices', 'moe_layer_0_expert_logits']);
    expect(s.controlRateHz).toBe(50);
    expect([s.physics.timestepS, s.physics.decimation]).toEqual([0.005, 4]);
    expect(s.jointOrder.policyNames).toEqual(G1_ISAACLAB_JOINT_NAMES);
    // gains, default pose and action scale by joint name, in canonical order
    G1_JOINT_NAMES.forEach((n, c) => {
      const v = holomotionJointValues(n);
      expect(s.kp[c]).toBeCloseTo(Number(v.kp.toFixed(3)), 9);
      expect(s.kd[c]).toBeCloseTo(Number(v.kd.toFixed(3)), 9);
      expect(s.action.scale[c]).toBeCloseTo(Number(v.scale.toFixed(3)), 9);
      expect(s.defaultJointPosRad[c]).toBeCloseTo(Number(v.def.toFixed(3)), 9);
    });
  });

  it('every one of the 604 entries the graph receives equals the independently computed observation (4 steps, with clamped future frames)', () => {
    const ref = movingReference(14);
    let worst = 0;
    for (let w = 0; w < 21; w++) worst = Math.max(worst, probeWindow(w, ref, [0, 1, 2, 7]));
    console.log(`HoloMotion probe: 604 entries × 4 steps, largest |graph input − expected| ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(2e-6); // float32 of the same numbers
  });

  it('negative control: joints read in the canonical order instead of the file’s names do not pass', () => {
    const ref = movingReference(14);
    // window 0 holds actor_ref_dof_pos_cur (entries 9…37): the wrong order moves them
    expect(probeWindow(0, ref, [0, 1], 'wrong_joint_order')).toBeGreaterThan(0.05);
  });

  it('target = default + scale · a per joint, by name (no clip)', () => {
    const bias = Array.from({ length: 29 }, (_, a) => 0.5 + 0.01 * a);
    const plan = planPolicy(folder({ probe: { kind: 'obs', index: [], bias } }), profile);
    const ctrl = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
    const out = createControlCommand();
    ctrl.step(makeObservation(movingReference(5), new Float64Array(29)), out);
    G1_ISAACLAB_JOINT_NAMES.forEach((n, a) => {
      const v = holomotionJointValues(n);
      const c = (G1_JOINT_NAMES as readonly string[]).indexOf(n);
      expect(out.jointTargetRad[c]).toBeCloseTo(
        Number(v.def.toFixed(3)) + Number(v.scale.toFixed(3)) * Math.fround(bias[a]),
        6,
      );
      expect(out.kp![c]).toBeCloseTo(Number(v.kp.toFixed(3)), 9);
    });
    ctrl.dispose();
  });

  it('feeds present_key_values back as past_key_values and counts step_idx; both reset at reset() and at rope_max_seq_len − 64', () => {
    const dir = folder({ probe: { kind: 'state' }, metadata: holomotionMetadata(undefined, 100) });
    const plan = planPolicy(dir, profile);
    expect(plan.loaded.spec.stepCounter!.resetAt).toBe(36);
    const ctrl = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
    const out = createControlCommand();
    const ref = movingReference(60);
    const seen: [number, number][] = [];
    for (let k = 0; k < 40; k++) {
      ctrl.step(makeObservation(ref, new Float64Array(29), 1, k), out);
      seen.push([ctrl.lastAction[0], ctrl.lastAction[1]]);
    }
    // step k is fed step_idx k and a cache that was incremented k times (present = past + 1)
    expect(seen.slice(0, 36)).toEqual(Array.from({ length: 36 }, (_, k) => [k, k]));
    expect(seen.slice(36)).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(ctrl.recurrence.windowResets).toBe(1);
    ctrl.reset();
    ctrl.step(makeObservation(ref, new Float64Array(29), 1, 0), out);
    expect([ctrl.lastAction[0], ctrl.lastAction[1]]).toEqual([0, 0]);
    ctrl.dispose();
  });
});

describe('HoloMotion exports refused with the reason', () => {
  it('a transformer export without rope_max_seq_len metadata (the deploy rejects it too)', () => {
    const dir = folder({ probe: { kind: 'obs', index: [] }, metadata: holomotionMetadata(undefined, null) });
    expectInputError(() => planPolicy(dir, profile), { key: 'metadata_props.rope_max_seq_len' }, /rope_max_seq_len/);
  });

  it('an obs width that is not the layout the config builds', () => {
    const dir = folder({ D: 603, probe: { kind: 'obs', index: [] } });
    expectInputError(() => planPolicy(dir, profile), { key: 'inputs.obs' }, /width 603 .* build 604/);
  });

  it('a term the adapter does not know is refused at its schema key, not guessed', () => {
    const cfg = holomotionConfigYaml().replace('unified/actor_dof_vel', 'unified/actor_dof_acc');
    const dir = folder({ probe: { kind: 'obs', index: [] } }, cfg);
    expectInputError(
      () => planPolicy(dir, profile),
      { key: 'modules.actor.obs_schema.flattened_obs.terms[9]' },
      /actor_dof_acc.*not one the holomotion adapter knows/,
    );
  });

  it('a future term whose num_frames disagrees with its schema group', () => {
    const cfg = holomotionConfigYaml()
      .replace(/n_fut_frames: 10/, 'n_fut_frames: 10')
      .replace('seq_len: ${obs.n_fut_frames}', 'seq_len: 8');
    const dir = folder({ probe: { kind: 'obs', index: [] } }, cfg);
    expectInputError(() => planPolicy(dir, profile), {}, /seq_len 8 differs from the term's num_frames 10/);
  });
});

describe('HoloMotion MLP export (history per term)', () => {
  it('context_length 4 gives each current term 4 frames, oldest first, and the future block unchanged', () => {
    const cfg = holomotionConfigYaml({ contextLength: 4, actorType: 'MLP' });
    const D = 134 * 4 + 470;
    const dir = writeHoloMotionFolder(
      path.join(tmp, 'mlp'),
      encodeHoloMotionProbe({
        D,
        kvDims: null,
        probe: { kind: 'obs', index: [] },
        metadata: holomotionMetadata(undefined, null),
      }),
      cfg,
    );
    const s = planPolicy(dir, profile).loaded.spec;
    expect(s.observationSize).toBe(D);
    expect(s.recurrent).toEqual([]);
    expect(s.stepCounter).toBeNull();
    expect(s.observation.slice(0, 11).every((t) => t.history === 4)).toBe(true);
  });
});
