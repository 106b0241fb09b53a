import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import { fail, isRecord, numberList, type ConfigSource } from './policyFamilies';
import { POLICY_VALUE_BOUNDS as BOUND } from './policyValueBounds';

// unitree_rl_lab's velocity (locomotion) policy read from its own params/deploy.yaml, as the
// robot-side deploy code (deploy/include/isaaclab/, unitreerobotics/unitree_rl_lab @ e72a072)
// builds its observation and applies its action. The console runs it at zero command as the
// standing controller after a clip (unitree_rl_lab's FSM switches from a timed-out mimic motion to
// its velocity state). Every order and scale below comes from a deploy.yaml key or a named line
// of that code:
//
// - joint_ids_map: policy joint i reads and drives SDK motor joint_ids_map[i]
//   (unitree_articulation.h update(): joint_pos[i] = motor_state()[joint_ids_map[i]].q();
//   State_RLBase::run(): motor_cmd()[joint_ids_map[i]].q() = action[i]). The SDK motor order is
//   the canonical order here (unitree_hg LowCmd motor_cmd[0..28]).
// - stiffness / damping: indexed by SDK motor (State_RLBase::enter(): motor_cmd()[i].kp() =
//   joint_stiffness[i]; articulation.h: "sdk order").
// - default_joint_pos, actions.JointPositionAction.scale / offset, joint term scales: policy order
//   (observations.h joint_pos_rel: joint_pos[i] − default_joint_pos[i]; joint_actions.h:
//   processed[i] = raw[i]·scale[i] + offset[i]).
// - observation: the terms in deploy.yaml's order (observation_manager.h walks the YAML map in
//   document order), each term its own history of history_length frames, oldest first, newest
//   last, each frame clipped then scaled (manager_term_cfg.h ObservationTermCfg::get), the terms'
//   histories concatenated (ObservationManager::compute). So it is term-wise, not frame-wise.
// - reset (State_RLBase::enter → env->reset()): the last action is zeroed first
//   (ActionManager::reset), then every term's history is filled with history_length copies of the
//   term computed now (ObservationTermCfg::reset).
// - base_ang_vel: the IMU gyroscope (body frame); projected_gravity: q⁻¹·(0, 0, −1)·q with the
//   IMU quaternion wxyz (unitree_articulation.h); joint_vel_rel: dq (no default subtracted);
//   last_action: the previous raw action (ActionManager::action()).
// - velocity_commands: the wireless remote's sticks clamped to commands.base_velocity.ranges
//   (observations.h); here the command is a given vector (zero), clamped the same way.

/** The terms this adapter computes, with their width per frame. */
const VELOCITY_TERMS: Record<string, number> = {
  base_ang_vel: 3,
  projected_gravity: 3,
  velocity_commands: 3,
  joint_pos_rel: G1_NUM_JOINTS,
  joint_vel_rel: G1_NUM_JOINTS,
  last_action: G1_NUM_JOINTS,
};

export const VELOCITY_POLICY_ADAPTER = 'unitree_rl_lab-velocity/1';

export interface VelocityTerm {
  name: string;
  size: number;
  historyLength: number;
  /** Per entry of one frame. */
  scale: Float64Array;
}

export interface VelocityPolicySpec {
  file: string;
  adapter: typeof VELOCITY_POLICY_ADAPTER;
  stepDtS: number;
  /** Policy joint i ↔ SDK (canonical) motor jointIdsMap[i]. */
  jointIdsMap: Int32Array;
  /** PD gains, canonical (SDK) order. */
  kp: Float64Array;
  kd: Float64Array;
  /** Policy order. */
  defaultJointPosRad: Float64Array;
  actionScale: Float64Array;
  actionOffsetRad: Float64Array;
  terms: VelocityTerm[];
  observationSize: number;
  /** commands.base_velocity.ranges: [min, max] of lin_vel_x (m/s), lin_vel_y (m/s), ang_vel_z (rad/s). */
  commandRanges: [[number, number], [number, number], [number, number]];
}

