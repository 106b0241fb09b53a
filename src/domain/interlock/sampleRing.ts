import { percentileLinearInPlace } from '../metrics/percentile';

/** A fixed-size ring of the most recent samples (e.g. heartbeat round-trip times), with percentiles. */
export class SampleRing {
  private readonly values: Float64Array;
  private readonly scratch: Float64Array;
  private next = 0;
  private filled = 0;
  private max = Number.NEGATIVE_INFINITY;

  constructor(capacity = 512) {
    this.values = new Float64Array(capacity);
    this.scratch = new Float64Array(capacity);
  }

  add(v: number): void {
    this.values[this.next] = v;
    this.next = (this.next + 1) % this.values.length;
    if (this.filled < this.values.length) this.filled++;
    if (v > this.max) this.max = v;
  }

  get count(): number {
    return this.filled;
  }

  /** Largest sample ever added (not only those still in the ring); null before the first. */
  get maxEver(): number | null {
    return this.filled === 0 ? null : this.max;
  }

  /** numpy-'linear' percentile of the samples in the ring; null when empty. */
  percentile(p: number): number | null {
    if (this.filled === 0) return null;
    this.scratch.set(this.values.subarray(0, this.filled));
    return percentileLinearInPlace(this.scratch, this.filled, p);
  }
}
