import { z } from 'zod';
import { parseJsonText } from '../motion/motionbenchJson';
import { inputErrorFromIssues } from '../problems';

// The robot emulator's declared dynamics differences from the embedded simulator
// (`motionbench-robot-emulator/1`, docs/ROBOT_EMULATOR.md §4). Profiles are named: the default
// `g1-plausible` (sensor figures a Unitree G1 plausibly has, each with its source or the stated
// reason for the choice in docs/ROBOT_EMULATOR.md §4), `exaggerated` (the earlier defaults: 1e-3 rad
// encoder noise and more, for tests that need a gap that cannot be missed) and `zero` (the
// simulator's physics exactly). A profile file names its base profile (default g1-plausible) and
// overrides fields of it; a missing field keeps the base's value.
//
// Units are in the names: ms, N·m, rad, rad/s, m/s². Unknown keys are refused (a typo must not
// fall back to a default silently).

export const ROBOT_EMULATOR_PROFILE_FORMAT = 'motionbench-robot-emulator/1';

export interface RobotEmulatorProfile {
  format: typeof ROBOT_EMULATOR_PROFILE_FORMAT;
  /** The profile's name as the emulator reports it: a named profile's, or `<base> + <file>`. */
  name: string;
  /** Joint commands reach the actuators this much later (rounded to whole physics steps), ms. */
  actuatorLatencyMs: number;
  /** Factor on the servo stiffness the binding asks for (or the model's when it asks none). */
  kpScale: number;
  /** Factor on the servo damping. */
  kdScale: number;
  /** Every joint's dry friction (dof_frictionloss) becomes model · frictionScale + frictionExtraNm, N·m. */
  frictionScale: number;
  frictionExtraNm: number;
  /**
   * Joint encoders: Gaussian noise σ on the angle (qRad) and velocity (dqRadS), then the angle is
   * quantised to whole multiples of qStepRad (0 = not quantised): what an encoder of that
   * resolution reports.
   */
  encoderNoise: { qRad: number; dqRadS: number; qStepRad: number };
  /** IMU: Gaussian noise σ per sample on the gyro and accelerometer axes; attitude as a small random rotation (σ per axis). */
  imuNoise: { gyroRadS: number; accelMS2: number; attitudeRad: number };
  /** Publish /g1/root_state (source "mocap"): the lab has motion capture. */
  mocap: boolean;
  /** Seed of every random draw (noise). */
  seed: number;
  /** Damping mode (`damp`, e-stop): kp 0 and this kd on every joint, N·m·s/rad. */
  dampKdNmsPerRad: number;
  /**
   * Every measured joint and IMU value is rounded to float32 after the noise, as a G1 publishes
   * them (unitree_hg/msg MotorState q, dq, tau_est and IMUState quaternion, gyroscope,
   * accelerometer are float32). Off only where the emulator must equal the simulator (`zero`).
   */
  lowstateFloat32: boolean;
}

/**
 * The angle step of the G1 joint encoders as modelled: a 14-bit rotor encoder seen through the
 * smallest gearbox ratio of the G1's joint motors, 4.5 · (1 + 48/22) ≈ 14.3 (the 7520-14 motor;
 * mjlab's G1 actuator constants, GEARS_7520_14). No published source gives the
 * encoder resolution or says which of the G1's dual encoders lowstate q comes from: 14 bits is
 * our choice (docs/ROBOT_EMULATOR.md §4 says why).
 */
export const G1_ENCODER_STEP_RAD = (2 * Math.PI) / (2 ** 14 * 4.5 * (1 + 48 / 22));

/**
 * Per-sample σ of white noise of density `density` read at `sampleRateHz` over its Nyquist band:
 * σ = density · sqrt(sampleRateHz / 2).
 */
const sigmaOfDensity = (density: number, sampleRateHz: number): number => density * Math.sqrt(sampleRateHz / 2);

/** The lowstate rate at which the IMU is read: Unitree's G1 low-level examples run lowcmd/lowstate at control_dt_ = 2 ms. */
const LOWSTATE_RATE_HZ = 500;
const DEG = Math.PI / 180;
const STANDARD_GRAVITY_MS2 = 9.80665;

