import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { mjlabG1Physics, type PhysicsProfile } from '../robot/physicsProfile';
import { valueBoundProblem } from './policyValueBounds';
import { POLICY_VALUE_BOUNDS } from './policyValueBounds';
import { drivenJointOrderFromNames, JointOrderError, toCanonical, type JointOrderMap } from '../robot/jointOrder';
import { findInput, findOutput, formatValueInfo, vectorWidth, type OnnxModelInfo } from './onnxModelInfo';
import {
  ADAPTER_VERSIONS,
  fail,
  field,
  isRecord,
  num,
  physicsChecked,
  spec,
  type ConfigSource,
} from './policyFamilies';
import { resolved } from './holomotionFamily';
import {
  describeTerms,
  observationSizeOf,
  trackingTermSize,
  type ConfiguredMotion,
  type TrackingPolicySpec,
  type TrackingTerm,
  type TrackingTermKind,
} from './trackingPolicy';

// The HumanoidVerse family (LeCAR-Lab/HumanoidVerse, the code base of ASAP, and of TeleHuman/PBHC
// "KungfuBot", RoboMimic_Deploy and RoboJuDo's ASAP policies) as its files describe it: an
// exported .onnx (exported/model_<iter>.onnx, input `actor_obs`, output `action`, no metadata)
// and the Hydra training configuration config.yaml one folder up, which alone says everything.
// What is read, and where the peer code says how (TeleHuman/PBHC @ 452b05ab, files under
// humanoidverse/):
//   observation   obs.obs_dict.actor_obs, concatenated in SORTED term-name order, not file order
//                 (envs/legged_base_task/legged_robot_base.py:755-760 _post_config_observation_callback
//                 `obs_keys = sorted(obs_config)`; the deploy code likewise, deploy/urcirobot.py:271);
//                 each term × obs.obs_scales[term]; widths obs.obs_dims; the whole vector clipped to
//                 ±env.config.normalization.clip_observations (legged_robot_base.py:305-308,
//                 urcirobot.py:281-284)
//   history       a term named in obs.obs_auxiliary (history_actor) is the concatenation, in sorted
//                 key order, of each listed term's last H values (motion_tracking.py:993-1003
//                 _get_obs_history_actor `for key in sorted(history_config.keys())`, `query(key)[:, :H]`)
//                 as HistoryHandler keeps them: newest first (env_utils/history_handler.py add: shift
//                 right, write index 0), zeros after reset (reset: `*= 0`), pushed AFTER the step's
//                 observation is built (legged_robot_base.py:311-312), so the block holds the previous
//                 steps, not the current one; the entries are scaled as the terms are (parse_observation
//                 on the history keys with obs_scales), then × the block's own scale
//   terms         base_ang_vel (root angular velocity in the root frame, legged_robot_base.py:1081),
//                 projected_gravity, dof_pos = q − default (:1087), dof_vel (:1090), actions = the
//                 previous action (:1142; deploy urcirobot.py:196-200 keeps the raw action),
//                 ref_motion_phase = motion time / motion length (motion_tracking.py:738-743; the
//                 deploy's motion_time = timer · dt from 0, urcirobot.py:221-222), the length
//                 (frames − 1)/fps (utils/motion_lib/motion_lib_base.py:283)
//   joints        robot.dof_names: the action's joints in order; the model's other joints are not
//                 driven (robot g1_23dof_lock_wrist locks the wrists) and are held at 0 rad by the
//                 robot side with locked_kp 40, locked_kd 1 (config/deploy/single.yaml:22-29, the
//                 23→29 map dof_idx_23_to_29 leaving the wrists out)
//   gains         robot.control.stiffness / damping: a joint takes every key that is a substring of
//                 its name, the last in file order winning (legged_robot_base.py:78-83); a driven
//                 joint with none is refused, as there
//   action        target = default + robot.control.action_scale · clip(a, ±robot.control.action_clip_value)
//                 (motion_tracking.py:749-751 _pre_physics_step; urcirobot.py:200), control type P only
//   timing        simulator.config.sim.fps (physics rate) and control_decimation
//   physics       robot.asset.armature on every joint (the IsaacGym asset option, simulator/isaacgym/
//                 isaacgym.py:175-192; robot.dof_armature_list is not read by the trainer), effort
//                 limits robot.dof_effort_limit_list with torques clipped (robot.control.clip_torques),
//                 no joint friction or damping (robot.dof_joint_friction_list is not read either)
// RoboJuDo's ASAP policy builds the same vector independently (zouyu8086/RoboJuDo @ 6d1bac46,
// robojudo/policy/asap_policy.py get_observation: terms concatenated "SORTED by obs name", the
// history read per term from a zero-filled deque before the current values are appendleft'ed,
// phase = timestep · dt / motion length from 0).
// A term the table below does not know is refused with its name; nothing is taken from a width.

