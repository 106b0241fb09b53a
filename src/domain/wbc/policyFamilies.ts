import { InputError } from '../problems';
import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { mjlabG1Physics, physicsProblems, unitreeRlLabG1Physics, type PhysicsProfile } from '../robot/physicsProfile';
import { jointOrderFromNames, JointOrderError, toCanonical, type JointOrderMap } from '../robot/jointOrder';
import { describeValue } from '../text/printable';
import { findInput, findOutput, formatValueInfo, vectorWidth, type OnnxModelInfo } from './onnxModelInfo';
import { POLICY_VALUE_BOUNDS as BOUND, valueBoundProblem, type ValueBound } from './policyValueBounds';
import { presetKey, type HolosomaInterface, type PolicyPreset } from './policyPresets';
import {
  describeTerms,
  FAMILY_MOTION_SCOPE,
  observationSizeOf,
  trackingTermSize,
  type BackendNeed,
  type ConfiguredMotion,
  type PolicyFamily,
  type ReferenceAlignment,
  type TrackingPolicySpec,
  type TrackingTerm,
  type TrackingTermKind,
} from './trackingPolicy';

// The policy families as declared, versioned adapters. Each reads one family's
// file layout and returns the TrackingPolicySpec the console runs; every fact comes from the
// file, its metadata or its deploy configuration, and where neither says, from the family's
// published deploy code, which each term names (`checkedAgainst`). Nothing is inferred from a
// width: the observation layout is built from names, then its width is checked against the
// graph's input. Errors are InputErrors naming the file and the field.
//
// Bump an adapter's version whenever its reading of a file changes: results carry it.

export const ADAPTER_VERSIONS: Record<PolicyFamily, string> = {
  beyondmimic: 'beyondmimic/1',
  'mjlab-deploy': 'mjlab-deploy/2',
  'unitree-rl-lab': 'unitree-rl-lab/1',
  'wbc-mjlab': 'wbc-mjlab/1',
  'holosoma-wbt': 'holosoma-wbt/1',
  holomotion: 'holomotion/1',
  sonic: 'sonic/1',
  humanoidverse: 'humanoidverse/1',
};

const JOINTS = G1_JOINT_NAMES.length;

const WBT =
  'HybridRobotics/whole_body_tracking source/whole_body_tracking/whole_body_tracking/tasks/tracking/mdp/observations.py';
const MTC = 'HybridRobotics/motion_tracking_controller src/MotionCommand.cpp';
const MIMIC = 'unitreerobotics/unitree_rl_mjlab deploy/robots/g1/src/State_Mimic.cpp';
const LAB_DEPLOY = 'unitreerobotics/unitree_rl_lab deploy/include/isaaclab';
const LAB_MIMIC = 'unitreerobotics/unitree_rl_lab deploy/robots/g1_29dof/src/State_Mimic.cpp';
const WBC = 'wbc-mjlab/wbc-g1-deploy src/motion_reference_obs.cpp, src/wbc_tracking_params.cpp';
const HOLO = 'amazon-far/holosoma src/holosoma/holosoma/managers/observation/terms/wbt.py';
const ISAACLAB_OBS = 'isaac-sim/IsaacLab isaaclab/envs/mdp/observations.py';

/** One family term name → what it computes and where that was checked. */
export type TermTable = Record<string, { kind: TrackingTermKind; checkedAgainst: string }>;

const BEYONDMIMIC_TERMS: TermTable = {
  command: {
    kind: 'ref_joint_pos_vel',
    checkedAgainst: `${WBT} (MotionCommand.command: joint_pos ++ joint_vel); ${MTC}`,
  },
  motion_anchor_pos_b: {
    kind: 'ref_anchor_pos_b',
    checkedAgainst: `${WBT} motion_anchor_pos_b (subtract_frame_transforms); ${MTC} getAnchorPositionLocal`,
  },
  motion_anchor_ori_b: {
    kind: 'ref_anchor_ori_b',
    checkedAgainst: `${WBT} motion_anchor_ori_b (matrix_from_quat(..)[..., :2]); ${MTC} getAnchorOrientationLocal`,
  },
  base_lin_vel: { kind: 'base_lin_vel_b', checkedAgainst: `${ISAACLAB_OBS} base_lin_vel (root_lin_vel_b)` },
  base_ang_vel: { kind: 'base_ang_vel_b', checkedAgainst: `${ISAACLAB_OBS} base_ang_vel (root_ang_vel_b)` },
  joint_pos: { kind: 'joint_pos_rel', checkedAgainst: `${ISAACLAB_OBS} joint_pos_rel` },
  joint_vel: { kind: 'joint_vel_rel', checkedAgainst: `${ISAACLAB_OBS} joint_vel_rel` },
  actions: { kind: 'last_action', checkedAgainst: `${ISAACLAB_OBS} last_action (raw action)` },
};

const MJLAB_DEPLOY_TERMS: TermTable = {
  motion_command: { kind: 'ref_joint_pos_vel', checkedAgainst: `${MIMIC} REGISTER_OBSERVATION(motion_command)` },
  motion_anchor_ori_b: {
    kind: 'ref_anchor_ori_b',
    checkedAgainst: `${MIMIC} REGISTER_OBSERVATION(motion_anchor_ori_b)`,
  },
  motion_anchor_pos_b: {
    kind: 'ref_anchor_pos_b',
    checkedAgainst: `mujocolab/mjlab src/mjlab/tasks/tracking/mdp/observations.py motion_anchor_pos_b`,
  },
  base_lin_vel: {
    kind: 'base_lin_vel_b',
    checkedAgainst: 'mujocolab/mjlab src/mjlab/envs/mdp/observations.py base_lin_vel',
  },
  base_ang_vel: {
    kind: 'base_ang_vel_b',
    checkedAgainst:
      'unitreerobotics/unitree_rl_mjlab deploy/include/isaaclab/envs/mdp/observations/observations.h base_ang_vel',
  },
  projected_gravity: {
    kind: 'projected_gravity',
    checkedAgainst:
      'unitreerobotics/unitree_rl_mjlab deploy/include/isaaclab/envs/mdp/observations/observations.h projected_gravity',
  },
  joint_pos_rel: {
    kind: 'joint_pos_rel',
    checkedAgainst:
      'unitreerobotics/unitree_rl_mjlab deploy/include/isaaclab/envs/mdp/observations/observations.h joint_pos_rel',
  },
  joint_vel_rel: {
    kind: 'joint_vel_rel',
    checkedAgainst:
      'unitreerobotics/unitree_rl_mjlab deploy/include/isaaclab/envs/mdp/observations/observations.h joint_vel_rel',
  },
  last_action: {
    kind: 'last_action',
    checkedAgainst:
      'unitreerobotics/unitree_rl_mjlab deploy/include/isaaclab/envs/mdp/observations/observations.h last_action',
  },
};

