// Calibration capture (DESIGN §3 CalibrationRecord): stillness detection,
// averaging, refusal reasons, the simulator start composition and the residual covariates.
import { describe, expect, it } from 'vitest';
import { createStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';
import {
  ATTITUDE_AVERAGING,
  StillnessDetector,
  captureCalibration,
  captureFromDetector,
  composeHeadingAndTilt,
  measuredVsClipStart,
  quatFromYawPitchRoll,
  quatToYawPitchRoll,
  settledVsMeasured,
  simInitialStateFromCalibration,
  withClip,
  withSettledState,
  wrapAngle,
} from '../../src/domain/calibration';
import { quatHeading, quatMul } from '../../src/domain/math/quat';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { calibrationIdOf, type CalibrationRecord } from '../../src/domain/trace/records';
import type { QuatWxyz } from '../../src/domain/units';

const J = 29;
const HZ = 500;
const base = (j: number) => 0.1 * Math.sin(j + 1);
const ATT: QuatWxyz = quatFromYawPitchRoll(1.0, -0.03, 0.05);
const EPS = 0.002; // IMU noise: rotation ±EPS about body x
const A = 0.003; // joint noise amplitude, rad (alternating sign: known mean)

interface StreamOpts {
  seconds?: number;
  startS?: number;
  /** Per-frame hook to disturb the frame. */
  mutate?: (f: StateFrame, k: number, t: number) => void;
  mocap?: boolean;
  skip?: (k: number) => boolean;
}

/** A still stream at 500 Hz: joints base ± A (sign (−1)^k), dq ±0.01, gyro ±0.005, IMU ATT·Rx(±EPS) with alternate sign flips. */
function stream(o: StreamOpts = {}): StateFrame[] {
  const n = Math.round((o.seconds ?? 1.2) * HZ);
  const out: StateFrame[] = [];
  for (let k = 0; k < n; k++) {
    if (o.skip?.(k)) continue;
    const f = createStateFrame(o.mocap ?? false);
    const t = (o.startS ?? 0) + k / HZ;
    const sgn = k % 2 === 0 ? 1 : -1;
    f.timeS = t;
    f.tick = k;
    for (let j = 0; j < J; j++) {
      f.jointPosRad[j] = base(j) + sgn * A;
      f.jointVelRadS[j] = sgn * 0.01;
    }
    f.imu.gyroRadS.set([0.005 * sgn, -0.005 * sgn, 0.002]);
    const q = quatMul(ATT, [Math.cos((sgn * EPS) / 2), Math.sin((sgn * EPS) / 2), 0, 0]);
    f.imu.quatWxyz.set(k % 4 < 2 ? q : q.map((v) => -v));
    if (o.mocap) {
      f.rootPosM!.set([1 + 0.001 * sgn, 2, 0.79]);
      f.rootQuatWxyz!.set(ATT);
    } else f.rootQuatWxyz = null;
    o.mutate?.(f, k, t);
    out.push(f);
  }
  return out;
}

const rotDiff = (a: readonly number[], b: readonly number[]): number =>
  Math.min(Math.max(...a.map((v, i) => Math.abs(v - b[i]))), Math.max(...a.map((v, i) => Math.abs(v + b[i]))));

function clipOf(heading: number, roll = 0.01, pitch = 0.02): MotionClip {
  const N = 3;
  const rootPosM = new Float64Array(3 * N);
  const rootQuatWxyz = new Float64Array(4 * N);
  const jointPosRad = new Float64Array(J * N);
  for (let k = 0; k < N; k++) {
    rootPosM.set([0.5 + k, -0.2, 0.78], 3 * k);
    rootQuatWxyz.set(quatFromYawPitchRoll(heading + 0.1 * k, pitch, roll), 4 * k);
    for (let j = 0; j < J; j++) jointPosRad[J * k + j] = 0.01 * j + k;
  }
  return {
    id: 'clip-cal',
    name: 'cal',
    fps: 30,
    frameCount: N,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    provenance: { file: 'x.csv', format: 'lafan1-csv', fileSha256: '0', fpsSource: 'user' },
    warnings: [],
  };
}

const profile = {
  modelName: 'g1',
  joints: G1_JOINT_NAMES.map((name, index) => ({ name, index })),
} as unknown as RobotProfile;

function captured(o: StreamOpts = {}): CalibrationRecord {
  const r = captureCalibration(stream(o), { robotUnit: 'g1-unit-7', atMs: Date.UTC(2025, 0, 2, 3, 4, 5) });
  if (!r.ok) throw new Error(r.message);
  return r.record;
}

describe('stillness and capture', () => {
  it('a still stream is captured with the exact window averages', () => {
    const r = captureCalibration(stream(), { robotUnit: 'g1-unit-7', atMs: Date.UTC(2025, 0, 2, 3, 4, 5) });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // 600 frames t = k/500; the window is the last 1.0 s: frames 99..599 (501 frames: 250 even (+A), 251 odd (−A)).
    expect(r.measurement.stats.frames).toBe(501);
    expect(r.measurement.windowStartS).toBeCloseTo(99 / HZ, 12);
    expect(r.measurement.windowEndS).toBeCloseTo(599 / HZ, 12);
    for (let j = 0; j < J; j++) expect(r.record.measured.jointPosRad[j]).toBeCloseTo(base(j) - A / 501, 14);
    // population std of ±A around mean −A/501: sqrt(A² − (A/501)²)
    for (const s of r.measurement.jointStdRad) expect(s).toBeCloseTo(Math.sqrt(A * A - (A / 501) ** 2), 14);
    // IMU: sign-aligned mean of ATT·Rx(±EPS) (250 +, 251 −), flips undone
    const c = Math.cos(EPS / 2);
    const s = Math.sin(EPS / 2);
    const expected = quatMul(ATT, [c, ((250 - 251) / 501) * s, 0, 0]);
    const norm = Math.hypot(...expected);
    expect(
      rotDiff(
        r.record.measured.imuQuatWxyz,
        expected.map((v) => v / norm),
      ),
    ).toBeLessThan(1e-13);
    expect(r.measurement.imuRollRad).toBeCloseTo(0.05 - EPS / 501, 9);
    expect(r.measurement.imuPitchRad).toBeCloseTo(-0.03, 9);
    // statistics and bookkeeping
    expect(r.record.stillness.frames).toBe(501);
    expect(r.record.stillness.maxAbsJointVelRadS).toBeCloseTo(0.01, 15);
    expect(r.record.stillness.maxGyroRadS).toBeCloseTo(Math.hypot(0.005, 0.005, 0.002), 15);
    expect(r.record.stillness.maxJointRangeRad).toBeCloseTo(2 * A, 15);
    expect(r.record.stillness.tickGaps).toBe(0);
    expect(r.record.stillness.rateHz).toBeCloseTo(500, 6);
    expect(r.record.stillness['jointStdRad.left_knee_joint']).toBeCloseTo(r.measurement.jointStdRad[3], 15);
    expect(r.record.measured.rootPosM).toBeNull();
    expect(r.record.robotUnit).toBe('g1-unit-7');
    expect(r.record.capturedAt).toBe('2025-01-02T03:04:05.000Z');
    expect(r.record.extra?.attitudeAveraging).toBe(ATTITUDE_AVERAGING);
    expect(calibrationIdOf(r.record)).toMatch(/^cal-[0-9a-f]{24}$/);
  });

  it('a moving stream is rejected naming the joint', () => {
    const frames = stream({
      mutate: (f, _k, t) => ((f.jointPosRad[3] = base(3) + 0.2 * t), (f.jointVelRadS[3] = 0.2)),
    });
    const r = captureCalibration(frames, { robotUnit: 'u', atMs: 0 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const v = r.reasons.find((x) => x.code === 'joint_velocity')!;
    expect(v.joint).toBe('left_knee_joint');
    expect(v.value).toBeCloseTo(0.2, 12);
    expect(v.limit).toBe(0.05);
    expect(r.reasons.find((x) => x.code === 'joint_drift')?.joint).toBe('left_knee_joint');
    expect(r.message).toMatch(
      /not still.*left_knee_joint is moving: RMS velocity 0\.2000 rad\/s over the window > 0\.05 rad\/s/,
    );
    expect(r.reasons.some((x) => x.code === 'gyro')).toBe(false);
  });

  it('encoder velocity noise is not motion: the check judges each joint’s RMS velocity over the window', () => {
    // Sample velocities of a standing robot: every third frame reads ±0.07 rad/s (above the
    // 0.05 limit), the rest 0 — RMS 0.07/√3 ≈ 0.040 rad/s. The largest sample would refuse it.
    const noisy = stream({ mutate: (f, k) => f.jointVelRadS.fill(k % 3 === 0 ? (k % 2 === 0 ? 0.07 : -0.07) : 0) });
    const ok = captureCalibration(noisy, { robotUnit: 'u', atMs: 0 });
    expect(ok.ok).toBe(true);
    if (!ok.ok) return;
    expect(ok.record.stillness.maxAbsJointVelRadS).toBeCloseTo(0.07, 12);
    expect(ok.record.stillness.maxJointVelRmsRadS).toBeCloseTo(0.07 / Math.sqrt(3), 2);
    // A joint really turning at 0.06 rad/s (RMS 0.06) is refused by the same limit.
    const turning = captureCalibration(stream({ mutate: (f) => (f.jointVelRadS[7] = 0.06) }), {
      robotUnit: 'u',
      atMs: 0,
    });
    expect(turning.ok).toBe(false);
    if (turning.ok) return;
    const v = turning.reasons.find((x) => x.code === 'joint_velocity')!;
    expect(v.joint).toBe(G1_JOINT_NAMES[7]);
    expect(v.value).toBeCloseTo(0.06, 12);
  });

  it('a slow drift under the velocity limit is still rejected by the position range', () => {
    const r = captureCalibration(stream({ mutate: (f, _k, t) => (f.jointPosRad[20] = base(20) + 0.02 * t) }), {
      robotUnit: 'u',
      atMs: 0,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reasons.map((x) => x.code)).toEqual(['joint_drift']);
    expect(r.reasons[0].joint).toBe('left_wrist_pitch_joint');
    expect(r.reasons[0].value).toBeCloseTo(0.02, 9);
  });

  it('a gyro disturbance inside the window is rejected; one before the window is not', () => {
    const bump = (from: number) => (f: StateFrame, _k: number, t: number) => {
      if (t >= from && t < from + 0.02) f.imu.gyroRadS.set([0, 0.1, 0]);
    };
    const inside = captureCalibration(stream({ mutate: bump(0.8) }), { robotUnit: 'u', atMs: 0 });
    expect(inside.ok).toBe(false);
    if (inside.ok) return;
    expect(inside.reasons.map((x) => x.code)).toEqual(['gyro']);
    expect(inside.reasons[0].value).toBeCloseTo(0.1, 12);
    expect(inside.reasons[0].atS).toBeGreaterThanOrEqual(0.8);
    expect(captureCalibration(stream({ mutate: bump(0.05) }), { robotUnit: 'u', atMs: 0 }).ok).toBe(true);
  });

  it('refuses short windows, frame gaps and non-finite frames', () => {
    const short = captureCalibration(stream({ seconds: 0.5 }), { robotUnit: 'u', atMs: 0 });
    expect(!short.ok && short.reasons.map((x) => x.code)).toEqual(['window_not_filled']);
    const gap = captureCalibration(stream({ skip: (k) => k >= 300 && k < 350 }), { robotUnit: 'u', atMs: 0 });
    expect(!gap.ok && gap.reasons.map((x) => x.code)).toEqual(['frame_gap']);
    expect(!gap.ok && gap.stats.missingTicks).toBe(50);
    const nan = captureCalibration(stream({ mutate: (f, k) => k === 400 && (f.jointPosRad[7] = NaN) }), {
      robotUnit: 'u',
      atMs: 0,
    });
    expect(!nan.ok && nan.reasons[0]).toMatchObject({ code: 'non_finite', joint: 'right_hip_roll_joint' });
    expect(captureCalibration([], { robotUnit: 'u', atMs: 0 }).ok).toBe(false);
    expect(() => captureCalibration(stream(), { robotUnit: '', atMs: 0 })).toThrow(/robot unit/);
  });

  it('a live detector: earlier motion leaves the window, the ring wraps, a small ring says so', () => {
    const det = new StillnessDetector();
    const moving = stream({ seconds: 2, mutate: (f, _k, t) => (f.jointVelRadS[0] = 0.5 * Math.cos(t)) });
    for (const f of moving) det.push(f);
    expect(det.evaluate().still).toBe(false);
    for (const f of stream({ seconds: 3, startS: 2 })) det.push(f);
    const st = det.evaluate();
    expect(st.still).toBe(true);
    expect(det.frameCount).toBe(det.capacity);
    const r = captureFromDetector(det, { robotUnit: 'u', atMs: 0 });
    expect(r.ok && r.measurement.stats.frames).toBe(501);
    // time going backwards (new episode clock) clears the buffer
    det.push(stream({ seconds: 0.002 })[0]);
    expect(det.frameCount).toBe(1);
    const small = new StillnessDetector({}, { capacity: 100 });
    for (const f of stream()) small.push(f);
    expect(small.evaluate().reasons.map((x) => x.code)).toEqual(['buffer_too_small']);
    expect(() => new StillnessDetector({ windowS: 0 })).toThrow(/windowS/);
  });

  it('keeps the root pose when every window frame has one (mocap); a window with it in part is not captured', () => {
    const rec = captured({ mocap: true });
    expect(rec.measured.rootPosM![0]).toBeCloseTo(1 - 0.001 / 501, 14);
    expect(rec.measured.rootPosM![1]).toBe(2);
    expect(rec.measured.rootPosM![2]).toBeCloseTo(0.79, 12);
    expect(rotDiff(rec.measured.rootQuatWxyz!, ATT)).toBeLessThan(1e-14);
    // Motion capture missing from one frame of the window (its stream started late, or dropped):
    // not a calibration without a root (the robot reports one), but a window to wait past.
    const partial = captureCalibration(stream({ mocap: true, mutate: (f, k) => k === 500 && (f.rootPosM = null) }), {
      robotUnit: 'u',
      atMs: 0,
    });
    expect(partial.ok).toBe(false);
    expect(!partial.ok && partial.reasons.map((x) => x.code)).toEqual(['root_partial']);
    expect(!partial.ok && partial.message).toMatch(/motion capture covers only 500 of the window's 501 frames/);
    // outside the window (frame 50 of 600; the window is 99..599) it does not matter
    const before = captured({ mocap: true, mutate: (f, k) => k === 50 && (f.rootPosM = null) });
    expect(before.measured.rootPosM).not.toBeNull();
    // and no motion capture at all is a calibration without a root
    expect(captured({ mocap: false }).measured.rootPosM).toBeNull();
  });
});

describe('attitude composition and the simulator start', () => {
  it('decomposes ZYX and round-trips', () => {
    const e = quatToYawPitchRoll(quatFromYawPitchRoll(1.0, -0.03, 0.05));
    expect(e.yawRad).toBeCloseTo(1.0, 14);
    expect(e.pitchRad).toBeCloseTo(-0.03, 14);
    expect(e.rollRad).toBeCloseTo(0.05, 14);
    expect(wrapAngle(3 * Math.PI)).toBeCloseTo(Math.PI, 12);
    expect(wrapAngle(-3.5 * Math.PI)).toBeCloseTo(0.5 * Math.PI, 12);
  });

  it('measured yaw 1.0 / roll 0.05 / pitch −0.03 with clip heading −0.4 → roll 0.05, pitch −0.03, heading −0.4', () => {
    const q = composeHeadingAndTilt(-0.4, quatFromYawPitchRoll(1.0, -0.03, 0.05));
    const e = quatToYawPitchRoll(q);
    expect(e.rollRad).toBeCloseTo(0.05, 14);
    expect(e.pitchRad).toBeCloseTo(-0.03, 14);
    expect(e.yawRad).toBeCloseTo(-0.4, 14);
    expect(rotDiff(q, quatFromYawPitchRoll(-0.4, -0.03, 0.05))).toBeLessThan(1e-14);

    const rec: CalibrationRecord = {
      ...captured(),
      measured: {
        jointPosRad: Array.from({ length: J }, (_, j) => base(j)),
        imuQuatWxyz: [...quatFromYawPitchRoll(1.0, -0.03, 0.05)],
        rootPosM: null,
        rootQuatWxyz: null,
      },
    };
    const clip = clipOf(-0.4);
    const s = simInitialStateFromCalibration(rec, clip, profile);
    const se = quatToYawPitchRoll(s.rootQuatWxyz);
    expect(se.rollRad).toBeCloseTo(0.05, 14);
    expect(se.pitchRad).toBeCloseTo(-0.03, 14);
    expect(se.yawRad).toBeCloseTo(-0.4, 14);
    expect(quatHeading(s.rootQuatWxyz)).toBeCloseTo(-0.4, 14);
    expect(s.rootPosM).toEqual([0.5, -0.2, 0.78]);
    expect(s.jointPosRad).toEqual(rec.measured.jointPosRad);
    expect(s.jointVelRadS).toEqual(new Array(J).fill(0));
    expect(s.placeOnFloor).toBe(true);
  });

  it('with mocap the measured root pose is used', () => {
    const rec = captured({ mocap: true });
    const s = simInitialStateFromCalibration(rec, clipOf(-0.4), profile);
    expect(s.rootPosM[0]).toBeCloseTo(1, 5);
    expect(s.rootPosM[1]).toBe(2);
    expect(quatHeading(s.rootQuatWxyz)).toBeCloseTo(1.0, 12);
    expect(s.placeOnFloor).toBe(true);
  });

  it('refuses a profile whose joints are not the canonical G1 order', () => {
    const bad = { modelName: 'x', joints: [...profile.joints].reverse() } as unknown as RobotProfile;
    expect(() => simInitialStateFromCalibration(captured(), clipOf(0), bad)).toThrow(
      /joint 0 is "right_wrist_yaw_joint"/,
    );
  });
});

describe('residual covariates', () => {
  const measuredJoints = Array.from({ length: J }, (_, j) => 0.01 * j + (j === 5 ? -0.04 : 0.002));
  const rec = (): CalibrationRecord => ({
    ...captured(),
    measured: {
      jointPosRad: measuredJoints,
      imuQuatWxyz: [...quatFromYawPitchRoll(1.0, -0.03, 0.05)],
      rootPosM: null,
      rootQuatWxyz: null,
    },
  });

  it('(b) measurement vs the clip start, by hand', () => {
    // clip frame 0: joints 0.01·j, roll 0.01, pitch 0.02, heading −0.4
    const r = measuredVsClipStart(rec(), clipOf(-0.4));
    for (let j = 0; j < J; j++) expect(r.jointRad[j]).toBeCloseTo(j === 5 ? -0.04 : 0.002, 14);
    expect(r.maxAbsJoint).toBe('left_ankle_roll_joint');
    expect(r.maxAbsJointRad).toBeCloseTo(0.04, 14);
    expect(r.rmsJointRad).toBeCloseTo(Math.sqrt((0.04 ** 2 + 28 * 0.002 ** 2) / 29), 14);
    expect(r.rollRad).toBeCloseTo(0.05 - 0.01, 14);
    expect(r.pitchRad).toBeCloseTo(-0.03 - 0.02, 14);
    expect(r.headingRad).toBeNull();
    expect(r.rootPosM).toBeNull();
  });

  it('(a) settled simulator state vs the measurement, by hand', () => {
    const f = createStateFrame(false);
    f.rootQuatWxyz = null;
    for (let j = 0; j < J; j++) f.jointPosRad[j] = measuredJoints[j] + (j === 12 ? 0.03 : -0.001);
    f.imu.quatWxyz.set(quatFromYawPitchRoll(-0.4, -0.01, 0.06));
    const r = settledVsMeasured(f, rec());
    expect(r.jointRad[12]).toBeCloseTo(0.03, 14);
    expect(r.jointRad[0]).toBeCloseTo(-0.001, 14);
    expect(r.maxAbsJoint).toBe('waist_yaw_joint');
    expect(r.rollRad).toBeCloseTo(0.01, 14);
    expect(r.pitchRad).toBeCloseTo(0.02, 14);
    expect(r.headingRad).toBeNull();
  });

  it('binds a record to a clip and a settled state', () => {
    const bound = withClip(rec(), clipOf(-0.4), profile);
    expect(bound.clipId).toBe('clip-cal');
    expect(bound.simulatorInitialState?.placeOnFloor).toBe(true);
    expect(quatHeading(bound.simulatorInitialState!.rootQuatWxyz as unknown as QuatWxyz)).toBeCloseTo(-0.4, 14);
    expect(bound.residuals.measuredVsClipStart!.rollRad).toBeCloseTo(0.04, 14);
    expect(bound.residuals.measuredVsClipStart!['joint.left_ankle_roll_joint']).toBeCloseTo(-0.04, 14);
    const f = createStateFrame(false);
    f.jointPosRad.set(measuredJoints);
    f.imu.quatWxyz.set(quatFromYawPitchRoll(-0.4, -0.03, 0.05));
    const settled = withSettledState(bound, f);
    expect(settled.residuals.settledVsMeasured!.maxAbsJointRad).toBe(0);
    expect(settled.residuals.settledVsMeasured!.rollRad).toBeCloseTo(0, 14);
    expect(calibrationIdOf(settled)).not.toBe(calibrationIdOf(bound));
  });
});
