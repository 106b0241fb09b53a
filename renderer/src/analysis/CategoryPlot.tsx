import { useEffect, useRef } from 'react';
import { CategoryChart, type CategoryChartSpec } from './categoryChart';

/** A CategoryChart as a React component: rebuilt when `spec` changes (keep it memoised). */
export function CategoryPlot({ spec, onPick }: { spec: CategoryChartSpec; onPick?: (index: number) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const chart = new CategoryChart(el, spec, onPick);
    return () => chart.destroy();
  }, [spec, onPick]);
  return <div className="analysis-plot" ref={ref} data-testid={`analysis-plot-${spec.id}`} />;
}
