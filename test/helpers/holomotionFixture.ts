import fs from 'node:fs';
import path from 'node:path';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
import { encodeOnnxModel, OnnxDataType, type OnnxInitializer, type OnnxNode, type OnnxValueInfo } from './onnxBuilder';

// A HoloMotion policy folder as its training run leaves it (HorizonRobotics/HoloMotion v1.4):
// config.yaml (the Hydra config, interpolations unresolved, reduced to the keys the deploy code
// reads) and exported/model_14000.onnx with the exporter's input/output names, shapes and
// metadata (holomotion/src/utils/onnx_export.py, agent_modules.py PPOTFActor.export_onnx). The
// weights are not HoloMotion's: they expose what the graph receives (a probe), so a test can
// prove every observation entry is in its published slot.

/** Per-joint values of the HoloMotion G1 robot config (29dof_training_isaaclab.yaml:273-435), by joint-name pattern. */
const GAINS: [RegExp, { kp: number; kd: number; effort: number }][] = [
  [/_hip_pitch_joint$|_hip_yaw_joint$|^waist_yaw_joint$/, { kp: 40.17923847, kd: 2.55788977, effort: 88 }],
  [/_hip_roll_joint$|_knee_joint$/, { kp: 99.09842778, kd: 6.30880185, effort: 139 }],
  [/_ankle_(pitch|roll)_joint$|^waist_(roll|pitch)_joint$/, { kp: 28.5012462, kd: 1.81444569, effort: 50 }],
  [/_shoulder_|_elbow_joint$|_wrist_roll_joint$/, { kp: 14.2506231, kd: 0.90722284, effort: 25 }],
  [/_wrist_(pitch|yaw)_joint$/, { kp: 16.77832748089279, kd: 1.06814150219, effort: 5 }],
];
const DEFAULTS: Record<string, number> = {
  left_hip_pitch_joint: -0.312,
  right_hip_pitch_joint: -0.312,
  left_knee_joint: 0.669,
  right_knee_joint: 0.669,
  left_ankle_pitch_joint: -0.363,
  right_ankle_pitch_joint: -0.363,
  waist_pitch_joint: 0.1,
  left_shoulder_pitch_joint: 0.2,
  right_shoulder_pitch_joint: 0.2,
  left_shoulder_roll_joint: 0.2,
  right_shoulder_roll_joint: -0.2,
  left_elbow_joint: 0.6,
  right_elbow_joint: 0.6,
};

export function holomotionJointValues(name: string): { kp: number; kd: number; def: number; scale: number } {
  const g = GAINS.find(([re]) => re.test(name));
  if (!g) throw new Error(`no gains for ${name}`);
  // Isaac Lab action scale as the robot config states it: 0.25 · effort / stiffness
  return { kp: g[1].kp, kd: g[1].kd, def: DEFAULTS[name] ?? 0, scale: (0.25 * g[1].effort) / g[1].kp };
}

const f3 = (x: number) => x.toFixed(3); // exporter _list_to_csv_str: "{:.3f}"

/** The exporter's metadata_props, joints in the given (Isaac Lab) order. */
export function holomotionMetadata(
  names: readonly string[] = G1_ISAACLAB_JOINT_NAMES,
  ropeMaxSeqLen: number | null = 8192,
): Record<string, string> {
  const v = names.map(holomotionJointValues);
  return {
    joint_names: names.join(','),
    joint_stiffness: v.map((x) => f3(x.kp)).join(','),
    joint_damping: v.map((x) => f3(x.kd)).join(','),
    default_joint_pos: v.map((x) => f3(x.def)).join(','),
    action_scale: v.map((x) => f3(x.scale)).join(','),
    ...(ropeMaxSeqLen !== null ? { rope_max_seq_len: String(ropeMaxSeqLen) } : {}),
  };
}

export const HOLOMOTION_CURRENT_TERMS = [
  'actor_ref_gravity_projection_cur',
  'actor_ref_base_linvel_cur',
  'actor_ref_base_angvel_cur',
  'actor_ref_dof_pos_cur',
  'actor_ref_root_height_cur',
  'actor_ref_robot_yaw_error_sin_cos',
  'actor_projected_gravity',
  'actor_rel_robot_root_ang_vel',
  'actor_dof_pos',
  'actor_dof_vel',
  'actor_last_action',
];
export const HOLOMOTION_FUTURE_TERMS = [
  'actor_ref_dof_pos_fut',
  'actor_ref_root_height_fut',
  'actor_ref_gravity_projection_fut',
  'actor_ref_base_linvel_fut',
  'actor_ref_base_angvel_fut',
  'actor_ref_future_yaw_delta_sin_cos',
  'actor_ref_future_root_ori_robot_frame_6d',
];

