import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import '../plots/plots.css';
import { labelledAxis } from '../plots/chartAxes';

// Closed curves in a plane with equal units on both axes (the sensitivity ellipses of
// src/domain/analysis/sensitivity.ts: sensitivityEllipses), imperative like categoryChart.ts: a
// uPlot chart in its x/y mode (mode 2: each series has its own x and y arrays), square, with one
// symmetric range on both scales so that a circle is drawn round. uPlot draws the curves, axes,
// grid and legend; nothing here draws by hand. Every chart is listed in `xyCharts` for the
// end-to-end tests.

export interface XyCurve {
  label: string;
  color: string;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  dashed?: boolean;
}

export interface XyChartSpec {
  id: string;
  sizePx: number;
  xLabel: string;
  yLabel: string;
  curves: XyCurve[];
}

export interface XyChartTestView {
  id: string;
  curves: { label: string; points: number; maxRadius: number }[];
  range: number;
  /** The scales' spans per CSS pixel of the plot box (equal units: the same). */
  unitsPerPx: { x: number; y: number };
  plotRect: { left: number; top: number; width: number; height: number };
}

export const xyCharts = new Map<string, XyChart>();

export class XyChart {
  private readonly u: uPlot;
  private readonly range: number;

  constructor(
    container: HTMLElement,
    readonly spec: XyChartSpec,
  ) {
    let r = 0;
    for (const c of spec.curves)
      for (let i = 0; i < c.x.length; i++) r = Math.max(r, Math.abs(c.x[i]), Math.abs(c.y[i]));
    // A little room around the largest curve; the same on both axes (equal units).
    this.range = r > 0 ? r * 1.08 : 1;
    const range = (): [number, number] => [-this.range, this.range];
    const opts: uPlot.Options = {
      mode: 2,
      width: spec.sizePx,
      height: spec.sizePx,
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
      legend: { show: true, live: false },
      scales: { x: { time: false, range }, y: { range } },
      axes: [labelledAxis('x', spec.xLabel, 2, 40, true), labelledAxis('y', spec.yLabel, 3, 40, true)],
      series: [
        {},
        ...spec.curves.map<uPlot.Series>((c) => ({
          label: c.label,
          stroke: c.color,
          width: c.dashed ? 1 : 1.5,
          ...(c.dashed ? { dash: [4, 3] } : {}),
          paths: uPlot.paths.linear!(),
          points: { show: false },
          facets: [
            { scale: 'x', auto: false },
            { scale: 'y', auto: false },
          ],
        })),
      ],
    };
    // Equal units: the plot box is not exactly square (the axes take different room on the two
    // sides), so the longer side gets the wider range, once uPlot has laid out the box (its ready
    // hook; an explicit min and max bypass the range functions).
    opts.hooks = {
      ready: [
        (u) => {
          const { width: w, height: h } = u.bbox;
          if (!(w > 0 && h > 0)) return;
          const kx = Math.max(1, w / h) * this.range;
          const ky = Math.max(1, h / w) * this.range;
          u.batch(() => {
            u.setScale('x', { min: -kx, max: kx });
            u.setScale('y', { min: -ky, max: ky });
          });
        },
      ],
    };
    const data = [null, ...spec.curves.map((c) => [Array.from(c.x), Array.from(c.y)])] as unknown as uPlot.AlignedData;
    this.u = new uPlot(opts, data, container);
    xyCharts.set(spec.id, this);
  }

  testView(): XyChartTestView {
    const r = this.u.over.getBoundingClientRect();
    return {
      id: this.spec.id,
      curves: this.spec.curves.map((c) => {
        let m = 0;
        for (let i = 0; i < c.x.length; i++) m = Math.max(m, Math.hypot(c.x[i], c.y[i]));
        return { label: c.label, points: c.x.length, maxRadius: m };
      }),
      range: this.range,
      unitsPerPx: {
        x: (this.u.scales.x.max! - this.u.scales.x.min!) / r.width,
        y: (this.u.scales.y.max! - this.u.scales.y.min!) / r.height,
      },
      plotRect: { left: r.left, top: r.top, width: r.width, height: r.height },
    };
  }

  destroy(): void {
    this.u.destroy();
    if (xyCharts.get(this.spec.id) === this) xyCharts.delete(this.spec.id);
  }
}
