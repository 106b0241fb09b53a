// Records read back from a campaign's index are checked before use: a damaged or hand-edited row
// is refused with the field or column named (the caller adds the database, the table, the row and
// the column), never met later as a TypeError deep in a report.
//
// A metrics row: its result (the full EpisodeMetrics, `result_json`) must have the shape every
// reader relies on, and its scalar columns must be what that result says, so that a score matrix
// read from the columns and a gap read from the result are the same numbers.
// A calibration (`record_json`): an object whose times, joint angles and quaternions are what the
// trial runner and the start-state sensitivity build a simulator state from; a quaternion must be
// of unit length (within QUAT_NORM_TOLERANCE), so a zero one never becomes a silent identity.

import { NUMERIC_READINGS, type EpisodeMetrics } from '../metrics/readings';
import { metricScalars, type MetricScalars } from './records';

/** How far from 1 a stored quaternion's norm may be (float32 IMU quaternions are within 1e-6). */
export const QUAT_NORM_TOLERANCE = 1e-3;

/** Column of each MetricScalars field in the `metrics` table. */
export const SCALAR_COLUMNS: Readonly<Record<keyof MetricScalars, string>> = Object.freeze({
  K: 'k',
  failed: 'failed',
  failureFrame: 'failure_frame',
  failureCondition: 'failure_condition',
  failureBody: 'failure_body',
  progressSoft: 'progress_soft',
  mpjpeLMm: 'mpjpe_l_mm',
  jointPosRmse: 'joint_pos_rmse',
  jointVelRmse: 'joint_vel_rmse',
  jointAccRms: 'joint_acc_rms',
  jointAccP95: 'joint_acc_p95',
  jointJerkRms: 'joint_jerk_rms',
  jointJerkP95: 'joint_jerk_p95',
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "<key>: <problem>" for a value that is not a Reading whose available value passes `valueOk`. */
function readingProblem(key: string, r: unknown, valueOk: (v: unknown) => string | null): string | null {
  if (!isObject(r)) return `${key} is not a reading object`;
  if (r.available === true) {
    if (!('value' in r)) return `${key} is available without a value`;
    const p = valueOk(r.value);
    return p ? `${key}.value ${p}` : null;
  }
  if (r.available === false) return typeof r.reason === 'string' ? null : `${key} is unavailable without a reason`;
  return `${key}.available is not true or false`;
}

const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? null : 'is not a finite number');
const frameOf = (v: unknown) =>
  isObject(v) && Number.isSafeInteger(v.frame) && (v.frame as number) >= 0 ? null : 'has no frame index';

/**
 * Why a parsed `result_json` is not the EpisodeMetrics of `contract` (one phrase naming the field),
 * or null when it is.
 */
export function episodeMetricsProblem(v: unknown, contract: string): string | null {
  if (!isObject(v)) return `is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`}, not an object`;
  if (v.contract !== contract) return `contract is ${JSON.stringify(v.contract)}, the row's is ${contract}`;
  if (!Number.isSafeInteger(v.K) || (v.K as number) < 0) return 'K is not a frame count';
  const failure = readingProblem('failure', v.failure, (f) =>
    f === null
      ? null
      : (frameOf(f) ?? (typeof (f as Record<string, unknown>).condition !== 'string' ? 'has no condition' : null)),
  );
  if (failure) return failure;
  const stop = readingProblem('progressStop', v.progressStop, (s) => (s === null ? null : frameOf(s)));
  if (stop) return stop;
  for (const key of NUMERIC_READINGS) {
    const p = readingProblem(key, v[key], finite);
    if (p) return p;
  }
  return null;
}

/** The first scalar column that differs from what the result says, or null when they agree. */
export function scalarDisagreement(
  columns: MetricScalars,
  result: EpisodeMetrics,
): { column: string; stored: unknown; fromResult: unknown } | null {
  const want = metricScalars(result);
  for (const key of Object.keys(SCALAR_COLUMNS) as (keyof MetricScalars)[]) {
    const a = columns[key];
    const b = want[key];
    if (a === b || (typeof a === 'number' && typeof b === 'number' && Object.is(a, b))) continue;
    return { column: SCALAR_COLUMNS[key], stored: a, fromResult: b };
  }
  return null;
}

function numbers(v: unknown, n: number | null, what: string): string | null {
  if (!Array.isArray(v)) return `${what} is not an array of numbers`;
  if (n !== null && v.length !== n) return `${what} has ${v.length} values, expected ${n}`;
  const i = v.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  return i >= 0 ? `${what}[${i}] is not a finite number` : null;
}

function unitQuat(v: unknown, what: string): string | null {
  const p = numbers(v, 4, what);
  if (p) return p;
  const q = v as number[];
  const norm = Math.hypot(q[0], q[1], q[2], q[3]);
  return Math.abs(norm - 1) <= QUAT_NORM_TOLERANCE
    ? null
    : `${what} has norm ${norm.toPrecision(6)}, not a unit quaternion (±${QUAT_NORM_TOLERANCE})`;
}

/** Why a parsed calibration `record_json` is not a usable CalibrationRecord (one phrase naming the field), or null. */
export function calibrationRecordProblem(v: unknown, jointCount = 29): string | null {
  if (!isObject(v)) return `is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`}, not an object`;
  if (typeof v.robotUnit !== 'string' || v.robotUnit.trim() === '') return 'robotUnit is not a name';
  if (typeof v.capturedAt !== 'string' || Number.isNaN(Date.parse(v.capturedAt)))
    return 'capturedAt is not an ISO 8601 time';
  if (v.clipId !== null && v.clipId !== undefined && typeof v.clipId !== 'string') return 'clipId is not a clip id';
  const m = v.measured;
  if (!isObject(m)) return 'measured is not an object';
  const measured =
    numbers(m.jointPosRad, jointCount, 'measured.jointPosRad') ??
    unitQuat(m.imuQuatWxyz, 'measured.imuQuatWxyz') ??
    (m.rootPosM == null ? null : numbers(m.rootPosM, 3, 'measured.rootPosM')) ??
    (m.rootQuatWxyz == null ? null : unitQuat(m.rootQuatWxyz, 'measured.rootQuatWxyz'));
  if (measured) return measured;
  if (!isObject(v.stillness)) return 'stillness is not an object';
  for (const [k, x] of Object.entries(v.stillness))
    if (x !== null && (typeof x !== 'number' || !Number.isFinite(x))) return `stillness.${k} is not a finite number`;
  const s = v.simulatorInitialState;
  if (s !== null && s !== undefined) {
    if (!isObject(s)) return 'simulatorInitialState is not an object';
    const p =
      numbers(s.rootPosM, 3, 'simulatorInitialState.rootPosM') ??
      unitQuat(s.rootQuatWxyz, 'simulatorInitialState.rootQuatWxyz') ??
      numbers(s.jointPosRad, jointCount, 'simulatorInitialState.jointPosRad') ??
      (s.jointVelRadS === undefined
        ? null
        : numbers(s.jointVelRadS, jointCount, 'simulatorInitialState.jointVelRadS')) ??
      (typeof s.placeOnFloor !== 'boolean' ? 'simulatorInitialState.placeOnFloor is not true or false' : null);
    if (p) return p;
  }
  if (!isObject(v.residuals)) return 'residuals is not an object';
  return null;
}