/**
 * config.yaml of a v1.4 run (motion_tracking_v1_4_0.yaml composition), as Hydra saves it:
 * obs (obs_motion_tracking_tf-moe.yaml), modules.actor (motion_tracking_tf-moe.yaml), env
 * simulation rates (motion_tracking.yaml). `contextLength` > 1 gives the MLP layout.
 */
export function holomotionConfigYaml(
  opts: { contextLength?: number; nFut?: number; actorType?: string; current?: string[]; future?: string[] } = {},
): string {
  const ctx = opts.contextLength ?? 1;
  const current = opts.current ?? HOLOMOTION_CURRENT_TERMS;
  const future = opts.future ?? HOLOMOTION_FUTURE_TERMS;
  const atomic = [
    ...current.map(
      (t) =>
        `        - ${t}:\n            func: ${t.replace(/^actor_/, '')}\n            history_length: \${obs.context_length}\n            flatten_history_dim: false\n            params:\n              ref_prefix: \${obs.actor_obs_prefix}`,
    ),
    ...future.map(
      (t) =>
        `        - ${t}:\n            func: ${t.replace(/^actor_/, '')}\n            params:\n              ref_prefix: \${obs.actor_obs_prefix}\n              num_frames: \${obs.n_fut_frames}`,
    ),
    '        - critic_dof_pos:\n            func: dof_pos\n            history_length: 1',
  ].join('\n');
  return `obs:
  context_length: ${ctx}
  n_fut_frames: ${opts.nFut ?? 10}
  target_fps: 50
  actor_obs_prefix: ref_
  obs_groups:
    unified:
      atomic_obs_list:
${atomic}
modules:
  actor:
    type: ${opts.actorType ?? 'ReferenceRoutedGroupedMoETransformerPolicy'}
    max_ctx_len: 32
    rope_max_seq_len: 8192
    obs_schema:
      flattened_obs:
        seq_len: \${obs.context_length}
        terms:
${current.map((t) => `          - unified/${t}`).join('\n')}
      flattened_obs_fut:
        seq_len: \${obs.n_fut_frames}
        terms:
${future.map((t) => `          - unified/${t}`).join('\n')}
env:
  config:
    simulation:
      episode_length_s: 10
      sim_freq: 200
      control_decimation: 4
`;
}

/** The v1.4 cache: [layers, k/v, batch, context, kv heads, head dim] (agent_modules.py:1015-1030). */
export const HOLOMOTION_KV_DIMS = [1, 2, 1, 32, 4, 64];

export interface HoloMotionProbe {
  /** Observation width D. */
  D: number;
  /** The transformer's cache dims, or null for an MLP export (one obs input). */
  kvDims: number[] | null;
  /**
   * What actions[0..28] are: `obs` copies gain[i]·obs[index[i]] into action i (−1 = 0; gain
   * default 1), plus bias;
   * `state` puts float(step_idx) in action 0 and past_key_values[0] in action 1.
   */
  probe: { kind: 'obs'; index: number[]; gain?: number[]; bias?: number[] } | { kind: 'state' };
  metadata: Record<string, string>;
  /**
   * The declared interface where it differs from the exporter's (negative tests): the
   * observation input's name and dims (default obs [1, D]), the action output's name (default
   * actions), and whether a cache export declares its step_idx input (default true).
   */
  io?: { obs?: string; obsDims?: number[]; actions?: string; stepIdx?: boolean };
}

/**
 * A graph with HoloMotion's I/O: obs [1, D] (+ past_key_values, step_idx int64 [1]) → actions
 * [1, 29] (+ present_key_values = past + 1, moe_layer_0_expert_indices/_logits constants).
 */
