import type { SimEndEvent, SimEpisodeMetricsDto } from '../../../src/api/contract';

// How the Sim trial panel shows the mb-metrics/1 readings of a run: one row per reading, display
// units of the contract (MPJPE-l stored in mm, shown in cm), a fixed number of decimals per
// reading. An unavailable reading is "—" with its reason as the hover text, never 0. The e2e test
// formats its own recomputed numbers with these functions and compares the text.

export type ReadingKey =
  | 'progressSoft'
  | 'mpjpeLMm'
  | 'jointPosRmseRad'
  | 'jointVelRmseRadS'
  | 'jointAccRmsRadS2'
  | 'jointAccP95RadS2'
  | 'jointJerkRmsRadS3'
  | 'jointJerkP95RadS3';

export interface ReadingRow {
  key: ReadingKey;
  label: string;
  unit: string;
  /** Stored value × scale = shown value. */
  scale: number;
  decimals: number;
  hint: string;
}

export const READING_ROWS: readonly ReadingRow[] = [
  {
    key: 'progressSoft',
    label: 'progress-soft',
    unit: '',
    scale: 1,
    decimals: 3,
    hint: 'k*/(K−1): share of the clip before the first hard failure or global drift; 1 = none',
  },
  {
    key: 'mpjpeLMm',
    label: 'MPJPE-l',
    unit: 'cm',
    scale: 0.1,
    decimals: 2,
    hint: 'mean root-relative body position error over all frames and bodies',
  },
  {
    key: 'jointPosRmseRad',
    label: 'joint-pos RMSE',
    unit: 'rad',
    scale: 1,
    decimals: 4,
    hint: 'RMS of executed − reference joint angles over frames × 29 joints',
  },
  {
    key: 'jointVelRmseRadS',
    label: 'joint-vel RMSE',
    unit: 'rad/s',
    scale: 1,
    decimals: 3,
    hint: 'the same on joint velocities (central differences)',
  },
  {
    key: 'jointAccRmsRadS2',
    label: 'joint-acc RMS',
    unit: 'rad/s²',
    scale: 1,
    decimals: 1,
    hint: 'RMS joint acceleration of the executed motion',
  },
  {
    key: 'jointAccP95RadS2',
    label: 'joint-acc P95',
    unit: 'rad/s²',
    scale: 1,
    decimals: 1,
    hint: '95th percentile of |joint acceleration|, executed motion',
  },
  {
    key: 'jointJerkRmsRadS3',
    label: 'joint-jerk RMS',
    unit: 'rad/s³',
    scale: 1,
    decimals: 0,
    hint: 'RMS joint jerk of the executed motion',
  },
  {
    key: 'jointJerkP95RadS3',
    label: 'joint-jerk P95',
    unit: 'rad/s³',
    scale: 1,
    decimals: 0,
    hint: '95th percentile of |joint jerk|, executed motion',
  },
];

export interface ShownReading {
  /** What the cell says. */
  text: string;
  /** Hover text: the reason when unavailable. */
  title: string;
  /** The stored value (full precision), null when unavailable. */
  value: number | null;
}

export const UNAVAILABLE_TEXT = '—';

export function showReading(metrics: SimEpisodeMetricsDto, row: ReadingRow): ShownReading {
  const r = metrics[row.key];
  if (!r.available) return { text: UNAVAILABLE_TEXT, title: `unavailable: ${r.reason}`, value: null };
  return { text: formatReadingValue(r.value, row), title: `${row.label}: ${r.value} (${row.hint})`, value: r.value };
}

export function formatReadingValue(value: number, row: ReadingRow): string {
  return (value * row.scale).toFixed(row.decimals);
}

export interface ShownFailure {
  /** "no", "yes", or "—" when failure detection was unavailable. */
  failed: ShownReading;
  /** The first hard failure's condition, body and frame (null without one). */
  condition: string | null;
  body: string | null;
  /** "52 (1.04 s)". */
  frameText: string | null;
  frame: number | null;
}

/** The failure rows: failed (yes / no / —), then condition, body and frame of the first hard failure. */
export function showFailure(metrics: SimEpisodeMetricsDto): ShownFailure {
  const f = metrics.failure;
  const none = { condition: null, body: null, frameText: null, frame: null };
  if (!f.available)
    return { failed: { text: UNAVAILABLE_TEXT, title: `unavailable: ${f.reason}`, value: null }, ...none };
  if (f.value === null) return { failed: { text: 'no', title: 'no hard failure on frames 0..K−2', value: 0 }, ...none };
  const v = f.value;
  return {
    failed: {
      text: 'yes',
      title: `hard failure: ${conditionText(v.condition)} of ${v.body}: ${v.error.toFixed(3)} > ${v.threshold}`,
      value: 1,
    },
    condition: conditionText(v.condition),
    body: v.body.replace(/_link$/, ''),
    frameText: `${v.frame} (${v.timeS.toFixed(2)} s)`,
    frame: v.frame,
  };
}

export function conditionText(c: 'root_height' | 'root_orientation' | 'end_effector_height'): string {
  return c === 'root_height' ? 'root height' : c === 'root_orientation' ? 'root orientation' : 'end-effector height';
}

export const OUTCOME_TEXT: Record<SimEndEvent['outcome'], string> = {
  completed: 'completed',
  hard_failure: 'hard failure',
  intervention: 'intervention',
  estop: 'e-stop',
  link_lost: 'link lost',
  aborted_by_operator: 'aborted by operator',
  infrastructure_error: 'infrastructure error',
};
