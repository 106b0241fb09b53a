// The robot emulator's pure parts: the `motionbench-robot-emulator/1` profile (named profiles,
// defaults, located errors), the actuator delay line, seeded sensor noise, the sensor model
// (quantisation, noise statistics) and the --fault schedule syntax.
import { describe, expect, it } from 'vitest';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import {
  ActuatorDelayLine,
  applySensorModel,
  decodeEmulatorControl,
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  EXAGGERATED_PROFILE,
  G1_ENCODER_STEP_RAD,
  G1_PLAUSIBLE_PROFILE,
  GaussianNoise,
  latencySteps,
  NAMED_ROBOT_EMULATOR_PROFILES,
  namedRobotEmulatorProfile,
  parseFaultSpec,
  parseRobotEmulatorProfile,
  quantize,
  ROBOT_EMULATOR_PROFILE_FORMAT,
  unknownProfileMessage,
  ZERO_PERTURBATION_PROFILE,
  type RobotEmulatorProfile,
} from '../../src/domain/robotEmulator';
import { InputError } from '../../src/domain/problems';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';

const FILE = 'lab/robot.json';
const parse = (doc: unknown): ReturnType<typeof parseRobotEmulatorProfile> =>
  parseRobotEmulatorProfile(typeof doc === 'string' ? doc : JSON.stringify(doc), FILE);