const PBHC = 'TeleHuman/PBHC humanoidverse';
const BASE = `${PBHC}/envs/legged_base_task/legged_robot_base.py`;
const MT = `${PBHC}/envs/motion_tracking/motion_tracking.py`;
const HIST = `${PBHC}/envs/env_utils/history_handler.py (newest first, zeros at reset, pushed after the step's observation); ${MT}:993-1003 (sorted keys); zouyu8086/RoboJuDo robojudo/policy/asap_policy.py get_observation (the same, independently)`;

/** HumanoidVerse actor term names → what they compute. */
const HUMANOIDVERSE_TERMS: Record<string, { kind: TrackingTermKind; checkedAgainst: string }> = {
  base_ang_vel: { kind: 'base_ang_vel_b', checkedAgainst: `${BASE}:1081 (root angular velocity, root frame)` },
  projected_gravity: { kind: 'projected_gravity', checkedAgainst: `${BASE}:1084` },
  dof_pos: { kind: 'joint_pos_rel', checkedAgainst: `${BASE}:1087 (dof_pos − default_dof_pos)` },
  dof_vel: { kind: 'joint_vel_rel', checkedAgainst: `${BASE}:1090` },
  actions: { kind: 'last_action', checkedAgainst: `${BASE}:1142 (self.actions); ${PBHC}/deploy/urcirobot.py:196-200` },
  ref_motion_phase: {
    kind: 'ref_motion_phase',
    checkedAgainst: `${MT}:738-743 (motion_times / motion length); ${PBHC}/deploy/urcirobot.py:221-222 (timer · dt from 0)`,
  },
};

/** Gains the robot side holds undriven joints with (PBHC config/deploy/single.yaml:28-29 locked_kp, locked_kd). */
export const HUMANOIDVERSE_HELD_KP = 40;
export const HUMANOIDVERSE_HELD_KD = 1;

/**
 * Which HumanoidVerse descendant a training config.yaml is, by its keys: HoloMotion's has the
 * actor's `modules.actor.obs_schema`; HumanoidVerse's (PBHC, ASAP) has `obs.obs_dict` with
 * `robot.dof_names` and no obs_schema. null = neither.
 */
export function trainingConfigFamily(data: unknown): 'holomotion' | 'humanoidverse' | null {
  if (!isRecord(data)) return null;
  const modules = data.modules;
  if (isRecord(modules) && isRecord(modules.actor) && modules.actor.obs_schema !== undefined) return 'holomotion';
  const obs = data.obs;
  const robot = data.robot;
  if (isRecord(obs) && isRecord(obs.obs_dict) && isRecord(robot) && Array.isArray(robot.dof_names))
    return 'humanoidverse';
  return null;
}

/** obs.obs_dims (a list of one-key maps, or a map) → name → resolved width. */
function obsDims(src: ConfigSource): Map<string, { value: unknown; key: string }> {
  const dims = field(src, src.data, ['obs', 'obs_dims'], 'the observation term widths');
  const out = new Map<string, { value: unknown; key: string }>();
  if (Array.isArray(dims))
    dims.forEach((e, i) => {
      if (!isRecord(e) || Object.keys(e).length !== 1)
        fail(src.file, `obs.obs_dims[${i}]`, 'expected a one-key map: term name → width');
      const [k, v] = Object.entries(e)[0];
      out.set(k, { value: v, key: `obs.obs_dims[${i}].${k}` });
    });
  else if (isRecord(dims))
    for (const [k, v] of Object.entries(dims)) out.set(k, { value: v, key: `obs.obs_dims.${k}` });
  else fail(src.file, 'obs.obs_dims', 'expected a list of {term: width} or a map');
  return out;
}

