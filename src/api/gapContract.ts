import { z } from 'zod';
import { idSchema } from './idSchemas';
import { AGGREGATE_KEYS, type AggregateKey } from '../domain/metrics/aggregate';
import { READING_INFO } from '../domain/metrics/readings';
import type { ClipDto, ExecutedTrajectoryDto } from './clipDto';
import { campaignDirSchema } from './qualificationContract';

/** The peers' contract ids (as src/domain/metrics/peerContracts.ts names them). */
export const PEER_CONTRACT_IDS_API = ['sonic-eval/1', 'holomotion-eval/1'] as const;

// The Gap review part of the console API (DESIGN §8 "Gap review"): Table 11 of a campaign's
// matched sim/real pairs per binding (the same numbers as `motionbench report`, computed by
// buildGapSection in src/services/report/gapSection.ts, docs/GAP_REPORT.md), and one pair's
// replay: the reference, the simulation branch and the real trials on the 50 Hz contract
// timeline with the worst frame. Values travel in stored units (SR 0..1, MPJPE-l mm, the rest in
// their reading's unit); an unavailable value is null with its reason, never 0.

/** Sort names of the per-clip table: a reading's JSON name (|Gap %| descending) or `clip`. */
const sortNames: string[] = [...AGGREGATE_KEYS.map((k) => READING_INFO[k].json), 'clip'];
export const GAP_SORT_NAMES = sortNames as [string, ...string[]];

/** A parent trace id (`pt-<hex>`, as the trace store makes them). */
const parentTraceIdSchema = idSchema(/^[\w.:-]+$/, 'not a parent trace id', 128);

export const gapRequestSchemas = {
  /** Table 11 of a campaign (read-only). `sort`: the per-clip order (default mpjpe_l_mm). */
  'gap.report': z.strictObject({ campaignDir: campaignDirSchema, sort: z.enum(GAP_SORT_NAMES).optional() }),
  /** One matched pair for the viewport: reference, sim branch and real trials at 50 Hz, and the worst frame. */
  'gap.replay': z.strictObject({ campaignDir: campaignDirSchema, parentTraceId: parentTraceIdSchema }),
  /**
   * The campaign under mb-metrics/1 and the peers' contracts side by side (docs/METRICS.md "Peer
   * contracts"). `score`: first score the finished episodes not yet scored under them and store
   * the results (the only gap.* request that writes); else only what is stored.
   */
  'gap.contracts': z.strictObject({
    campaignDir: campaignDirSchema,
    contracts: z.array(z.enum(PEER_CONTRACT_IDS_API)).min(1).max(2),
    score: z.boolean(),
  }),
} as const;

// ---- results -------------------------------------------------------------------------------

/** One reading of the Table 11 rows, as the panel lists them (AGGREGATE_KEYS order). */
export interface GapReadingInfo {
  key: AggregateKey;
  /** JSON name (`sr`, `mpjpe_l_mm`, …): the sort name. */
  json: string;
  label: string;
  /** Stored unit. */
  unit: string;
}

export const GAP_READINGS: readonly GapReadingInfo[] = AGGREGATE_KEYS.map((key) => ({
  key,
  json: READING_INFO[key].json,
  label: READING_INFO[key].label,
  unit: READING_INFO[key].unit,
}));

/** A value in stored units, or null with why. */
export interface GapValueDto {
  value: number | null;
  reason?: string;
}

export interface GapRowDto {
  /** JSON name of the reading. */
  reading: string;
  sim: GapValueDto;
  real: GapValueDto;
  gapPercent: GapValueDto;
  /** Clips whose Sim and Real are both available (the macro-average's clips). */
  clips: number;
  excluded: { clipId: string; clip: string; reason: string }[];
}

export interface GapTrialCountsDto {
  used: number;
  failed: number;
  stopped: number;
  excluded: { reason: string; count: number }[];
}

export interface GapTrialDto {
  runId: string;
  domain: 'simulation' | 'real_robot';
  trialIndex: number | null;
  outcome: string | null;
  use: 'counted' | 'stopped' | 'excluded';
  failed: boolean;
  reason: string | null;
}

export interface GapClipDto {
  clipId: string;
  clip: string;
  group: string;
  parentTraceId: string;
  calibrationId: string;
  capturedAt: string | null;
  robotUnit: string | null;
  simTrials: GapTrialCountsDto;
  realTrials: GapTrialCountsDto;
  trials: GapTrialDto[];
  /** Per reading (JSON name): pair means and the clip's Gap %. */
  readings: Record<string, { sim: GapValueDto; real: GapValueDto; gapPercent: GapValueDto }>;
}

