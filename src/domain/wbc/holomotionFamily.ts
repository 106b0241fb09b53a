import { mjlabG1Physics } from '../robot/physicsProfile';
import { toCanonical } from '../robot/jointOrder';
import { findInput, findOutput, formatValueInfo, type OnnxModelInfo } from './onnxModelInfo';
import { POLICY_VALUE_BOUNDS } from './policyValueBounds';
import {
  ADAPTER_VERSIONS,
  checkIo,
  csvNumbers,
  fail,
  field,
  isRecord,
  joints,
  need,
  num,
  physicsChecked,
  spec,
  type ConfigSource,
  type TermTable,
} from './policyFamilies';
import type { RecurrentInput, StepCounterInput, TrackingPolicySpec, TrackingTerm } from './trackingPolicy';
import { trackingTermSize } from './trackingPolicy';

// HoloMotion (HorizonRobotics/HoloMotion, v1.3.0–v1.4.0) as its files describe it: the exported
// .onnx (exported/<checkpoint>.onnx) with the exporter's metadata (holomotion/src/utils/
// onnx_export.py attach_onnx_metadata_holomotion: joint_names, joint_stiffness, joint_damping,
// default_joint_pos, action_scale, and from v1.3.2 on rope_max_seq_len), and the training
// config.yaml one folder up, which alone says what the observation is (the exporter writes no
// layout). The layout is the actor's obs_schema (modules.actor.obs_schema: groups of terms,
// concatenated term-major, each term's frames in order: holomotion/src/modules/agent_modules.py
// TensorDictAssembler, 120-179 at v1.4.0), each term's meaning its atomic_obs_list entry
// (obs.obs_groups.unified). Versions: the transformer schema of v1.3.0 and v1.3.1 has no yaw-error,
// yaw-delta or 6-D orientation term (522 values); v1.3.2 (commit 7993020) adds them, the 604-value
// layout v1.4.0 keeps; the MLP schema (4614 values at context_length 32) is the same in all four
// tags. The term citations below are v1.4.0's, where the actor observation is also the fused
// kernel actor_observation.py (new in v1.4.0); v1.3.x defines the same terms as
// ObservationFunctions._get_obs_* (holomotion/src/env/isaaclab_components/isaaclab_observation.py)
// over isaaclab_motion_tracking_command.py. A v1.3.0/v1.3.1 transformer export carries no
// rope_max_seq_len and is refused below (the v1.4.0 deploy, too, wants it or a launch-profile value,
// policy_node_29dof.py:1185-1213). Two exports are read:
//   MLP          inputs obs [1, D]                                        → actions
//   transformer  inputs obs [1, D], past_key_values [L, 2, 1, C, H, d], step_idx int64 [1]
//                → actions, present_key_values (fed back), moe_layer_<i>_expert_* (not read)
// The transformer is told by its input names, as the deploy code tells it
// (deployment/unitree_g1_ros2_29dof/src/humanoid_policy/onnx_policy.py:362-389), never by sizes.

const HM = 'HorizonRobotics/HoloMotion';
const KERNEL = `${HM} holomotion/src/motion_tracking/actor_observation.py`;
const EVAL = `${HM} deployment/unitree_g1_ros2_29dof/src/humanoid_policy/observation_evaluator.py`;