/**
 * unitree_rl_lab's deploy terms (the observation manager registers them by these names). Joint
 * terms are in policy order: the robot's q/dq are read as motor_state[joint_ids_map[i]]
 * (unitree_articulation.h), the motion's SDK-order joints as joint_pos()[joint_ids_map[i]]
 * (motion_observations.h), joint_pos_rel subtracts default_joint_pos in policy order.
 */
const UNITREE_RL_LAB_TERMS: TermTable = {
  motion_command: {
    kind: 'ref_joint_pos_vel',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/motion_observations.h motion_command (pos_bfs[i] = pos_dfs[joint_ids_map[i]], then velocities)`,
  },
  motion_anchor_ori_b: {
    kind: 'ref_anchor_ori_b',
    checkedAgainst: `${LAB_MIMIC} REGISTER_OBSERVATION(motion_anchor_ori_b) (R((init·ref torso)⁻¹·robot torso)ᵀ: [R00, R01, R10, R11, R20, R21])`,
  },
  base_ang_vel: {
    kind: 'base_ang_vel_b',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/observations.h base_ang_vel (IMU gyroscope)`,
  },
  projected_gravity: {
    kind: 'projected_gravity',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/observations.h projected_gravity`,
  },
  joint_pos_rel: {
    kind: 'joint_pos_rel',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/observations.h joint_pos_rel (joint_pos[i] − default_joint_pos[i], policy order)`,
  },
  joint_vel_rel: {
    kind: 'joint_vel_rel',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/observations.h joint_vel_rel`,
  },
  last_action: {
    kind: 'last_action',
    checkedAgainst: `${LAB_DEPLOY}/envs/mdp/observations/observations.h last_action (the raw action)`,
  },
};

const WBC_TERMS: TermTable = {
  ref_base_height: { kind: 'ref_anchor_height', checkedAgainst: `${WBC} ref_base_height (anchor z − env_origin_z)` },
  ref_base_lin_vel_b: {
    kind: 'ref_anchor_lin_vel_b',
    checkedAgainst: `${WBC} ref_base_lin_vel_b (anchor velocity in the reference anchor frame)`,
  },
  ref_base_ang_vel_b: { kind: 'ref_anchor_ang_vel_b', checkedAgainst: `${WBC} ref_base_ang_vel_b` },
  ref_gravity_b: { kind: 'ref_gravity_b', checkedAgainst: `${WBC} ref_gravity_b` },
  ref_joint_pos: { kind: 'ref_joint_pos', checkedAgainst: `${WBC} ref_joint_pos (absolute)` },
  base_ang_vel: { kind: 'base_ang_vel_b', checkedAgainst: 'wbc-mjlab/wbc-mjlab env/mdp (mjlab base_ang_vel)' },
  projected_gravity: {
    kind: 'projected_gravity',
    checkedAgainst: 'wbc-mjlab/wbc-mjlab env/mdp (mjlab projected_gravity)',
  },
  joint_pos: {
    kind: 'joint_pos_rel',
    checkedAgainst: 'wbc-mjlab/wbc-g1-deploy src/wbc_tracking_params.cpp (deploy name joint_pos_rel)',
  },
  joint_vel: {
    kind: 'joint_vel_rel',
    checkedAgainst: 'wbc-mjlab/wbc-g1-deploy src/wbc_tracking_params.cpp (deploy name joint_vel_rel)',
  },
  actions: {
    kind: 'last_action',
    checkedAgainst: 'wbc-mjlab/wbc-g1-deploy src/wbc_tracking_params.cpp (deploy name last_action)',
  },
};

const HOLOSOMA_TERMS: TermTable = {
  actions: { kind: 'last_action', checkedAgainst: `${HOLO} actions` },
  base_ang_vel: { kind: 'base_ang_vel_b', checkedAgainst: `${HOLO} base_ang_vel` },
  dof_pos: { kind: 'joint_pos_rel', checkedAgainst: `${HOLO} dof_pos (q − default)` },
  dof_vel: { kind: 'joint_vel_rel', checkedAgainst: `${HOLO} dof_vel` },
  motion_command: { kind: 'ref_joint_pos_vel', checkedAgainst: `${HOLO} motion_command (MotionCommand.command)` },
  motion_ref_ori_b: { kind: 'ref_anchor_ori_b', checkedAgainst: `${HOLO} motion_ref_ori_b (torso on both sides)` },
};

export function fail(file: string, key: string | undefined, reason: string): never {
  throw new InputError(key === undefined ? { file } : { file, key }, reason);
}

export function need(info: OnnxModelInfo, key: string): string {
  const v = info.metadata[key];
  if (v === undefined || v.trim() === '')
    fail(info.file, `metadata_props.${key}`, `missing: this family's export always carries it`);
  return v;
}

/** "a,b,c" numbers, exactly n of them, each within `bound` when one is given. */
export function csvNumbers(info: OnnxModelInfo, key: string, n: number, bound?: ValueBound): number[] {
  const parts = need(info, key).split(',');
  if (parts.length !== n)
    fail(
      info.file,
      `metadata_props.${key}`,
      `expected ${n} comma-separated numbers (one per joint), got ${parts.length}`,
    );
  const v = parts.map((s) => Number(s.trim()));
  v.forEach((x, i) => {
    if (parts[i].trim() === '' || !Number.isFinite(x))
      fail(info.file, `metadata_props.${key}[${i}]`, `not a number: "${printableCut(parts[i])}"`);
    const problem = bound && valueBoundProblem(x, bound);
    if (problem) fail(info.file, `metadata_props.${key}[${i}]`, problem);
  });
  return v;
}

const printableCut = (s: string) => describeValue(s).slice(1, -1);

function jsonValue(info: OnnxModelInfo, key: string): unknown {
  const text = need(info, key);
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(info.file, `metadata_props.${key}`, `not valid JSON (${(e as Error).message})`);
  }
}

/** A list of exactly n finite numbers, each within `bound` when one is given. */
export function numberList(file: string, key: string, v: unknown, n: number, bound?: ValueBound): number[] {
  if (!Array.isArray(v)) fail(file, key, `expected a list of ${n} numbers`);
  if (v.length !== n) fail(file, key, `expected ${n} numbers (one per joint), got ${v.length}`);
  v.forEach((x, i) => {
    if (typeof x !== 'number' || !Number.isFinite(x))
      fail(file, `${key}[${i}]`, `not a finite number: ${describeValue(x)}`);
    const problem = bound && valueBoundProblem(x, bound);
    if (problem) fail(file, `${key}[${i}]`, problem);
  });
  return v as number[];
}

