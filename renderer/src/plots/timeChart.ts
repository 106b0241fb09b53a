import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './plots.css';
import { AXIS_STROKE, GRID_STROKE, valueAxes } from './chartAxes';
import type { PlotFrame, ThresholdLine } from './plotData';

// One plot over time, imperative (no React): a uPlot chart in a container element, sized to the
// container (ResizeObserver), fed by setFrame() (a plot's columns and its failure mark) and
// drawn only then — uPlot draws on setData / setSize / cursor moves, never on a timer, so an idle
// plot costs nothing. Over the canvas:
//   - threshold lines (the contract's, dashed, on the y scale of the quantity they bound), and
//     the failure mark (a vertical line at the first failing frame), drawn in uPlot's draw hook;
//   - the playhead, a DOM line moved by setPlayhead() (a store subscription calls it at the frame
//     rate while playing) without redrawing the canvas;
//   - a click in the plotting area calls onSeek with the time under the pointer; clicks on the
//     axes or the legend do not.
// Each chart is listed in `chartRegistry` for the end-to-end tests (testing/testHooks.ts).

export interface ChartSeriesSpec {
  label: string;
  /** y scale key: the unit ('mm', 'rad', 'm'). */
  scale: string;
  color: string;
  /** Digits in the legend. */
  digits: number;
  dash?: number[];
}

export interface ChartAxisSpec {
  scale: string;
  label: string;
  side: 'left' | 'right';
}

export interface TimeChartSpec {
  id: string;
  heightPx: number;
  series: ChartSeriesSpec[];
  axes: ChartAxisSpec[];
  thresholds: ThresholdLine[];
  /** Seconds of history shown (live plots: the ring's span); null: all of it. */
  windowS: number | null;
}

/** The two tracking readings per frame, as every tracking plot (run, live trial) draws them. */
export const TRACKING_SERIES: ChartSeriesSpec[] = [
  { label: 'MPJPE-l mm', scale: 'mm', color: '#4c9aff', digits: 1 },
  { label: 'joint RMSE rad', scale: 'rad', color: '#3fb950', digits: 3 },
];
export const TRACKING_AXES: ChartAxisSpec[] = [
  { scale: 'mm', label: 'mm', side: 'left' },
  { scale: 'rad', label: 'rad', side: 'right' },
];

const THRESHOLD_STROKE = '#d29922';
const FAILURE_STROKE = '#f85149';
const LABEL_BACKGROUND = 'rgba(18, 22, 28, 0.6)';

export interface ChartTestView {
  id: string;
  /** Points of the x column. */
  points: number;
  /** Per series (legend order): label and the number of non-null values. */
  series: { label: string; points: number }[];
  thresholds: ThresholdLine[];
  failureTimeS: number | null;
  /** The playhead line's time (null: hidden) and x in CSS pixels from the plotting area's left edge. */
  playheadS: number | null;
  playheadLeftPx: number | null;
  /** The x scale's range, s. */
  xRange: [number, number] | null;
  /** The plotting area in page CSS pixels (where a click seeks). */
  plotRect: { left: number; top: number; width: number; height: number };
  /** The container's width and the chart's, CSS pixels (equal unless a resize is pending). */
  containerWidthPx: number;
  chartWidthPx: number;
  /** Canvas redraws so far. */
  draws: number;
}

export const chartRegistry = new Map<string, TimeChart>();

/**
 * Builds a uPlot chart (it asks for its canvas's 2D context once, while it is built) with a
 * CPU-backed canvas (`willReadFrequently`). A GPU-accelerated 2D canvas goes through Chromium's
 * rate limiter: each frame it was drawn in waits, on the main thread, until the GPU has finished
 * the work queued before it — with the 3D viewport rendering there (software GL in a VM) that
 * was 1–1.4 s per redraw of a plot during a live run, which held back the acknowledgement of the
 * frame pushes until the services skipped frames for display. A plot of a few hundred points
 * draws in well under a millisecond on the CPU.
 */
function withCpuCanvas<T>(build: () => T): T {
  const proto = HTMLCanvasElement.prototype;
  const getContext = proto.getContext;
  proto.getContext = function (this: HTMLCanvasElement, id: string, options?: Record<string, unknown>) {
    return getContext.call(this, id, id === '2d' ? { ...options, willReadFrequently: true } : options);
  } as typeof proto.getContext;
  try {
    return build();
  } finally {
    proto.getContext = getContext;
  }
}