/**
 * Deliberate misreadings for negative controls in tests, never set in production paths:
 * inverse_joint_ids_map reads the table the other way (SDK motor i ↔ policy joint map[i]);
 * frame_wise_history interleaves the history frame by frame (all terms of the oldest frame first).
 */
export type VelocityPolicyFault = 'inverse_joint_ids_map' | 'frame_wise_history';

const range2 = (src: ConfigSource, v: unknown, key: string): [number, number] => {
  const r = numberList(src.file, key, v, 2);
  if (!(r[0] <= r[1])) fail(src.file, key, `expected [min, max] with min ≤ max, got [${r[0]}, ${r[1]}]`);
  return [r[0], r[1]];
};

function get(src: ConfigSource, obj: unknown, path: string[], what: string): unknown {
  let v = obj;
  for (let i = 0; i < path.length; i++) {
    if (!isRecord(v) || !(path[i] in v)) fail(src.file, path.slice(0, i + 1).join('.'), `missing (${what})`);
    v = v[path[i]];
  }
  return v;
}

/** Reads a unitree_rl_lab velocity deploy.yaml; throws InputError naming the file and key. */
export function velocityPolicySpec(deploy: ConfigSource): VelocityPolicySpec {
  const f = deploy.file;
  const d = deploy.data;
  const J = G1_NUM_JOINTS;
  const ids = numberList(f, 'joint_ids_map', get(deploy, d, ['joint_ids_map'], 'the policy-to-motor table'), J);
  const seen = new Set<number>();
  ids.forEach((m, i) => {
    if (!Number.isInteger(m) || m < 0 || m >= J) fail(f, `joint_ids_map[${i}]`, `not a motor index 0..${J - 1}: ${m}`);
    if (seen.has(m)) fail(f, `joint_ids_map[${i}]`, `motor ${m} (${G1_JOINT_NAMES[m]}) is listed twice`);
    seen.add(m);
  });
  const stepDt = get(deploy, d, ['step_dt'], 'the policy period');
  if (typeof stepDt !== 'number' || !(stepDt > 0 && stepDt <= 0.1))
    fail(f, 'step_dt', `expected a period in (0, 0.1] s, got ${String(stepDt)}`);
  const kp = numberList(f, 'stiffness', get(deploy, d, ['stiffness'], 'PD stiffness per motor'), J, BOUND.stiffness);
  const kd = numberList(f, 'damping', get(deploy, d, ['damping'], 'PD damping per motor'), J, BOUND.damping);
  const def = numberList(
    f,
    'default_joint_pos',
    get(deploy, d, ['default_joint_pos'], 'the default pose'),
    J,
    BOUND.jointAngle,
  );
  const actions = get(deploy, d, ['actions'], 'the action terms');
  if (!isRecord(actions) || Object.keys(actions).join(',') !== 'JointPositionAction')
    fail(f, 'actions', 'expected exactly one action term, JointPositionAction (what this adapter applies)');
  const act = actions.JointPositionAction;
  const scale = numberList(
    f,
    'actions.JointPositionAction.scale',
    get(deploy, act, ['scale'], 'action scale'),
    J,
    BOUND.actionScale,
  );
  const offset = numberList(
    f,
    'actions.JointPositionAction.offset',
    get(deploy, act, ['offset'], 'action offset'),
    J,
    BOUND.jointAngle,
  );
  if (isRecord(act) && act.clip !== null && act.clip !== undefined)
    fail(
      f,
      'actions.JointPositionAction.clip',
      'an action clip is not read by this adapter version (the released policy has none)',
    );
  const ranges = get(deploy, d, ['commands', 'base_velocity', 'ranges'], 'the velocity command ranges');
  const commandRanges: VelocityPolicySpec['commandRanges'] = [
    range2(
      deploy,
      get(deploy, ranges, ['lin_vel_x'], 'forward velocity range'),
      'commands.base_velocity.ranges.lin_vel_x',
    ),
    range2(
      deploy,
      get(deploy, ranges, ['lin_vel_y'], 'lateral velocity range'),
      'commands.base_velocity.ranges.lin_vel_y',
    ),
    range2(deploy, get(deploy, ranges, ['ang_vel_z'], 'yaw rate range'), 'commands.base_velocity.ranges.ang_vel_z'),
  ];
  const obs = get(deploy, d, ['observations'], 'the observation terms in order');
  if (!isRecord(obs)) fail(f, 'observations', 'expected a map of observation terms');
  const terms: VelocityTerm[] = Object.entries(obs).map(([name, cfg]) => {
    const key = `observations.${name}`;
    const size = VELOCITY_TERMS[name];
    if (size === undefined)
      fail(
        f,
        key,
        `not a term this adapter computes (known: ${Object.keys(VELOCITY_TERMS).join(', ')}); refused rather than guessed`,
      );
    if (!isRecord(cfg)) fail(f, key, 'expected a map with scale, clip and history_length');
    if (cfg.clip !== null && cfg.clip !== undefined)
      fail(f, `${key}.clip`, 'an observation clip is not read by this adapter version');
    if (isRecord(cfg.params) && Object.keys(cfg.params).some((k) => k !== 'command_name'))
      fail(f, `${key}.params`, `parameters ${Object.keys(cfg.params).join(', ')} are not read by this adapter version`);
    const h = cfg.history_length === undefined ? 1 : cfg.history_length;
    if (typeof h !== 'number' || !Number.isInteger(h) || h < 1 || h > 100)
      fail(f, `${key}.history_length`, `expected an integer 1..100, got ${String(h)}`);
    const sc =
      cfg.scale === undefined || cfg.scale === null
        ? new Array<number>(size).fill(1)
        : numberList(f, `${key}.scale`, cfg.scale, size);
    return { name, size, historyLength: h, scale: Float64Array.from(sc) };
  });
  return {
    file: f,
    adapter: VELOCITY_POLICY_ADAPTER,
    stepDtS: stepDt,
    jointIdsMap: Int32Array.from(ids),
    kp: Float64Array.from(kp),
    kd: Float64Array.from(kd),
    defaultJointPosRad: Float64Array.from(def),
    actionScale: Float64Array.from(scale),
    actionOffsetRad: Float64Array.from(offset),
    terms,
    observationSize: terms.reduce((a, t) => a + t.size * t.historyLength, 0),
    commandRanges,
  };
}

