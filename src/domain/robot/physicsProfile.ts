import { G1_JOINT_NAMES } from './g1Joints';

// The physics a released policy was trained with, applied to the simulator's model for its
// episodes and printed with every result: physics timestep and decimation
// (control period = timestep × decimation), each joint's reflected motor inertia (armature),
// effort limit, dry friction and viscous damping. PD torques come from the policy's own gains
// and are computed by MuJoCo's position servos at every physics step (kp·(target − q) −
// kd·dq, clamped to ±effort), as mjlab's position actuators do.
//
// `mjlab-g1/1` is mujocolab/mjlab's G1 (src/mjlab/asset_zoo/robots/unitree_g1/g1_constants.py,
// copied to ../shared/data/models/mjlab_g1/): armature per motor class by
// `reflected_inertia_from_two_stage_planetary` (mjlab/utils/actuator.py:
// r1 = I0·(g1·g2)², r2 = I1·g2², r3 = I2), effort limits per class, the waist pitch/roll and
// ankles as two 5020 motors (armature and effort doubled). mjlab's g1.xml declares no joint
// friction or damping, so both are 0. BeyondMimic's Isaac Lab G1 (whole_body_tracking,
// robots/g1.py) uses the same motor constants; its stiffness = armature·(2π·10 Hz)² rule is
// what the files' own joint_stiffness equals (checked by test/unit/physicsProfile.test.ts).
//
// `unitree-rl-lab-g1/1` is the G1 unitree_rl_lab trains its mimic tasks on in Isaac Lab
// (unitreerobotics/unitree_rl_lab source/unitree_rl_lab/unitree_rl_lab/tasks/mimic/robots/
// g1_29dof/dance_102/g1.py, G1_CYLINDER_CFG; sim dt 0.005 and decimation 4 in tracking_env_cfg.py):
// its armature is written there as four constants per motor class (ARMATURE_5020 …), its effort
// limits as `effort_limit_sim` per actuator group, the ankles and waist roll/pitch at twice the
// 5020's armature; no joint friction or damping is set. The numbers equal mjlab's to 1e-9 kg·m²
// (checked by test/unit/physicsProfile.test.ts) but the profile is its own: it names the
// trainer, and Isaac Lab's PhysX also caps joint speed (`velocity_limit_sim`, 20–37 rad/s),
// which MuJoCo has no per-joint setting for (listed in UNITREE_RL_LAB_G1_VELOCITY_LIMIT_RAD_S,
// not applied).

export interface PhysicsProfile {
  /** Versioned id: part of a policy binding's version, printed with every result. */
  id: string;
  /** Where the numbers come from. */
  source: string;
  timestepS: number;
  /** Physics steps per control step. */
  decimation: number;
  /** Per canonical joint. */
  armatureKgM2: readonly number[];
  effortLimitNm: readonly number[];
  frictionLossNm: readonly number[];
  dampingNmsPerRad: readonly number[];
}

export interface MotorClass {
  name: string;
  rotorInertiaKgM2: readonly [number, number, number];
  gears: readonly [number, number, number];
  effortLimitNm: number;
}

/** Reflected inertia of a two-stage planetary gearbox (mjlab utils/actuator.py). */
export function reflectedInertiaTwoStage(
  rotor: readonly [number, number, number],
  gears: readonly [number, number, number],
): number {
  if (gears[0] !== 1) throw new RangeError('the first gear ratio of a two-stage planetary is 1');
  return rotor[0] * (gears[1] * gears[2]) ** 2 + rotor[1] * gears[2] ** 2 + rotor[2];
}

/** The four G1 motor types of mjlab's g1_constants.py ("Motor specs (from Unitree)"). */
export const G1_MOTORS = {
  m5020: {
    name: '5020',
    rotorInertiaKgM2: [0.139e-4, 0.017e-4, 0.169e-4],
    gears: [1, 1 + 46 / 18, 1 + 56 / 16],
    effortLimitNm: 25,
  },
  m7520_14: {
    name: '7520-14',
    rotorInertiaKgM2: [0.489e-4, 0.098e-4, 0.533e-4],
    gears: [1, 4.5, 1 + 48 / 22],
    effortLimitNm: 88,
  },
  m7520_22: {
    name: '7520-22',
    rotorInertiaKgM2: [0.489e-4, 0.109e-4, 0.738e-4],
    gears: [1, 4.5, 5],
    effortLimitNm: 139,
  },
  m4010: { name: '4010', rotorInertiaKgM2: [0.068e-4, 0, 0], gears: [1, 5, 5], effortLimitNm: 5 },
} as const satisfies Record<string, MotorClass>;

/** mjlab's actuator groups: which motor drives which joint, and how many in parallel (linkages). */
function g1MotorOf(joint: string): { motor: MotorClass; count: number } {
  if (/_(elbow|shoulder_pitch|shoulder_roll|shoulder_yaw|wrist_roll)_joint$/.test(joint))
    return { motor: G1_MOTORS.m5020, count: 1 };
  if (/_(hip_pitch|hip_yaw)_joint$/.test(joint) || joint === 'waist_yaw_joint')
    return { motor: G1_MOTORS.m7520_14, count: 1 };
  if (/_(hip_roll|knee)_joint$/.test(joint)) return { motor: G1_MOTORS.m7520_22, count: 1 };
  if (/_(wrist_pitch|wrist_yaw)_joint$/.test(joint)) return { motor: G1_MOTORS.m4010, count: 1 };
  if (joint === 'waist_pitch_joint' || joint === 'waist_roll_joint' || /_ankle_(pitch|roll)_joint$/.test(joint))
    return { motor: G1_MOTORS.m5020, count: 2 };
  throw new RangeError(`no G1 motor class for joint "${joint}"`);
}

