// Calibration capture (DESIGN §3 CalibrationRecord): from a window of state
// frames in which the robot was still, the measured start state — joint angles averaged over the
// window, the IMU attitude (sign-aligned normalised mean of the window's quaternions, see
// attitude.ts), the root pose where every frame of the window has one (motion capture) — and the
// window's stillness statistics. A capture taken while moving is refused with the reasons.

import type { StateFrame } from '../robot/stateFrame';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import type { CalibrationRecord } from '../trace/records';
import type { QuatWxyz } from '../units';
import { QuatMeanAccumulator, quatToYawPitchRoll } from './attitude';
import { StillnessDetector, type NotStillReason, type StillnessStats, type StillnessThresholds } from './stillness';

/** How the IMU attitude of the window is averaged; recorded with the calibration. */
export const ATTITUDE_AVERAGING = 'sign-aligned-normalised-mean';

export interface CaptureOptions {
  /** Robot unit (serial or inventory name) the frames came from. */
  robotUnit: string;
  /** Wall-clock time the still window ended, ms since the Unix epoch (becomes capturedAt). */
  atMs: number;
  thresholds?: Partial<StillnessThresholds>;
}

/** The measurement with its full, typed statistics (the record keeps a flattened copy). */
export interface CalibrationMeasurement {
  /** Joint angles averaged over the window, rad, canonical order. */
  jointPosRad: number[];
  /** Population standard deviation of each joint over the window, rad. */
  jointStdRad: number[];
  /** Average IMU attitude, wxyz, w ≥ 0. */
  imuQuatWxyz: QuatWxyz;
  /** Roll and pitch of the IMU attitude (ZYX), rad; the yaw is meaningless without mocap. */
  imuRollRad: number;
  imuPitchRad: number;
  /** Root pose averaged over the window when every frame had one (motion capture), else null. */
  rootPosM: [number, number, number] | null;
  rootQuatWxyz: QuatWxyz | null;
  /** Window start and end on the backend clock, s. */
  windowStartS: number;
  windowEndS: number;
  stats: StillnessStats;
}

export type CaptureResult =
  | { ok: true; record: CalibrationRecord; measurement: CalibrationMeasurement }
  | { ok: false; message: string; reasons: NotStillReason[]; stats: StillnessStats };

/** Captures from a batch of frames (oldest first): the still window is the last `windowS` of them. */
export function captureCalibration(frames: readonly StateFrame[], options: CaptureOptions): CaptureResult {
  const detector = new StillnessDetector(options.thresholds, { capacity: frames.length + 2 });
  for (const f of frames) detector.push(f);
  return captureFromDetector(detector, options);
}

/** Captures from a live detector's current window (the console feeds the detector at the stream rate). */
export function captureFromDetector(
  detector: StillnessDetector,
  options: Omit<CaptureOptions, 'thresholds'>,
): CaptureResult {
  if (typeof options.robotUnit !== 'string' || options.robotUnit.length === 0)
    throw new RangeError('calibration capture needs a robot unit');
  if (!Number.isFinite(options.atMs))
    throw new RangeError(`calibration capture needs a finite atMs, got ${options.atMs}`);
  const status = detector.evaluate();
  if (!status.still) {
    return {
      ok: false,
      message: `calibration refused: the robot is not still — ${status.reasons.map((r) => r.message).join('; ')}`,
      reasons: status.reasons,
      stats: status.stats,
    };
  }
  const J = detector.jointCount;
  const sum = new Float64Array(J);
  const rootSum = new Float64Array(3);
  const imuMean = new QuatMeanAccumulator();
  const rootQuatMean = new QuatMeanAccumulator();
  let n = 0;
  let withRoot = 0;
  let t0 = Infinity;
  let t1 = -Infinity;
  detector.forEachInWindow((v) => {
    n++;
    if (v.timeS < t0) t0 = v.timeS;
    if (v.timeS > t1) t1 = v.timeS;
    for (let j = 0; j < J; j++) sum[j] += v.q[v.qOffset + j];
    const o = v.imuOffset;
    imuMean.add(v.imu[o], v.imu[o + 1], v.imu[o + 2], v.imu[o + 3]);
    if (v.hasRoot) {
      withRoot++;
      for (let k = 0; k < 3; k++) rootSum[k] += v.rootPos[v.rootPosOffset + k];
      const r = v.rootQuatOffset;
      rootQuatMean.add(v.rootQuat[r], v.rootQuat[r + 1], v.rootQuat[r + 2], v.rootQuat[r + 3]);
    }
  });
  const mean = Array.from(sum, (s) => s / n);
  const sq = new Float64Array(J);
  detector.forEachInWindow((v) => {
    for (let j = 0; j < J; j++) {
      const d = v.q[v.qOffset + j] - mean[j];
      sq[j] += d * d;
    }
  });
  const std = Array.from(sq, (s) => Math.sqrt(s / n));
  const imu = imuMean.mean() as QuatWxyz;
  const { rollRad, pitchRad } = quatToYawPitchRoll(imu);
  const mocap = withRoot === n && n > 0;
  const rootPosM: [number, number, number] | null = mocap ? [rootSum[0] / n, rootSum[1] / n, rootSum[2] / n] : null;
  const rootQuatWxyz = mocap ? rootQuatMean.mean() : null;
  const measurement: CalibrationMeasurement = {
    jointPosRad: mean,
    jointStdRad: std,
    imuQuatWxyz: imu,
    imuRollRad: rollRad,
    imuPitchRad: pitchRad,
    rootPosM,
    rootQuatWxyz,
    windowStartS: t0,
    windowEndS: t1,
    stats: status.stats,
  };
  const thr = detector.thresholds;
  const stillness: Record<string, number> = {
    windowS: thr.windowS,
    spanS: status.stats.spanS,
    frames: status.stats.frames,
    rateHz: status.stats.rateHz,
    tickGaps: status.stats.tickGaps,
    missingTicks: status.stats.missingTicks,
    maxIntervalS: status.stats.maxIntervalS,
    maxAbsJointVelRadS: status.stats.maxAbsJointVelRadS,
    maxJointVelRmsRadS: status.stats.maxJointVelRmsRadS,
    maxGyroRadS: status.stats.maxGyroRadS,
    maxJointRangeRad: status.stats.maxJointRangeRad,
    maxJointStdRad: Math.max(...std),
    framesWithRoot: withRoot,
    'limit.maxJointVelRadS': thr.maxJointVelRadS,
    'limit.maxGyroRadS': thr.maxGyroRadS,
    'limit.maxJointRangeRad': thr.maxJointRangeRad,
    'limit.maxGapS': thr.maxGapS,
  };
  std.forEach((s, j) => (stillness[`jointStdRad.${J === G1_NUM_JOINTS ? G1_JOINT_NAMES[j] : `joint_${j}`}`] = s));
  const record: CalibrationRecord = {
    robotUnit: options.robotUnit,
    capturedAt: new Date(options.atMs).toISOString(),
    clipId: null,
    measured: {
      jointPosRad: mean,
      imuQuatWxyz: [...imu],
      rootPosM: rootPosM ? [...rootPosM] : null,
      rootQuatWxyz: rootQuatWxyz ? [...rootQuatWxyz] : null,
    },
    stillness,
    simulatorInitialState: null,
    residuals: { settledVsMeasured: null, measuredVsClipStart: null },
    extra: {
      attitudeAveraging: ATTITUDE_AVERAGING,
      windowStartS: t0,
      windowEndS: t1,
      imuRollRad: rollRad,
      imuPitchRad: pitchRad,
    },
  };
  return { ok: true, record, measurement };
}