const errorOf = (doc: unknown): InputError => {
  try {
    parse(doc);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
};

describe('robot emulator profile', () => {
  it('names its profiles: g1-plausible is the default, exaggerated keeps the earlier defaults, zero is the simulator', () => {
    expect(Object.keys(NAMED_ROBOT_EMULATOR_PROFILES)).toEqual(['g1-plausible', 'exaggerated', 'zero']);
    expect(DEFAULT_ROBOT_EMULATOR_PROFILE).toBe(G1_PLAUSIBLE_PROFILE);
    for (const [name, p] of Object.entries(NAMED_ROBOT_EMULATOR_PROFILES)) {
      expect(p.name).toBe(name);
      expect(namedRobotEmulatorProfile(name)).toBe(p);
    }
    // The earlier defaults, field by field (the profile the 30× jerk finding was measured with).
    expect(EXAGGERATED_PROFILE).toMatchObject({
      actuatorLatencyMs: 10,
      kpScale: 0.8,
      frictionExtraNm: 0.5,
      encoderNoise: { qRad: 1e-3, dqRadS: 0.005, qStepRad: 0 },
      imuNoise: { gyroRadS: 0.005, accelMS2: 0, attitudeRad: 0.002 },
    });
    // The default's encoders are quantised, not noisy, and far finer than the exaggerated σ.
    expect(G1_PLAUSIBLE_PROFILE.encoderNoise.qRad).toBe(0);
    expect(G1_PLAUSIBLE_PROFILE.encoderNoise.qStepRad).toBeCloseTo(2.68e-5, 7);
    expect(G1_PLAUSIBLE_PROFILE.encoderNoise.qStepRad / Math.sqrt(12)).toBeLessThan(
      EXAGGERATED_PROFILE.encoderNoise.qRad / 100,
    );
    // Unknown names: none, and the message lists the names there are.
    expect(namedRobotEmulatorProfile('g1_plausible')).toBeNull();
    expect(namedRobotEmulatorProfile('toString')).toBeNull();
    expect(unknownProfileMessage('g1_plausible')).toMatch(/"g1_plausible".*g1-plausible, exaggerated, zero/);
  });

  it('a file names its base profile (default g1-plausible) and overrides its fields; an unknown base is refused with the names', () => {
    const onExaggerated = parse({ format: ROBOT_EMULATOR_PROFILE_FORMAT, base: 'exaggerated', kpScale: 0.7 });
    expect(onExaggerated).toEqual({ ...EXAGGERATED_PROFILE, name: `exaggerated + ${FILE}`, kpScale: 0.7 });
    const bad = errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, base: 'noisy' });
    expect(bad.location.key).toBe('base');
    expect(bad.message).toMatch(/base must be the name of a profile: g1-plausible, exaggerated, zero/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, base: 3 }).location.key).toBe('base');
  });

  it('fills every missing field with the base profile; given fields win', () => {
    expect(parse({ format: ROBOT_EMULATOR_PROFILE_FORMAT })).toEqual({
      ...DEFAULT_ROBOT_EMULATOR_PROFILE,
      name: `g1-plausible + ${FILE}`,
    });
    const p = parse({
      format: ROBOT_EMULATOR_PROFILE_FORMAT,
      actuatorLatencyMs: 4,
      encoderNoise: { qRad: 0 },
      mocap: true,
      seed: 7,
    });
    expect(p.actuatorLatencyMs).toBe(4);
    expect(p.encoderNoise).toEqual({
      qRad: 0,
      dqRadS: DEFAULT_ROBOT_EMULATOR_PROFILE.encoderNoise.dqRadS,
      qStepRad: DEFAULT_ROBOT_EMULATOR_PROFILE.encoderNoise.qStepRad,
    });
    expect(p.mocap).toBe(true);
    expect(p.seed).toBe(7);
    expect(p.kpScale).toBe(DEFAULT_ROBOT_EMULATOR_PROFILE.kpScale);
  });

  it('defaults perturb in the declared direction; the zero profile perturbs nothing', () => {
    const d = DEFAULT_ROBOT_EMULATOR_PROFILE;
    expect(d.actuatorLatencyMs).toBeGreaterThan(0);
    expect(d.kpScale).toBeLessThan(1);
    expect(d.kdScale).toBeGreaterThan(1);
    expect(d.encoderNoise.qStepRad).toBeGreaterThan(0);
    expect(d.imuNoise.gyroRadS).toBeGreaterThan(0);
    expect(d.mocap).toBe(false);
    const z = ZERO_PERTURBATION_PROFILE;
    expect([
      z.actuatorLatencyMs,
      z.frictionExtraNm,
      z.encoderNoise.qRad,
      z.encoderNoise.dqRadS,
      z.encoderNoise.qStepRad,
      z.imuNoise.gyroRadS,
      z.imuNoise.accelMS2,
      z.imuNoise.attitudeRad,
    ]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect([z.kpScale, z.kdScale, z.frictionScale]).toEqual([1, 1, 1]);
  });

  it('bad JSON is located by line and column', () => {
    const e = errorOf('{\n  "format": "motionbench-robot-emulator/1",\n  "kpScale": 0.8,,\n}');
    expect(e.location).toMatchObject({ file: FILE, line: 3 });
    expect(e.location.column).toBeGreaterThan(0);
    expect(e.message).toMatch(/^lab\/robot\.json:3:\d+: invalid JSON/);
  });

  it('wrong types, negative latency, unknown keys and a wrong format name the field', () => {
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, kpScale: '0.8' }).location.key).toBe('kpScale');
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, kpScale: '0.8' }).message).toMatch(
      /kpScale must be a number/,
    );
    const neg = errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, actuatorLatencyMs: -5 });
    expect(neg.location.key).toBe('actuatorLatencyMs');
    expect(neg.message).toMatch(/actuatorLatencyMs \(ms\) must be in \[0, 1000\]/);
    const unknown = errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, latencyMs: 10 });
    expect(unknown.message).toMatch(/latencyMs/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, imuNoise: { gyro: 1 } }).message).toMatch(/gyro/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, encoderNoise: { qRad: -1 } }).location.key).toBe(
      'encoderNoise.qRad',
    );
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, encoderNoise: { qStepRad: 'fine' } }).location.key).toBe(
      'encoderNoise.qStepRad',
    );
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, imuNoise: { accelMS2: -0.1 } }).location.key).toBe(
      'imuNoise.accelMS2',
    );
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, name: 'mine' }).message).toMatch(/name/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, mocap: 'yes' }).location.key).toBe('mocap');
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, seed: 1.5 }).location.key).toBe('seed');
    expect(errorOf({ format: 'motionbench-robot-emulator/2' }).location.key).toBe('format');
    expect(errorOf([1, 2]).location.key).toBe('(root)');
  });

  it('latency rounds to whole physics steps', () => {
    expect(latencySteps({ actuatorLatencyMs: 10 }, 0.002)).toBe(5);
    expect(latencySteps({ actuatorLatencyMs: 0 }, 0.002)).toBe(0);
    expect(latencySteps({ actuatorLatencyMs: 3 }, 0.002)).toBe(2);
  });
});

