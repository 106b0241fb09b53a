import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { mjlabG1Physics } from '../robot/physicsProfile';
import { G1_ISAACLAB_JOINT_NAMES } from '../robot/jointOrder';
import { findInput, findOutput, formatValueInfo, vectorWidth, type OnnxModelInfo } from './onnxModelInfo';
import {
  ADAPTER_VERSIONS,
  fail,
  field,
  isRecord,
  joints,
  num,
  physicsChecked,
  spec,
  type ConfigSource,
} from './policyFamilies';
import type { EncoderStage, TrackingPolicySpec, TrackingTerm, TrackingTermKind } from './trackingPolicy';
import { describeTerms, observationSizeOf } from './trackingPolicy';

// SONIC (NVlabs/GR00T-WholeBodyControl, gear_sonic_deploy) as its deploy folder describes it:
// model_encoder.onnx, model_decoder.onnx and observation_config.yaml, read as the C++ deploy
// binary g1_deploy_onnx_ref reads them (include/observation_config.hpp:159-285). The yaml lists
// the decoder's `observations` and the encoder's `encoder_observations` in input order; each
// name must be one the deploy's observation registry has exactly (src/g1_deploy_onnx_ref.cpp:
// 1704-1794; the deploy refuses any other, :1818, :1861). The registry's names are built as
// `{base}_{N}frame_step{S}` — N frames S control steps apart, frame 0 the current one — so the
// future frames and their stride come from the names in the file, and the release and
// low-latency versions are told apart by them too. The console drives the g1 encoder mode (a
// robot reference clip); the terms only another mode requires are left at 0, as the deploy does.
// Gains, default pose and action scale are not in the files: the deploy code derives them
// (include/policy_parameters.hpp), and so does this adapter, from the same constants.

const NV = 'NVlabs/GR00T-WholeBodyControl gear_sonic_deploy/src/g1/g1_deploy_onnx_ref';
const CPP = `${NV}/src/g1_deploy_onnx_ref.cpp`;
const PP = `${NV}/include/policy_parameters.hpp`;

export type SonicVariant = 'release' | 'low_latency' | 'v1_1';

/** One registry entry: values per frame, what they are, and whether the g1 mode can drive it. */
interface RegistryEntry {
  width: number;
  /** null: a term the console cannot compute (VR targets, SMPL joints, …); allowed only outside the g1 mode. */
  kind: TrackingTermKind | null;
  checkedAgainst: string;
}

const ENCODER_REGISTRY: Record<string, RegistryEntry> = {
  encoder_mode_4: { width: 4, kind: 'constant', checkedAgainst: `${CPP}:1687-1693, 1709 ([mode_id, 0, 0, 0])` },
  encoder_mode: { width: 3, kind: 'constant', checkedAgainst: `${CPP}:1687-1693, 1708 ([mode_id, 0, 0])` },
  motion_joint_positions: {
    width: 29,
    kind: 'ref_joint_pos',
    checkedAgainst: `${CPP}:757-772, 1729-1732 (absolute, Isaac Lab order, frame-major)`,
  },
  motion_joint_velocities: {
    width: 29,
    kind: 'ref_joint_vel',
    checkedAgainst: `${CPP}:836-896, 1730-1732 (Isaac Lab order, frame-major)`,
  },
  motion_root_z_position: { width: 1, kind: 'ref_anchor_height', checkedAgainst: `${CPP}:434-446, 1713-1714` },
  motion_anchor_orientation: {
    width: 6,
    kind: 'ref_anchor_ori_b',
    checkedAgainst: `${CPP}:612-690, 1712-1718 (R(conj(q_pelvis) ⊗ q_align ⊗ q_ref_root) columns 0, 1 row by row)`,
  },
  motion_anchor_orientation_heading: {
    width: 6,
    kind: 'ref_anchor_ori_heading_b',
    checkedAgainst: `${CPP}:634-684, 1721-1722 (robot heading only)`,
  },
  motion_joint_positions_lowerbody: { width: 12, kind: null, checkedAgainst: `${CPP}:1735-1738 (teleop)` },
  motion_joint_velocities_lowerbody: { width: 12, kind: null, checkedAgainst: `${CPP}:1736-1738 (teleop)` },
  vr_3point_local_target: { width: 9, kind: null, checkedAgainst: `${CPP}:1102-1199, 1771 (teleop VR targets)` },
  vr_3point_local_orn_target: { width: 12, kind: null, checkedAgainst: `${CPP}:1201-1262, 1774 (teleop VR targets)` },
  smpl_joints: { width: 72, kind: null, checkedAgainst: `${CPP}:928-946, 1749-1752 (SMPL mode)` },
  smpl_anchor_orientation: { width: 6, kind: null, checkedAgainst: `${CPP}:1759-1761 (SMPL mode)` },
  smpl_anchor_orientation_heading: { width: 6, kind: null, checkedAgainst: `${CPP}:1763 (SMPL mode)` },
  motion_joint_positions_wrists: { width: 6, kind: null, checkedAgainst: `${CPP}:1739-1741 (SMPL mode)` },
};

