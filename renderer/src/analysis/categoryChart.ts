import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import '../plots/plots.css';
import { AXIS_STROKE, GRID_STROKE, valueAxes } from '../plots/chartAxes';

// A chart over categories (readings, selection steps, bindings), imperative like timeChart.ts: a
// uPlot chart whose x is the category index, with
//   - point series with 95 % interval whiskers (drawn in uPlot's draw hook from the series' lo/hi,
//     each series nudged sideways so that two bindings' whiskers on one reading do not overlap),
//   - bar series (uPlot.paths.bars) and line series on a second y scale (a cumulative share),
//   - an optional zero line on a scale (a gap of 0 %, a strength of 0).
// uPlot draws the axes, scales, grid, legend and cursor; only the whiskers are ours. It draws on
// setData / setSize only: an idle chart costs nothing. A click on a category calls onPick with its
// index. Every chart is listed in `categoryCharts` for the end-to-end tests.

export interface CategorySeries {
  label: string;
  color: string;
  kind: 'points' | 'bars' | 'line';
  scale: string;
  values: (number | null)[];
  /** Interval ends (points only). */
  lo?: (number | null)[];
  hi?: (number | null)[];
  digits?: number;
}

export interface CategoryChartSpec {
  id: string;
  heightPx: number;
  categories: string[];
  series: CategorySeries[];
  axes: { scale: string; label: string; side: 'left' | 'right'; range?: [number, number] }[];
  /** What a category is, for the legend ("reading", "step", "binding"). */
  xLabel: string;
  /** Draw y = 0 on this scale. */
  zeroOn?: string;
  /** Slant the category labels (many categories with long names, e.g. joint names). */
  slantLabels?: boolean;
}

export interface CategoryChartTestView {
  id: string;
  categories: string[];
  series: { label: string; kind: CategorySeries['kind']; points: number; whiskers: number }[];
  plotRect: { left: number; top: number; width: number; height: number };
  draws: number;
}

export const categoryCharts = new Map<string, CategoryChart>();

const ZERO_STROKE = '#d29922';

export class CategoryChart {
  private readonly u: uPlot;
  private readonly resize: ResizeObserver;
  private draws = 0;

  constructor(
    private readonly container: HTMLElement,
    readonly spec: CategoryChartSpec,
    private readonly onPick?: (index: number) => void,
  ) {
    const n = spec.categories.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    const bars = uPlot.paths.bars!({ size: [0.6, 40] });
    const opts: uPlot.Options = {
      width: Math.max(160, container.clientWidth),
      height: spec.heightPx,
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
      legend: { show: true, live: true },
      scales: {
        x: { time: false, range: () => [-0.6, n - 0.4] },
        ...Object.fromEntries(spec.axes.map((a) => [a.scale, a.range ? { range: a.range } : { auto: true }])),
      },
      axes: [
        {
          stroke: AXIS_STROKE,
          grid: { show: false },
          ticks: { stroke: GRID_STROKE },
          splits: () => xs,
          values: (_u, splits) => splits.map((i) => spec.categories[i] ?? ''),
          font: '10px system-ui, sans-serif',
          // a category may be two lines ("\n"): uPlot draws each line; the axis grows to hold them
          ...(spec.slantLabels
            ? { rotate: -35, size: 62 }
            : { size: spec.categories.some((c) => c.includes('\n')) ? 46 : 34 }),
        },
        ...valueAxes(spec.axes, 48),
      ],
      series: [
        {
          label: spec.xLabel,
          value: (_u, v) => (v === null || v === undefined ? '—' : (spec.categories[v] ?? '').replace('\n', ' ')),
        },
        ...spec.series.map<uPlot.Series>((s) => ({
          label: s.label,
          scale: s.scale,
          stroke: s.color,
          ...(s.kind === 'bars'
            ? { fill: `${s.color}88`, paths: bars, points: { show: false }, width: 1 }
            : s.kind === 'line'
              ? { width: 1.5, points: { show: true, size: 4 } }
              : // Points are drawn with their whiskers (drawOverlay), nudged apart; uPlot keeps the legend.
                { paths: () => null, points: { show: false }, width: 2 }),
          value: (_u, v) => (v === null || v === undefined ? '—' : v.toFixed(s.digits ?? 2)),
        })),
      ],
      hooks: { draw: [(u) => this.drawOverlay(u)] },
    };
    const data: uPlot.AlignedData = [xs, ...spec.series.map((s) => s.values.map((v) => v ?? null))];
    this.u = new uPlot(opts, data, container);
    this.u.over.addEventListener('click', (e) => {
      if (!this.onPick) return;
      const rect = this.u.over.getBoundingClientRect();
      const i = Math.round(this.u.posToVal(e.clientX - rect.left, 'x'));
      if (i >= 0 && i < n) this.onPick(i);
    });
    this.resize = new ResizeObserver(() => {
      const w = Math.max(160, this.container.clientWidth);
      if (w !== this.u.width) this.u.setSize({ width: w, height: spec.heightPx });
    });
    this.resize.observe(container);
    categoryCharts.set(spec.id, this);
  }