describe('actuator delay line', () => {
  const cmd = (v: number) => ({
    targetRad: new Float64Array([v, -v]),
    kp: new Float64Array([v * 10, v * 10]),
    kd: new Float64Array([v, v]),
  });

  it('delay 0 passes each command through', () => {
    const d = new ActuatorDelayLine(2, 0);
    d.prime(cmd(0));
    for (const v of [1, 2, 3]) expect(Array.from(d.push(cmd(v)).targetRad)).toEqual([v, -v]);
  });

  it('a command comes out exactly `delay` pushes later; the primed command until then', () => {
    const d = new ActuatorDelayLine(2, 3);
    d.prime(cmd(9));
    const out: number[] = [];
    for (let v = 1; v <= 8; v++) {
      const o = d.push(cmd(v));
      out.push(o.targetRad[0]);
      expect(o.kp[0]).toBe(o.targetRad[0] * 10);
    }
    expect(out).toEqual([9, 9, 9, 1, 2, 3, 4, 5]);
  });

  it('re-priming flushes what is in flight (a damp acts at once)', () => {
    const d = new ActuatorDelayLine(2, 2);
    d.prime(cmd(1));
    d.push(cmd(5));
    d.prime(cmd(0));
    expect(d.push(cmd(7)).targetRad[0]).toBe(0);
    expect(() => new ActuatorDelayLine(2, 1.5)).toThrow(/whole number/);
  });
});

describe('seeded sensor noise', () => {
  it('the same seed gives the same draws; another seed other draws', () => {
    const a = new GaussianNoise(42);
    const b = new GaussianNoise(42);
    const c = new GaussianNoise(43);
    const da = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(da);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(da);
  });

  it('draws are standard normal (mean ≈ 0, σ ≈ 1 over 20 000 draws)', () => {
    const g = new GaussianNoise(1);
    const n = 20_000;
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const x = g.next();
      s += x;
      s2 += x * x;
    }
    const mean = s / n;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(Math.sqrt(s2 / n - mean * mean) - 1)).toBeLessThan(0.03);
  });

  it('σ = 0 changes nothing and draws nothing; attitude noise keeps a unit quaternion near the original', () => {
    const g = new GaussianNoise(5);
    const ref = new GaussianNoise(5);
    const a = new Float64Array([0.1, 0.2]);
    g.perturb(a, 0);
    g.perturbAttitude(new Float64Array([1, 0, 0, 0]), 0);
    expect(Array.from(a)).toEqual([0.1, 0.2]);
    expect(g.next()).toBe(ref.next()); // the stream did not advance
    const q = new Float64Array([Math.SQRT1_2, Math.SQRT1_2, 0, 0]);
    g.perturbAttitude(q, 0.01);
    expect(Math.hypot(...q)).toBeCloseTo(1, 12);
    const dot = Math.abs(q[0] * Math.SQRT1_2 + q[1] * Math.SQRT1_2);
    expect(2 * Math.acos(Math.min(1, dot))).toBeLessThan(0.1);
    expect(2 * Math.acos(Math.min(1, dot))).toBeGreaterThan(0);
  });
});