/** The default: figures a G1 plausibly has (docs/ROBOT_EMULATOR.md §4, each with its source or reason). */
export const G1_PLAUSIBLE_PROFILE: RobotEmulatorProfile = {
  format: ROBOT_EMULATOR_PROFILE_FORMAT,
  name: 'g1-plausible',
  // Two cycles of the 500 Hz lowstate/lowcmd loop: the state the binding reads is one cycle old
  // and its command is applied one cycle later.
  actuatorLatencyMs: 4,
  // The edges of the ±10 % PD-gain randomisation holosoma trains its G1 policies under
  // (g1_29dof_randomization: kp_range and kd_range [0.9, 1.1]): a softer, more damped servo than
  // the model's, so the tracking gap has a known sign.
  kpScale: 0.9,
  kdScale: 1.1,
  // The model's own joint friction (0.05–0.3 N·m; Menagerie's G1 has 0.3 N·m on every joint): no
  // published G1 figure says the robot has more.
  frictionScale: 1,
  frictionExtraNm: 0,
  encoderNoise: {
    qRad: 0,
    // The σ of a backward difference of two quantised angles 2 ms apart: step / sqrt(6) · 500 Hz.
    dqRadS: (G1_ENCODER_STEP_RAD / Math.sqrt(6)) * LOWSTATE_RATE_HZ,
    qStepRad: G1_ENCODER_STEP_RAD,
  },
  imuNoise: {
    // A consumer MEMS IMU (BMI160 class): gyro 0.008 °/s/√Hz, accelerometer 150 µg/√Hz.
    gyroRadS: sigmaOfDensity(0.008 * DEG, LOWSTATE_RATE_HZ),
    accelMS2: sigmaOfDensity(150e-6 * STANDARD_GRAVITY_MS2, LOWSTATE_RATE_HZ),
    attitudeRad: 1e-3,
  },
  mocap: false,
  seed: 0,
  dampKdNmsPerRad: 3,
  lowstateFloat32: true,
};

/** The earlier defaults, kept by name: a gap no test can miss (encoder noise 1e-3 rad, 10 ms latency, kp × 0.8). */
export const EXAGGERATED_PROFILE: RobotEmulatorProfile = {
  format: ROBOT_EMULATOR_PROFILE_FORMAT,
  name: 'exaggerated',
  actuatorLatencyMs: 10,
  kpScale: 0.8,
  kdScale: 1,
  frictionScale: 1,
  frictionExtraNm: 0.5,
  encoderNoise: { qRad: 1e-3, dqRadS: 0.005, qStepRad: 0 },
  imuNoise: { gyroRadS: 0.005, accelMS2: 0, attitudeRad: 0.002 },
  mocap: false,
  seed: 0,
  dampKdNmsPerRad: 3,
  lowstateFloat32: true,
};

/** Every perturbation off: the emulator's physics equal the embedded simulator's. */
export const ZERO_PERTURBATION_PROFILE: RobotEmulatorProfile = {
  ...G1_PLAUSIBLE_PROFILE,
  name: 'zero',
  actuatorLatencyMs: 0,
  kpScale: 1,
  kdScale: 1,
  frictionScale: 1,
  frictionExtraNm: 0,
  encoderNoise: { qRad: 0, dqRadS: 0, qStepRad: 0 },
  imuNoise: { gyroRadS: 0, accelMS2: 0, attitudeRad: 0 },
  lowstateFloat32: false,
};

export const DEFAULT_ROBOT_EMULATOR_PROFILE: RobotEmulatorProfile = G1_PLAUSIBLE_PROFILE;

/** The named profiles, by name (`--profile <name>`, a file's `base`). */
export const NAMED_ROBOT_EMULATOR_PROFILES: Readonly<Record<string, RobotEmulatorProfile>> = {
  [G1_PLAUSIBLE_PROFILE.name]: G1_PLAUSIBLE_PROFILE,
  [EXAGGERATED_PROFILE.name]: EXAGGERATED_PROFILE,
  [ZERO_PERTURBATION_PROFILE.name]: ZERO_PERTURBATION_PROFILE,
};

const PROFILE_NAMES = Object.keys(NAMED_ROBOT_EMULATOR_PROFILES);

/** The named profile `name`, or null when there is none of that name. */
export function namedRobotEmulatorProfile(name: string): RobotEmulatorProfile | null {
  return Object.hasOwn(NAMED_ROBOT_EMULATOR_PROFILES, name) ? NAMED_ROBOT_EMULATOR_PROFILES[name] : null;
}

/** Why `name` is not a profile: the names there are. */
export const unknownProfileMessage = (name: string): string =>
  `unknown robot emulator profile ${JSON.stringify(name)}; the named profiles are ${PROFILE_NAMES.join(', ')} (or give a ${ROBOT_EMULATOR_PROFILE_FORMAT} JSON file)`;

const nonNeg = (what: string, max: number) =>
  z
    .number({
      error: (i) => (i.input === undefined ? undefined : `${what} must be a number, got ${JSON.stringify(i.input)}`),
    })
    .refine((v) => Number.isFinite(v) && v >= 0 && v <= max, {
      message: `${what} must be in [0, ${max}]`,
    });