export function joints(file: string, key: string, names: readonly string[]): JointOrderMap {
  try {
    return jointOrderFromNames(names);
  } catch (e) {
    if (e instanceof JointOrderError) fail(file, key, e.message);
    throw e;
  }
}

export function knownTerm(
  table: TermTable,
  file: string,
  key: string,
  name: string,
  family: string,
): { kind: TrackingTermKind; checkedAgainst: string; size: number } {
  const t = table[name];
  if (!t)
    fail(
      file,
      key,
      `observation term "${name}" is not one the ${family} adapter knows (known: ${Object.keys(table).join(', ')}); refusing rather than guessing its meaning`,
    );
  return { ...t, size: trackingTermSize(t.kind, JOINTS) };
}

export function term(
  table: TermTable,
  file: string,
  key: string,
  name: string,
  history: number,
  scale: readonly number[] | null,
  clip: number | null,
  family: string,
): TrackingTerm {
  const t = knownTerm(table, file, key, name, family);
  const size = trackingTermSize(t.kind, JOINTS);
  if (scale !== null && scale.length !== size)
    fail(file, `${key}.scale`, `${scale.length} values for a term of size ${size}`);
  if (!(Number.isInteger(history) && history >= 1))
    fail(file, `${key}.history_length`, `expected an integer ≥ 1, got ${history}`);
  return {
    name,
    kind: t.kind,
    size,
    history,
    scale: scale && scale.every((s) => s === 1) ? null : scale,
    clip,
    checkedAgainst: t.checkedAgainst,
  };
}

/** The graph's observation input must be float32 [1, D] with D = the terms' total. */
export function checkIo(
  info: OnnxModelInfo,
  obsInput: string,
  timeInput: string | null,
  actionOutput: string,
  terms: TrackingTerm[],
  /** Further inputs the family feeds (checked by its adapter). */
  also: readonly string[] = [],
): number {
  const D = observationSizeOf(terms);
  const input = findInput(info, obsInput);
  if (!input)
    fail(
      info.file,
      'inputs',
      `no input "${obsInput}" (inputs: ${info.inputs.map(formatValueInfo).join(', ') || 'none'})`,
    );
  if (input.dtype !== 'float32') fail(info.file, `inputs.${obsInput}`, `is ${input.dtype}; expected float32`);
  const w = vectorWidth(input);
  if (w !== D)
    fail(
      info.file,
      `inputs.${obsInput}`,
      `has width ${w ?? '?'} ([${input.shape.join(', ')}]); the declared terms build ${D}: ${describeTerms(terms)}`,
    );
  const others = info.inputs.filter((i) => i.name !== obsInput && i.name !== timeInput && !also.includes(i.name));
  if (others.length) fail(info.file, 'inputs', `unexpected input(s) ${others.map(formatValueInfo).join(', ')}`);
  if (timeInput !== null && !findInput(info, timeInput))
    fail(info.file, 'inputs', `no "${timeInput}" input, which this family feeds the frame index through`);
  const out = findOutput(info, actionOutput);
  if (!out)
    fail(
      info.file,
      'outputs',
      `no output "${actionOutput}" (outputs: ${info.outputs.map(formatValueInfo).join(', ')})`,
    );
  if (vectorWidth(out) !== JOINTS)
    fail(info.file, `outputs.${actionOutput}`, `has shape [${out.shape.join(', ')}]; expected [1, ${JOINTS}]`);
  return D;
}

export function physicsChecked(file: string, p: PhysicsProfile, stepDtS: number | null): PhysicsProfile {
  const problems = physicsProblems(p, JOINTS);
  if (problems.length) fail(file, 'physics', problems.join('; '));
  if (stepDtS !== null && Math.abs(p.timestepS * p.decimation - stepDtS) > 1e-9)
    fail(
      file,
      'step_dt',
      `the policy steps every ${stepDtS} s; the family's physics (${p.timestepS} s × ${p.decimation}) does not divide it`,
    );
  return p;
}

const MTC_ALIGNMENT: ReferenceAlignment = {
  rotation: 'yaw',
  translation: 'xyz',
  robotBody: 'anchor',
  referenceBody: 'anchor',
  checkedAgainst: `${MTC} MotionCommandTerm::reset (worldToInit = yaw(robot anchor)·yaw(ref anchor)⁻¹, full translation)`,
};

/** base_lin_vel needs a state estimate of the root velocity; the anchor position term a root position estimate. */
function needsOf(terms: readonly TrackingTerm[]): BackendNeed[] {
  const needs: BackendNeed[] = [];
  if (terms.some((t) => t.kind === 'base_lin_vel_b')) needs.push('base_lin_vel');
  if (terms.some((t) => t.kind === 'ref_anchor_pos_b')) needs.push('root_pose');
  return needs;
}

export function spec(
  parts: Omit<
    TrackingPolicySpec,
    | 'observationSize'
    | 'needs'
    | 'controlRateHz'
    | 'recurrent'
    | 'stepCounter'
    | 'ignoredOutputs'
    | 'encoder'
    | 'motionScope'
  > &
    Partial<Pick<TrackingPolicySpec, 'recurrent' | 'stepCounter' | 'ignoredOutputs' | 'encoder'>> & {
      observationSize: number;
    },
): TrackingPolicySpec {
  return {
    recurrent: [],
    stepCounter: null,
    encoder: null,
    ignoredOutputs: [],
    ...parts,
    controlRateHz: 1 / (parts.physics.timestepS * parts.physics.decimation),
    needs: needsOf(parts.observation),
    motionScope: FAMILY_MOTION_SCOPE[parts.family].scope,
  };
}

/**
 * BeyondMimic / whole_body_tracking export (HybridRobotics/whole_body_tracking utils/exporter.py):
 * inputs obs, time_step; outputs actions + the baked motion; metadata names everything.
 */