  /** The point series (dot and whiskers, nudged sideways per series) and the zero line, in canvas pixels. */
  private drawOverlay(u: uPlot): void {
    this.draws++;
    const ctx = u.ctx;
    const dpr = devicePixelRatio;
    ctx.save();
    if (this.spec.zeroOn) {
      const y = u.valToPos(0, this.spec.zeroOn, true);
      if (y >= u.bbox.top && y <= u.bbox.top + u.bbox.height) {
        ctx.strokeStyle = ZERO_STROKE;
        ctx.setLineDash([4 * dpr, 3 * dpr]);
        ctx.lineWidth = dpr;
        ctx.beginPath();
        ctx.moveTo(u.bbox.left, y);
        ctx.lineTo(u.bbox.left + u.bbox.width, y);
        ctx.stroke();
        ctx.setLineDash([]);
      }
    }
    const points = this.spec.series.filter((s) => s.kind === 'points');
    points.forEach((s, k) => {
      const nudge = (k - (points.length - 1) / 2) * 8 * dpr;
      ctx.strokeStyle = s.color;
      ctx.fillStyle = s.color;
      ctx.lineWidth = 1.5 * dpr;
      for (let i = 0; i < s.values.length; i++) {
        const v = s.values[i];
        const x = u.valToPos(i, 'x', true) + nudge;
        if (v !== null) {
          ctx.beginPath();
          ctx.arc(x, u.valToPos(v, s.scale, true), 3.5 * dpr, 0, 2 * Math.PI);
          ctx.fill();
        }
        const lo = s.lo?.[i];
        const hi = s.hi?.[i];
        if (lo === null || hi === null || lo === undefined || hi === undefined) continue;
        const y0 = u.valToPos(lo, s.scale, true);
        const y1 = u.valToPos(hi, s.scale, true);
        ctx.beginPath();
        ctx.moveTo(x, y0);
        ctx.lineTo(x, y1);
        ctx.moveTo(x - 3 * dpr, y0);
        ctx.lineTo(x + 3 * dpr, y0);
        ctx.moveTo(x - 3 * dpr, y1);
        ctx.lineTo(x + 3 * dpr, y1);
        ctx.stroke();
      }
    });
    ctx.restore();
  }

  testView(): CategoryChartTestView {
    const r = this.u.over.getBoundingClientRect();
    return {
      id: this.spec.id,
      categories: this.spec.categories,
      series: this.spec.series.map((s) => ({
        label: s.label,
        kind: s.kind,
        points: s.values.filter((v) => v !== null).length,
        whiskers: s.lo && s.hi ? s.lo.filter((v, i) => v !== null && s.hi![i] !== null).length : 0,
      })),
      plotRect: { left: r.left, top: r.top, width: r.width, height: r.height },
      draws: this.draws,
    };
  }

  destroy(): void {
    this.resize.disconnect();
    this.u.destroy();
    if (categoryCharts.get(this.spec.id) === this) categoryCharts.delete(this.spec.id);
  }
}