const scale = (what: string) =>
  z
    .number({
      error: (i) => (i.input === undefined ? undefined : `${what} must be a number, got ${JSON.stringify(i.input)}`),
    })
    .refine((v) => Number.isFinite(v) && v > 0 && v <= 10, {
      message: `${what} must be in (0, 10]`,
    });

const ProfileSchema = z.strictObject({
  format: z.literal(ROBOT_EMULATOR_PROFILE_FORMAT, { error: `format must be "${ROBOT_EMULATOR_PROFILE_FORMAT}"` }),
  base: z
    .string({ error: `base must be the name of a profile: ${PROFILE_NAMES.join(', ')}` })
    .refine((v) => namedRobotEmulatorProfile(v) !== null, {
      message: `base must be the name of a profile: ${PROFILE_NAMES.join(', ')}`,
    })
    .optional(),
  actuatorLatencyMs: nonNeg('actuatorLatencyMs (ms)', 1000).optional(),
  kpScale: scale('kpScale').optional(),
  kdScale: scale('kdScale').optional(),
  frictionScale: nonNeg('frictionScale', 100).optional(),
  frictionExtraNm: nonNeg('frictionExtraNm (N·m)', 100).optional(),
  encoderNoise: z
    .strictObject({
      qRad: nonNeg('encoderNoise.qRad (rad)', 1).optional(),
      dqRadS: nonNeg('encoderNoise.dqRadS (rad/s)', 100).optional(),
      qStepRad: nonNeg('encoderNoise.qStepRad (rad)', 1).optional(),
    })
    .optional(),
  imuNoise: z
    .strictObject({
      gyroRadS: nonNeg('imuNoise.gyroRadS (rad/s)', 100).optional(),
      accelMS2: nonNeg('imuNoise.accelMS2 (m/s²)', 100).optional(),
      attitudeRad: nonNeg('imuNoise.attitudeRad (rad)', 1).optional(),
    })
    .optional(),
  mocap: z.boolean({ error: 'mocap must be true or false' }).optional(),
  seed: z
    .number()
    .int({ error: 'seed must be an integer ≥ 0' })
    .min(0, { error: 'seed must be an integer ≥ 0' })
    .max(Number.MAX_SAFE_INTEGER)
    .optional(),
  dampKdNmsPerRad: nonNeg('dampKdNmsPerRad (N·m·s/rad)', 1000).optional(),
  lowstateFloat32: z.boolean({ error: 'lowstateFloat32 must be true or false' }).optional(),
});

/**
 * A profile from a parsed JSON document: its base profile (`base`, default g1-plausible) with the
 * fields it gives. Throws InputError naming `file` and the field.
 */
export function profileFromJson(doc: unknown, file: string): RobotEmulatorProfile {
  const r = ProfileSchema.safeParse(doc);
  if (!r.success) throw inputErrorFromIssues(file, r.error.issues);
  const v = r.data;
  const d = namedRobotEmulatorProfile(v.base ?? DEFAULT_ROBOT_EMULATOR_PROFILE.name)!;
  return {
    format: ROBOT_EMULATOR_PROFILE_FORMAT,
    name: `${d.name} + ${file}`,
    actuatorLatencyMs: v.actuatorLatencyMs ?? d.actuatorLatencyMs,
    kpScale: v.kpScale ?? d.kpScale,
    kdScale: v.kdScale ?? d.kdScale,
    frictionScale: v.frictionScale ?? d.frictionScale,
    frictionExtraNm: v.frictionExtraNm ?? d.frictionExtraNm,
    encoderNoise: {
      qRad: v.encoderNoise?.qRad ?? d.encoderNoise.qRad,
      dqRadS: v.encoderNoise?.dqRadS ?? d.encoderNoise.dqRadS,
      qStepRad: v.encoderNoise?.qStepRad ?? d.encoderNoise.qStepRad,
    },
    imuNoise: {
      gyroRadS: v.imuNoise?.gyroRadS ?? d.imuNoise.gyroRadS,
      accelMS2: v.imuNoise?.accelMS2 ?? d.imuNoise.accelMS2,
      attitudeRad: v.imuNoise?.attitudeRad ?? d.imuNoise.attitudeRad,
    },
    mocap: v.mocap ?? d.mocap,
    seed: v.seed ?? d.seed,
    dampKdNmsPerRad: v.dampKdNmsPerRad ?? d.dampKdNmsPerRad,
    lowstateFloat32: v.lowstateFloat32 ?? d.lowstateFloat32,
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