export function beyondmimicSpec(info: OnnxModelInfo): TrackingPolicySpec {
  const f = info.file;
  const names = need(info, 'joint_names')
    .split(',')
    .map((s) => s.trim());
  const order = joints(f, 'metadata_props.joint_names', names);
  const n = names.length;
  const obsNames = need(info, 'observation_names')
    .split(',')
    .map((s) => s.trim());
  const histRaw = info.metadata.observation_history_lengths;
  const hist =
    histRaw === undefined ? obsNames.map(() => 1) : csvNumbers(info, 'observation_history_lengths', obsNames.length);
  const terms = obsNames.map((name, i) =>
    term(BEYONDMIMIC_TERMS, f, `metadata_props.observation_names[${i}]`, name, hist[i], null, null, 'beyondmimic'),
  );
  const D = checkIo(info, 'obs', 'time_step', 'actions', terms);
  const bodyNames = need(info, 'body_names')
    .split(',')
    .map((s) => s.trim());
  const anchor = need(info, 'anchor_body_name').trim();
  if (!bodyNames.includes(anchor))
    fail(f, 'metadata_props.anchor_body_name', `"${anchor}" is not among body_names (${bodyNames.join(', ')})`);
  if (bodyNames[0] !== 'pelvis')
    fail(
      f,
      'metadata_props.body_names',
      `the first body must be the pelvis (the root the baked motion is placed by); got "${bodyNames[0]}"`,
    );
  const nb = bodyNames.length;
  const baked = bakedFrames(info, [
    { name: 'joint_pos', frame: [n] },
    { name: 'joint_vel', frame: [n] },
    { name: 'body_pos_w', frame: [nb, 3] },
    { name: 'body_quat_w', frame: [nb, 4], quaternion: true },
    { name: 'body_lin_vel_w', frame: [nb, 3] },
    { name: 'body_ang_vel_w', frame: [nb, 3] },
  ]);
  const kp = csvNumbers(info, 'joint_stiffness', n, BOUND.stiffness);
  const kd = csvNumbers(info, 'joint_damping', n, BOUND.damping);
  const scale = csvNumbers(info, 'action_scale', n, BOUND.actionScale);
  const def = csvNumbers(info, 'default_joint_pos', n, BOUND.jointAngle);
  const defC = toCanonical(order, def);
  return spec({
    family: 'beyondmimic',
    adapter: ADAPTER_VERSIONS.beyondmimic,
    obsInput: 'obs',
    timeInput: 'time_step',
    actionOutput: 'actions',
    jointOrder: order,
    observation: terms,
    observationSize: D,
    physics: physicsChecked(f, mjlabG1Physics(0.005, 4), null),
    kp: toCanonical(order, kp),
    kd: toCanonical(order, kd),
    defaultJointPosRad: defC,
    action: { mode: 'default_offset', scale: toCanonical(order, scale), offset: defC.slice(), clip: null },
    anchorBody: anchor,
    alignment: MTC_ALIGNMENT,
    baked: { frames: baked, fps: 50, bodyNames },
    notes: [
      'time_step k at control step k; the observation uses baked frame k (whole_body_tracking training pairing; motion_tracking_controller feeds k+1 to the same call, which changes only the reference outputs)',
      'last action is 0 at the first step (training; the deploy codes feed their warm-up output instead)',
      "metadata gains, default pose and action scale are the exporter's 3-decimal roundings (exporter.py list_to_csv_str), used as the deploy codes use them",
      'physics: whole_body_tracking tracking_env_cfg.py sim.dt 0.005, decimation 4; motors as mjlab g1_constants.py',
    ],
  });
}

/**
 * Most frames a baked reference may declare: one hour at 50 Hz. The released exports carry
 * 165–1159 frames (3–23 s); every frame is converted, checked by forward kinematics and kept in
 * memory as a clip, so the bound keeps a policy's open within seconds.
 */
export const BAKED_FRAMES_MAX = 180_000;

/** An output of the baked motion and the shape of one frame of it. */
interface BakedTable {
  name: string;
  frame: readonly number[];
  /** A quaternion per row of 4 (norm checked). */
  quaternion?: boolean;
}

/**
 * Frames of a baked motion: every named output is a constant gathered by time_step, all of one
 * length F, each of shape [F, ...frame] exactly, so its data (F × frame width values, checked
 * against the bytes the tensor holds when it was read) is all there; every value finite and each
 * quaternion of unit norm. Refused before any per-frame work, naming the output and the frame.
 */
function bakedFrames(info: OnnxModelInfo, tables: readonly BakedTable[]): number {
  let frames = -1;
  for (const t of tables) {
    const c = info.timeIndexed[t.name];
    const key = `outputs.${t.name}`;
    if (!c) fail(info.file, key, 'is not a constant indexed by time_step, so the baked reference cannot be read');
    const want = `[F, ${t.frame.join(', ')}]`;
    if (t.frame.length === 2 && c.dims.length === 3 && c.dims[1] !== t.frame[0])
      fail(info.file, key, `has ${c.dims[1]} bodies; body_names lists ${t.frame[0]}`);
    if (c.dims.length !== t.frame.length + 1 || t.frame.some((d, i) => c.dims[i + 1] !== d))
      fail(info.file, key, `has shape [${c.dims.join(', ')}]; expected ${want}`);
    if (frames >= 0 && c.dims[0] !== frames)
      fail(info.file, key, `has ${c.dims[0]} frames; ${tables[0].name} has ${frames}`);
    frames = c.dims[0];
    if (frames > BAKED_FRAMES_MAX)
      fail(
        info.file,
        key,
        `declares ${frames} frames; a baked reference is limited to ${BAKED_FRAMES_MAX} (one hour at 50 Hz)`,
      );
    const width = t.frame.reduce((a, b) => a * b, 1);
    if (c.data.length !== frames * width)
      fail(info.file, key, `holds ${c.data.length} values; shape [${c.dims.join(', ')}] needs ${frames * width}`);
    for (let i = 0; i < c.data.length; i++)
      if (!Number.isFinite(c.data[i]))
        fail(
          info.file,
          `${key}[${Math.floor(i / width)}]`,
          `frame ${Math.floor(i / width)} holds ${c.data[i]} (value ${i % width} of the frame); the baked reference must be finite`,
        );
    if (t.quaternion)
      for (let i = 0; i < c.data.length; i += 4) {
        const n = Math.hypot(c.data[i], c.data[i + 1], c.data[i + 2], c.data[i + 3]);
        if (!(Math.abs(n - 1) <= 0.01))
          fail(
            info.file,
            `${key}[${Math.floor(i / width)}]`,
            `frame ${Math.floor(i / width)} holds a quaternion of norm ${n.toPrecision(4)}; expected unit quaternions`,
          );
      }
  }
  if (frames < 2) fail(info.file, 'outputs', `the baked reference has ${frames} frame(s); at least 2 are needed`);
  return frames;
}

export interface ConfigSource {
  /** The YAML file as the user named it. */
  file: string;
  /** Its parsed content. */
  data: unknown;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function field(src: ConfigSource, obj: unknown, path: string[], what: string): unknown {
  let v: unknown = obj;
  for (const k of path) {
    if (!isRecord(v) || !(k in v)) fail(src.file, path.join('.'), `missing (${what})`);
    v = v[k];
  }
  return v;
}

export function num(src: ConfigSource, v: unknown, key: string, positive = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || (positive && v <= 0))
    fail(src.file, key, `expected a ${positive ? 'positive ' : ''}finite number, got ${describeValue(v)}`);
  return v;
}

/**
 * The common shape of the deploy-folder families (mjlab-deploy, unitree-rl-lab, wbc-mjlab): one
 * `obs` input, `actions` out, no baked motion, the trainer's G1 physics at 5 ms × (step_dt / 5 ms)
 * (unitree_rl_lab's Isaac Lab G1 for unitree-rl-lab, mjlab's G1 for the others).
 */