describe('sensor model (encoder quantisation and noise, IMU noise)', () => {
  const RATE_HZ = 50; // the contract rate the metrics are computed at (mb-metrics/1)
  const SAMPLES_PER_FRAME = 10; // 500 Hz lowstate, point-sampled at 50 Hz (t_k falls on a sample)

  /** The joint angles a profile's encoders report for a true trajectory q(t) of every joint, at 500 Hz. */
  function measuredAngles(profile: RobotEmulatorProfile, qTrue: (tS: number, j: number) => number, n: number) {
    const noise = new GaussianNoise(profile.seed);
    const f = createStateFrame(false);
    const out: Float64Array[] = [];
    for (let k = 0; k < n; k++) {
      for (let j = 0; j < f.jointPosRad.length; j++) f.jointPosRad[j] = qTrue(k / 500, j);
      f.jointVelRadS.fill(0);
      f.imu.gyroRadS.fill(0);
      f.imu.accelMS2.set([0, 0, 9.81]);
      f.imu.quatWxyz.set([1, 0, 0, 0]);
      applySensorModel(f, profile, noise);
      out.push(f.jointPosRad.slice());
    }
    return out;
  }

  /** Jerk RMS (rad/s³) of joint `j` at 50 Hz from 500 Hz samples, as mb-metrics/1 computes it. */
  function jerkRms(samples: Float64Array[], j: number): number {
    const q = samples.filter((_, k) => k % SAMPLES_PER_FRAME === 0).map((s) => s[j]);
    let s2 = 0;
    for (let k = 1; k + 2 < q.length; k++) s2 += ((q[k + 2] - 3 * q[k + 1] + 3 * q[k] - q[k - 1]) * RATE_HZ ** 3) ** 2;
    return Math.sqrt(s2 / (q.length - 3));
  }

  const wave = (tS: number, j: number) => 0.3 * Math.sin(2 * Math.PI * 0.5 * tS + j);

  it('quantize rounds to whole multiples of the step; step 0 changes nothing', () => {
    const a = new Float64Array([0.1234567, -0.0000126, 0.0000141, 2.5]);
    quantize(a, G1_ENCODER_STEP_RAD);
    for (const v of a)
      expect(Math.abs(v / G1_ENCODER_STEP_RAD - Math.round(v / G1_ENCODER_STEP_RAD))).toBeLessThan(1e-6);
    expect(a[1]).toBeCloseTo(0, 15); // |−1.26e-5| < step/2 → 0
    expect(a[2]).toBeCloseTo(G1_ENCODER_STEP_RAD, 15); // 1.41e-5 > step/2 → one step
    const b = new Float64Array([0.1234567]);
    quantize(b, 0);
    expect(b[0]).toBe(0.1234567);
  });

  it('g1-plausible: every angle is a whole number of encoder steps within half a step of the truth', () => {
    const n = 5000;
    const got = measuredAngles(G1_PLAUSIBLE_PROFILE, wave, n);
    let maxErr = 0;
    let maxOffGrid = 0;
    let s2 = 0;
    let count = 0;
    for (let k = 0; k < n; k++)
      for (let j = 0; j < 29; j++) {
        const v = got[k][j];
        maxOffGrid = Math.max(maxOffGrid, Math.abs(v / G1_ENCODER_STEP_RAD - Math.round(v / G1_ENCODER_STEP_RAD)));
        const e = v - wave(k / 500, j);
        maxErr = Math.max(maxErr, Math.abs(e));
        s2 += e * e;
        count++;
      }
    // … then rounded to the float32 the lowstate carries: half a float32 ulp off the grid and off
    // the truth at most (|q| < 4 rad: half an ulp ≤ 2^-23 ≈ 1.2e-7 rad, 0.004 of a step).
    expect(maxOffGrid).toBeLessThan(1.2e-7 / G1_ENCODER_STEP_RAD);
    expect(maxOffGrid).toBeGreaterThan(0); // the negative control: the float32 rounding is there
    expect(maxErr).toBeLessThanOrEqual(G1_ENCODER_STEP_RAD / 2 + 1.2e-7);
    expect(got.flatMap((row) => Array.from(row)).filter((v) => Math.fround(v) !== v)).toEqual([]);
    // A moving joint sweeps many steps between samples: the rounding error is uniform, σ = step/√12.
    const rms = Math.sqrt(s2 / count);
    expect(rms / (G1_ENCODER_STEP_RAD / Math.sqrt(12))).toBeGreaterThan(0.95);
    expect(rms / (G1_ENCODER_STEP_RAD / Math.sqrt(12))).toBeLessThan(1.05);
  });

  it('noise statistics over a seeded run are the profile σ (encoder velocity, gyro, accelerometer, angle)', () => {
    const noise = new GaussianNoise(11);
    const f = createStateFrame(false);
    const n = 4000;
    const acc = { q: 0, dq: 0, gyro: 0, accel: 0 };
    for (let k = 0; k < n; k++) {
      f.jointPosRad.fill(0.5);
      f.jointVelRadS.fill(0);
      f.imu.gyroRadS.fill(0);
      f.imu.accelMS2.fill(0);
      applySensorModel(f, EXAGGERATED_PROFILE, noise);
      for (let j = 0; j < 29; j++) {
        acc.q += (f.jointPosRad[j] - 0.5) ** 2;
        acc.dq += f.jointVelRadS[j] ** 2;
      }
      for (let a = 0; a < 3; a++) {
        acc.gyro += f.imu.gyroRadS[a] ** 2;
        acc.accel += f.imu.accelMS2[a] ** 2;
      }
    }
    const within = (sumSq: number, count: number, sigma: number) => {
      const ratio = Math.sqrt(sumSq / count) / sigma;
      expect(ratio).toBeGreaterThan(0.97);
      expect(ratio).toBeLessThan(1.03);
    };
    within(acc.q, 29 * n, EXAGGERATED_PROFILE.encoderNoise.qRad);
    within(acc.dq, 29 * n, EXAGGERATED_PROFILE.encoderNoise.dqRadS);
    within(acc.gyro, 3 * n, EXAGGERATED_PROFILE.imuNoise.gyroRadS);
    expect(acc.accel).toBe(0); // the exaggerated profile has no accelerometer noise

    const g = new GaussianNoise(12);
    let accelSq = 0;
    for (let k = 0; k < n; k++) {
      f.imu.accelMS2.fill(0);
      applySensorModel(f, G1_PLAUSIBLE_PROFILE, g);
      for (let a = 0; a < 3; a++) accelSq += f.imu.accelMS2[a] ** 2;
    }
    within(accelSq, 3 * n, G1_PLAUSIBLE_PROFILE.imuNoise.accelMS2);
  });

  it('the zero profile measures the truth exactly (negative control)', () => {
    const got = measuredAngles(ZERO_PERTURBATION_PROFILE, wave, 200);
    for (let k = 0; k < 200; k++) for (let j = 0; j < 29; j++) expect(got[k][j]).toBe(wave(k / 500, j));
  });

  it('point-sampled at 50 Hz, the exaggerated encoder noise alone makes ~560 rad/s³ of jerk; g1-plausible’s quantisation < 6', () => {
    // Why the exaggerated profile is rough: σ·sqrt(20)·r³ = 1e-3 · 4.47 · 125 000 ≈ 559 rad/s³ of jerk from noise
    // alone, 30× the simulator's 18 rad/s³ on the same clip. The truth here is a slow sine whose own
    // jerk is (2π·0.5)³·0.3 ≈ 9.3 rad/s³ at most.
    const n = 5000;
    const truth = measuredAngles(ZERO_PERTURBATION_PROFILE, wave, n);
    const exaggerated = measuredAngles(EXAGGERATED_PROFILE, wave, n);
    const plausible = measuredAngles(G1_PLAUSIBLE_PROFILE, wave, n);
    const t = jerkRms(truth, 0);
    expect(t).toBeLessThan(7);
    expect(jerkRms(exaggerated, 0)).toBeGreaterThan(450);
    expect(jerkRms(exaggerated, 0)).toBeLessThan(680);
    // Quantisation adds step/√12 · sqrt(20) · r³ ≈ 4.3 rad/s³ (in quadrature with the truth's).
    const p = jerkRms(plausible, 0);
    expect(p).toBeLessThan(Math.hypot(t, 6));
    expect(p).toBeGreaterThan(t); // it does add something: the step is honoured, not skipped
  });
});

