import { useMemo, useState } from 'react';
import type { FrameSeriesBuilder } from '../../../src/domain/metrics/frameSeries';
import { metricLayoutFor } from '../../../src/domain/metrics/metricLayout';
import { useRunStore } from '../overlay/runStore';
import { useRobotStore } from '../robot/robotStore';
import { useJointSelection } from './jointSelection';
import { failureChecksPlot, failureThresholdLines, jointErrorPlot, trackingPlot, type PlotFrame } from './plotData';
import { currentRunSeries, PLOT_CONTRACT, subscribeRunData } from './runSeries';
import { TRACKING_AXES, TRACKING_SERIES, type TimeChartSpec } from './timeChart';
import { TimePlot, type PlotSource } from './TimePlot';

// The plots over time of one overlaid run (a sim run, a trial's simulation branch, a recorded
// episode): MPJPE-l and joint RMS error per frame; the three hard-failure quantities with the
// contract's thresholds and the failure frame; and the error of the joint selected in the Joints
// table. Series from plots/runSeries.ts (the domain's per-frame readings); live runs grow at
// ≤ 10 Hz. Shown in the Overlay panel (RunsPanel.tsx).

const TRACKING_SPEC: TimeChartSpec = {
  id: 'run-tracking',
  heightPx: 140,
  series: TRACKING_SERIES,
  axes: TRACKING_AXES,
  thresholds: [],
  windowS: null,
};

const FAILURE_SPEC: TimeChartSpec = {
  id: 'run-failure',
  heightPx: 140,
  series: [
    { label: 'root Δz m', scale: 'm', color: '#4c9aff', digits: 3 },
    { label: 'end-effector Δz max m', scale: 'm', color: '#b180f0', digits: 3 },
    { label: 'root angle rad', scale: 'rad', color: '#3fb950', digits: 3, dash: [4, 2] },
  ],
  axes: [
    { scale: 'm', label: 'm', side: 'left' },
    { scale: 'rad', label: 'rad', side: 'right' },
  ],
  thresholds: failureThresholdLines(PLOT_CONTRACT),
  windowS: null,
};

function jointSpec(name: string): TimeChartSpec {
  return {
    id: 'run-joint',
    heightPx: 110,
    series: [{ label: `${name} q_E − q_R rad`, scale: 'rad', color: '#e3b341', digits: 4 }],
    axes: [{ scale: 'rad', label: 'rad', side: 'left' }],
    thresholds: [],
    windowS: null,
  };
}

function runPlotSource(runId: string, build: (s: FrameSeriesBuilder) => PlotFrame): PlotSource {
  return {
    subscribe: subscribeRunData,
    read: () => {
      const cur = currentRunSeries(runId);
      return cur && cur.series.count > 0 ? { key: cur.key, frame: () => build(cur.series) } : null;
    },
  };
}

export function RunPlots() {
  const runs = useRunStore((s) => s.runs);
  const profile = useRobotStore((s) => s.profile);
  const joint = useJointSelection((s) => s.joint);
  const [picked, setPicked] = useState<string | null>(null);
  const runId = runs.some((r) => r.id === picked) ? picked! : (runs[runs.length - 1]?.id ?? null);
  const tracking = useMemo(() => (runId ? runPlotSource(runId, trackingPlot) : null), [runId]);
  const failure = useMemo(() => (runId ? runPlotSource(runId, failureChecksPlot) : null), [runId]);
  const jointSource = useMemo(
    () => (runId && joint !== null ? runPlotSource(runId, (s) => jointErrorPlot(s, joint)) : null),
    [runId, joint],
  );
  const jointName = joint !== null ? (profile?.joints[joint]?.name.replace(/_joint$/, '') ?? `#${joint}`) : null;
  const jSpec = useMemo(() => (jointName ? jointSpec(jointName) : null), [jointName]);
  const modelProblem = useMemo(() => {
    if (!profile) return null;
    try {
      metricLayoutFor(PLOT_CONTRACT, profile);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }, [profile]);

  if (!runId || !tracking || !failure) return null;
  return (
    <div className="run-plots" data-testid="run-plots">
      <div className="run-plots-head">
        <h3>Over time</h3>
        <select
          value={runId}
          onChange={(e) => setPicked(e.target.value)}
          title="The run whose readings are plotted"
          data-testid="plot-run-select"
        >
          {runs.map((r) => (
            <option key={r.id} value={r.id}>
              {r.label}
            </option>
          ))}
        </select>
      </div>
      {modelProblem ? (
        <p className="muted small">No plots: {modelProblem}</p>
      ) : (
        <>
          <TimePlot spec={TRACKING_SPEC} source={tracking} />
          <TimePlot spec={FAILURE_SPEC} source={failure} />
          {jSpec && jointSource ? (
            <TimePlot spec={jSpec} source={jointSource} />
          ) : (
            <p className="muted small" data-testid="plot-joint-hint">
              Click a joint in the Joints table to plot its error over time.
            </p>
          )}
          <p className="muted small">
            mb-metrics/1 at 50 Hz; dashed lines: hard-failure thresholds; red line: first failing frame. Click a plot to
            move the playhead there.
          </p>
        </>
      )}
    </div>
  );
}