function mjlabFolderSpec(
  family: 'mjlab-deploy' | 'unitree-rl-lab' | 'wbc-mjlab',
  info: OnnxModelInfo,
  file: string,
  order: JointOrderMap,
  terms: TrackingTerm[],
  stepDtS: number,
  joint: { kp: readonly number[]; kd: readonly number[]; kpOrder: 'sdk' | 'policy'; def: readonly number[] },
  rest: Pick<TrackingPolicySpec, 'action' | 'anchorBody' | 'alignment' | 'notes' | 'configuredMotion'>,
): TrackingPolicySpec {
  return spec({
    family,
    adapter: ADAPTER_VERSIONS[family],
    obsInput: 'obs',
    timeInput: null,
    actionOutput: 'actions',
    jointOrder: order,
    observation: terms,
    observationSize: checkIo(info, 'obs', null, 'actions', terms),
    physics: physicsChecked(
      file,
      (family === 'unitree-rl-lab' ? unitreeRlLabG1Physics : mjlabG1Physics)(0.005, Math.round(stepDtS / 0.005)),
      stepDtS,
    ),
    kp: joint.kpOrder === 'sdk' ? Float64Array.from(joint.kp) : toCanonical(order, joint.kp),
    kd: joint.kpOrder === 'sdk' ? Float64Array.from(joint.kd) : toCanonical(order, joint.kd),
    defaultJointPosRad: toCanonical(order, joint.def),
    baked: null,
    ...rest,
  });
}

/**
 * Which trainer wrote a Unitree deploy folder, from the joint order its `joint_ids_map` gives the
 * policy (policy joint i is SDK motor joint_ids_map[i]). unitree_rl_lab's export_deploy_cfg.py
 * writes the map from the Isaac Lab articulation's `joint_names`, which Isaac Lab orders
 * breadth-first through the G1's tree (G1_ISAACLAB_JOINT_NAMES); unitree_rl_mjlab's policies act
 * in the MJCF's order, the SDK order (the identity map). Any other map keeps the mjlab-deploy
 * reading (same keys, same deploy code).
 */
export function unitreeDeployFamily(order: JointOrderMap): 'unitree-rl-lab' | 'mjlab-deploy' {
  return order.label === 'isaaclab' ? 'unitree-rl-lab' : 'mjlab-deploy';
}

/**
 * A Unitree deploy folder: exported/policy.onnx (+ .onnx.data) and params/deploy.yaml, read as
 * the deploy code's ManagerBasedRLEnv and State_Mimic read it, for both trainers that write it
 * (unitree_rl_lab in Isaac Lab, unitree_rl_mjlab in mjlab; see unitreeDeployFamily). Per key:
 *   joint_ids_map        policy joint i drives SDK motor joint_ids_map[i]; the SDK motor order is
 *                        the canonical order (unitree_hg LowCmd motor_cmd[0..28])
 *   stiffness, damping   SDK motor order: export_deploy_cfg.py writes stiffness[joint_ids_map] =
 *                        the articulation's gains, State_Mimic::enter sends motor_cmd[i].kp =
 *                        stiffness[i] (articulation.h: "sdk order")
 *   default_joint_pos    policy order (joint_pos_rel subtracts it from joint_pos[i], itself read
 *                        from motor joint_ids_map[i])
 *   actions scale/offset policy order (processed action i goes to motor joint_ids_map[i])
 * `motion` is the motion the robot's FSM configuration names for this policy, when one was found.
 */
export function unitreeDeploySpec(
  info: OnnxModelInfo,
  deploy: ConfigSource,
  motion: ConfiguredMotion | null = null,
): TrackingPolicySpec {
  const f = deploy.file;
  const d = deploy.data;
  const idsRaw = field(deploy, d, ['joint_ids_map'], 'the policy-to-motor joint table');
  const ids = numberList(f, 'joint_ids_map', idsRaw, JOINTS);
  ids.forEach((m, i) => {
    if (!Number.isInteger(m) || m < 0 || m >= JOINTS)
      fail(f, `joint_ids_map[${i}]`, `not a motor index 0..${JOINTS - 1}: ${m}`);
  });
  const order = joints(
    f,
    'joint_ids_map',
    ids.map((m) => G1_JOINT_NAMES[m]),
  );
  const stepDt = num(deploy, field(deploy, d, ['step_dt'], 'the policy period'), 'step_dt', true);
  const kp = numberList(
    f,
    'stiffness',
    field(deploy, d, ['stiffness'], 'PD stiffness per joint'),
    JOINTS,
    BOUND.stiffness,
  );
  const kd = numberList(f, 'damping', field(deploy, d, ['damping'], 'PD damping per joint'), JOINTS, BOUND.damping);
  const def = numberList(
    f,
    'default_joint_pos',
    field(deploy, d, ['default_joint_pos'], 'the default pose'),
    JOINTS,
    BOUND.jointAngle,
  );
  const act = field(deploy, d, ['actions', 'JointPositionAction'], 'the joint position action');
  const scale = numberList(
    f,
    'actions.JointPositionAction.scale',
    field(deploy, act, ['scale'], 'action scale'),
    JOINTS,
    BOUND.actionScale,
  );
  const offset = numberList(
    f,
    'actions.JointPositionAction.offset',
    field(deploy, act, ['offset'], 'action offset'),
    JOINTS,
    BOUND.jointAngle,
  );
  const clipRaw = isRecord(act) ? act.clip : null;
  if (clipRaw !== null && clipRaw !== undefined)
    fail(
      f,
      'actions.JointPositionAction.clip',
      'an action clip is not supported by this adapter version (the released policy has none)',
    );
  const family = unitreeDeployFamily(order);
  const table = family === 'unitree-rl-lab' ? UNITREE_RL_LAB_TERMS : MJLAB_DEPLOY_TERMS;
  const obs = field(deploy, d, ['observations'], 'the observation terms in order');
  if (!isRecord(obs)) fail(f, 'observations', 'expected a map of observation terms');
  const terms = Object.entries(obs).map(([name, cfg]) => {
    const key = `observations.${name}`;
    if (!isRecord(cfg)) fail(f, key, 'expected a map with scale, clip and history_length');
    const { size } = knownTerm(table, f, key, name, family);
    const sc = cfg.scale === undefined ? null : numberList(f, `${key}.scale`, cfg.scale, size);
    const clip = cfg.clip === null || cfg.clip === undefined ? null : num(deploy, cfg.clip, `${key}.clip`, true);
    const hist = cfg.history_length === undefined ? 1 : num(deploy, cfg.history_length, `${key}.history_length`, true);
    return term(table, f, key, name, hist, sc, clip, family);
  });
  const lab = family === 'unitree-rl-lab';
  const mimic = lab ? LAB_MIMIC : MIMIC;
  return mjlabFolderSpec(
    family,
    info,
    f,
    order,
    terms,
    stepDt,
    { kp, kd, kpOrder: 'sdk', def },
    {
      action: {
        mode: 'default_offset',
        scale: toCanonical(order, scale),
        offset: toCanonical(order, offset),
        clip: null,
      },
      anchorBody: 'torso_link',
      alignment: {
        rotation: 'yaw',
        translation: 'none',
        robotBody: 'anchor',
        referenceBody: 'root',
        checkedAgainst: `${mimic} State_Mimic::enter (init_quat = yaw(robot torso) · yaw(motion root)ᵀ; no translation)`,
      },
      configuredMotion: motion,
      notes: lab
        ? [
            motion
              ? `the motion is ${motion.file} at ${motion.fps} fps (${motion.source}); the simulator resamples it to the ${1 / stepDt} Hz control timeline, frame k at t = k·step_dt`
              : 'the motion is supplied as a clip with its fps (State_Mimic reads motion_file and fps from the FSM configuration, which is not beside this folder); the simulator resamples it to the control timeline, frame k at t = k·step_dt',
            'motion timing as trained (csv_to_npz.py: interpolated to 50 Hz, velocities by torch.gradient; MotionCommand frame k at step k); the deploy code reads t = (k+1)·step_dt with forward differences at the file rate (docs/POLICIES.md gives the measured difference)',
            'anchor torso_link: the deploy code composes root·Rz(q12)·Rx(q13)·Ry(q14); forward kinematics of the model gives the same rotation',
            "gains are deploy.yaml's, in SDK motor order (what the robot receives)",
            'physics: unitree_rl_lab Isaac Lab G1 (g1.py), sim dt 5 ms × decimation 4 (tracking_env_cfg.py)',
          ]
        : [
            'the motion is supplied as a clip (State_Mimic reads it from motion_file); frame k at control step k (MotionLoader_::update, dt 1/50)',
            'anchor torso_link: the deploy code composes root·Rz(q12)·Rx(q13)·Ry(q14); forward kinematics of the model gives the same rotation',
            "gains are deploy.yaml's, in SDK motor order (what the robot receives)",
            'physics: mjlab tracking task 5 ms × decimation so that the step is step_dt',
          ],
    },
  );
}

