import { Tensor } from 'onnxruntime-node';
import type { TrackingPolicySpec } from '../../domain/wbc/trackingPolicy';

// The state a policy graph carries from one step to the next: its recurrent inputs (a
// transformer's key/value cache, fed back from the matching output) and its step counter
// (int64 [1]). Buffers are allocated once and wrapped by the feeds; per step the outputs are
// copied in. Reset zeroes both; the counter also resets everything when it reaches the family's
// resetAt (HoloMotion's deploy does that before its rotary position table runs out).

export class PolicyRecurrence {
  /** Outputs to fetch besides the action. */
  readonly outputs: readonly string[];
  private readonly buffers: { output: string; data: Float32Array }[];
  private readonly counter: BigInt64Array | null;
  private steps = 0;
  /** Times the counter reached resetAt and the state was reset mid-episode. */
  windowResets = 0;

  constructor(
    private readonly spec: Pick<TrackingPolicySpec, 'recurrent' | 'stepCounter'>,
    feeds: Record<string, Tensor>,
  ) {
    this.buffers = spec.recurrent.map((r) => {
      const data = new Float32Array(r.dims.reduce((a, b) => a * b, 1));
      feeds[r.input] = new Tensor('float32', data, r.dims as number[]);
      return { output: r.output, data };
    });
    this.outputs = spec.recurrent.map((r) => r.output);
    if (spec.stepCounter) {
      this.counter = new BigInt64Array(1);
      feeds[spec.stepCounter.input] = new Tensor('int64', this.counter, [1]);
    } else this.counter = null;
  }

  /** The step index the next run is fed (0 after reset). */
  get step(): number {
    return this.steps;
  }

  reset(): void {
    for (const b of this.buffers) b.data.fill(0);
    this.steps = 0;
    if (this.counter) this.counter[0] = 0n;
  }

  /** Before a run: resets at the counter's limit, then writes the counter. */
  beforeRun(): void {
    const at = this.spec.stepCounter?.resetAt ?? null;
    if (at !== null && this.steps >= at) {
      this.reset();
      this.windowResets++;
    }
    if (this.counter) this.counter[0] = BigInt(this.steps);
  }

  /** After a run: the recurrent outputs become the next inputs; the counter advances. */
  afterRun(out: Record<string, Tensor>): void {
    for (const b of this.buffers) {
      const t = out[b.output];
      const d = t.data as Float32Array;
      if (d.length !== b.data.length)
        throw new RangeError(`output "${b.output}" has ${d.length} values; its input takes ${b.data.length}`);
      b.data.set(d);
    }
    this.steps++;
  }
}
