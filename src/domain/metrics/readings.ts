// Result types of the metric reducers. A reading is either available with a value or
// unavailable with a reason — never 0 or NaN standing in for "unknown" (DESIGN §4).

/** A value, or the reason it cannot be computed from the data at hand. */
export type Reading<T = number> =
  { readonly available: true; readonly value: T } | { readonly available: false; readonly reason: string };

export const availableReading = <T>(value: T): Reading<T> => ({ available: true, value });
export const unavailableReading = (reason: string): { readonly available: false; readonly reason: string } => ({
  available: false,
  reason,
});

/**
 * What the executed source (E) provides beyond joint angles. A simulator provides everything; a
 * real robot without motion capture has neither its global root position nor its global heading
 * (DESIGN §3: its IMU gives roll and pitch against gravity, but yaw only relative to an
 * arbitrary, drifting start). The reference (a clip) always has both.
 */
export interface SourceCapabilities {
  /** World x, y, z of the root body (motion capture, simulator). */
  hasGlobalRootPosition: boolean;
  /** World heading (yaw) of the root body; roll and pitch are assumed known from the IMU. */
  hasGlobalRootHeading: boolean;
}

export const FULL_STATE: SourceCapabilities = Object.freeze({
  hasGlobalRootPosition: true,
  hasGlobalRootHeading: true,
});
/** A real robot without motion capture. */
export const NO_MOTION_CAPTURE: SourceCapabilities = Object.freeze({
  hasGlobalRootPosition: false,
  hasGlobalRootHeading: false,
});

/**
 * Completes a partial declaration. An omitted `hasGlobalRootHeading` follows
 * `hasGlobalRootPosition` (motion capture gives both, or neither is known); everything omitted
 * means a full-state source.
 */
export function resolveCapabilities(c: Partial<SourceCapabilities> = {}): SourceCapabilities {
  const pos = c.hasGlobalRootPosition ?? true;
  return { hasGlobalRootPosition: pos, hasGlobalRootHeading: c.hasGlobalRootHeading ?? pos };
}

export type FailureCondition = 'root_height' | 'root_orientation' | 'end_effector_height';

export interface HardFailure {
  /** First failing frame on the common timeline, 0..K−2. */
  frame: number;
  /** frame / r, seconds. */
  timeS: number;
  condition: FailureCondition;
  /** The root body's name for root conditions, the end-effector's name otherwise. */
  body: string;
  /** The error that crossed the threshold: |Δz| in metres or the rotation angle in radians. */
  error: number;
  threshold: number;
}

export type ProgressStopCause = 'hard_failure' | 'drift_xy' | 'drift_heading';

export interface ProgressStop {
  /** k*, the first frame with a hard failure or global drift (< K − 1). */
  frame: number;
  cause: ProgressStopCause;
}

/** Everything the contract defines for one episode (E against R on the common timeline). */
export interface EpisodeMetrics {
  /** Contract id the numbers were computed under. */
  contract: string;
  /** Frames on the common timeline. */
  K: number;
  /** The first hard failure (null: none), or unavailable. */
  failure: Reading<HardFailure | null>;
  /** k* ÷ (K − 1); 1 without failure or drift. */
  progressSoft: Reading<number>;
  /** Where and why progress stopped (null: it did not). */
  progressStop: Reading<ProgressStop | null>;
  /** MPJPE-l, millimetres. */
  mpjpeLMm: Reading<number>;
  /** rad */
  jointPosRmseRad: Reading<number>;
  /** rad/s */
  jointVelRmseRadS: Reading<number>;
  /** rad/s² */
  jointAccRmsRadS2: Reading<number>;
  /** rad/s² */
  jointAccP95RadS2: Reading<number>;
  /** rad/s³ */
  jointJerkRmsRadS3: Reading<number>;
  /** rad/s³ */
  jointJerkP95RadS3: Reading<number>;
}