describe('control actions and the --fault schedule', () => {
  it('decodes the control messages and names what is wrong', () => {
    expect(decodeEmulatorControl({ action: 'drop', ms: 300 })).toEqual({
      ok: true,
      value: { action: 'drop', ms: 300 },
    });
    expect(decodeEmulatorControl({ action: 'human_reset' })).toMatchObject({ ok: true });
    expect(decodeEmulatorControl({ action: 'fly' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/action must be one of human_reset, place, drop/),
    });
    expect(decodeEmulatorControl({ action: 'nan', frames: -1 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^frames:/),
    });
    expect(decodeEmulatorControl({ action: 'drop' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^ms:/),
    });
  });

  it('place: every G1 joint by name and a unit w, x, y, z quaternion, or the field that is wrong', () => {
    const joints = Object.fromEntries(G1_JOINT_NAMES.map((n) => [n, 0.01]));
    const good = { action: 'place', joint_pos_rad: joints, root_quat_wxyz: [1, 0, 0, 0] };
    expect(decodeEmulatorControl(good)).toEqual({ ok: true, value: good });
    const { left_knee_joint: _dropped, ...missing } = joints;
    expect(decodeEmulatorControl({ ...good, joint_pos_rad: missing })).toEqual({
      ok: false,
      reason: 'joint_pos_rad.left_knee_joint: missing (every joint is named)',
    });
    expect(decodeEmulatorControl({ ...good, joint_pos_rad: { ...joints, left_knee: 0 } })).toEqual({
      ok: false,
      reason: 'joint_pos_rad.left_knee: not a G1 joint name',
    });
    expect(decodeEmulatorControl({ ...good, root_quat_wxyz: [0.9, 0, 0, 0] })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^root_quat_wxyz: not a unit quaternion \(norm 0\.9\); w, x, y, z order/),
    });
    expect(decodeEmulatorControl({ ...good, joint_pos_rad: { ...joints, left_knee_joint: null } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^joint_pos_rad\.left_knee_joint:/),
    });
    expect(() => parseFaultSpec('place@1s')).toThrow(/place takes a whole pose/);
  });

  it('parses <action>@<time>[:<amount>]', () => {
    expect(parseFaultSpec('drop@5s:300ms')).toEqual({ atMs: 5000, control: { action: 'drop', ms: 300 } });
    expect(parseFaultSpec('freeze@1.5s:1s')).toEqual({ atMs: 1500, control: { action: 'freeze', ms: 1000 } });
    expect(parseFaultSpec('nan@200ms:5')).toEqual({ atMs: 200, control: { action: 'nan', frames: 5 } });
    expect(parseFaultSpec('estop@10s')).toEqual({ atMs: 10_000, control: { action: 'estop' } });
    expect(() => parseFaultSpec('drop@5s')).toThrow(/needs a duration/);
    expect(() => parseFaultSpec('drop@5:300ms')).toThrow(/duration like 300ms/);
    expect(() => parseFaultSpec('estop@1s:3')).toThrow(/takes no amount/);
    expect(() => parseFaultSpec('boom@1s')).toThrow(/action must be one of/);
    expect(() => parseFaultSpec('drop')).toThrow(/<action>@<time>/);
  });
});