/** Term name (atomic_obs_list key) → what it computes; the reference anchor is the root (pelvis). */
const HOLOMOTION_TERMS: TermTable = {
  actor_ref_gravity_projection_cur: {
    kind: 'ref_gravity_b',
    checkedAgainst: `${KERNEL}:181-182 (reference_observation.py:154); ${EVAL}:1119-1147`,
  },
  actor_ref_base_linvel_cur: {
    kind: 'ref_anchor_lin_vel_b',
    checkedAgainst: `${KERNEL}:183-184 (reference_observation.py:117-160 central differences at 50 fps, in the reference root frame)`,
  },
  actor_ref_base_angvel_cur: {
    kind: 'ref_anchor_ang_vel_b',
    checkedAgainst: `${KERNEL}:185-186 (reference_observation.py:79-99 q(t+1)·q(t−1)⁻¹, in the reference root frame)`,
  },
  actor_ref_dof_pos_cur: { kind: 'ref_joint_pos', checkedAgainst: `${KERNEL}:187-191 (absolute, policy order)` },
  actor_ref_root_height_cur: { kind: 'ref_anchor_height', checkedAgainst: `${KERNEL}:192-193 (qpos[2])` },
  actor_ref_robot_yaw_error_sin_cos: {
    kind: 'ref_yaw_error_sin_cos',
    checkedAgainst: `${KERNEL}:194-229 (yaw(aligned ref root) − yaw(robot root), [sin, cos]); ${EVAL}:1390-1401`,
  },
  actor_projected_gravity: { kind: 'projected_gravity', checkedAgainst: `${KERNEL}:230-241; ${EVAL}:920-925` },
  actor_rel_robot_root_ang_vel: {
    kind: 'base_ang_vel_b',
    checkedAgainst: `${KERNEL}:242-243 (root_ang_vel_b); ${EVAL}:927-928 (IMU gyro)`,
  },
  actor_dof_pos: { kind: 'joint_pos_rel', checkedAgainst: `${KERNEL}:244-248 (q − default); ${EVAL}:930-956` },
  actor_dof_vel: { kind: 'joint_vel_rel', checkedAgainst: `${KERNEL}:249-250; ${EVAL}:958-980` },
  actor_last_action: {
    kind: 'last_action',
    checkedAgainst: `${KERNEL}:251-252 (raw action); ${HM} deployment/.../policy_runtime.py:491`,
  },
  actor_ref_dof_pos_fut: { kind: 'ref_joint_pos', checkedAgainst: `${KERNEL}:259-265 (frame current + 1 + i)` },
  actor_ref_root_height_fut: { kind: 'ref_anchor_height', checkedAgainst: `${KERNEL}:266-268` },
  actor_ref_gravity_projection_fut: { kind: 'ref_gravity_b', checkedAgainst: `${KERNEL}:269-275` },
  actor_ref_base_linvel_fut: { kind: 'ref_anchor_lin_vel_b', checkedAgainst: `${KERNEL}:276-282` },
  actor_ref_base_angvel_fut: { kind: 'ref_anchor_ang_vel_b', checkedAgainst: `${KERNEL}:283-289` },
  actor_ref_future_yaw_delta_sin_cos: {
    kind: 'ref_yaw_delta_sin_cos',
    checkedAgainst: `${KERNEL}:290-320 (yaw(ref t+k) − yaw(ref t), [sin, cos])`,
  },
  actor_ref_future_root_ori_robot_frame_6d: {
    kind: 'ref_anchor_ori_b',
    checkedAgainst: `${KERNEL}:321-365 (rot6d of q_robot⁻¹ ⊗ q_aligned_ref(t+k): [R00, R01, R10, R11, R20, R21], 133-150); ${EVAL}:1403-1421`,
  },
};

/** The deploy resets the cache this many steps before the position table ends (humanoid_policy/config.py:108-109). */
export const HOLOMOTION_ROPE_RESET_MARGIN = 64;

/**
 * Resolves the config's whole-value interpolations `${a.b.c}` (Hydra writes config.yaml
 * unresolved); any other use of `${` is refused, naming the key.
 */