/** The robot state the observation reads: canonical (SDK) joints and the pelvis IMU. */
export interface VelocityRobotState {
  jointPosRad: ArrayLike<number>;
  jointVelRadS: ArrayLike<number>;
  imu: { quatWxyz: ArrayLike<number>; gyroRadS: ArrayLike<number> };
}

/** World −z expressed in the body frame of a wxyz quaternion: R(q)ᵀ·(0, 0, −1). */
export function projectedGravity(q: ArrayLike<number>, out: Float64Array): void {
  const [w, x, y, z] = [q[0], q[1], q[2], q[3]];
  // Third row of R(q), negated.
  out[0] = -2 * (x * z - w * y);
  out[1] = -2 * (y * z + w * x);
  out[2] = -(1 - 2 * (x * x + y * y));
}

/**
 * The velocity policy's observation with its histories (pure, allocation-free per step). Policy
 * joint i reads canonical motor map[i]; the fault options misread on purpose (negative controls).
 */
export class VelocityObservation {
  /** The observation fed to the network (reused). */
  readonly vector: Float32Array;
  /** The last raw action, policy order (the last_action term). */
  readonly lastAction: Float64Array;
  /** Per term: history_length frames, oldest first (ring: `head` is the oldest). */
  private readonly hist: Float64Array[];
  private readonly head: number[];
  private readonly frame: Float64Array;
  private readonly gravity = new Float64Array(3);
  /** Canonical motor of policy joint i as this instance reads it. */
  readonly motorOf: Int32Array;

  constructor(
    readonly spec: VelocityPolicySpec,
    /** The velocity command [vx m/s, vy m/s, wz rad/s] before clamping to the ranges. */
    readonly command: readonly [number, number, number] = [0, 0, 0],
    readonly fault: VelocityPolicyFault | null = null,
  ) {
    this.vector = new Float32Array(spec.observationSize);
    this.lastAction = new Float64Array(G1_NUM_JOINTS);
    this.hist = spec.terms.map((t) => new Float64Array(t.size * t.historyLength));
    this.head = spec.terms.map(() => 0);
    this.frame = new Float64Array(Math.max(...spec.terms.map((t) => t.size)));
    this.motorOf = Int32Array.from(spec.jointIdsMap);
    if (fault === 'inverse_joint_ids_map')
      for (let i = 0; i < G1_NUM_JOINTS; i++) this.motorOf[spec.jointIdsMap[i]] = i;
  }