const intAt = (src: ConfigSource, v: unknown, key: string): number => {
  const n = num(src, resolved(src, v, key), key, true);
  if (!Number.isInteger(n)) fail(src.file, key, `expected an integer, got ${n}`);
  return n;
};

function scaleOf(src: ConfigSource, name: string): number {
  const scales = field(src, src.data, ['obs', 'obs_scales'], 'the observation scales');
  if (!isRecord(scales) || !(name in scales)) fail(src.file, `obs.obs_scales.${name}`, 'missing (the term’s scale)');
  return num(src, resolved(src, scales[name], `obs.obs_scales.${name}`), `obs.obs_scales.${name}`);
}

/** The actor observation, in HumanoidVerse's order, with its history block expanded term by term. */
export function humanoidverseTerms(src: ConfigSource, drivenJoints: number, clip: number): TrackingTerm[] {
  const f = src.file;
  const list = field(src, src.data, ['obs', 'obs_dict', 'actor_obs'], "the actor's observation terms");
  if (!Array.isArray(list) || list.length === 0) fail(f, 'obs.obs_dict.actor_obs', 'expected a list of term names');
  const names = list.map((n, i) =>
    typeof n === 'string' ? n : fail(f, `obs.obs_dict.actor_obs[${i}]`, 'expected a term name'),
  );
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) fail(f, 'obs.obs_dict.actor_obs', `names "${dup}" twice`);
  const aux = isRecord(src.data) && isRecord(src.data.obs) ? src.data.obs.obs_auxiliary : undefined;
  const dims = obsDims(src);
  const sized = (name: string, at: string): { kind: TrackingTermKind; size: number; checkedAgainst: string } => {
    const t = HUMANOIDVERSE_TERMS[name];
    if (!t)
      fail(
        f,
        at,
        `observation term "${name}" is not one the humanoidverse adapter knows (known: ${Object.keys(HUMANOIDVERSE_TERMS).join(', ')}); refusing rather than guessing its meaning`,
      );
    const d = dims.get(name);
    if (!d) fail(f, 'obs.obs_dims', `has no width for "${name}"`);
    const size = intAt(src, d.value, d.key);
    const want = trackingTermSize(t.kind, drivenJoints);
    if (size !== want)
      fail(f, d.key, `is ${size}, but ${name} (${t.kind}) has ${want} values for ${drivenJoints} driven joints`);
    return { kind: t.kind, size, checkedAgainst: t.checkedAgainst };
  };
  const out: TrackingTerm[] = [];
  // Python's sorted() on str: code-point order, as JS's default sort orders ASCII names.
  for (const name of [...names].sort()) {
    const at = `obs.obs_dict.actor_obs[${names.indexOf(name)}]`;
    const block = isRecord(aux) ? aux[name] : undefined;
    if (block !== undefined) {
      if (!isRecord(block)) fail(f, `obs.obs_auxiliary.${name}`, 'expected a map: term → history length');
      const blockScale = scaleOf(src, name);
      for (const key of Object.keys(block).sort()) {
        const bk = `obs.obs_auxiliary.${name}.${key}`;
        const t = sized(key, bk);
        const h = intAt(src, block[key], bk);
        const s = scaleOf(src, key) * blockScale;
        out.push({
          name: `${name}.${key}`,
          kind: t.kind,
          size: t.size,
          history: h,
          historyLayout: 'past_newest_first',
          historyPad: null,
          scale: s === 1 ? null : new Array<number>(t.size).fill(s),
          clip,
          checkedAgainst: `${t.checkedAgainst}; history: ${HIST}`,
        });
      }
      continue;
    }
    const t = sized(name, at);
    const s = scaleOf(src, name);
    out.push({
      name,
      kind: t.kind,
      size: t.size,
      history: 1,
      scale: s === 1 ? null : new Array<number>(t.size).fill(s),
      clip,
      checkedAgainst: `${t.checkedAgainst}; order: ${BASE}:755-760 (sorted term names)`,
    });
  }
  return out;
}

