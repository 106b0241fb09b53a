import { useMemo } from 'react';
import { LIVE_WINDOW_S, liveTrialRing, liveTrialRingStore } from './liveTrialRing';
import { TRACKING_AXES, TRACKING_SERIES, type TimeChartSpec } from './timeChart';
import { TimePlot, type PlotSource } from './TimePlot';

// The running real trial's live MPJPE-l and joint RMS error over the last LIVE_WINDOW_S seconds
// (a rolling plot from plots/liveTrialRing.ts, redrawn at ≤ 10 Hz while batches arrive, not at
// all otherwise), with the first failed sample marked. Shown in the Trial runner's live block.

const LIVE_SPEC: TimeChartSpec = {
  id: 'trial-live',
  heightPx: 120,
  series: TRACKING_SERIES,
  axes: TRACKING_AXES,
  thresholds: [],
  windowS: LIVE_WINDOW_S,
};

export function LiveTrialPlot() {
  const source = useMemo<PlotSource>(
    () => ({
      subscribe: (changed) => liveTrialRingStore.subscribe(changed),
      read: () => {
        const s = liveTrialRingStore.getState();
        if (s.runId === null || liveTrialRing.size === 0) return null;
        return {
          key: `${s.runId}:${s.revision}`,
          frame: () => ({
            columns: liveTrialRing.columns(),
            failureTimeS: s.failureTimeS,
            failureLabel: s.failureTimeS !== null ? (s.failure ?? 'hard failure') : null,
          }),
        };
      },
    }),
    [],
  );
  return <TimePlot spec={LIVE_SPEC} source={source} />;
}
