import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { createControlCommand, type ControlReference } from '../../src/domain/wbc/controller';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
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

// The HoloMotion binding on interface-exposing exports: graphs with the v1.4
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

/**
 * Every actor term HoloMotion's kernel computes at control step k, by its atomic_obs_list name:
 * a current term's values at frame k, a future term's values at frames k+1 … k+10 (clamped to the
 * clip), frame-major; policy joints in `names` order.
 */
function expectedTerms(
  r: ControlReference,
  k: number,
  robotQ: Q,
  alignYaw: number,
  q: ArrayLike<number>,
  dq: ArrayLike<number>,
  gyro: ArrayLike<number>,
  lastAction: ArrayLike<number>,
  names: readonly string[],
): Map<string, number[]> {
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
  return new Map<string, number[]>([
    ['actor_ref_gravity_projection_cur', gravity(k)],
    ['actor_ref_base_linvel_cur', lin(k)],
    ['actor_ref_base_angvel_cur', ang(k)],
    ['actor_ref_dof_pos_cur', dof(k)],
    ['actor_ref_root_height_cur', [r.rootPosM[3 * k + 2]]],
    ['actor_ref_robot_yaw_error_sin_cos', [Math.sin(e), Math.cos(e)]],
    ['actor_projected_gravity', rotInv(robotQ, [0, 0, -1])],
    ['actor_rel_robot_root_ang_vel', Array.from(gyro)],
    ['actor_dof_pos', ci.map((c, i) => q[c] - def[i])],
    ['actor_dof_vel', ci.map((c) => dq[c])],
    ['actor_last_action', Array.from(lastAction)],
    ['actor_ref_dof_pos_fut', fut.flatMap(dof)],
    ['actor_ref_root_height_fut', fut.map((f) => r.rootPosM[3 * f + 2])],
    ['actor_ref_gravity_projection_fut', fut.flatMap(gravity)],
    ['actor_ref_base_linvel_fut', fut.flatMap(lin)],
    ['actor_ref_base_angvel_fut', fut.flatMap(ang)],
    [
      'actor_ref_future_yaw_delta_sin_cos',
      fut.flatMap((f) => {
        const d = yaw(refQ(r, f)) - yaw(refQ(r, k));
        return [Math.sin(d), Math.cos(d)];
      }),
    ],
    [
      'actor_ref_future_root_ori_robot_frame_6d',
      fut.flatMap((f) => rot6d(qmul(conj(robotQ), qmul(align, refQ(r, f))))),
    ],
  ]);
}

