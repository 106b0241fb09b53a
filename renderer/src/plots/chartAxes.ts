import type uPlot from 'uplot';

// The look of a labelled value axis, one for every uPlot chart of the console (time plots,
// category plots, x–y plots), so the charts read alike side by side.

export const AXIS_STROKE = '#8590a0';
export const GRID_STROKE = '#252c37';

/** A labelled axis on `side` (uPlot: 0 top, 1 right, 2 bottom, 3 left), `sizePx` wide. */
export function labelledAxis(
  scale: string,
  label: string,
  side: uPlot.Axis.Side,
  sizePx: number,
  showGrid: boolean,
): uPlot.Axis {
  return {
    scale,
    side,
    label,
    labelSize: 14,
    labelFont: '11px system-ui, sans-serif',
    font: '10px system-ui, sans-serif',
    stroke: AXIS_STROKE,
    size: sizePx,
    grid: { show: showGrid, stroke: GRID_STROKE, width: 1 },
    ticks: { stroke: GRID_STROKE },
  };
}

/** A chart's value axes, left or right of the plot; only the first draws the grid. */
export function valueAxes(
  axes: { scale: string; label: string; side: 'left' | 'right' }[],
  sizePx: number,
): uPlot.Axis[] {
  return axes.map((a, i) => labelledAxis(a.scale, a.label, a.side === 'left' ? 3 : 1, sizePx, i === 0));
}
