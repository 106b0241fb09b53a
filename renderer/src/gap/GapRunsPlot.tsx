import { useMemo, useState } from 'react';
import { useGapReviewStore } from './gapStore';
import { runColor } from '../overlay/runColors';
import { useRunStore } from '../overlay/runStore';
import { compareRunsPlot, type CompareReading } from '../plots/plotData';
import { currentRunSeries, PLOT_CONTRACT, subscribeRunData } from '../plots/runSeries';
import type { TimeChartSpec } from '../plots/timeChart';
import { TimePlot, type PlotSource } from '../plots/TimePlot';

// Gap review: the simulation branch and every real trial of the replayed pair on one time axis
// (the contract timeline), one series per run in its overlay colour — MPJPE-l per frame (mm), or
// the joint RMS error per frame (rad), which a real trial without motion capture still has. The
// series are the runs' own (plots/runSeries.ts, the trajectories gap.replay put in the overlay).

const READINGS: Record<CompareReading, { label: string; unit: string; digits: number }> = {
  mpjpeLMm: { label: 'MPJPE-l', unit: 'mm', digits: 1 },
  jointRmseRad: { label: 'joint RMSE', unit: 'rad', digits: 3 },
};

export function GapRunsPlot() {
  const replayRuns = useGapReviewStore((s) => s.replay?.runs ?? null);
  const overlayRuns = useRunStore((s) => s.runs);
  const [reading, setReading] = useState<CompareReading>('mpjpeLMm');
  const shown = useMemo(
    () => (replayRuns ?? []).filter((r) => overlayRuns.some((o) => o.id === r.id)),
    [replayRuns, overlayRuns],
  );
  const ids = shown.map((r) => r.id).join('|');
  const slots = shown.map((r) => overlayRuns.find((o) => o.id === r.id)!.colorSlot).join('|');
  const info = READINGS[reading];
  const spec = useMemo<TimeChartSpec>(
    () => ({
      id: 'gap-runs',
      heightPx: 150,
      series: shown.map((r) => ({
        label: `${r.label} ${info.unit}`,
        scale: info.unit,
        color: runColor(overlayRuns.find((o) => o.id === r.id)!.colorSlot).hex,
        digits: info.digits,
        ...(r.domain === 'simulation' && { dash: [6, 3] }),
      })),
      axes: [{ scale: info.unit, label: `${info.label} (${info.unit})`, side: 'left' }],
      thresholds: [],
      windowS: null,
    }),
    // The spec changes with the runs, their colours and the reading, not with every run-list update
    // (a visibility toggle must not rebuild the chart).
    [ids, slots, reading],
  );
  const source = useMemo<PlotSource>(() => {
    const runIds = ids === '' ? [] : ids.split('|');
    return {
      subscribe: subscribeRunData,
      read: () => {
        const cur = runIds.map(currentRunSeries);
        if (cur.length === 0 || cur.some((c) => c === null)) return null;
        const all = cur as NonNullable<(typeof cur)[number]>[];
        return {
          key: `${reading}:${all.map((c) => c.key).join('|')}`,
          frame: () =>
            compareRunsPlot(
              all.map((c) => c.series),
              reading,
              PLOT_CONTRACT.rateHz,
            ),
        };
      },
    };
  }, [ids, reading]);
  if (shown.length === 0) return null;
  return (
    <div className="gap-runs-plot" data-testid="gap-runs-plot">
      <div className="run-plots-head">
        <h3>Sim vs real over time</h3>
        <select
          value={reading}
          onChange={(e) => setReading(e.target.value as CompareReading)}
          title="The per-frame reading plotted"
          data-testid="gap-plot-reading"
        >
          {Object.entries(READINGS).map(([k, r]) => (
            <option key={k} value={k}>
              {r.label} ({r.unit})
            </option>
          ))}
        </select>
      </div>
      <TimePlot spec={spec} source={source} />
      <p className="muted small">
        Per frame of the 50 Hz mb-metrics/1 timeline; sim branch dashed. MPJPE-l is unavailable (no line) for a real
        trial without motion capture. Click the plot to move the playhead there.
      </p>
    </div>
  );
}