export interface GapBindingDto {
  /** `id@version`. */
  binding: string;
  /** What people read (src/domain/wbc/bindingName.ts): "builtin@pd1-… · assist 3000 N/m". */
  name: string;
  kind: string | null;
  label: string | null;
  /** "reference tracker, not a policy" for builtin bindings. */
  note: string | null;
  rows: GapRowDto[];
  byGroup: { group: string; clips: number; rows: GapRowDto[] }[];
  /** In the requested sort order. */
  clips: GapClipDto[];
}

export interface GapReportDto {
  campaignDir: string;
  campaignId: string;
  contract: string | null;
  matchedPairs: number;
  /** Set when there is no matched pair. */
  message: string | null;
  sort: string;
  bindings: GapBindingDto[];
  /** Calibrated pairs not in the tables (superseded, incomplete, other contract). */
  skipped: {
    binding: string;
    clipId: string;
    clip: string;
    parentTraceId: string;
    calibrationId: string;
    why: string;
    reason: string;
  }[];
  generatedAt: string;
}

/** The replayed episode's executed trajectory (as the overlay's PackedTrajectory). */
export type GapTrajectoryDto = ExecutedTrajectoryDto;

export interface GapReplayRunDto {
  runId: string;
  domain: 'simulation' | 'real_robot';
  trialIndex: number | null;
  outcome: string | null;
  use: 'counted' | 'stopped';
  /** The recording's frame rate, Hz (estimated from its time stamps). */
  sourceRateHz: number;
  /** How it was put on the 50 Hz timeline: frames already on the grid, the contract's resampler (uniform source), or interpolation by time stamp (non-uniform source). */
  resampling: 'on_grid' | 'contract_resampler' | 'by_time';
  /** The root pose is measured (simulator, motion capture); false: drawn at the reference root. */
  rootMeasured: boolean;
  trajectory: GapTrajectoryDto;
}

export interface GapWorstFrameDto {
  frame: number;
  timeS: number;
  /** The real trial whose error is largest there. */
  runId: string;
  trialIndex: number | null;
  /** Per-frame MPJPE-l (mm) when every counted real trial has MPJPE-l, else per-frame joint-position RMSE (rad). */
  measure: 'mpjpe_l' | 'joint_rmse';
  value: number;
  unit: 'mm' | 'rad';
  /** Why this measure (e.g. joint RMSE because the real trials have no motion capture). */
  why: string;
}

export interface GapReplayDto {
  parentTraceId: string;
  binding: string;
  /** The binding's name (as GapBindingDto.name). */
  bindingName: string;
  clipId: string;
  clip: string;
  calibrationId: string;
  contract: string;
  /** The reference on the 50 Hz contract timeline, as recorded with the simulation episode. */
  reference: ClipDto;
  sim: GapReplayRunDto | null;
  /** The counted real trials (stopped ones included), by trial index. */
  real: GapReplayRunDto[];
  /** Trials left out of the replay (excluded from the readings), with why. */
  notShown: { runId: string; domain: 'simulation' | 'real_robot'; trialIndex: number | null; reason: string }[];
  worst: GapWorstFrameDto | null;
}

/** One binding × execution domain under the three contracts; null = not available (with why elsewhere). */
export interface ContractGroupDto {
  binding: string;
  domain: string;
  mb: { episodes: number; successRate: number | null; mpjpeLMm: number | null };
  /** sonic-eval/1: frame-weighted over all episodes (and over the successful ones). */
  sonic: {
    scored: number;
    unscored: number;
    successRate: number | null;
    mpjpeLMm: number | null;
    mpjpeGMm: number | null;
    mpjpePaMm: number | null;
    successMpjpeLMm: number | null;
  } | null;
  /** holomotion-eval/1: the mean over clips. */
  holomotion: {
    scored: number;
    unscored: number;
    successRate: number | null;
    mpjpeLMm: number | null;
    mpjpeGMm: number | null;
    jointsDistRad: number | null;
  } | null;
}

export interface GapContractsDto {
  campaignDir: string;
  contracts: string[];
  rows: ContractGroupDto[];
  /** Episodes with no result under a peer, with the first reason. */
  unscored: { contract: string; episodes: number; reason: string }[];
  /** Episodes scored by this request. */
  scoredNow: number;
}

export interface GapResults {
  'gap.report': GapReportDto;
  'gap.replay': GapReplayDto;
  'gap.contracts': GapContractsDto;
}