const DECODER_REGISTRY: Record<string, RegistryEntry> = {
  token_state: { width: 0, kind: 'policy_token', checkedAgainst: `${CPP}:1644-1684, 1707 (the encoder's output)` },
  his_base_angular_velocity: {
    width: 3,
    kind: 'base_ang_vel_b',
    checkedAgainst: `${CPP}:1588-1606, 1793 (pelvis IMU gyro)`,
  },
  his_body_joint_positions: {
    width: 29,
    kind: 'joint_pos_rel',
    checkedAgainst: `${CPP}:1790, 2828-2830 (q − default_angles, Isaac Lab order)`,
  },
  his_body_joint_velocities: { width: 29, kind: 'joint_vel_rel', checkedAgainst: `${CPP}:1791, 2831` },
  his_last_actions: { width: 29, kind: 'last_action', checkedAgainst: `${CPP}:1792, 3124 (raw network output)` },
  his_gravity_dir: {
    width: 3,
    kind: 'projected_gravity',
    checkedAgainst: `${CPP}:1609-1630, 1794 (rotate(conj(q_pelvis_imu), (0, 0, −1)))`,
  },
};

/**
 * Every name the deploy's observation registry has, with the values it writes
 * (g1_deploy_onnx_ref.cpp:1704-1794; token_state's width is encoder.dimension, 0 here). The
 * deploy parses no names: it looks each yaml name up exactly and throws on any other ("Unknown
 * observation function", :1818; "Unknown encoder observation function", :1861), so this adapter
 * accepts exactly these names too.
 */