/** The 604 values of the transformer export: the terms in the published obs_schema order (LAYOUT). */
function expectedObservation(...args: Parameters<typeof expectedTerms>): number[] {
  const terms = expectedTerms(...args);
  return LAYOUT.flatMap(([name]) => terms.get(name)!);
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

  // Wrong names and shapes at load (the exporter's interface: agent_modules.py PPOTFActor.export_onnx,
  // as the deploy reads it, onnx_policy.py:362-389): the error names the .onnx file, the key and the reason.
  const onnxOf = (dir: string) => path.join(dir, 'exported', 'model_14000.onnx');

  it('an observation input named "observations" instead of "obs"', () => {
    const dir = folder({ probe: { kind: 'obs', index: [] }, io: { obs: 'observations' } });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: onnxOf(dir), key: 'inputs' },
      /no input "obs" \(inputs: observations \[1, 604\]/,
    );
  });

  it('an action output named "action" instead of "actions"', () => {
    const dir = folder({ probe: { kind: 'obs', index: [] }, io: { actions: 'action' } });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: onnxOf(dir), key: 'outputs' },
      /no output "actions" \(outputs: action \[1, 29\]/,
    );
  });

  it('obs shaped [1, 32, 604]: a transformer exported without its key/value cache', () => {
    const dir = folder({ kvDims: null, probe: { kind: 'obs', index: [] }, io: { obsDims: [1, 32, 604] } });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: onnxOf(dir), key: 'inputs.obs' },
      /has shape \[1, 32, 604\]: a transformer exported without its key\/value cache \(use_kv_cache=False\)/,
    );
  });

  it('past_key_values without step_idx', () => {
    const dir = folder({ probe: { kind: 'obs', index: [] }, io: { stepIdx: false } });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: onnxOf(dir), key: 'inputs' },
      /has past_key_values but no step_idx input \(the cache position\)/,
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

// ---- the MLP export. Its layout has not changed from v1.3.0 to v1.4.0 (git diff v1.3.0 v1.4.0 is
// empty for modules/motion_tracking/motion_tracking_mlp.yaml; obs_motion_tracking_mlp.yaml only
// drops atomic terms the schema does not read). HorizonRobotics/HoloMotion v1.4.0:
//   holomotion/config/modules/motion_tracking/motion_tracking_mlp.yaml:28-49   actor obs_schema
//   holomotion/config/env/observations/motion_tracking/obs_motion_tracking_mlp.yaml:4  context_length 32
// The console builds the history in src/domain/wbc/trackingObservation.ts:330-341 (slots filled
// with the first value unless a term declares historyPad, then shifted oldest-first), with each
// term's history = its history_length (src/domain/wbc/holomotionFamily.ts:186, no historyPad);
// the expected values below are computed from HoloMotion's rules, not from that code.
const MLP_CONTEXT = 32;
/** flattened_obs, seq_len ${obs.context_length} (motion_tracking_mlp.yaml:29-41): no yaw error term. */
const MLP_CURRENT = [
  'actor_ref_gravity_projection_cur',
  'actor_ref_base_linvel_cur',
  'actor_ref_base_angvel_cur',
  'actor_ref_dof_pos_cur',
  'actor_ref_root_height_cur',
  'actor_projected_gravity',
  'actor_rel_robot_root_ang_vel',
  'actor_dof_pos',
  'actor_dof_vel',
  'actor_last_action',
];
/** flattened_obs_fut, seq_len ${obs.n_fut_frames} (motion_tracking_mlp.yaml:42-49): no yaw delta, no 6-D orientation. */
const MLP_FUTURE = [
  'actor_ref_dof_pos_fut',
  'actor_ref_root_height_fut',
  'actor_ref_gravity_projection_fut',
  'actor_ref_base_linvel_fut',
  'actor_ref_base_angvel_fut',
];
/** 3+3+3+29+1+3+3+29+29+29 = 132 values per history entry, 29+1+3+3+3 = 39 per future frame. */
const MLP_D = 132 * MLP_CONTEXT + 39 * 10;

type HistoryRule = 'oldest_first' | 'newest_first' | 'zero_padded';

/** Values per history entry of each current term, per frame of each future term (the kernel's widths). */
const MLP_WIDTH: Record<string, number> = {
  actor_ref_gravity_projection_cur: 3,
  actor_ref_base_linvel_cur: 3,
  actor_ref_base_angvel_cur: 3,
  actor_ref_dof_pos_cur: 29,
  actor_ref_root_height_cur: 1,
  actor_projected_gravity: 3,
  actor_rel_robot_root_ang_vel: 3,
  actor_dof_pos: 29,
  actor_dof_vel: 29,
  actor_last_action: 29,
  actor_ref_dof_pos_fut: 29,
  actor_ref_root_height_fut: 1,
  actor_ref_gravity_projection_fut: 3,
  actor_ref_base_linvel_fut: 3,
  actor_ref_base_angvel_fut: 3,
};

/** Entry d of the MLP observation: its term, history slot (0 = oldest; −1 for a future term) and position in the term's values. */
const MLP_ENTRIES: { term: string; slot: number; at: number }[] = [
  ...MLP_CURRENT.flatMap((term) =>
    Array.from({ length: MLP_CONTEXT * MLP_WIDTH[term] }, (_, x) => ({
      term,
      slot: Math.floor(x / MLP_WIDTH[term]),
      at: x % MLP_WIDTH[term],
    })),
  ),
  ...MLP_FUTURE.flatMap((term) => Array.from({ length: 10 * MLP_WIDTH[term] }, (_, at) => ({ term, slot: -1, at }))),
];

/**
 * Entry d of the MLP observation at step i of an episode (`episode[j]` = the terms at step j since
 * reset), as HoloMotion builds it: per current term a circular buffer of history_length entries
 * whose first append after construction or reset() fills every slot, read oldest → newest, terms
 * concatenated term-major in schema order, then the future block of the current step
 * (HoloMotion v1.4.0 deployment/unitree_g1_ros2_29dof/src/humanoid_policy/obs_builder/
 * obs_builder.py:28-87 _CircularBuffer, 65-70 the fill, 161-166 reset, 226-235 and 305-318 the
 * term-major assembly; training: holomotion/src/env/isaaclab_components/isaaclab_observation.py:
 * 1863-1898 passes history_length to Isaac Lab's ObservationTermCfg, whose CircularBuffer
 * (isaaclab/utils/buffers/circular_buffer.py append) fills the same way, and
 * holomotion/src/modules/agent_modules.py:120-139, 153-179 TensorDictAssembler flattens
 * [B, T, d] to [B, T·d] term by term). `newest_first` and `zero_padded` are the negative controls'
 * wrong rules (the latter is SONIC's deploy padding).
 */
function expectedMlpEntry(
  episode: Map<string, number[]>[],
  i: number,
  d: number,
  rule: HistoryRule = 'oldest_first',
): number {
  const { term, slot, at } = MLP_ENTRIES[d];
  if (slot < 0) return episode[i].get(term)![at];
  const s = rule === 'newest_first' ? MLP_CONTEXT - 1 - slot : slot;
  const j = i - (MLP_CONTEXT - 1) + s;
  if (j >= 0) return episode[j].get(term)![at];
  return rule === 'zero_padded' ? 0 : episode[0].get(term)![at];
}

function mlpFolder(index: number[]): string {
  const cfg = holomotionConfigYaml({
    contextLength: MLP_CONTEXT,
    actorType: 'MLP',
    current: MLP_CURRENT,
    future: MLP_FUTURE,
  });
  const model = encodeHoloMotionProbe({
    D: MLP_D,
    kvDims: null,
    probe: { kind: 'obs', index },
    metadata: holomotionMetadata(undefined, null), // the MLP export carries no rope_max_seq_len
  });
  return writeHoloMotionFolder(path.join(tmp, `mlp${seq++}`), model, cfg);
}

/**
 * Runs an MLP probe export whose action a copies observation entry index[a] through two episodes
 * (38 steps, reset(), 4 steps: the history fills, slides past its 32 entries, and refills after the
 * reset) and returns, per rule, the largest deviation of an entry read back from that rule's value
 * (relative above 1: the reference root velocities reach ~200 m/s, where float32 steps are ~1e-5).
 */
function mlpProbe(
  index: number[],
  rules: readonly HistoryRule[] = ['oldest_first'],
): Partial<Record<HistoryRule, number>> {
  const plan = planPolicy(mlpFolder(index), profile);
  const ctrl = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
  const out = createControlCommand();
  const ref = movingReference(44);
  const worst: Partial<Record<HistoryRule, number>> = {};
  for (const [e, steps] of [38, 4].entries()) {
    if (e > 0) ctrl.reset();
    const episode: Map<string, number[]>[] = [];
    let alignYaw = NaN;
    for (let i = 0; i < steps; i++) {
      const k = i + 3 * e; // reference frame; the second episode starts elsewhere in the clip
      const obs = makeObservation(ref, profile.defaultPose.jointPosRad, 101 + 50 * e + i, k);
      obs.referenceFrame = k;
      const robotQ = Array.from(obs.state.rootQuatWxyz!) as Q;
      if (i === 0) alignYaw = yaw(robotQ) - yaw(refQ(ref, k));
      const prev = Float64Array.from(ctrl.lastAction);
      ctrl.step(obs, out);
      episode.push(
        expectedTerms(
          ref,
          k,
          robotQ,
          alignYaw,
          obs.state.jointPosRad,
          obs.state.jointVelRadS,
          obs.state.imu.gyroRadS,
          prev,
          G1_ISAACLAB_JOINT_NAMES,
        ),
      );
      for (const rule of rules)
        index.forEach((d, a) => {
          if (d < 0) return;
          const want = expectedMlpEntry(episode, i, d, rule);
          const dev = Math.abs(ctrl.lastAction[a] - want) / Math.max(1, Math.abs(want));
          worst[rule] = Math.max(worst[rule] ?? 0, dev);
        });
    }
  }
  ctrl.dispose();
  return worst;
}

const mlpWindow = (w: number) => Array.from({ length: 29 }, (_, a) => (29 * w + a < MLP_D ? 29 * w + a : -1));

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

  it(`the published MLP layout: ${MLP_CURRENT.length} current terms × ${MLP_CONTEXT} history entries + ${MLP_FUTURE.length} future terms × 10 frames = ${MLP_D}`, () => {
    const s = planPolicy(mlpFolder([]), profile).loaded.spec;
    expect(s.observationSize).toBe(MLP_D);
    expect(s.observation.map((t) => t.name)).toEqual([...MLP_CURRENT, ...MLP_FUTURE]);
    expect(s.observation.slice(0, MLP_CURRENT.length).map((t) => t.history)).toEqual(
      MLP_CURRENT.map(() => MLP_CONTEXT),
    );
    for (const t of s.observation.slice(MLP_CURRENT.length))
      expect(t.frameOffsets).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect([s.recurrent, s.stepCounter]).toEqual([[], null]);
    expect(s.notes[0]).toMatch(/^MLP export/);
  });

  it(`every one of the ${MLP_D} entries the MLP graph receives equals HoloMotion's history: 32 entries oldest first, all the first value at reset, refilled after reset()`, () => {
    let worst = 0;
    expect(MLP_ENTRIES.length).toBe(MLP_D);
    for (let w = 0; 29 * w < MLP_D; w++) worst = Math.max(worst, mlpProbe(mlpWindow(w)).oldest_first!);
    console.log(
      `HoloMotion MLP probe: ${MLP_D} entries × 42 steps (38, reset, 4), largest relative deviation ${worst.toExponential(2)}`,
    );
    expect(worst).toBeLessThan(1e-6); // float32 of the same numbers
  }, 120_000);

  it('negative controls: a newest-first history, or SONIC-style zero padding at reset, does not match what the graph receives', () => {
    // window 0 = actor_ref_gravity_projection_cur's ten oldest history entries (the reference
    // pitches, so they differ from step to step): both wrong rules move them
    const w = mlpProbe(mlpWindow(0), ['oldest_first', 'newest_first', 'zero_padded']);
    console.log(
      `HoloMotion MLP history rules on window 0: oldest first ${w.oldest_first!.toExponential(2)}, newest first ${w.newest_first!.toExponential(2)}, zero-padded ${w.zero_padded!.toExponential(2)}`,
    );
    expect(w.oldest_first).toBeLessThan(1e-6);
    expect(w.newest_first).toBeGreaterThan(0.05);
    expect(w.zero_padded).toBeGreaterThan(0.05);
  });
});
