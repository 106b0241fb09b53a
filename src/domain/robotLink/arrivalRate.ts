// Arrival times of the most recent accepted samples (console monotonic ms), for the rate over a
// recent window and the age of the last one. A fixed ring: no allocation per sample.

export class ArrivalTimes {
  private readonly times: Float64Array;
  private next = 0;
  private filled = 0;
  private last: number | null = null;

  /** @param capacity samples kept: enough for the window at the highest rate expected (8192: 1 s at 5 kHz) */
  constructor(capacity = 8192) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`capacity must be ≥ 1, got ${capacity}`);
    this.times = new Float64Array(capacity);
  }

  record(atMs: number): void {
    this.times[this.next] = atMs;
    this.next = (this.next + 1) % this.times.length;
    if (this.filled < this.times.length) this.filled++;
    this.last = atMs;
  }

  /** The last arrival, ms; null before the first. */
  get lastAtMs(): number | null {
    return this.last;
  }

  /** Arrivals no older than windowMs at nowMs (newest first, stops at the first older one). */
  countWithin(nowMs: number, windowMs: number): number {
    const cap = this.times.length;
    let n = 0;
    for (let i = 1; i <= this.filled; i++) {
      if (nowMs - this.times[(this.next - i + cap) % cap] > windowMs) break;
      n++;
    }
    return n;
  }
}