const DEPLOY_REGISTRY: ReadonlyMap<string, number> = new Map<string, number>([
  ['token_state', 0],
  ['encoder_mode', 3],
  ['encoder_mode_4', 4],
  ['motion_joint_positions', 29],
  ['motion_joint_velocities', 29],
  ['motion_anchor_orientation', 6],
  ['motion_root_z_position', 1],
  ['motion_root_z_position_10frame_step5', 10],
  ['motion_root_z_position_10frame_step1', 10],
  ['motion_root_z_position_3frame_step1', 3],
  ['motion_anchor_orientation_10frame_step5', 60],
  ['motion_anchor_orientation_10frame_step1', 60],
  ['motion_anchor_orientation_heading', 6],
  ['motion_anchor_orientation_heading_10frame_step5', 60],
  ['motion_anchor_orientation_heading_10frame_step1', 60],
  ['motion_anchor_orientation_refheading', 6],
  ['motion_anchor_orientation_refheading_10frame_step5', 60],
  ['motion_anchor_orientation_refheading_10frame_step1', 60],
  ['motion_joint_positions_10frame_step5', 290],
  ['motion_joint_velocities_10frame_step5', 290],
  ['motion_joint_positions_10frame_step1', 290],
  ['motion_joint_velocities_10frame_step1', 290],
  ['motion_joint_positions_3frame_step1', 87],
  ['motion_joint_velocities_3frame_step1', 87],
  ['motion_joint_positions_lowerbody_10frame_step5', 120],
  ['motion_joint_velocities_lowerbody_10frame_step5', 120],
  ['motion_joint_positions_lowerbody_10frame_step1', 120],
  ['motion_joint_velocities_lowerbody_10frame_step1', 120],
  ['motion_joint_positions_wrists_10frame_step1', 60],
  ['motion_joint_positions_wrists_2frame_step1', 12],
  ['motion_joint_positions_wrists_4frame_step1', 24],
  ['motion_joint_velocities_wrists_10frame_step1', 60],
  ['motion_joint_positions_5frame_step5', 145],
  ['motion_joint_velocities_5frame_step5', 145],
  ['smpl_joints', 72],
  ['smpl_joints_5frame_step5', 360],
  ['smpl_joints_10frame_step5', 720],
  ['smpl_joints_10frame_step1', 720],
  ['smpl_joints_lower_10frame_step1', 270],
  ['smpl_joints_2frame_step1', 144],
  ['smpl_joints_4frame_step1', 288],
  ['smpl_pose', 63],
  ['smpl_pose_5frame_step5', 315],
  ['smpl_pose_10frame_step5', 630],
  ['smpl_pose_10frame_step1', 630],
  ['smpl_elbow_wrist_poses_10frame_step1', 120],
  ['smpl_root_z_10frame_step1', 10],
  ['smpl_anchor_orientation_10frame_step1', 60],
  ['smpl_anchor_orientation_2frame_step1', 12],
  ['smpl_anchor_orientation_4frame_step1', 24],
  ['smpl_anchor_orientation_heading_10frame_step1', 60],
  ['smpl_anchor_orientation_heading_2frame_step1', 12],
  ['smpl_anchor_orientation_refheading_10frame_step1', 60],
  ['smpl_anchor_orientation_refheading_2frame_step1', 12],
  ['heading_diff_robot_ref', 6],
  ['vr_3point_local_target', 9],
  ['vr_3point_local_target_compliant', 9],
  ['vr_3point_local_orn_target', 12],
  ['vr_3point_compliance', 3],
  ['vr_5point_local_target', 15],
  ['vr_5point_local_orn_target', 20],
  ['base_angular_velocity', 3],
  ['body_joint_positions', 29],
  ['body_joint_velocities', 29],
  ['last_actions', 29],
  ['gravity_dir', 3],
  ['his_body_joint_positions_4frame_step1', 116],
  ['his_body_joint_velocities_4frame_step1', 116],
  ['his_last_actions_4frame_step1', 116],
  ['his_base_angular_velocity_4frame_step1', 12],
  ['his_gravity_dir_4frame_step1', 12],
  ['his_body_joint_positions_10frame_step1', 290],
  ['his_body_joint_velocities_10frame_step1', 290],
  ['his_last_actions_10frame_step1', 290],
  ['his_base_angular_velocity_10frame_step1', 30],
  ['his_gravity_dir_10frame_step1', 30],
]);

/**
 * A registry name split the way the registry's names are built — `{base}_{N}frame_step{S}`, N
 * frames S control steps apart; no suffix: one frame — to find what this adapter computes for it.
 * Only names DEPLOY_REGISTRY has reach it (deployTerm), so the split never admits a name the deploy refuses.
 */
function parseName(name: string): { base: string; frames: number; step: number } {
  const m = /^(.+?)_(\d+)frame_step(\d+)$/.exec(name);
  return m ? { base: m[1], frames: Number(m[2]), step: Number(m[3]) } : { base: name, frames: 1, step: 1 };
}

/** A yaml term: refused unless the deploy's registry has the exact name, then split (parseName) with the registry's width. */
function deployTerm(
  cf: string,
  key: string,
  name: string,
  graph: 'encoder' | 'decoder',
  tokenSize: number,
): { base: string; frames: number; step: number; width: number } {
  const width = DEPLOY_REGISTRY.get(name);
  if (width === undefined)
    fail(
      cf,
      key,
      `"${name}" is not a name in the deploy's observation registry (g1_deploy_onnx_ref.cpp:1704-1794), which looks names up exactly and refuses any other ("Unknown ${graph === 'encoder' ? 'encoder ' : ''}observation function", :${graph === 'encoder' ? 1861 : 1818}); refused here too`,
    );
  return { ...parseName(name), width: name === 'token_state' ? tokenSize : width };
}

interface YamlTerm {
  name: string;
  key: string;
}

function enabledList(src: ConfigSource, v: unknown, key: string): YamlTerm[] {
  if (!Array.isArray(v)) fail(src.file, key, 'expected a list of {name, enabled}');
  const out: YamlTerm[] = [];
  v.forEach((e, i) => {
    if (!isRecord(e) || typeof e.name !== 'string') fail(src.file, `${key}[${i}]`, 'expected {name, enabled}');
    if (e.enabled === false) return; // the deploy skips disabled entries (observation_config.hpp)
    out.push({ name: e.name, key: `${key}[${i}]` });
  });
  return out;
}