/** wbc-mjlab folder: policy.onnx + config.yaml (schema wbc_tracking_params_v1) + clips/. */
export function wbcMjlabSpec(info: OnnxModelInfo, config: ConfigSource): TrackingPolicySpec {
  const f = config.file;
  const d = config.data;
  const schema = field(config, d, ['schema_version'], 'the parameter schema');
  if (schema !== 'wbc_tracking_params_v1')
    fail(
      f,
      'schema_version',
      `expected wbc_tracking_params_v1, got ${JSON.stringify(schema)} (this adapter reads only that version)`,
    );
  const namesRaw = field(config, d, ['joint_names'], 'the policy joint order');
  if (!Array.isArray(namesRaw) || namesRaw.some((x) => typeof x !== 'string'))
    fail(f, 'joint_names', 'expected a list of joint names');
  const order = joints(f, 'joint_names', namesRaw as string[]);
  const meta = info.metadata.joint_names;
  if (
    meta !== undefined &&
    meta
      .split(',')
      .map((s) => s.trim())
      .join(',') !== (namesRaw as string[]).join(',')
  )
    fail(
      info.file,
      'metadata_props.joint_names',
      `differs from ${f} joint_names; the policy and its configuration disagree on the joint order`,
    );
  const stepDt = num(config, field(config, d, ['policy_step_dt'], 'the policy period'), 'policy_step_dt', true);
  const kp = numberList(f, 'stiffness', field(config, d, ['stiffness'], 'PD stiffness'), JOINTS, BOUND.stiffness);
  const kd = numberList(f, 'damping', field(config, d, ['damping'], 'PD damping'), JOINTS, BOUND.damping);
  const def = numberList(
    f,
    'default_joint_pos',
    field(config, d, ['default_joint_pos'], 'the default pose'),
    JOINTS,
    BOUND.jointAngle,
  );
  const mode = field(config, d, ['action', 'action_mode'], 'how actions become targets');
  if (mode !== 'reference_residual')
    fail(f, 'action.action_mode', `expected reference_residual, got ${JSON.stringify(mode)}`);
  if (info.metadata.action_mode !== undefined && info.metadata.action_mode !== mode)
    fail(info.file, 'metadata_props.action_mode', `is "${info.metadata.action_mode}"; ${f} says ${String(mode)}`);
  const scale = numberList(
    f,
    'action.scale',
    field(config, d, ['action', 'scale'], 'action scale'),
    JOINTS,
    BOUND.actionScale,
  );
  const obs = field(config, d, ['actor_observations'], 'the actor observation terms in order');
  if (!isRecord(obs)) fail(f, 'actor_observations', 'expected a map of observation terms');
  const listed = field(config, d, ['tracking', 'actor_observation_names'], 'the actor term order');
  const obsKeys = Object.keys(obs);
  if (!Array.isArray(listed) || listed.join(',') !== obsKeys.join(','))
    fail(
      f,
      'tracking.actor_observation_names',
      `does not list the actor_observations keys in the same order (${obsKeys.join(', ')})`,
    );
  const metaNames = info.metadata.observation_names;
  if (metaNames !== undefined && metaNames !== obsKeys.join(','))
    fail(
      info.file,
      'metadata_props.observation_names',
      `"${metaNames}" differs from ${f} actor_observations (${obsKeys.join(', ')})`,
    );
  const hist = num(
    config,
    field(config, d, ['tracking', 'actor_history_length'], 'history length'),
    'tracking.actor_history_length',
    true,
  );
  const terms = Object.entries(obs).map(([name, cfg]) => {
    const key = `actor_observations.${name}`;
    if (!isRecord(cfg)) fail(f, key, 'expected a map with dim, scale and params');
    const { size } = knownTerm(WBC_TERMS, f, key, name, 'wbc-mjlab');
    if (cfg.dim !== size) fail(f, `${key}.dim`, `is ${JSON.stringify(cfg.dim)}; the term computes ${size} values`);
    const sc = cfg.scale === undefined ? null : numberList(f, `${key}.scale`, cfg.scale, size);
    return term(WBC_TERMS, f, key, name, hist, sc, null, 'wbc-mjlab');
  });
  const anchor = field(config, d, ['tracking', 'anchor_body_name'], 'the anchor body');
  if (typeof anchor !== 'string') fail(f, 'tracking.anchor_body_name', 'expected a body name');
  return mjlabFolderSpec(
    'wbc-mjlab',
    info,
    f,
    order,
    terms,
    stepDt,
    { kp, kd, kpOrder: 'policy', def },
    {
      action: {
        mode: 'reference_residual',
        scale: toCanonical(order, scale),
        offset: new Float64Array(JOINTS),
        clip: null,
      },
      anchorBody: anchor,
      alignment: {
        rotation: 'none',
        translation: 'none',
        robotBody: 'anchor',
        referenceBody: 'anchor',
        checkedAgainst: `${WBC}: every reference term is in the reference's own frame, so no alignment enters the observation`,
      },
      notes: [
        'target = reference joint angles of frame k + scale · action (ReferenceJointPositionAction, wbc_mdp_registrations.cpp)',
        'ref_base_height is the anchor z minus env_origin_z (0 in robot_defaults.yaml)',
        "the robot-side 0.98 × peak-torque target back-solve (pd_torque_clip.cpp) is not modelled; the simulator clamps torque to mjlab's effort limits",
        "clips: the folder's clips/ library (one frame per 20 ms policy step, npz fps 50)",
      ],
    },
  );
}

