import { useEffect, useRef } from 'react';
import { pause, seekTimeS } from '../playback/playback';
import { poseStore } from '../playback/poseStore';
import type { PlotFrame } from './plotData';
import { TimeChart, type TimeChartSpec } from './timeChart';

// A plot over time as a React component: it owns one TimeChart (timeChart.ts) for its lifetime
// and feeds it from a PlotSource by subscription — never through React state, so a 50 Hz stream
// re-renders no component. The source is asked for data at most `hz` times a second (and once
// after the last change); when its key is unchanged nothing is drawn. The playhead line follows
// the pose store (every shown frame); a click in the plot seeks the playhead there (paused).

export interface PlotSource {
  /** Calls `changed` whenever the data may have changed (at any rate). Returns the unsubscribe. */
  subscribe(changed: () => void): () => void;
  /**
   * What to draw now: a key that changes exactly when the data does, and the frame builder;
   * null when there is nothing to draw (yet).
   */
  read(): { key: string; frame: () => PlotFrame } | null;
}

export interface TimePlotProps {
  spec: TimeChartSpec;
  /** Keep it stable (useMemo): a new source rebuilds the chart. */
  source: PlotSource;
  hz?: number;
}

function seek(timeS: number): void {
  pause();
  seekTimeS(timeS);
}

export function TimePlot({ spec, source, hz = 10 }: TimePlotProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const chart = new TimeChart(el, spec, seek);
    const intervalMs = 1000 / hz;
    let lastKey: string | null = null;
    let lastMs = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const refresh = (): void => {
      timer = null;
      lastMs = performance.now();
      const r = source.read();
      if (!r || r.key === lastKey) return;
      lastKey = r.key;
      chart.setFrame(r.frame());
      const pose = poseStore.getState();
      chart.setPlayhead(pose.clipId !== null ? pose.timeS : null);
    };
    const changed = (): void => {
      if (timer === null) timer = setTimeout(refresh, Math.max(0, lastMs + intervalMs - performance.now()));
    };
    const offSource = source.subscribe(changed);
    const offPose = poseStore.subscribe((s) => chart.setPlayhead(s.clipId !== null ? s.timeS : null));
    refresh();
    return () => {
      offSource();
      offPose();
      if (timer !== null) clearTimeout(timer);
      chart.destroy();
    };
  }, [spec, source, hz]);
  return <div className="time-plot" ref={ref} />;
}