/** An episode too short to read (fewer than two frames): every reading unavailable, with `reason`. */
export function allReadingsUnavailable(contractId: string, frames: number, reason: string): EpisodeMetrics {
  const u = { available: false as const, reason };
  return {
    contract: contractId,
    K: frames,
    failure: u,
    progressSoft: u,
    progressStop: u,
    mpjpeLMm: u,
    jointPosRmseRad: u,
    jointVelRmseRadS: u,
    jointAccRmsRadS2: u,
    jointAccP95RadS2: u,
    jointJerkRmsRadS3: u,
    jointJerkP95RadS3: u,
  };
}

/** The numeric readings of an episode, in the order of DESIGN §12. */
export const NUMERIC_READINGS = [
  'progressSoft',
  'mpjpeLMm',
  'jointPosRmseRad',
  'jointVelRmseRadS',
  'jointAccRmsRadS2',
  'jointAccP95RadS2',
  'jointJerkRmsRadS3',
  'jointJerkP95RadS3',
] as const;
export type NumericReadingKey = (typeof NUMERIC_READINGS)[number];

export interface ReadingInfo {
  /** Field name in JSON output (DESIGN §12). */
  json: string;
  label: string;
  /** Unit of the stored value. */
  unit: string;
  /** Unit and factor for display (MPJPE-l is stored in mm, shown in cm). */
  display: { unit: string; scale: number };
}

/** A reading shown in the unit it is stored in. */
const asStored = (json: string, label: string, unit: string): ReadingInfo => ({
  json,
  label,
  unit,
  display: { unit, scale: 1 },
});

export const READING_INFO: Record<NumericReadingKey | 'successRate', ReadingInfo> = {
  successRate: { json: 'sr', label: 'SR', unit: '1', display: { unit: '%', scale: 100 } },
  progressSoft: { json: 'progress_soft', label: 'progress-soft', unit: '1', display: { unit: '', scale: 1 } },
  mpjpeLMm: { json: 'mpjpe_l_mm', label: 'MPJPE-l', unit: 'mm', display: { unit: 'cm', scale: 0.1 } },
  jointPosRmseRad: asStored('joint_pos_rmse', 'joint-position RMSE', 'rad'),
  jointVelRmseRadS: asStored('joint_vel_rmse', 'joint-velocity RMSE', 'rad/s'),
  jointAccRmsRadS2: asStored('joint_acc_rms', 'joint-acceleration RMS', 'rad/s²'),
  jointAccP95RadS2: asStored('joint_acc_p95', 'joint-acceleration P95', 'rad/s²'),
  jointJerkRmsRadS3: asStored('joint_jerk_rms', 'joint-jerk RMS', 'rad/s³'),
  jointJerkP95RadS3: asStored('joint_jerk_p95', 'joint-jerk P95', 'rad/s³'),
};

/** The numeric reading whose JSON name (`mpjpe_l_mm`, …) is `name`, or undefined. */
export const numericReadingByJsonName = (name: string): NumericReadingKey | undefined =>
  NUMERIC_READINGS.find((k) => READING_INFO[k].json === name);

/** Whether the episode had a hard failure (unavailable when failure detection is). */
export function episodeFailed(m: EpisodeMetrics): Reading<boolean> {
  return m.failure.available ? availableReading(m.failure.value !== null) : m.failure;
}

/**
 * The `motionbench metrics --json` document (DESIGN §12): numbers or null, with `unavailable`
 * giving the reason for every null reading (present only when there is one).
 */
export function episodeMetricsJson(m: EpisodeMetrics): Record<string, unknown> {
  const unavailable: Record<string, string> = {};
  const num = (key: string, r: Reading<number>): number | null => {
    if (r.available) return r.value;
    unavailable[key] = r.reason;
    return null;
  };
  const failed = episodeFailed(m);
  const doc: Record<string, unknown> = {
    contract: m.contract,
    K: m.K,
    failed: failed.available ? failed.value : null,
    failure:
      m.failure.available && m.failure.value
        ? { frame: m.failure.value.frame, condition: m.failure.value.condition, body: m.failure.value.body }
        : null,
  };
  if (!failed.available) unavailable.failed = failed.reason;
  if (!m.failure.available) unavailable.failure = m.failure.reason;
  for (const key of NUMERIC_READINGS) doc[READING_INFO[key].json] = num(READING_INFO[key].json, m[key]);
  if (Object.keys(unavailable).length > 0) doc.unavailable = unavailable;
  return doc;
}