export class TimeChart {
  readonly spec: TimeChartSpec;
  private readonly u: uPlot;
  private readonly resize: ResizeObserver;
  private readonly playheadLine: HTMLDivElement;
  private frame: PlotFrame | null = null;
  private playheadS: number | null = null;
  private draws = 0;
  /** uPlot calls the hooks while it is being built, before `u` is set. */
  private built = false;

  constructor(
    private readonly container: HTMLElement,
    spec: TimeChartSpec,
    private readonly onSeek: (timeS: number) => void,
  ) {
    this.spec = spec;
    this.playheadLine = document.createElement('div');
    this.playheadLine.className = 'plot-playhead';
    this.playheadLine.dataset.testid = `plot-playhead-${spec.id}`;
    this.playheadLine.style.display = 'none';
    const opts: uPlot.Options = {
      width: Math.max(120, container.clientWidth),
      height: spec.heightPx,
      pxAlign: 1,
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
      legend: { show: true, live: true },
      scales: {
        x: { time: false, ...(spec.windowS !== null && { range: (_u, lo, hi) => this.windowRange(lo, hi) }) },
        ...Object.fromEntries(
          spec.axes.map((a) => [
            a.scale,
            { range: (_u: uPlot, lo: number, hi: number) => this.yRange(a.scale, lo, hi) },
          ]),
        ),
      },
      axes: [
        {
          stroke: AXIS_STROKE,
          grid: { stroke: GRID_STROKE, width: 1 },
          ticks: { stroke: GRID_STROKE },
          values: (_u, vals) => vals.map((v) => `${+v.toFixed(2)} s`),
          size: 28,
        },
        ...valueAxes(spec.axes, 44),
      ],
      series: [
        { label: 't', value: (_u, v) => (v === null ? '—' : `${v.toFixed(2)} s`) },
        ...spec.series.map<uPlot.Series>((s) => ({
          label: s.label,
          scale: s.scale,
          stroke: s.color,
          width: 1.5,
          ...(s.dash && { dash: s.dash }),
          points: { show: false },
          value: (_u, v) => (v === null || v === undefined ? '—' : v.toFixed(s.digits)),
        })),
      ],
      hooks: {
        draw: [(u) => this.drawMarks(u)],
        setSize: [() => this.placePlayhead()],
        setScale: [() => this.placePlayhead()],
      },
    };
    this.u = withCpuCanvas(() => new uPlot(opts, [[], ...spec.series.map(() => [])], container));
    this.built = true;
    this.u.root.dataset.testid = `plot-${spec.id}`;
    this.u.over.appendChild(this.playheadLine);
    this.u.over.addEventListener('click', this.onClick);
    this.resize = new ResizeObserver(() => {
      const w = Math.max(120, Math.floor(container.clientWidth));
      if (w !== this.u.width) this.u.setSize({ width: w, height: spec.heightPx });
    });
    this.resize.observe(container);
    chartRegistry.set(spec.id, this);
  }

  /** New columns and marks: one redraw. */
  setFrame(frame: PlotFrame): void {
    this.frame = frame;
    this.u.setData(frame.columns as uPlot.AlignedData);
  }

  /** Moves the playhead line (no canvas redraw); null hides it. */
  setPlayhead(timeS: number | null): void {
    this.playheadS = timeS;
    this.placePlayhead();
  }

  destroy(): void {
    this.resize.disconnect();
    this.u.over.removeEventListener('click', this.onClick);
    this.u.destroy();
    if (chartRegistry.get(this.spec.id) === this) chartRegistry.delete(this.spec.id);
  }

  testView(): ChartTestView {
    const cols = this.frame?.columns;
    const over = this.u.over.getBoundingClientRect();
    return {
      id: this.spec.id,
      points: cols ? cols[0].length : 0,
      series: this.spec.series.map((s, i) => ({
        label: s.label,
        points: cols ? (cols[i + 1] as (number | null)[]).filter((v) => v !== null).length : 0,
      })),
      thresholds: this.spec.thresholds,
      failureTimeS: this.frame?.failureTimeS ?? null,
      playheadS: this.playheadLine.style.display === 'none' ? null : this.playheadS,
      playheadLeftPx:
        this.playheadLine.style.display === 'none' ? null : Number.parseFloat(this.playheadLine.style.left),
      xRange:
        this.u.scales.x.min != null && this.u.scales.x.max != null ? [this.u.scales.x.min, this.u.scales.x.max] : null,
      plotRect: { left: over.left, top: over.top, width: over.width, height: over.height },
      containerWidthPx: this.container.clientWidth,
      chartWidthPx: this.u.width,
      draws: this.draws,
    };
  }