export function resolved(src: ConfigSource, v: unknown, key: string, depth = 0): unknown {
  if (typeof v !== 'string' || !v.includes('${')) return v;
  const m = /^\$\{([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\}$/.exec(v);
  if (!m || depth > 8)
    fail(src.file, key, `the interpolation ${JSON.stringify(v)} is not a plain \${path} this reader resolves`);
  const path = m[1].split('.');
  let cur: unknown = src.data;
  for (const k of path) {
    if (!isRecord(cur) || !(k in cur)) fail(src.file, key, `${v} names a key the file does not have`);
    cur = cur[k];
  }
  return resolved(src, cur, key, depth + 1);
}

interface AtomicTerm {
  cfg: Record<string, unknown>;
  key: string;
}

/** obs.obs_groups.{unified|policy}.atomic_obs_list (+ additional_atomic_obs_list): name → config. */
function atomicTerms(src: ConfigSource): Map<string, AtomicTerm> {
  const groups = field(src, src.data, ['obs', 'obs_groups'], 'the observation groups');
  if (!isRecord(groups)) fail(src.file, 'obs.obs_groups', 'expected a map');
  const groupName = isRecord(groups.unified) ? 'unified' : isRecord(groups.policy) ? 'policy' : null;
  if (!groupName) fail(src.file, 'obs.obs_groups', 'has neither a unified nor a policy group');
  const g = groups[groupName] as Record<string, unknown>;
  const out = new Map<string, AtomicTerm>();
  for (const listKey of ['atomic_obs_list', 'additional_atomic_obs_list']) {
    const list = g[listKey];
    if (list === undefined) continue;
    if (!Array.isArray(list)) fail(src.file, `obs.obs_groups.${groupName}.${listKey}`, 'expected a list');
    list.forEach((entry, i) => {
      const key = `obs.obs_groups.${groupName}.${listKey}[${i}]`;
      if (!isRecord(entry) || Object.keys(entry).length !== 1)
        fail(src.file, key, 'expected a one-key map: term name → its config');
      const [name, cfg] = Object.entries(entry)[0];
      if (!isRecord(cfg)) fail(src.file, `${key}.${name}`, 'expected a term config map');
      out.set(name, { cfg, key: `${key}.${name}` });
    });
  }
  return out;
}

/** modules.actor.obs_schema, in file order: groups of {seq_len, terms}. */
function schemaTerms(src: ConfigSource): { name: string; seqLen: number; key: string }[] {
  const schema = field(src, src.data, ['modules', 'actor', 'obs_schema'], "the actor's observation layout");
  if (!isRecord(schema)) fail(src.file, 'modules.actor.obs_schema', 'expected a map of groups');
  const out: { name: string; seqLen: number; key: string }[] = [];
  for (const [group, g] of Object.entries(schema)) {
    const key = `modules.actor.obs_schema.${group}`;
    if (!isRecord(g) || !Array.isArray(g.terms)) fail(src.file, key, 'expected {seq_len, terms}');
    const seqLen = num(src, resolved(src, g.seq_len, `${key}.seq_len`), `${key}.seq_len`, true);
    g.terms.forEach((t, i) => {
      if (typeof t !== 'string') fail(src.file, `${key}.terms[${i}]`, 'expected a term name');
      out.push({ name: t.split('/').pop()!, seqLen, key: `${key}.terms[${i}]` });
    });
  }
  if (out.length === 0) fail(src.file, 'modules.actor.obs_schema', 'lists no terms');
  return out;
}

function holomotionTerms(src: ConfigSource): TrackingTerm[] {
  const f = src.file;
  const atomic = atomicTerms(src);
  return schemaTerms(src).map(({ name, seqLen, key }) => {
    const t = HOLOMOTION_TERMS[name];
    if (!t)
      fail(
        f,
        key,
        `observation term "${name}" is not one the holomotion adapter knows (known: ${Object.keys(HOLOMOTION_TERMS).join(', ')}); refusing rather than guessing its meaning`,
      );
    const a = atomic.get(name);
    if (!a) fail(f, key, `"${name}" has no entry in obs.obs_groups atomic_obs_list, so its meaning is not stated`);
    const size = trackingTermSize(t.kind, 29);
    const params = isRecord(a.cfg.params) ? a.cfg.params : {};
    const numFrames =
      params.num_frames === undefined ? null : resolved(src, params.num_frames, `${a.key}.params.num_frames`);
    const history =
      a.cfg.history_length === undefined ? null : resolved(src, a.cfg.history_length, `${a.key}.history_length`);
    if (a.cfg.clip !== undefined && a.cfg.clip !== null)
      fail(f, `${a.key}.clip`, 'a term clip is not supported by this adapter version (the released configs have none)');
    const scaleRaw = a.cfg.scale === undefined ? 1 : resolved(src, a.cfg.scale, `${a.key}.scale`);
    const scale = num(src, scaleRaw, `${a.key}.scale`);
    let frameOffsets: number[] | null = null;
    let hist = 1;
    if (numFrames !== null) {
      // a future term: frames k+1 … k+num_frames (kernel: frame = current + 1 + future_index)
      const n = num(src, numFrames, `${a.key}.params.num_frames`, true);
      if (!Number.isInteger(n)) fail(f, `${a.key}.params.num_frames`, `expected an integer, got ${n}`);
      if (n !== seqLen) fail(f, key, `the schema group's seq_len ${seqLen} differs from the term's num_frames ${n}`);
      frameOffsets = Array.from({ length: n }, (_, i) => i + 1);
    } else {
      hist = history === null ? 1 : num(src, history, `${a.key}.history_length`, true);
      if (!Number.isInteger(hist)) fail(f, `${a.key}.history_length`, `expected an integer, got ${hist}`);
      if (hist !== seqLen)
        fail(f, key, `the schema group's seq_len ${seqLen} differs from the term's history_length ${hist}`);
    }
    return {
      name,
      kind: t.kind,
      size,
      history: hist,
      frameOffsets,
      scale: scale === 1 ? null : new Array<number>(size).fill(scale),
      clip: null,
      checkedAgainst: t.checkedAgainst,
    };
  });
}

const MOE_OUTPUT = /^moe_layer_\d+_expert_(indices|logits)$/;

/** HoloMotion export + its training config.yaml → the spec the console runs. */
export function holomotionSpec(info: OnnxModelInfo, config: ConfigSource): TrackingPolicySpec {
  const f = info.file;
  const cf = config.file;
  const names = need(info, 'joint_names')
    .split(',')
    .map((s) => s.trim());
  const order = joints(f, 'metadata_props.joint_names', names);
  const n = names.length;
  const kp = csvNumbers(info, 'joint_stiffness', n, POLICY_VALUE_BOUNDS.stiffness);
  const kd = csvNumbers(info, 'joint_damping', n, POLICY_VALUE_BOUNDS.damping);
  const def = csvNumbers(info, 'default_joint_pos', n, POLICY_VALUE_BOUNDS.jointAngle);
  const scale = csvNumbers(info, 'action_scale', n, POLICY_VALUE_BOUNDS.actionScale);

  const terms = holomotionTerms(config);
  const kv = findInput(info, 'past_key_values');
  const recurrent: RecurrentInput[] = [];
  let stepCounter: StepCounterInput | null = null;
  const ignoredOutputs: { name: string; why: string }[] = [];
  if (kv) {
    if (kv.dtype !== 'float32') fail(f, 'inputs.past_key_values', `is ${kv.dtype}; expected float32`);
    if (!kv.shape.every((d) => typeof d === 'number' && d > 0))
      fail(f, 'inputs.past_key_values', `has shape [${kv.shape.join(', ')}]; the exporter writes fixed dims`);
    const present = findOutput(info, 'present_key_values');
    if (!present) fail(f, 'outputs', 'has past_key_values but no present_key_values output to feed it back from');
    if (present.shape.join(',') !== kv.shape.join(','))
      fail(
        f,
        'outputs.present_key_values',
        `has shape [${present.shape.join(', ')}]; past_key_values is [${kv.shape.join(', ')}]`,
      );
    const step = findInput(info, 'step_idx');
    if (!step) fail(f, 'inputs', 'has past_key_values but no step_idx input (the cache position)');
    if (step.dtype !== 'int64' || step.shape.length !== 1 || step.shape[0] !== 1)
      fail(f, 'inputs.step_idx', `is ${formatValueInfo(step)}; expected int64 [1]`);
    const rope = Number(need(info, 'rope_max_seq_len'));
    if (!Number.isInteger(rope) || rope <= HOLOMOTION_ROPE_RESET_MARGIN)
      fail(
        f,
        'metadata_props.rope_max_seq_len',
        `expected an integer above ${HOLOMOTION_ROPE_RESET_MARGIN}, got ${info.metadata.rope_max_seq_len}`,
      );
    recurrent.push({
      input: 'past_key_values',
      output: 'present_key_values',
      dims: kv.shape as number[],
      checkedAgainst: `${HM} deployment/unitree_g1_ros2_29dof/src/humanoid_policy/policy_runtime.py:548-553, 568-569 (present fed back as past; zeros at reset 247-251)`,
    });
    stepCounter = {
      input: 'step_idx',
      resetAt: rope - HOLOMOTION_ROPE_RESET_MARGIN,
      checkedAgainst: `${HM} deployment/unitree_g1_ros2_29dof/src/humanoid_policy/policy_runtime.py:253-274 (_maybe_reset_motion_rope_window: reset at rope_max_seq_len − motion_rope_reset_margin 64)`,
    };
  } else if (findInput(info, 'step_idx'))
    fail(f, 'inputs', 'has step_idx but no past_key_values; not an export this adapter knows');
  const obs = findInput(info, 'obs');
  if (obs && obs.shape.length === 3)
    fail(
      f,
      'inputs.obs',
      `has shape [${obs.shape.join(', ')}]: a transformer exported without its key/value cache (use_kv_cache=False), which feeds 32 steps per call; export it with the cache`,
    );
  const D = checkIo(info, 'obs', null, 'actions', terms, recurrent.length ? ['past_key_values', 'step_idx'] : []);
  for (const o of info.outputs) {
    if (o.name === 'actions' || o.name === 'present_key_values') continue;
    ignoredOutputs.push({
      name: o.name,
      why: MOE_OUTPUT.test(o.name)
        ? 'the router diagnostics of a mixture-of-experts layer'
        : 'not part of the control interface',
    });
  }

  const sim = ['env', 'config', 'simulation'];
  const simFreq = num(
    config,
    resolved(config, field(config, config.data, [...sim, 'sim_freq'], 'the physics rate'), `${sim.join('.')}.sim_freq`),
    `${sim.join('.')}.sim_freq`,
    true,
  );
  const dec = num(
    config,
    resolved(
      config,
      field(config, config.data, [...sim, 'control_decimation'], 'physics steps per policy step'),
      `${sim.join('.')}.control_decimation`,
    ),
    `${sim.join('.')}.control_decimation`,
    true,
  );
  if (!Number.isInteger(dec)) fail(cf, `${sim.join('.')}.control_decimation`, `expected an integer, got ${dec}`);
  const physics = physicsChecked(cf, mjlabG1Physics(1 / simFreq, dec), null);
  const defC = toCanonical(order, def);
  return spec({
    family: 'holomotion',
    adapter: ADAPTER_VERSIONS.holomotion,
    obsInput: 'obs',
    timeInput: null,
    actionOutput: 'actions',
    jointOrder: order,
    observation: terms,
    observationSize: D,
    physics: {
      ...physics,
      id: `holomotion-g1/1@${physics.timestepS * 1000}ms×${physics.decimation}`,
      source: `${cf} env.config.simulation (sim_freq, control_decimation); motors and armature as mjlab g1_constants.py (HoloMotion trains in Isaac Lab with its own robot config)`,
    },
    kp: toCanonical(order, kp),
    kd: toCanonical(order, kd),
    defaultJointPosRad: defC,
    action: { mode: 'default_offset', scale: toCanonical(order, scale), offset: defC.slice(), clip: null },
    anchorBody: 'pelvis',
    alignment: {
      rotation: 'yaw',
      translation: 'none',
      robotBody: 'root',
      referenceBody: 'root',
      checkedAgainst: `${EVAL}:618-662 begin_motion_yaw_alignment (q_align = yaw(robot root) − yaw(ref root) at motion entry, applied as q_align ⊗ q_ref)`,
    },
    baked: null,
    recurrent,
    stepCounter,
    ignoredOutputs,
    notes: [
      kv
        ? `transformer export with a key/value cache ${kv.shape.join('×')}: present_key_values fed back, step_idx counts steps since reset and both reset at ${stepCounter!.resetAt} (the robot deploy; MuJoCo sim2sim feeds step % 32 instead)`
        : 'MLP export: one obs input, history per term as the config states (oldest first, filled with the first value at reset)',
      'observation: modules.actor.obs_schema order, term-major; future terms read frames k+1 … k+N at the control rate',
      'the reference root velocities come from central differences of the clip at 50 Hz (v1.4 training; the offline deploy path reads the NPZ velocities instead)',
      'target = default_joint_pos + action_scale · a, no clip (policy_runtime.py:480-512); the deploy node clamps targets to 2× joint limits, not modelled',
      'observation normalisation and its ±10 clip are inside the graph (agent_modules.py:279-296): the console feeds raw values',
    ],
  });
}