  /** The command as the deploy code feeds it: each component clamped to its range. */
  clampedCommand(): [number, number, number] {
    const r = this.spec.commandRanges;
    return [0, 1, 2].map((k) => Math.min(r[k][1], Math.max(r[k][0], this.command[k]))) as [number, number, number];
  }

  private termFrame(name: string, s: VelocityRobotState, out: Float64Array): void {
    const J = G1_NUM_JOINTS;
    switch (name) {
      case 'base_ang_vel':
        for (let k = 0; k < 3; k++) out[k] = s.imu.gyroRadS[k];
        return;
      case 'projected_gravity':
        projectedGravity(s.imu.quatWxyz, this.gravity);
        out.set(this.gravity);
        return;
      case 'velocity_commands':
        out.set(this.clampedCommand());
        return;
      case 'joint_pos_rel':
        for (let i = 0; i < J; i++) out[i] = s.jointPosRad[this.motorOf[i]] - this.spec.defaultJointPosRad[i];
        return;
      case 'joint_vel_rel':
        for (let i = 0; i < J; i++) out[i] = s.jointVelRadS[this.motorOf[i]];
        return;
      case 'last_action':
        out.set(this.lastAction);
        return;
      default:
        throw new Error(`velocity observation: unknown term ${name}`);
    }
  }

  /** env->reset(): last action zero, every history filled with the term computed from `s`. */
  reset(s: VelocityRobotState): void {
    this.lastAction.fill(0);
    this.spec.terms.forEach((t, ti) => {
      this.termFrame(t.name, s, this.frame);
      const h = this.hist[ti];
      for (let k = 0; k < t.historyLength; k++) h.set(this.frame.subarray(0, t.size), k * t.size);
      this.head[ti] = 0;
    });
    this.write();
  }

  /** One policy step: each term's newest frame from `s` (the oldest dropped), then the vector. */
  update(s: VelocityRobotState): Float32Array {
    this.spec.terms.forEach((t, ti) => {
      this.termFrame(t.name, s, this.frame);
      const h = this.hist[ti];
      h.set(this.frame.subarray(0, t.size), this.head[ti] * t.size); // overwrites the oldest
      this.head[ti] = (this.head[ti] + 1) % t.historyLength;
    });
    this.write();
    return this.vector;
  }

  private write(): void {
    const v = this.vector;
    if (this.fault === 'frame_wise_history') {
      let o = 0;
      const H = Math.max(...this.spec.terms.map((t) => t.historyLength));
      for (let k = 0; k < H; k++)
        this.spec.terms.forEach((t, ti) => {
          if (k >= t.historyLength) return;
          const src = ((this.head[ti] + k) % t.historyLength) * t.size;
          for (let e = 0; e < t.size; e++) v[o++] = this.hist[ti][src + e] * t.scale[e];
        });
      return;
    }
    let o = 0;
    this.spec.terms.forEach((t, ti) => {
      for (let k = 0; k < t.historyLength; k++) {
        const src = ((this.head[ti] + k) % t.historyLength) * t.size; // oldest → newest
        for (let e = 0; e < t.size; e++) v[o++] = this.hist[ti][src + e] * t.scale[e];
      }
    });
  }

  /**
   * Takes the raw action (policy order) as the next last_action and writes the joint targets,
   * canonical order: target[map[i]] = action[i]·scale[i] + offset[i].
   */
  applyAction(action: ArrayLike<number>, targetRad: Float64Array): void {
    const sp = this.spec;
    for (let i = 0; i < G1_NUM_JOINTS; i++) {
      this.lastAction[i] = action[i];
      targetRad[this.motorOf[i]] = action[i] * sp.actionScale[i] + sp.actionOffsetRad[i];
    }
  }
}