  private readonly onClick = (e: MouseEvent): void => {
    const x = this.frame?.columns[0];
    if (!x || x.length === 0) return;
    const px = e.clientX - this.u.over.getBoundingClientRect().left;
    const t = this.u.posToVal(px, 'x');
    if (Number.isFinite(t)) this.onSeek(Math.min(x[x.length - 1], Math.max(x[0], t)));
  };

  /** A live plot shows the last windowS seconds; until it has that much, the window fills from the left. */
  private windowRange(lo: number, hi: number): uPlot.Range.MinMax {
    const w = this.spec.windowS ?? 0;
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, w];
    return hi - lo >= w ? [hi - w, hi] : [lo, lo + w];
  }

  /** From 0 to the data's maximum, raised to show every threshold line on the scale with a margin. */
  private yRange(scale: string, _lo: number, hi: number): uPlot.Range.MinMax {
    let top = Number.isFinite(hi) ? hi : 0;
    for (const t of this.spec.thresholds) if (t.scale === scale) top = Math.max(top, t.value * 1.15);
    let lo = 0;
    if (Number.isFinite(_lo) && _lo < 0) lo = _lo * 1.1; // signed series (a joint's error)
    if (top <= lo) top = lo + 1;
    return [lo, top * 1.05];
  }

  private drawMarks(u: uPlot): void {
    this.draws++;
    const { ctx, bbox } = u;
    const dpr = uPlot.pxRatio;
    ctx.save();
    ctx.font = `${10 * dpr}px system-ui, sans-serif`;
    ctx.lineWidth = dpr;
    for (const t of this.spec.thresholds) {
      const y = u.valToPos(t.value, t.scale, true);
      if (!Number.isFinite(y)) continue;
      ctx.strokeStyle = THRESHOLD_STROKE;
      ctx.setLineDash([5 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(bbox.left, y);
      ctx.lineTo(bbox.left + bbox.width, y);
      ctx.stroke();
      // Labels beside the axis of their scale: left-axis lines on the left, right-axis lines on the right.
      ctx.fillStyle = THRESHOLD_STROKE;
      const onRight = this.spec.axes.find((a) => a.scale === t.scale)?.side === 'right';
      const w = ctx.measureText(t.label).width;
      ctx.fillText(t.label, onRight ? bbox.left + bbox.width - w - 4 * dpr : bbox.left + 4 * dpr, y - 3 * dpr);
    }
    const f = this.frame;
    if (f && f.failureTimeS !== null) {
      const x = u.valToPos(f.failureTimeS, 'x', true);
      if (x >= bbox.left && x <= bbox.left + bbox.width) {
        ctx.strokeStyle = FAILURE_STROKE;
        ctx.setLineDash([]);
        ctx.lineWidth = 2 * dpr;
        ctx.beginPath();
        ctx.moveTo(x, bbox.top);
        ctx.lineTo(x, bbox.top + bbox.height);
        ctx.stroke();
        const label = f.failureLabel ?? 'hard failure';
        const w = ctx.measureText(label).width;
        const right = x + 4 * dpr + w <= bbox.left + bbox.width;
        const tx = right ? x + 4 * dpr : x - 4 * dpr - w;
        ctx.fillStyle = LABEL_BACKGROUND; // legible over the curves it crosses, which still show through
        ctx.fillRect(tx - 2 * dpr, bbox.top + 1 * dpr, w + 4 * dpr, 13 * dpr);
        ctx.fillStyle = FAILURE_STROKE;
        ctx.fillText(label, tx, bbox.top + 11 * dpr);
      }
    }
    ctx.restore();
  }

  /**
   * Runs on every pose change — while following a live run, inside the handling of each frame
   * push, before it is acknowledged — so it must not read layout: `over.clientWidth` here forced a
   * synchronous style and layout pass of the whole console per push and chart (most of the push
   * handling time), which delayed the acknowledgements until the services skipped frames for
   * display. uPlot's own plotting-area size (bbox, canvas pixels) is known without layout.
   */
  private placePlayhead(): void {
    if (!this.built) return;
    const t = this.playheadS;
    const x = this.frame?.columns[0];
    const left = t === null || !x || x.length === 0 ? Number.NaN : this.u.valToPos(t, 'x');
    const widthPx = this.u.bbox.width / uPlot.pxRatio;
    const inside = Number.isFinite(left) && left >= -0.5 && left <= widthPx + 0.5;
    const display = inside ? 'block' : 'none';
    if (this.playheadLine.style.display !== display) this.playheadLine.style.display = display;
    if (inside) this.playheadLine.style.left = `${left}px`;
  }
}
