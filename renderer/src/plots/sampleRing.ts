// A fixed-size ring of timed samples (time + a few value columns) for rolling live plots: pushes
// overwrite the oldest sample once full, nothing allocates per push, and `columns()` returns the
// samples oldest first (with NaN as null, for uPlot) — called by the plot at its own ≤ 10 Hz.

export class SampleRing {
  readonly capacity: number;
  readonly width: number;
  /** Samples held (≤ capacity). */
  size = 0;
  private head = 0;
  private readonly t: Float64Array;
  private readonly v: Float64Array;

  constructor(capacity: number, width: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new RangeError(`capacity ${capacity}: a positive integer`);
    if (!(Number.isInteger(width) && width > 0)) throw new RangeError(`width ${width}: a positive integer`);
    this.capacity = capacity;
    this.width = width;
    this.t = new Float64Array(capacity);
    this.v = new Float64Array(capacity * width);
  }

  /** Adds one sample; `values` has `width` entries (NaN: unavailable). */
  push(timeS: number, values: ArrayLike<number>): void {
    const i = this.head;
    this.t[i] = timeS;
    for (let c = 0; c < this.width; c++) this.v[i * this.width + c] = values[c];
    this.head = (i + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  clear(): void {
    this.size = 0;
    this.head = 0;
  }

  /** Time of the newest sample, NaN when empty. */
  get lastTimeS(): number {
    return this.size === 0 ? Number.NaN : this.t[(this.head - 1 + this.capacity) % this.capacity];
  }

  /** [times, column 0, column 1, …], oldest first; non-finite values as null. */
  columns(): [number[], ...(number | null)[][]] {
    const n = this.size;
    const start = (this.head - n + this.capacity) % this.capacity;
    const x: number[] = new Array(n);
    const ys: (number | null)[][] = Array.from({ length: this.width }, () => new Array<number | null>(n));
    for (let k = 0; k < n; k++) {
      const i = (start + k) % this.capacity;
      x[k] = this.t[i];
      for (let c = 0; c < this.width; c++) {
        const val = this.v[i * this.width + c];
        ys[c][k] = Number.isFinite(val) ? val : null;
      }
    }
    return [x, ...ys];
  }
}