/** Per driven joint, the gain of every stiffness/damping key its name contains, the last in file order. */
function gains(src: ConfigSource, names: readonly string[], which: 'stiffness' | 'damping'): number[] {
  const key = `robot.control.${which}`;
  const table = field(src, src.data, ['robot', 'control', which], `the PD ${which}`);
  if (!isRecord(table)) fail(src.file, key, 'expected a map: joint name part → gain');
  const bound = which === 'stiffness' ? POLICY_VALUE_BOUNDS.stiffness : POLICY_VALUE_BOUNDS.damping;
  return names.map((n) => {
    let g: number | null = null;
    for (const [part, v] of Object.entries(table))
      if (n.includes(part)) {
        g = num(src, v, `${key}.${part}`);
        const problem = valueBoundProblem(g, bound);
        if (problem) fail(src.file, `${key}.${part}`, problem);
      }
    if (g === null)
      fail(src.file, key, `no key is part of the joint name "${n}" (the trainer refuses such a joint too)`);
    return g;
  });
}

/**
 * MuJoCo physics step the family runs at, s: PBHC's own MuJoCo sim2sim steps 2 ms
 * (humanoidverse/config/simulator/mujoco.yaml fps 500, control_decimation 10). The trainer's
 * IsaacGym step (simulator.config.sim.fps, 5 ms for the released policy) is kept as the control
 * period only: MuJoCo's PD servos on the trainer's 0.001 kg·m² armature are not stable at 5 ms
 * (measured on pbhc_horse_stance_pose: a hard failure at 1.58 s at 5 ms × 4; none at 2 ms × 10).
 */
export const HUMANOIDVERSE_MUJOCO_TIMESTEP_S = 0.002;

/**
 * The trainer's physics: robot.asset.armature on every joint, robot.dof_effort_limit_list, no
 * friction or damping, at the trainer's control period (control_decimation / sim.fps) stepped
 * by MuJoCo at HUMANOIDVERSE_MUJOCO_TIMESTEP_S.
 */
function trainingPhysics(src: ConfigSource, order: JointOrderMap): PhysicsProfile {
  const sim = 'simulator.config.sim';
  const fps = num(
    src,
    field(src, src.data, ['simulator', 'config', 'sim', 'fps'], 'the physics rate'),
    `${sim}.fps`,
    true,
  );
  const dec = intAt(
    src,
    field(src, src.data, ['simulator', 'config', 'sim', 'control_decimation'], 'physics steps per policy step'),
    `${sim}.control_decimation`,
  );
  const controlDtS = dec / fps;
  const mjDec = Math.round(controlDtS / HUMANOIDVERSE_MUJOCO_TIMESTEP_S);
  if (mjDec < 1 || Math.abs(mjDec * HUMANOIDVERSE_MUJOCO_TIMESTEP_S - controlDtS) > 1e-9)
    fail(
      src.file,
      `${sim}.control_decimation`,
      `the control period ${dec}/${fps} s is not a whole number of ${HUMANOIDVERSE_MUJOCO_TIMESTEP_S * 1000} ms MuJoCo steps`,
    );
  const armature = num(
    src,
    field(src, src.data, ['robot', 'asset', 'armature'], 'the joint armature'),
    'robot.asset.armature',
  );
  if (armature < 0) fail(src.file, 'robot.asset.armature', `expected ≥ 0, got ${armature}`);
  const P = order.policyNames.length;
  const effortRaw = field(src, src.data, ['robot', 'dof_effort_limit_list'], 'the joint effort limits');
  if (!Array.isArray(effortRaw) || effortRaw.length !== P)
    fail(src.file, 'robot.dof_effort_limit_list', `expected ${P} numbers (one per robot.dof_names entry)`);
  const effort = effortRaw.map((v, i) => num(src, v, `robot.dof_effort_limit_list[${i}]`, true));
  // Joints the trainer's robot does not have (held): mjlab's G1 motor limits, the same armature.
  const base = mjlabG1Physics(HUMANOIDVERSE_MUJOCO_TIMESTEP_S, mjDec);
  const effortC = toCanonical(order, effort);
  const drivenC = new Set(Array.from(order.canonicalOf));
  return physicsChecked(
    src.file,
    {
      id: `humanoidverse-g1/1@${HUMANOIDVERSE_MUJOCO_TIMESTEP_S * 1000}ms×${mjDec}`,
      source: `${src.file}: robot.asset.armature ${armature} kg·m² on every joint (IsaacGym asset option), robot.dof_effort_limit_list (torques clipped), no joint friction or damping; control period ${dec}/${fps} s (simulator.config.sim, IsaacGym ${1000 / fps} ms × ${dec}) stepped at ${HUMANOIDVERSE_MUJOCO_TIMESTEP_S * 1000} ms as PBHC's MuJoCo sim2sim (config/simulator/mujoco.yaml); held joints: mjlab G1 effort limits`,
      timestepS: HUMANOIDVERSE_MUJOCO_TIMESTEP_S,
      decimation: mjDec,
      armatureKgM2: G1_JOINT_NAMES.map(() => armature),
      effortLimitNm: G1_JOINT_NAMES.map((_, c) => (drivenC.has(c) ? effortC[c] : base.effortLimitNm[c])),
      frictionLossNm: G1_JOINT_NAMES.map(() => 0),
      dampingNmsPerRad: G1_JOINT_NAMES.map(() => 0),
    },
    controlDtS,
  );
}