/**
 * holosoma whole-body tracking export: obs + time_step; metadata dof_names, kp, kd and
 * experiment_config (the training configuration). An export without experiment_config is read
 * only under a declared preset (policyPresets.ts), which states what experiment_config would;
 * joint names and gains still come from the file, and the preset is checked against it: the
 * same joint names in the same order, term sizes the adapter computes, the graph's widths
 * (checkIo). A preset for a file that carries experiment_config is refused: two sources of the
 * one interface could disagree, and the file's own is the one it was trained with.
 */
export function holosomaSpec(info: OnnxModelInfo, preset: PolicyPreset | null = null): TrackingPolicySpec {
  const f = info.file;
  const dofRaw = jsonValue(info, 'dof_names');
  if (!Array.isArray(dofRaw) || dofRaw.some((x) => typeof x !== 'string'))
    fail(f, 'metadata_props.dof_names', 'expected a JSON list of joint names');
  const dof = dofRaw as string[];
  const order = joints(f, 'metadata_props.dof_names', dof);
  const kp = numberList(f, 'metadata_props.kp', jsonValue(info, 'kp'), JOINTS, BOUND.stiffness);
  const kd = numberList(f, 'metadata_props.kd', jsonValue(info, 'kd'), JOINTS, BOUND.damping);
  const read = preset ? holosomaPresetInterface(info, dof, preset) : holosomaConfigInterface(info, dof);
  const { iface, key: k } = read;
  const def = dof.map((n) => iface.defaultJointAnglesRad[n]);
  const effort = iface.effortLimitNm;
  const aScale = iface.actionScale;
  const clip = iface.actionClip;
  // holosoma concatenates a group's terms in sorted name order (ObservationManager.compute_group:
  // sorted(obs_tensors.keys()); holosoma_inference policies/base.py sorts the same way).
  const terms = iface.terms
    .map((t) => t.name)
    .sort()
    .map((name) => {
      const t = iface.terms.find((x) => x.name === name)!;
      const key = k(['observation', 'groups', 'actor_obs', 'terms', name]);
      if (t.scale !== 1)
        fail(
          f,
          `${key}.scale`,
          `a scale other than the number 1 is not supported by this adapter version (got ${JSON.stringify(t.scale)})`,
        );
      return term(HOLOSOMA_TERMS, f, key, name, iface.historyLength, null, t.clip, 'holosoma-wbt');
    });
  if (preset)
    for (const t of terms) {
      const declared = iface.terms.find((x) => x.name === t.name)!.size;
      if (declared !== t.size)
        fail(
          f,
          k(['observation', 'groups', 'actor_obs', 'terms', t.name, 'size']),
          `the preset declares ${declared} values; the term computes ${t.size}`,
        );
    }
  const fps = iface.simFps;
  const dec = iface.controlDecimation;
  const D = checkIo(info, 'obs', 'time_step', 'actions', terms);
  const frames = bakedFrames(info, [
    { name: 'joint_pos', frame: [JOINTS] },
    { name: 'joint_vel', frame: [JOINTS] },
    { name: 'ref_pos_xyz', frame: [3] },
    { name: 'ref_quat_xyzw', frame: [4], quaternion: true },
  ]);
  const defC = toCanonical(order, def);
  const physics = physicsChecked(
    f,
    { ...mjlabG1Physics(1 / fps, dec), effortLimitNm: Array.from(toCanonical(order, effort)) },
    null,
  );
  return spec({
    family: 'holosoma-wbt',
    adapter: ADAPTER_VERSIONS['holosoma-wbt'],
    obsInput: 'obs',
    timeInput: 'time_step',
    actionOutput: 'actions',
    jointOrder: order,
    observation: terms,
    observationSize: D,
    physics: {
      ...physics,
      id: `holosoma-g1/1@${physics.timestepS * 1000}ms×${physics.decimation}`,
      source: read.physicsSource,
    },
    kp: toCanonical(order, kp),
    kd: toCanonical(order, kd),
    defaultJointPosRad: defC,
    action: { mode: 'default_offset', scale: new Float64Array(JOINTS).fill(aScale), offset: defC.slice(), clip },
    anchorBody: iface.anchorBody,
    alignment: {
      rotation: 'yaw',
      translation: 'none',
      robotBody: 'anchor',
      referenceBody: 'anchor',
      checkedAgainst:
        'amazon-far/holosoma src/holosoma_inference/holosoma_inference/policies/wbt.py _capture_robot_yaw_offset / _capture_motion_yaw_offset / _remove_yaw_offset',
    },
    baked: { frames, fps: 1 / (physics.timestepS * physics.decimation), bodyNames: ['torso_link'] },
    notes: [
      ...read.notes,
      'observation terms concatenated in sorted name order (holosoma ObservationManager.compute_group)',
      'the observation uses baked frame k at control step k (training pairing; holosoma_inference lags one step)',
      'ref_quat_xyzw is xyzw; the baked reference body is torso_link (exporter: body_name_ref), the pelvis is recovered through the waist joints',
      ...read.trailingNotes,
    ],
  });
}

/** Where a holosoma interface came from: the interface and how to name one of its keys. */
interface HolosomaRead {
  iface: HolosomaInterface;
  key: (p: string[]) => string;
  physicsSource: string;
  /** Notes before the family's own, and after them. */
  notes: string[];
  trailingNotes: string[];
}

