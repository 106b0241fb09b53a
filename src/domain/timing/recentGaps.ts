// The largest gap between arrivals over a recent window (timing health): the interlock's
// counted statuses, the robot link's lowstate deliveries. A fixed ring of (arrival, gap before it):
// no allocation per arrival. The gap still open at `nowMs` (since the last arrival) counts too, so
// a stream that has just gone silent shows its silence before the next arrival closes the gap.

export class RecentGaps {
  private readonly atMs: Float64Array;
  private readonly gapMs: Float64Array;
  private next = 0;
  private filled = 0;
  private last: number | null = null;

  /** @param capacity arrivals kept: enough for the window at the highest rate expected (4096: 8 s at 500 Hz) */
  constructor(capacity = 4096) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`capacity must be ≥ 1, got ${capacity}`);
    this.atMs = new Float64Array(capacity);
    this.gapMs = new Float64Array(capacity);
  }

  record(atMs: number): void {
    if (this.last !== null) {
      this.atMs[this.next] = atMs;
      this.gapMs[this.next] = Math.max(0, atMs - this.last);
      this.next = (this.next + 1) % this.atMs.length;
      if (this.filled < this.atMs.length) this.filled++;
    }
    this.last = atMs;
  }

  /** Forgets every arrival (a new connection: its first arrival is no gap). */
  reset(): void {
    this.next = 0;
    this.filled = 0;
    this.last = null;
  }

  /** Gaps closed within the window (the ring may hold fewer than the window at a high rate). */
  countWithin(nowMs: number, windowMs: number): number {
    let n = 0;
    this.scan(nowMs, windowMs, () => n++);
    return n;
  }

  /**
   * The largest gap that ended within the last `windowMs` before `nowMs`, or the gap open since the
   * last arrival if larger, ms; null before two arrivals and with no open gap to report.
   */
  maxGapMs(nowMs: number, windowMs: number): number | null {
    let max: number | null = null;
    this.scan(nowMs, windowMs, (gap) => {
      if (max === null || gap > max) max = gap;
    });
    if (this.last !== null) {
      const open = Math.max(0, nowMs - this.last);
      if (max === null || open > max) max = open;
    }
    return max;
  }

  private scan(nowMs: number, windowMs: number, visit: (gapMs: number) => void): void {
    const cap = this.atMs.length;
    for (let i = 1; i <= this.filled; i++) {
      const k = (this.next - i + cap) % cap;
      if (nowMs - this.atMs[k] > windowMs) break;
      visit(this.gapMs[k]);
    }
  }
}