/** mjlab's natural frequency for the PD rule: 10 Hz. */
export const MJLAB_NATURAL_FREQ_RAD_S = 10 * 2 * 3.1415926535;

/** Armature per canonical joint of mjlab's G1. */
export function mjlabG1Armature(joints: readonly string[] = G1_JOINT_NAMES): number[] {
  return joints.map((j) => {
    const { motor, count } = g1MotorOf(j);
    return count * reflectedInertiaTwoStage(motor.rotorInertiaKgM2, motor.gears);
  });
}

/** The mjlab G1 physics at a physics timestep and decimation (mjlab tracking tasks: 5 ms × 4). */
export function mjlabG1Physics(
  timestepS = 0.005,
  decimation = 4,
  joints: readonly string[] = G1_JOINT_NAMES,
): PhysicsProfile {
  return {
    id: `mjlab-g1/1@${timestepS * 1000}ms×${decimation}`,
    source:
      'mujocolab/mjlab src/mjlab/asset_zoo/robots/unitree_g1/g1_constants.py (armature, effort limits; no joint friction or damping)',
    timestepS,
    decimation,
    armatureKgM2: mjlabG1Armature(joints),
    effortLimitNm: joints.map((j) => {
      const { motor, count } = g1MotorOf(j);
      return count * motor.effortLimitNm;
    }),
    frictionLossNm: joints.map(() => 0),
    dampingNmsPerRad: joints.map(() => 0),
  };
}

export function physicsProblems(p: PhysicsProfile, joints: number): string[] {
  const out: string[] = [];
  if (!(p.timestepS > 0 && p.timestepS <= 0.05)) out.push(`timestep ${p.timestepS} s is not in (0, 0.05]`);
  if (!(Number.isInteger(p.decimation) && p.decimation >= 1))
    out.push(`decimation ${p.decimation} is not an integer ≥ 1`);
  for (const [k, v] of [
    ['armature', p.armatureKgM2],
    ['effort limit', p.effortLimitNm],
    ['friction loss', p.frictionLossNm],
    ['damping', p.dampingNmsPerRad],
  ] as const) {
    if (v.length !== joints) out.push(`${k}: ${v.length} values for ${joints} joints`);
    else if (v.some((x) => !(Number.isFinite(x) && x >= 0))) out.push(`${k}: every value must be a finite number ≥ 0`);
  }
  return out;
}

/** unitree_rl_lab's G1 armature constants (g1.py ARMATURE_*), kg·m². */
export const UNITREE_RL_LAB_G1_ARMATURE = {
  m5020: 0.003609725,
  m7520_14: 0.01017752,
  m7520_22: 0.025101925,
  m4010: 0.00425,
} as const;

/** unitree_rl_lab's actuator groups (g1.py G1_CYLINDER_CFG.actuators): armature, effort limit, velocity limit. */
function unitreeRlLabG1Joint(joint: string): { armature: number; effortNm: number; velocityRadS: number } {
  const A = UNITREE_RL_LAB_G1_ARMATURE;
  if (/_(hip_pitch|hip_yaw)_joint$/.test(joint)) return { armature: A.m7520_14, effortNm: 88, velocityRadS: 32 };
  if (/_(hip_roll|knee)_joint$/.test(joint)) return { armature: A.m7520_22, effortNm: 139, velocityRadS: 20 };
  if (/_ankle_(pitch|roll)_joint$/.test(joint) || joint === 'waist_roll_joint' || joint === 'waist_pitch_joint')
    return { armature: 2 * A.m5020, effortNm: 50, velocityRadS: 37 };
  if (joint === 'waist_yaw_joint') return { armature: A.m7520_14, effortNm: 88, velocityRadS: 32 };
  if (/_(shoulder_pitch|shoulder_roll|shoulder_yaw|elbow|wrist_roll)_joint$/.test(joint))
    return { armature: A.m5020, effortNm: 25, velocityRadS: 37 };
  if (/_(wrist_pitch|wrist_yaw)_joint$/.test(joint)) return { armature: A.m4010, effortNm: 5, velocityRadS: 22 };
  throw new RangeError(`no unitree_rl_lab G1 actuator group for joint "${joint}"`);
}

/** Isaac Lab's joint speed caps for the G1 (velocity_limit_sim), rad/s per canonical joint; not applied in MuJoCo. */
export const UNITREE_RL_LAB_G1_VELOCITY_LIMIT_RAD_S: readonly number[] = G1_JOINT_NAMES.map(
  (j) => unitreeRlLabG1Joint(j).velocityRadS,
);

/** The unitree_rl_lab (Isaac Lab) G1 physics at a physics timestep and decimation (mimic tasks: 5 ms × 4). */
export function unitreeRlLabG1Physics(
  timestepS = 0.005,
  decimation = 4,
  joints: readonly string[] = G1_JOINT_NAMES,
): PhysicsProfile {
  return {
    id: `unitree-rl-lab-g1/1@${timestepS * 1000}ms×${decimation}`,
    source:
      'unitreerobotics/unitree_rl_lab tasks/mimic/robots/g1_29dof/dance_102/g1.py (Isaac Lab G1: armature, effort_limit_sim; no joint friction or damping; velocity_limit_sim not applied)',
    timestepS,
    decimation,
    armatureKgM2: joints.map((j) => unitreeRlLabG1Joint(j).armature),
    effortLimitNm: joints.map((j) => unitreeRlLabG1Joint(j).effortNm),
    frictionLossNm: joints.map(() => 0),
    dampingNmsPerRad: joints.map(() => 0),
  };
}
