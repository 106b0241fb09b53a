import { useEffect, useRef } from 'react';
import { XyChart, type XyChartSpec } from './xyChart';

/** An XyChart as a React component: rebuilt when `spec` changes (keep it memoised). */
export function XyPlot({ spec }: { spec: XyChartSpec }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const chart = new XyChart(el, spec);
    return () => chart.destroy();
  }, [spec]);
  return <div className="analysis-xy" ref={ref} data-testid={`analysis-plot-${spec.id}`} />;
}
