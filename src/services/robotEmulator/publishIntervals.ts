/** Interval histogram: 10 µs bins up to 200 ms. */
const HIST_BIN_MS = 0.01;
const HIST_BINS = 20_000;

/** Mean, standard deviation, 99th percentile and largest of the intervals between writes, ms. */
export interface IntervalSummary {
  mean: number;
  sd: number;
  p99: number;
  max: number;
}

/** The intervals between consecutive writes of a stream, measured without keeping them. */
export class PublishIntervals {
  private lastMs = 0;
  private n = 0;
  private sum = 0;
  private sumSq = 0;
  private maxMs = 0;
  private readonly hist = new Uint32Array(HIST_BINS + 1);

  /** A write at `nowMs` (performance.now()). */
  wrote(nowMs: number): void {
    if (this.lastMs > 0) {
      const d = nowMs - this.lastMs;
      this.n++;
      this.sum += d;
      this.sumSq += d * d;
      if (d > this.maxMs) this.maxMs = d;
      this.hist[Math.min(HIST_BINS, Math.floor(d / HIST_BIN_MS))]++;
    }
    this.lastMs = nowMs;
  }

  summary(): IntervalSummary {
    const n = this.n;
    const mean = n > 0 ? this.sum / n : 0;
    return {
      mean,
      sd: n > 1 ? Math.sqrt(Math.max(0, this.sumSq / n - mean * mean)) : 0,
      p99: this.percentileMs(99),
      max: this.maxMs,
    };
  }

  private percentileMs(p: number): number {
    const target = Math.ceil((p / 100) * this.n);
    let acc = 0;
    for (let i = 0; i <= HIST_BINS; i++) {
      acc += this.hist[i];
      if (acc >= target && target > 0) return (i + 1) * HIST_BIN_MS;
    }
    return 0;
  }
}