export function encodeHoloMotionProbe(p: HoloMotionProbe): Uint8Array {
  const A = 29;
  const obsName = p.io?.obs ?? 'obs';
  const actionsName = p.io?.actions ?? 'actions';
  const nodes: OnnxNode[] = [];
  const inits: OnnxInitializer[] = [];
  // mm[a] = gain[a] · obs[index[a]] (0 where index[a] = −1), as a Gather along the observation
  // axis and a Mul: the graph stays small however wide the observation (the MLP export's is 4614)
  const pick = new Array<number>(A).fill(0);
  const gain = new Float64Array(A);
  const bias = new Float64Array(A);
  if (p.probe.kind === 'obs') {
    const g = p.probe.gain;
    p.probe.index.forEach((d, a) => {
      if (d < 0) return;
      pick[a] = d;
      gain[a] = g ? g[a] : 1;
    });
    if (p.probe.bias) bias.set(p.probe.bias);
  }
  inits.push({ name: 'pick', dims: [A], type: 'int64', values: pick });
  inits.push({ name: 'gain', dims: [A], type: 'float32', values: gain });
  inits.push({ name: 'b', dims: [A], type: 'float32', values: bias });
  nodes.push({
    opType: 'Gather',
    inputs: [obsName, 'pick'],
    outputs: ['picked'],
    attributes: [{ name: 'axis', i: 1 }],
  });
  nodes.push({ opType: 'Mul', inputs: ['picked', 'gain'], outputs: ['mm'] });
  if (p.probe.kind === 'state' && p.kvDims) {
    nodes.push({
      opType: 'Cast',
      inputs: ['step_idx'],
      outputs: ['step_f'],
      attributes: [{ name: 'to', i: OnnxDataType.float32 }],
    });
    inits.push({ name: 'flat', dims: [1], type: 'int64', values: [-1] });
    nodes.push({ opType: 'Reshape', inputs: ['past_key_values', 'flat'], outputs: ['past_flat'] });
    inits.push({ name: 'first', dims: [1], type: 'int64', values: [0] });
    nodes.push({
      opType: 'Gather',
      inputs: ['past_flat', 'first'],
      outputs: ['past0'],
      attributes: [{ name: 'axis', i: 0 }],
    });
    inits.push({ name: 'zeros27', dims: [27], type: 'float32', values: new Float64Array(27) });
    nodes.push({
      opType: 'Concat',
      inputs: ['step_f', 'past0', 'zeros27'],
      outputs: ['probe'],
      attributes: [{ name: 'axis', i: 0 }],
    });
    nodes.push({ opType: 'Add', inputs: ['mm', 'probe'], outputs: ['mm_probe'] });
    nodes.push({ opType: 'Add', inputs: ['mm_probe', 'b'], outputs: [actionsName] });
  } else nodes.push({ opType: 'Add', inputs: ['mm', 'b'], outputs: [actionsName] });
  const inputs: OnnxValueInfo[] = [{ name: obsName, type: 'float32', dims: p.io?.obsDims ?? [1, p.D] }];
  const outputs: OnnxValueInfo[] = [{ name: actionsName, type: 'float32', dims: [1, A] }];
  if (p.kvDims) {
    inputs.push({ name: 'past_key_values', type: 'float32', dims: p.kvDims });
    if (p.io?.stepIdx !== false) inputs.push({ name: 'step_idx', type: 'int64', dims: [1] });
    inits.push({ name: 'one', dims: [1], type: 'float32', values: [1] });
    nodes.push({ opType: 'Add', inputs: ['past_key_values', 'one'], outputs: ['present_key_values'] });
    outputs.push({ name: 'present_key_values', type: 'float32', dims: p.kvDims });
    inits.push({ name: 'expert_idx', dims: [1, 1, 2], type: 'int64', values: [3, 7] });
    inits.push({ name: 'expert_logits', dims: [1, 1, 1024], type: 'float32', values: new Float64Array(1024) });
    nodes.push({ opType: 'Identity', inputs: ['expert_idx'], outputs: ['moe_layer_0_expert_indices'] });
    nodes.push({ opType: 'Identity', inputs: ['expert_logits'], outputs: ['moe_layer_0_expert_logits'] });
    outputs.push({ name: 'moe_layer_0_expert_indices', type: 'int64', dims: [1, 1, 2] });
    outputs.push({ name: 'moe_layer_0_expert_logits', type: 'float32', dims: [1, 1, 1024] });
  }
  return encodeOnnxModel({ nodes, initializers: inits, inputs, outputs, opset: 17, metadata: p.metadata });
}

/** Writes <dir>/config.yaml and <dir>/exported/model_14000.onnx; returns dir. */
export function writeHoloMotionFolder(dir: string, model: Uint8Array, configYaml = holomotionConfigYaml()): string {
  fs.mkdirSync(path.join(dir, 'exported'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.yaml'), configYaml);
  fs.writeFileSync(path.join(dir, 'exported', 'model_14000.onnx'), model);
  return dir;
}