/** The interface from the export's experiment_config (the training configuration, JSON). */
function holosomaConfigInterface(info: OnnxModelInfo, dof: string[]): HolosomaRead {
  const f = info.file;
  const cfg = jsonValue(info, 'experiment_config');
  const src: ConfigSource = { file: f, data: cfg };
  const k = (p: string[]) => `metadata_props.experiment_config.${p.join('.')}`;
  const get = (p: string[], what: string) => {
    try {
      return field(src, cfg, p, what);
    } catch (e) {
      if (e instanceof InputError) fail(f, k(p), `missing (${what})`);
      throw e;
    }
  };
  const cfgDof = get(['robot', 'dof_names'], 'the robot joint order');
  if (!Array.isArray(cfgDof) || cfgDof.join(',') !== dof.join(','))
    fail(f, k(['robot', 'dof_names']), 'differs from metadata dof_names');
  const fps = num(
    src,
    get(['simulator', 'config', 'sim', 'fps'], 'physics rate'),
    k(['simulator', 'config', 'sim', 'fps']),
    true,
  );
  const dec = num(
    src,
    get(['simulator', 'config', 'sim', 'control_decimation'], 'physics steps per policy step'),
    k(['simulator', 'config', 'sim', 'control_decimation']),
    true,
  );
  const control = get(['robot', 'control'], 'the action mapping');
  if (!isRecord(control)) fail(f, k(['robot', 'control']), 'expected a map');
  if (control.control_type !== 'P')
    fail(
      f,
      k(['robot', 'control', 'control_type']),
      `expected "P" (position targets), got ${JSON.stringify(control.control_type)}`,
    );
  const aScale = num(src, control.action_scale, k(['robot', 'control', 'action_scale']), true);
  const aScaleProblem = valueBoundProblem(aScale, BOUND.actionScale);
  if (aScaleProblem) fail(f, k(['robot', 'control', 'action_scale']), aScaleProblem);
  if (control.action_scales_by_effort_limit_over_p_gain !== false)
    fail(
      f,
      k(['robot', 'control', 'action_scales_by_effort_limit_over_p_gain']),
      'only false is supported by this adapter version',
    );
  const clip =
    control.clip_actions === true
      ? num(src, control.action_clip_value, k(['robot', 'control', 'action_clip_value']), true)
      : null;
  const defMap = get(['robot', 'init_state', 'default_joint_angles'], 'the default pose');
  if (!isRecord(defMap)) fail(f, k(['robot', 'init_state', 'default_joint_angles']), 'expected a map joint → angle');
  const def = dof.map((n) => {
    const v = defMap[n];
    if (typeof v !== 'number' || !Number.isFinite(v))
      fail(f, k(['robot', 'init_state', 'default_joint_angles', n]), `missing or not a number: ${describeValue(v)}`);
    const problem = valueBoundProblem(v, BOUND.jointAngle);
    if (problem) fail(f, k(['robot', 'init_state', 'default_joint_angles', n]), problem);
    return v;
  });
  const effort = numberList(
    f,
    k(['robot', 'dof_effort_limit_list']),
    get(['robot', 'dof_effort_limit_list'], 'effort limits'),
    JOINTS,
    BOUND.effortLimit,
  );
  const groups = get(['observation', 'groups', 'actor_obs'], 'the actor observation group');
  if (!isRecord(groups) || !isRecord(groups.terms))
    fail(f, k(['observation', 'groups', 'actor_obs', 'terms']), 'expected a map of terms');
  const hist =
    groups.history_length === undefined
      ? 1
      : num(src, groups.history_length, k(['observation', 'groups', 'actor_obs', 'history_length']), true);
  const terms = Object.keys(groups.terms).map((name) => {
    const key = k(['observation', 'groups', 'actor_obs', 'terms', name]);
    const t = (groups.terms as Record<string, unknown>)[name];
    if (!isRecord(t)) fail(f, key, 'expected a term map');
    if (t.scale !== undefined && typeof t.scale !== 'number')
      fail(f, `${key}.scale`, `expected a number, got ${describeValue(t.scale)}`);
    const c = t.clip === null || t.clip === undefined ? null : num(src, t.clip, `${key}.clip`, true);
    const { size } = knownTerm(HOLOSOMA_TERMS, f, key, name, 'holosoma-wbt');
    return { name, size, scale: t.scale === undefined ? 1 : t.scale, clip: c };
  });
  return {
    iface: {
      terms,
      historyLength: hist,
      simFps: fps,
      controlDecimation: dec,
      actionScale: aScale,
      actionClip: clip,
      defaultJointAnglesRad: Object.fromEntries(dof.map((n, i) => [n, def[i]])),
      effortLimitNm: effort,
      jointNames: dof,
      anchorBody: 'torso_link',
    },
    key: k,
    physicsSource:
      'experiment_config simulator.config.sim (fps, control_decimation), robot.dof_effort_limit_list; armature as mjlab g1_constants.py (the same values holosoma lists)',
    notes: [],
    trailingNotes: ['the policy was trained on a slope terrain (terrain_slope.obj); the simulator has a flat floor'],
  };
}

/**
 * The interface a declared preset states, for an export without experiment_config; the file's
 * dof_names must be the preset's joints in the preset's order (holosoma_inference drives the
 * robot in robot_config.dof_names order and never reads the file's names).
 */
function holosomaPresetInterface(info: OnnxModelInfo, dof: string[], preset: PolicyPreset): HolosomaRead {
  const f = info.file;
  const id = presetKey(preset);
  if (preset.family !== 'holosoma-wbt')
    fail(f, 'preset', `preset ${id} is for the ${preset.family} family; this file is a holosoma-wbt export`);
  if (info.metadata.experiment_config !== undefined)
    fail(
      f,
      'metadata_props.experiment_config',
      `present: the file carries its own interface (its training configuration), so preset ${preset.id} is refused; run it without --preset`,
    );
  const p = preset.holosoma;
  const n = Math.max(dof.length, p.jointNames.length);
  for (let i = 0; i < n; i++)
    if (dof[i] !== p.jointNames[i])
      fail(
        f,
        `metadata_props.dof_names[${i}]`,
        `is ${describeValue(dof[i])}; preset ${preset.id} drives ${describeValue(p.jointNames[i])} at index ${i} (the file's joint names and order must be the preset's: ${preset.sources.find((s) => s.includes('robot.py')) ?? preset.id})`,
      );
  return {
    iface: p,
    key: (path: string[]) => `preset ${preset.id} ${path.join('.')}`,
    physicsSource: `preset ${id}: sim ${p.simFps} Hz × decimation ${p.controlDecimation} and effort limits as its sources state (holosoma simulator.py isaacsim, robot.py g1_29dof); armature as mjlab g1_constants.py (the same values holosoma lists)`,
    notes: [
      `no experiment_config in the file: interface from the declared preset ${id} (${preset.summary}); transcribed from ${preset.sources.join('; ')}`,
      'joint names, kp and kd are read from the file (metadata dof_names, kp, kd) and checked against the preset',
    ],
    trailingNotes: [],
  };
}