/**
 * Gains, default pose and action scale as the deploy code derives them (policy_parameters.hpp:
 * stiffness = armature·ω², damping = 2ζ·armature·ω, ω = 10·2·3.1415926535, ζ = 2, ankles and
 * waist roll/pitch at twice the 5020's gains; kps and kds are float arrays; action scale =
 * 0.25·effort / stiffness of the motor class), canonical (= MuJoCo = SDK) order.
 */
export function sonicDeployJointParameters(): {
  kp: Float64Array;
  kd: Float64Array;
  scale: Float64Array;
  def: Float64Array;
} {
  const W = 10 * 2.0 * 3.1415926535;
  const motor = {
    m5020: { arm: 0.003609725, effort: 25 },
    m7520_14: { arm: 0.01017752, effort: 88 },
    m7520_22: { arm: 0.025101925, effort: 139 },
    m4010: { arm: 0.00425, effort: 5 },
  };
  const classOf = (n: string): [keyof typeof motor, number] => {
    if (/_hip_pitch_joint$|_hip_roll_joint$|_knee_joint$/.test(n)) return ['m7520_22', 1];
    if (/_hip_yaw_joint$|^waist_yaw_joint$/.test(n)) return ['m7520_14', 1];
    if (/_ankle_(pitch|roll)_joint$|^waist_(roll|pitch)_joint$/.test(n)) return ['m5020', 2];
    if (/_wrist_(pitch|yaw)_joint$/.test(n)) return ['m4010', 1];
    return ['m5020', 1]; // shoulders, elbows, wrist roll
  };
  const defaults: Record<string, number> = {
    left_hip_pitch_joint: -0.312,
    right_hip_pitch_joint: -0.312,
    left_knee_joint: 0.669,
    right_knee_joint: 0.669,
    left_ankle_pitch_joint: -0.363,
    right_ankle_pitch_joint: -0.363,
    left_shoulder_pitch_joint: 0.2,
    right_shoulder_pitch_joint: 0.2,
    left_shoulder_roll_joint: 0.2,
    right_shoulder_roll_joint: -0.2,
    left_elbow_joint: 0.6,
    right_elbow_joint: 0.6,
  };
  const n = G1_JOINT_NAMES.length;
  const kp = new Float64Array(n);
  const kd = new Float64Array(n);
  const scale = new Float64Array(n);
  const def = new Float64Array(n);
  G1_JOINT_NAMES.forEach((name, c) => {
    const [cls, mult] = classOf(name);
    const stiffness = motor[cls].arm * W * W;
    kp[c] = Math.fround(mult * stiffness);
    kd[c] = Math.fround(mult * 2.0 * 2 * motor[cls].arm * W);
    scale[c] = (0.25 * motor[cls].effort) / stiffness;
    def[c] = defaults[name] ?? 0;
  });
  return { kp, kd, scale, def };
}

function ioOf(
  info: OnnxModelInfo,
  input: string,
  output: string,
  inWidth: number,
  outWidth: number,
  what: string,
): void {
  const f = info.file;
  if (info.inputs.length !== 1 || info.inputs[0].name !== input)
    fail(
      f,
      'inputs',
      `the ${what} must have exactly one input "${input}" (the deploy refuses anything else); it has ${info.inputs.map(formatValueInfo).join(', ') || 'none'}`,
    );
  const i = findInput(info, input)!;
  if (i.dtype !== 'float32') fail(f, `inputs.${input}`, `is ${i.dtype}; expected float32`);
  if (vectorWidth(i) !== inWidth)
    fail(f, `inputs.${input}`, `has shape [${i.shape.join(', ')}]; observation_config.yaml builds ${inWidth}`);
  const o = findOutput(info, output);
  if (info.outputs.length !== 1 || !o)
    fail(
      f,
      'outputs',
      `the ${what} must have exactly one output "${output}"; it has ${info.outputs.map(formatValueInfo).join(', ')}`,
    );
  if (vectorWidth(o) !== outWidth)
    fail(f, `outputs.${output}`, `has shape [${o.shape.join(', ')}]; expected [1, ${outWidth}]`);
}

