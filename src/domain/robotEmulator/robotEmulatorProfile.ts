import { z } from 'zod';
import { parseJsonText } from '../motion/motionbenchJson';
import { inputErrorFromIssues } from '../problems';

// The robot emulator's declared dynamics differences from the embedded simulator
// (`motionbench-robot-emulator/1`, docs/ROBOT_EMULATOR.md). Every field is optional; a missing
// field takes the default below. The defaults make tracking measurably worse than in the
// simulator (a sim/real gap with a known sign) while the robot still stands; ZERO_PERTURBATION
// makes the emulator's physics the simulator's.
//
// Units are in the names: ms, N·m, rad, rad/s. Unknown keys are refused (a typo must not fall
// back to a default silently).

export const ROBOT_EMULATOR_PROFILE_FORMAT = 'motionbench-robot-emulator/1';

export interface RobotEmulatorProfile {
  format: typeof ROBOT_EMULATOR_PROFILE_FORMAT;
  /** Joint commands reach the actuators this much later (rounded to whole physics steps), ms. */
  actuatorLatencyMs: number;
  /** Factor on the servo stiffness the binding asks for (or the model's when it asks none). */
  kpScale: number;
  /** Factor on the servo damping. */
  kdScale: number;
  /** Every joint's dry friction (dof_frictionloss) becomes model · frictionScale + frictionExtraNm, N·m. */
  frictionScale: number;
  frictionExtraNm: number;
  /** Gaussian encoder noise (σ) on the published joint angles and velocities. */
  encoderNoise: { qRad: number; dqRadS: number };
  /** Gaussian IMU noise (σ): gyro per axis, attitude as a small random rotation per axis. */
  imuNoise: { gyroRadS: number; attitudeRad: number };
  /** Publish /g1/root_state (source "mocap"): the lab has motion capture. */
  mocap: boolean;
  /** Seed of every random draw (noise). */
  seed: number;
  /** Damping mode (`damp`, e-stop): kp 0 and this kd on every joint, N·m·s/rad. */
  dampKdNmsPerRad: number;
}

export const DEFAULT_ROBOT_EMULATOR_PROFILE: RobotEmulatorProfile = {
  format: ROBOT_EMULATOR_PROFILE_FORMAT,
  actuatorLatencyMs: 10,
  kpScale: 0.8,
  kdScale: 1,
  frictionScale: 1,
  frictionExtraNm: 0.5,
  encoderNoise: { qRad: 1e-3, dqRadS: 0.005 },
  imuNoise: { gyroRadS: 0.005, attitudeRad: 0.002 },
  mocap: false,
  seed: 0,
  dampKdNmsPerRad: 3,
};

/** Every perturbation off: the emulator's physics equal the embedded simulator's. */
export const ZERO_PERTURBATION_PROFILE: RobotEmulatorProfile = {
  ...DEFAULT_ROBOT_EMULATOR_PROFILE,
  actuatorLatencyMs: 0,
  kpScale: 1,
  kdScale: 1,
  frictionScale: 1,
  frictionExtraNm: 0,
  encoderNoise: { qRad: 0, dqRadS: 0 },
  imuNoise: { gyroRadS: 0, attitudeRad: 0 },
};

const nonNeg = (what: string, max: number) =>
  z.number({ error: (i) => (i.input === undefined ? undefined : `${what} must be a number, got ${JSON.stringify(i.input)}`) }).refine((v) => Number.isFinite(v) && v >= 0 && v <= max, {
    message: `${what} must be in [0, ${max}]`,
  });
const scale = (what: string) =>
  z.number({ error: (i) => (i.input === undefined ? undefined : `${what} must be a number, got ${JSON.stringify(i.input)}`) }).refine((v) => Number.isFinite(v) && v > 0 && v <= 10, {
    message: `${what} must be in (0, 10]`,
  });

const ProfileSchema = z.strictObject({
  format: z.literal(ROBOT_EMULATOR_PROFILE_FORMAT, { error: `format must be "${ROBOT_EMULATOR_PROFILE_FORMAT}"` }),
  actuatorLatencyMs: nonNeg('actuatorLatencyMs (ms)', 1000).optional(),
  kpScale: scale('kpScale').optional(),
  kdScale: scale('kdScale').optional(),
  frictionScale: nonNeg('frictionScale', 100).optional(),
  frictionExtraNm: nonNeg('frictionExtraNm (N·m)', 100).optional(),
  encoderNoise: z.strictObject({ qRad: nonNeg('encoderNoise.qRad (rad)', 1).optional(), dqRadS: nonNeg('encoderNoise.dqRadS (rad/s)', 100).optional() }).optional(),
  imuNoise: z.strictObject({ gyroRadS: nonNeg('imuNoise.gyroRadS (rad/s)', 100).optional(), attitudeRad: nonNeg('imuNoise.attitudeRad (rad)', 1).optional() }).optional(),
  mocap: z.boolean({ error: 'mocap must be true or false' }).optional(),
  seed: z.number().int({ error: 'seed must be an integer ≥ 0' }).min(0, { error: 'seed must be an integer ≥ 0' }).max(Number.MAX_SAFE_INTEGER).optional(),
  dampKdNmsPerRad: nonNeg('dampKdNmsPerRad (N·m·s/rad)', 1000).optional(),
});

/** A profile from a parsed JSON document; throws InputError naming `file` and the field. */
export function profileFromJson(doc: unknown, file: string): RobotEmulatorProfile {
  const r = ProfileSchema.safeParse(doc);
  if (!r.success) throw inputErrorFromIssues(file, r.error.issues);
  const v = r.data;
  const d = DEFAULT_ROBOT_EMULATOR_PROFILE;
  return {
    format: ROBOT_EMULATOR_PROFILE_FORMAT,
    actuatorLatencyMs: v.actuatorLatencyMs ?? d.actuatorLatencyMs,
    kpScale: v.kpScale ?? d.kpScale,
    kdScale: v.kdScale ?? d.kdScale,
    frictionScale: v.frictionScale ?? d.frictionScale,
    frictionExtraNm: v.frictionExtraNm ?? d.frictionExtraNm,
    encoderNoise: { qRad: v.encoderNoise?.qRad ?? d.encoderNoise.qRad, dqRadS: v.encoderNoise?.dqRadS ?? d.encoderNoise.dqRadS },
    imuNoise: { gyroRadS: v.imuNoise?.gyroRadS ?? d.imuNoise.gyroRadS, attitudeRad: v.imuNoise?.attitudeRad ?? d.imuNoise.attitudeRad },
    mocap: v.mocap ?? d.mocap,
    seed: v.seed ?? d.seed,
    dampKdNmsPerRad: v.dampKdNmsPerRad ?? d.dampKdNmsPerRad,
  };
}

/** A profile from the text of a JSON file; InputError with line/column on a syntax error, the field otherwise. */
export function parseRobotEmulatorProfile(text: string, file: string): RobotEmulatorProfile {
  return profileFromJson(parseJsonText(text, file), file);
}

/** The actuator latency in whole physics steps (the delay line's length). */
export function latencySteps(profile: Pick<RobotEmulatorProfile, 'actuatorLatencyMs'>, timestepS: number): number {
  return Math.round(profile.actuatorLatencyMs / 1000 / timestepS);
}
