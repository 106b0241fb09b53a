import { z } from 'zod';
import { NUMERIC_READINGS, READING_INFO } from '../domain/metrics/readings';
import { campaignDirSchema } from './qualificationContract';

// The Analysis part of the console API (docs/ANALYSIS.md): one campaign's statistics, the
// same document `motionbench analyze --json` prints (format motionbench-analysis/1, built by
// src/services/analysis/analysisFormat.ts). It runs in the file worker, off the event loop that
// carries STOP (a 47-clip, 7-binding campaign takes 10–20 s). Values are in stored units; an
// unavailable value is null with its reason, never 0.

const readingNames = NUMERIC_READINGS.map((k) => READING_INFO[k].json) as [string, ...string[]];

export const analysisRequestSchemas = {
  /** The campaign's analysis on one reading (default mpjpe_l_mm) and share (default 0.8). */
  'analysis.run': z.strictObject({
    campaignDir: campaignDirSchema,
    reading: z.enum(readingNames).optional(),
    share: z.number().gt(0).lte(1).optional(),
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    replicates: z.number().int().min(100).max(100_000).optional(),
  }),
  /**
   * Start-state sensitivity of one pair in the embedded simulator (motionbench sensitivity --json,
   * format motionbench-sensitivity/1): the pair is a parent trace id (or a unique prefix) with a
   * stored calibration. Bounded so that one request stays a few minutes at most: ≤ 5 scales,
   * ≤ 10 s of the clip, ≤ 50 held-out directions.
   */
  'analysis.sensitivity': z.strictObject({
    campaignDir: campaignDirSchema,
    pairId: z.string().min(4).max(200),
    scales: z.array(z.number().positive().max(100)).min(1).max(5).optional(),
    seconds: z.number().gt(0).lte(10).optional(),
    heldOut: z.number().int().min(1).max(50).optional(),
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  }),
} as const;

export type Ci = [number, number] | null;

/** A value with its CI, or null with why. */
export type IntervalDoc = { value: number; ci: Ci; resampled: string; units: number } | { value: null; reason: string };

export interface ReliabilityDoc {
  repeats: number;
  pairs: number;
  left_out: number;
  value: number | null;
  ci?: Ci;
  reason?: string;
  flag: string | null;
}

export interface GapCellDoc {
  reading: string;
  n: number;
  sim: IntervalDoc;
  real: IntervalDoc;
  gap_pct: number | null;
  ci: Ci;
  reason?: string;
  hl_median:
    | { value: number; ci: Ci; achieved_level: number; level_achieved: boolean; n: number }
    | { value: null; reason: string };
  distinguishable_from_zero: boolean | null;
  icc?: { real: ReliabilityDoc | null; sim: ReliabilityDoc | null };
}

export type RedundancyDoc =
  | {
      variables: string[];
      observations: number;
      lambda: number;
      spearman: ({ rho: number; ci: Ci } | { rho: null; reason: string })[][];
      loo_r2: { variable: string; r2: number | null; reason?: string }[];
    }
  | { value: null; reason: string };

export interface StrengthsDoc {
  judges: number;
  virtual_ties: number;
  B: number;
  seed: number;
  degenerate_replicates: number;
  strengths: { binding: string; binding_name: string; strength: number; ci: Ci; rank: number }[];
}

export interface SelectionStepDoc {
  clip: string;
  clip_name: string;
  gini: number;
  r2: number;
  marginal_utility: number;
  cumulative_share: number;
}