/** SONIC deploy folder → the spec: decoder = the action graph, encoder = its first stage. */
export function sonicSpec(encoder: OnnxModelInfo, decoder: OnnxModelInfo, config: ConfigSource): TrackingPolicySpec {
  const cf = config.file;
  const d = config.data;
  const order = joints(cf, 'joint order', G1_ISAACLAB_JOINT_NAMES);
  const enc = field(config, d, ['encoder'], 'the encoder section');
  if (!isRecord(enc)) fail(cf, 'encoder', 'expected a map');
  const tokenSize = num(config, field(config, enc, ['dimension'], 'the token size'), 'encoder.dimension', true);
  const encTerms = enabledList(
    config,
    field(config, enc, ['encoder_observations'], 'the encoder input terms'),
    'encoder.encoder_observations',
  );
  const modes = field(config, enc, ['encoder_modes'], 'the encoder modes');
  if (!Array.isArray(modes)) fail(cf, 'encoder.encoder_modes', 'expected a list');
  const g1Index = modes.findIndex((m) => isRecord(m) && m.name === 'g1');
  if (g1Index < 0) fail(cf, 'encoder.encoder_modes', 'has no "g1" mode, the one a robot reference clip drives');
  const g1 = modes[g1Index] as Record<string, unknown>;
  const modeId = num(config, g1.mode_id, `encoder.encoder_modes[${g1Index}].mode_id`);
  if (!Array.isArray(g1.required_observations) || g1.required_observations.some((x) => typeof x !== 'string'))
    fail(cf, `encoder.encoder_modes[${g1Index}].required_observations`, 'expected a list of term names');
  const required = new Set(g1.required_observations as string[]);
  for (const r of required)
    if (!encTerms.some((t) => t.name === r))
      fail(cf, `encoder.encoder_modes[${g1Index}].required_observations`, `"${r}" is not among encoder_observations`);

  const encoderObservation: TrackingTerm[] = encTerms.map(({ name, key }) => {
    const { base, frames, step, width } = deployTerm(cf, key, name, 'encoder', tokenSize);
    const e: RegistryEntry | undefined = ENCODER_REGISTRY[base];
    // a term the g1 mode does not require is left at 0 by the deploy, whatever it is
    if (!required.has(name))
      return {
        name,
        kind: 'zeros',
        size: width,
        history: 1,
        frameOffsets: null,
        scale: null,
        clip: null,
        checkedAgainst: `${e ? e.checkedAgainst : `${CPP}:1704-1794 (${width} values)`}; not required by the g1 mode: 0 (${CPP}:2064-2093)`,
      };
    if (!e)
      fail(
        cf,
        key,
        `the g1 mode requires "${name}", a term of the deploy's registry this adapter does not compute; refusing rather than guessing`,
      );
    const size = e.width;
    const offsets = frames > 1 ? Array.from({ length: frames }, (_, i) => i * step) : null;
    if (e.kind === null)
      fail(cf, key, `the g1 mode requires "${name}", which needs inputs a reference clip does not give`);
    return {
      name,
      kind: e.kind,
      size,
      history: 1,
      frameOffsets: offsets,
      scale: null,
      clip: null,
      ...(e.kind === 'constant' ? { values: [modeId, ...new Array<number>(size - 1).fill(0)] } : {}),
      checkedAgainst: e.checkedAgainst,
    };
  });
  const E = observationSizeOf(encoderObservation);
  ioOf(encoder, 'obs_dict', 'encoded_tokens', E, tokenSize, 'encoder');

  const decTerms = enabledList(config, field(config, d, ['observations'], 'the decoder input terms'), 'observations');
  const observation: TrackingTerm[] = decTerms.map(({ name, key }) => {
    const { base, frames, step } = deployTerm(cf, key, name, 'decoder', tokenSize);
    const e: RegistryEntry | undefined = DECODER_REGISTRY[base];
    if (!e)
      fail(
        cf,
        key,
        `"${name}" is a term of the deploy's registry this adapter does not compute as a decoder input (it computes token_state and the his_* histories, g1_deploy_onnx_ref.cpp:1707, 1785-1794); refusing rather than guessing`,
      );
    if (e.kind === 'policy_token') {
      if (frames !== 1) fail(cf, key, 'the token has no history');
      return {
        name,
        kind: 'policy_token',
        size: tokenSize,
        history: 1,
        scale: null,
        clip: null,
        checkedAgainst: e.checkedAgainst,
      };
    }
    if (step !== 1)
      fail(
        cf,
        key,
        `a history every ${step} control steps is not supported by this adapter version (the shipped configs use step1)`,
      );
    return {
      name,
      kind: e.kind!,
      size: e.width,
      history: frames,
      // the deploy's state logger pads missing history with zero entries (state_logger.cpp:226-230,
      // 474-493); a zero quaternion turns (0, 0, −1) into (0, 0, +1) through quat_rotate_d
      // (math_utils.hpp:132-150), so padded gravity entries are (0, 0, 1)
      historyPad: e.kind === 'projected_gravity' ? [0, 0, 1] : new Array<number>(e.width).fill(0),
      scale: null,
      clip: null,
      checkedAgainst: `${e.checkedAgainst}; ${frames} frames oldest first (state_logger.cpp:212-233)`,
    };
  });
  if (observation.filter((t) => t.kind === 'policy_token').length !== 1)
    fail(cf, 'observations', 'lists no token_state: the decoder would not see the encoder');
  const D = observationSizeOf(observation);
  ioOf(decoder, 'obs_dict', 'action', D, 29, 'decoder');

  // The version, from the names the files carry (docs: model_card.md:9-13).
  const g1Pos = encTerms
    .map((t) => parseName(t.name))
    .find((p) => p.base === 'motion_joint_positions' && required.has(`${p.base}_${p.frames}frame_step${p.step}`));
  const heading = encTerms.some((t) => parseName(t.name).base.endsWith('_heading'));
  if (!g1Pos)
    fail(
      cf,
      `encoder.encoder_modes[${g1Index}].required_observations`,
      'the g1 mode reads no motion_joint_positions_<N>frame_step<S>',
    );
  const variant: SonicVariant = heading
    ? 'v1_1'
    : g1Pos.step === 5
      ? 'release'
      : g1Pos.step === 1
        ? 'low_latency'
        : fail(
            cf,
            'encoder.encoder_observations',
            `a g1 stride of ${g1Pos.step} steps is neither the release (5) nor the low-latency (1) SONIC`,
          );
  const p = sonicDeployJointParameters();
  const physics = physicsChecked(cf, mjlabG1Physics(0.005, 4), null);
  const encoderStage: EncoderStage = {
    modelFile: encoder.file,
    input: 'obs_dict',
    output: 'encoded_tokens',
    observation: encoderObservation,
    observationSize: E,
    tokenSize,
    mode: { name: 'g1', id: modeId },
    checkedAgainst: `${NV}/include/encoder.hpp:101-168; the encoder runs every control step (${CPP}:1644-1684)`,
  };
  return spec({
    family: 'sonic',
    adapter: ADAPTER_VERSIONS.sonic,
    obsInput: 'obs_dict',
    timeInput: null,
    actionOutput: 'action',
    jointOrder: order,
    observation,
    observationSize: D,
    physics: {
      ...physics,
      id: `sonic-g1/1@${physics.timestepS * 1000}ms×${physics.decimation}`,
      source:
        'gear_sonic/config/manager_env/base_env.yaml:30-32 (sim_dt 0.005, decimation 4); motors and armature as mjlab g1_constants.py (policy_parameters.hpp lists the same armatures)',
    },
    kp: p.kp,
    kd: p.kd,
    defaultJointPosRad: p.def,
    action: { mode: 'default_offset', scale: p.scale, offset: p.def.slice(), clip: null },
    anchorBody: 'pelvis',
    alignment: {
      rotation: 'yaw',
      translation: 'none',
      robotBody: 'root',
      referenceBody: 'root',
      checkedAgainst: `${CPP}:555-602 (apply_delta_heading = heading(init base quat) ⊗ heading(init reference root)⁻¹)`,
    },
    baked: null,
    encoder: encoderStage,
    notes: [
      `SONIC ${variant.replace('_', '-')}: the g1 encoder reads ${g1Pos.frames} reference frames ${g1Pos.step} control step(s) apart from the current one (${describeTerms(encoderObservation.filter((t) => t.kind !== 'zeros'))}); told from the term names in observation_config.yaml, not from sizes`,
      `encoder mode g1 (${modeId}); the terms only the teleop and SMPL modes require are fed as zeros, as the deploy does (g1_deploy_onnx_ref.cpp:2064-2093)`,
      'decoder history: 10 frames oldest first at 50 Hz; before 10 steps the oldest entries are the deploy’s zero entries (gravity (0, 0, 1)); Isaac Lab training back-fills with the first value instead',
      `target = default_angles + action[isaaclab→mujoco] · g1_action_scale, no clip (${CPP}:3121-3131); gains, default pose and scale derived as ${PP}:40-240 does`,
      'the reference joint velocities come from central differences of the clip at 50 Hz (the deploy reads them from the motion file)',
    ],
  });
}