/** A HumanoidVerse export + its training config.yaml → the spec the console runs. */
export function humanoidverseSpec(
  info: OnnxModelInfo,
  config: ConfigSource,
  motion: ConfiguredMotion | null,
): TrackingPolicySpec {
  const f = info.file;
  const cf = config.file;
  const rawNames = field(config, config.data, ['robot', 'dof_names'], 'the joints the action drives');
  if (!Array.isArray(rawNames) || rawNames.length === 0) fail(cf, 'robot.dof_names', 'expected a list of joint names');
  const names = rawNames.map((n, i) =>
    typeof n === 'string' ? n : fail(cf, `robot.dof_names[${i}]`, 'expected a joint name'),
  );
  let order: JointOrderMap;
  try {
    order = drivenJointOrderFromNames(names);
  } catch (e) {
    if (e instanceof JointOrderError) fail(cf, 'robot.dof_names', e.message);
    throw e;
  }
  const P = names.length;
  const actionsDim = isRecord(config.data) && isRecord(config.data.robot) ? config.data.robot.actions_dim : undefined;
  if (actionsDim !== undefined && intAt(config, actionsDim, 'robot.actions_dim') !== P)
    fail(cf, 'robot.actions_dim', `is ${String(actionsDim)}, but robot.dof_names lists ${P} joints`);

  const controlType = field(config, config.data, ['robot', 'control', 'control_type'], 'the controller type');
  if (controlType !== 'P')
    fail(cf, 'robot.control.control_type', `is ${String(controlType)}; only position control (P) is read`);
  const defaults = field(config, config.data, ['robot', 'init_state', 'default_joint_angles'], 'the default pose');
  if (!isRecord(defaults)) fail(cf, 'robot.init_state.default_joint_angles', 'expected a map: joint → angle');
  const def = names.map((n) => {
    const v = num(config, defaults[n], `robot.init_state.default_joint_angles.${n}`);
    const problem = valueBoundProblem(v, POLICY_VALUE_BOUNDS.jointAngle);
    if (problem) fail(cf, `robot.init_state.default_joint_angles.${n}`, problem);
    return v;
  });
  const kp = gains(config, names, 'stiffness');
  const kd = gains(config, names, 'damping');
  const scale = num(
    config,
    field(config, config.data, ['robot', 'control', 'action_scale'], 'the action scale'),
    'robot.control.action_scale',
    true,
  );
  const scaleProblem = valueBoundProblem(scale, POLICY_VALUE_BOUNDS.actionScale);
  if (scaleProblem) fail(cf, 'robot.control.action_scale', scaleProblem);
  const actionClip = num(
    config,
    field(config, config.data, ['robot', 'control', 'action_clip_value'], 'the action clip'),
    'robot.control.action_clip_value',
    true,
  );
  const obsClip = num(
    config,
    field(config, config.data, ['env', 'config', 'normalization', 'clip_observations'], 'the observation clip'),
    'env.config.normalization.clip_observations',
    true,
  );

  const terms = humanoidverseTerms(config, P, obsClip);
  const D = observationSizeOf(terms);
  // The graph: actor_obs float32 [1, D] → action [1, P] (PBHC's exporter names; checked, not assumed).
  const obs = findInput(info, 'actor_obs');
  if (!obs)
    fail(f, 'inputs', `no input "actor_obs" (inputs: ${info.inputs.map(formatValueInfo).join(', ') || 'none'})`);
  if (obs.dtype !== 'float32') fail(f, 'inputs.actor_obs', `is ${obs.dtype}; expected float32`);
  const w = vectorWidth(obs);
  if (w !== D)
    fail(
      f,
      'inputs.actor_obs',
      `has width ${w ?? '?'} ([${obs.shape.join(', ')}]); ${cf} obs.obs_dict.actor_obs builds ${D}: ${describeTerms(terms)}`,
    );
  const others = info.inputs.filter((i) => i.name !== 'actor_obs');
  if (others.length) fail(f, 'inputs', `unexpected input(s) ${others.map(formatValueInfo).join(', ')}`);
  const act = findOutput(info, 'action');
  if (!act) fail(f, 'outputs', `no output "action" (outputs: ${info.outputs.map(formatValueInfo).join(', ')})`);
  if (vectorWidth(act) !== P)
    fail(f, 'outputs.action', `has shape [${act.shape.join(', ')}]; ${cf} robot.dof_names lists ${P} joints`);

  const physics = trainingPhysics(config, order);
  const held = new Set(order.held ?? []);
  const defC = toCanonical(order, def); // held joints: 0 rad, the pose the 23-dof robot locks them at
  const kpC = toCanonical(order, kp);
  const kdC = toCanonical(order, kd);
  G1_JOINT_NAMES.forEach((n, c) => {
    if (held.has(n)) {
      kpC[c] = HUMANOIDVERSE_HELD_KP;
      kdC[c] = HUMANOIDVERSE_HELD_KD;
    }
  });
  const scaleC = toCanonical(
    order,
    names.map(() => scale),
  );
  return spec({
    family: 'humanoidverse',
    adapter: ADAPTER_VERSIONS.humanoidverse,
    obsInput: 'actor_obs',
    timeInput: null,
    actionOutput: 'action',
    jointOrder: order,
    observation: terms,
    observationSize: D,
    physics,
    kp: kpC,
    kd: kdC,
    defaultJointPosRad: defC,
    action: { mode: 'default_offset', scale: scaleC, offset: defC.slice(), clip: actionClip },
    anchorBody: 'pelvis',
    alignment: {
      rotation: 'none',
      translation: 'none',
      robotBody: 'root',
      referenceBody: 'root',
      checkedAgainst: `${PBHC}/deploy/urcirobot.py (the actor observes no reference pose: only the phase)`,
    },
    baked: null,
    configuredMotion: motion,
    notes: [
      `drives ${P} joints (robot.dof_names); ${order.held?.length ?? 0} held at 0 rad by the robot side with kp ${HUMANOIDVERSE_HELD_KP}, kd ${HUMANOIDVERSE_HELD_KD} (${PBHC}/config/deploy/single.yaml locked_kp/locked_kd): ${(order.held ?? []).join(', ') || 'none'}`,
      'observation: obs.obs_dict.actor_obs in sorted name order; history_actor terms hold the previous steps newest first, zeros after reset',
      'ref_motion_phase = k / (F − 1) at control step k of an F-frame reference at the control rate (motion length (frames − 1)/fps)',
      'training noise (obs.noise_scales) and domain randomisation (gains, friction, masses, control delay 0–2 steps, pushes) are not applied',
      `trained in IsaacGym PhysX (TGS, 4 position iterations, 5 ms) on the 23-dof model with rigid wrists; run in MuJoCo at ${HUMANOIDVERSE_MUJOCO_TIMESTEP_S * 1000} ms on the 29-joint G1 with the wrists held by PD (PhysX's solver, contact model and the 23-dof collision shapes are not reproduced)`,
    ],
  });
}
