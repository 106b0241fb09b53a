import type { FrameSeriesBuilder } from '../../../src/domain/metrics/frameSeries';
import type { MetricContract } from '../../../src/domain/metrics/metricContract';

// What each plot over time draws, as uPlot's aligned columns (x first, then one column per
// series, all the same length), built from the domain's per-frame series. Pure: no uPlot, no
// DOM. A value that is unavailable (NaN in the series) becomes null, which uPlot draws as a gap
// and leaves out of its scale ranges — NaN would poison both.

export type PlotColumns = [x: number[], ...ys: (number | null)[][]];

/** A horizontal line at a contract threshold, on the y scale of the quantity it bounds. */
export interface ThresholdLine {
  scale: string;
  value: number;
  label: string;
}

/** The columns of a plot and the marks drawn over them. */
export interface PlotFrame {
  columns: PlotColumns;
  /** Time of the contract's first hard failure (a vertical mark), s; null when none. */
  failureTimeS: number | null;
  /** What the failure mark says ("root_height of pelvis, frame 120"). */
  failureLabel: string | null;
}

/** The first `n` values of `a` with NaN / ±∞ as null. */
export function withGaps(a: ArrayLike<number>, n = a.length): (number | null)[] {
  const out: (number | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const v = a[i];
    out[i] = Number.isFinite(v) ? v : null;
  }
  return out;
}

const times = (s: FrameSeriesBuilder): number[] => Array.from(s.timeS.subarray(0, s.count));

function failureMark(s: FrameSeriesBuilder): Pick<PlotFrame, 'failureTimeS' | 'failureLabel'> {
  if (s.firstFailureFrame < 0) return { failureTimeS: null, failureLabel: null };
  const f = s.failure();
  if (!f.available || f.value === null) return { failureTimeS: null, failureLabel: null };
  return {
    failureTimeS: f.value.timeS,
    failureLabel: `failed: ${f.value.condition.replace(/_/g, ' ')} · frame ${f.value.frame}`,
  };
}

/** MPJPE-l (mm, scale `mm`) and joint RMS error (rad, scale `rad`) per frame. */
export function trackingPlot(s: FrameSeriesBuilder): PlotFrame {
  const n = s.count;
  return {
    columns: [times(s), withGaps(s.mpjpeLMm, n), withGaps(s.jointRmseRad, n)],
    ...failureMark(s),
  };
}

/**
 * The hard-failure quantities per frame: root height error and the largest end-effector height
 * error (m, scale `m`), root orientation error (rad, scale `rad`).
 */
export function failureChecksPlot(s: FrameSeriesBuilder): PlotFrame {
  const n = s.count;
  return {
    columns: [
      times(s),
      withGaps(s.rootHeightErrM, n),
      withGaps(s.endEffectorHeightErrM, n),
      withGaps(s.rootOrientationErrRad, n),
    ],
    ...failureMark(s),
  };
}

/** The thresholds of the failure rule as lines: root and end-effector height share one when equal (mb-metrics/1: 0.25 m). */
export function failureThresholdLines(c: MetricContract): ThresholdLine[] {
  const t = c.thresholds;
  const heights: ThresholdLine[] =
    t.rootHeightM === t.endEffectorHeightM
      ? [{ scale: 'm', value: t.rootHeightM, label: `root / EE Δz ${t.rootHeightM} m` }]
      : [
          { scale: 'm', value: t.rootHeightM, label: `root Δz ${t.rootHeightM} m` },
          { scale: 'm', value: t.endEffectorHeightM, label: `EE Δz ${t.endEffectorHeightM} m` },
        ];
  return [...heights, { scale: 'rad', value: t.rootOrientationRad, label: `angle ${t.rootOrientationRad} rad` }];
}

/** Signed error q_E − q_R of joint `j` per frame, rad. */
export function jointErrorPlot(s: FrameSeriesBuilder, j: number): PlotFrame {
  return { columns: [times(s), withGaps(s.jointErrorOf(j))], ...failureMark(s) };
}

export type CompareReading = 'mpjpeLMm' | 'jointRmseRad';

/**
 * One reading of several runs on one time axis (the contract timeline t_k = k/r of the longest
 * run); a shorter run's column ends in nulls. No failure mark: each run has its own.
 */
export function compareRunsPlot(
  series: readonly FrameSeriesBuilder[],
  reading: CompareReading,
  rateHz: number,
): PlotFrame {
  const n = series.reduce((m, s) => Math.max(m, s.count), 0);
  const x: number[] = new Array(n);
  for (let k = 0; k < n; k++) x[k] = k / rateHz;
  const ys = series.map((s) => {
    const col = withGaps(s[reading], s.count);
    for (let k = s.count; k < n; k++) col.push(null);
    return col;
  });
  return { columns: [x, ...ys], failureTimeS: null, failureLabel: null };
}
