import type { StartResidualsDto, StillnessDto } from '../../../src/api/contract';
import { DEFAULT_STILLNESS_THRESHOLDS } from '../../../src/domain/calibration/stillness';
import { G1_JOINT_NAMES } from '../../../src/domain/robot/g1Joints';

// Pure view logic of the Calibration panel: the stillness meter and the residual table. No React,
// no stores: unit-tested in test/unit/rendererTrialFormat.test.ts.

export interface StillnessMeter {
  /** 0..1 of the still window collected. */
  fill: number;
  still: boolean;
  /** Largest joint velocity in the window vs its limit, rad/s; null before any frame. */
  jointVelRadS: number | null;
  jointVelLimitRadS: number;
  gyroRadS: number | null;
  gyroLimitRadS: number;
  /** The first reason it is not still (verbatim), or null. */
  why: string | null;
}

export function stillnessMeter(p: StillnessDto | null): StillnessMeter {
  const t = DEFAULT_STILLNESS_THRESHOLDS;
  if (!p)
    return {
      fill: 0,
      still: false,
      jointVelRadS: null,
      jointVelLimitRadS: t.maxJointVelRadS,
      gyroRadS: null,
      gyroLimitRadS: t.maxGyroRadS,
      why: null,
    };
  const fill = p.windowNeededS > 0 ? Math.max(0, Math.min(1, p.windowFilledS / p.windowNeededS)) : 0;
  const num = (v: number | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    fill: p.still ? 1 : fill,
    still: p.still,
    jointVelRadS: num(p.stats?.maxJointVelRmsRadS),
    jointVelLimitRadS: t.maxJointVelRadS,
    gyroRadS: num(p.stats?.maxGyroRadS),
    gyroLimitRadS: t.maxGyroRadS,
    why: p.still ? null : (p.reasons[0]?.message ?? null),
  };
}

export interface ResidualRow {
  joint: string;
  index: number;
  /** Measured − clip start, rad. */
  deltaRad: number;
  measuredRad: number | null;
  clipRad: number | null;
}

/** Per-joint residuals vs the clip start, largest |Δ| first (ties: canonical order). */
export function residualRows(
  r: StartResidualsDto,
  measuredRad: readonly number[] | null,
  clipRad: readonly number[] | null,
): ResidualRow[] {
  return r.jointRad
    .map((d, i) => ({
      joint: G1_JOINT_NAMES[i] ?? `joint ${i}`,
      index: i,
      deltaRad: d,
      measuredRad: measuredRad?.[i] ?? null,
      clipRad: clipRad?.[i] ?? null,
    }))
    .sort((a, b) => Math.abs(b.deltaRad) - Math.abs(a.deltaRad) || a.index - b.index);
}

/**
 * The calibration record a matched pair was bound to from the one accepted here: the runner stores
 * the accepted record bound to the pair's clip (simulator start state, residuals) as a record of
 * its own, with its own id — the id the pair's trials and the Gap review show. Null unless the job
 * of `pairId` was started with `acceptedId` and reports another id.
 */
export function boundCalibrationId(
  acceptedId: string | null,
  pairId: string | null,
  job: { pairId: string; calibrationId: string | null } | null,
  jobStartedWith: string | null,
): string | null {
  if (!acceptedId || !job || job.pairId !== pairId || jobStartedWith !== acceptedId) return null;
  return job.calibrationId !== null && job.calibrationId !== acceptedId ? job.calibrationId : null;
}