export interface AnalysisDocument {
  format: 'motionbench-analysis/1';
  campaign: { id: string; name: string; dir: string };
  contract: string | null;
  domain: 'sim' | 'real';
  seed: number;
  bootstrap: { gap_and_rho_replicates: number; bradley_terry_replicates: number; level: number };
  direction: string;
  reading: string;
  better: 'lower' | 'higher';
  matrix: { binding: string; clip: string; clip_name: string; value: number }[];
  matrix_used: { bindings: string[]; clips: string[]; dropped_clips: string[]; dropped_bindings: string[] };
  redundancy: { readings: RedundancyDoc; clips: RedundancyDoc };
  selection:
    | {
        reading: string;
        share: number;
        lambda: number;
        path: SelectionStepDoc[];
        minimal_set: string[];
        minimal_set_names: string[];
        minimal_share: number;
        robustness: { forced_first: string; minimal_set: string[]; survives: boolean; overlap: number }[];
      }
    | { reading: string; value: null; reason: string };
  bradley_terry: {
    reading: string;
    ties: string;
    minimal_set_strengths: StrengthsDoc | { value: null; reason: string };
    moves: { binding: string; full_rank: number; minimal_rank: number | null; moved: number | null }[];
  } & (StrengthsDoc | { value: null; reason: string });
  gaps: {
    binding: string;
    binding_name: string;
    readings: GapCellDoc[];
    groups: { group: string; clips: number; readings: GapCellDoc[] }[];
    clips: { clip: string; clip_name: string; parent_trace_id: string | null; readings: GapCellDoc[] }[];
  }[];
  /** Per binding, ICC(A,1) of its qualification pairs' seeded simulation rollouts, per reading. */
  rollout_reliability: {
    binding: string;
    binding_name: string;
    pairs: number;
    readings: ({ reading: string } & ReliabilityDoc)[];
  }[];
  /** Qualification pairs with a calibrated start: the pairs analysis.sensitivity accepts (pair_id). */
  sensitivity_pairs: {
    pair_id: string;
    clip_name: string;
    binding_name: string;
    calibration_id: string;
    captured_at: string;
  }[];
}

/** One response's Gram at one perturbation scale (motionbench-sensitivity/1). */
export interface SensitivityScaleDoc {
  scale_sigma: number;
  trace: number;
  /** Largest first. */
  eigenvalues: number[];
  condition_number: number | null;
  dominant_share: number;
  /** The top eigenvector by axis, largest |weight| first (unit norm, largest component positive). */
  dominant_direction: { axis: string; weight: number }[];
  held_out: { directions: number; wape: number; wape_isotropic: number };
  /** G, rows and columns in the order of `axes`. */
  gram: number[][];
}

/** A robot's Gram at one scale: fitted by least squares on the perturbations the robot reached. */
export interface RobotSensitivityScaleDoc extends SensitivityScaleDoc {
  /** Axis runs the fit used. */
  runs: number;
  /** 1 − R² of the linear model over every response value. */
  residual_share: number;
}

/** The robot emulator's part of a sensitivity run (`sensitivity --robot`). */
export interface RobotSensitivityDoc {
  url: string;
  robot_unit: string;
  /** The campaign the robot's trials are recorded in (never the pair's own). */
  record_campaign: string;
  qualification_pair_id: string;
  prefix_clip: { id: string; name: string };
  runs: number;
  batches: number;
  outcomes: Record<string, number>;
  short_runs: number;
  /** |reached − asked-for| per run, RMS over the axes, in σ. */
  reach_error_sigma: { median: number; max: number };
  /** Per axis and scale: (reached(+h) − reached(−h)) / 2h along it, the share of the asked-for offset kept. */
  kept: { axis: string; scale_sigma: number; share: number }[];
  responses: { response: 'body_position_mm' | 'joint_position_rad'; scales: RobotSensitivityScaleDoc[] }[];
  replay: { repeats: number; bit_identical: boolean; icc: number | null; icc_ci: [number, number] | null };
}

export interface SensitivityDocument {
  format: 'motionbench-sensitivity/1';
  /** `simulation`: the simulator's study; `simulation_and_robot`: with `robot` and `sim_vs_robot`. */
  domain: 'simulation' | 'simulation_and_robot';
  pair: { id: string; clipName: string; binding: string; bindingName: string };
  calibration: { id: string; capturedAt: string; robotUnit: string };
  seconds: number;
  frames: number;
  short_runs: number;
  seed: number;
  runs: number;
  axes: { axis: string; sigma_rad: number; sigma_source: string }[];
  responses: {
    response: 'body_position_mm' | 'joint_position_rad';
    unit: string;
    scales: SensitivityScaleDoc[];
    across_scales: { from: number; to: number; d_g: number; angle_deg: number }[];
  }[];
  replay: { repeats: number; bit_identical: boolean; first_difference: string | null; icc: number | null };
  robot?: RobotSensitivityDoc;
  /** Simulator vs robot per response and scale: trace-normalised D_G and the dominant directions' angle. */
  sim_vs_robot?: { response: string; scale_sigma: number; d_g: number; angle_deg: number }[];
}

export interface AnalysisResults {
  'analysis.run': AnalysisDocument;
  'analysis.sensitivity': SensitivityDocument;
}
