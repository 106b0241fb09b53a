// The robot emulator's pure parts: the `motionbench-robot-emulator/1` profile (defaults, located
// errors), the actuator delay line, seeded sensor noise and the --fault schedule syntax.
import { describe, expect, it } from 'vitest';
import {
  ActuatorDelayLine,
  decodeEmulatorControl,
  DEFAULT_ROBOT_EMULATOR_PROFILE,
  GaussianNoise,
  latencySteps,
  parseFaultSpec,
  parseRobotEmulatorProfile,
  ROBOT_EMULATOR_PROFILE_FORMAT,
  ZERO_PERTURBATION_PROFILE,
} from '../../src/domain/robotEmulator';
import { InputError } from '../../src/domain/problems';

const FILE = 'lab/robot.json';
const parse = (doc: unknown): ReturnType<typeof parseRobotEmulatorProfile> => parseRobotEmulatorProfile(typeof doc === 'string' ? doc : JSON.stringify(doc), FILE);
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
  it('fills every missing field with the documented default; given fields win', () => {
    expect(parse({ format: ROBOT_EMULATOR_PROFILE_FORMAT })).toEqual(DEFAULT_ROBOT_EMULATOR_PROFILE);
    const p = parse({ format: ROBOT_EMULATOR_PROFILE_FORMAT, actuatorLatencyMs: 4, encoderNoise: { qRad: 0 }, mocap: true, seed: 7 });
    expect(p.actuatorLatencyMs).toBe(4);
    expect(p.encoderNoise).toEqual({ qRad: 0, dqRadS: DEFAULT_ROBOT_EMULATOR_PROFILE.encoderNoise.dqRadS });
    expect(p.mocap).toBe(true);
    expect(p.seed).toBe(7);
    expect(p.kpScale).toBe(DEFAULT_ROBOT_EMULATOR_PROFILE.kpScale);
  });

  it('defaults perturb in the declared direction; the zero profile perturbs nothing', () => {
    const d = DEFAULT_ROBOT_EMULATOR_PROFILE;
    expect(d.actuatorLatencyMs).toBeGreaterThan(0);
    expect(d.kpScale).toBeLessThan(1);
    expect(d.frictionExtraNm).toBeGreaterThan(0);
    expect(d.encoderNoise.qRad).toBeGreaterThan(0);
    expect(d.mocap).toBe(false);
    const z = ZERO_PERTURBATION_PROFILE;
    expect([z.actuatorLatencyMs, z.frictionExtraNm, z.encoderNoise.qRad, z.encoderNoise.dqRadS, z.imuNoise.gyroRadS, z.imuNoise.attitudeRad]).toEqual([0, 0, 0, 0, 0, 0]);
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
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, kpScale: '0.8' }).message).toMatch(/kpScale must be a number/);
    const neg = errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, actuatorLatencyMs: -5 });
    expect(neg.location.key).toBe('actuatorLatencyMs');
    expect(neg.message).toMatch(/actuatorLatencyMs \(ms\) must be in \[0, 1000\]/);
    const unknown = errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, latencyMs: 10 });
    expect(unknown.message).toMatch(/latencyMs/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, imuNoise: { gyro: 1 } }).message).toMatch(/gyro/);
    expect(errorOf({ format: ROBOT_EMULATOR_PROFILE_FORMAT, encoderNoise: { qRad: -1 } }).location.key).toBe('encoderNoise.qRad');
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
  const cmd = (v: number) => ({ targetRad: new Float64Array([v, -v]), kp: new Float64Array([v * 10, v * 10]), kd: new Float64Array([v, v]) });

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

describe('control actions and the --fault schedule', () => {
  it('decodes the control messages and names what is wrong', () => {
    expect(decodeEmulatorControl({ action: 'drop', ms: 300 })).toEqual({ ok: true, value: { action: 'drop', ms: 300 } });
    expect(decodeEmulatorControl({ action: 'human_reset' })).toMatchObject({ ok: true });
    expect(decodeEmulatorControl({ action: 'fly' })).toMatchObject({ ok: false, reason: expect.stringMatching(/action must be one of human_reset, drop/) });
    expect(decodeEmulatorControl({ action: 'nan', frames: -1 })).toMatchObject({ ok: false, reason: expect.stringMatching(/^frames:/) });
    expect(decodeEmulatorControl({ action: 'drop' })).toMatchObject({ ok: false, reason: expect.stringMatching(/^ms:/) });
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
