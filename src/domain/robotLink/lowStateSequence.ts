// The order of a lowstate stream on one connection (g1-bridge/1 §3: `tick` never decreases,
// `stamp_ns` is non-decreasing). Each sample is judged against the last accepted one:
//
//   duplicate     — the same tick again: dropped;
//   out of order  — a smaller tick, or a smaller stamp: dropped;
//   accepted      — with the number of samples missing before it: a tick step larger than the
//                   smallest step seen on this connection means samples never arrived (dropped by
//                   the bridge, the network or the publisher's send buffer). The smallest step is
//                   the unit because a source may count ticks in other units than samples.
//
// The counts run since the sequencer was made (across connections); `newConnection()` forgets
// the last sample and the step unit, since a new connection may restart the source's counter.

export type LowStateVerdict =
  | { kind: 'accepted'; missing: number; previousTick: number | null }
  | { kind: 'duplicate'; tick: number }
  | { kind: 'out_of_order'; tick: number; stampNs: number; lastTick: number };

export interface LowStateSequenceStats {
  duplicate: number;
  outOfOrder: number;
  /** Samples missing between accepted ones, and the number of such gaps. */
  missingTicks: number;
  tickGapEvents: number;
}

export class LowStateSequencer {
  private lastTick: number | null = null;
  private lastStampNs: number | null = null;
  /** Smallest positive tick step seen on this connection; 0 before the second sample. */
  private tickStep = 0;
  private readonly counts: LowStateSequenceStats = { duplicate: 0, outOfOrder: 0, missingTicks: 0, tickGapEvents: 0 };

  /** Judges the next sample; an accepted one becomes the last. */
  judge(tick: number, stampNs: number): LowStateVerdict {
    const last = this.lastTick;
    if (last !== null) {
      if (tick === last) {
        this.counts.duplicate++;
        return { kind: 'duplicate', tick };
      }
      if (tick < last || (this.lastStampNs !== null && stampNs < this.lastStampNs)) {
        this.counts.outOfOrder++;
        return { kind: 'out_of_order', tick, stampNs, lastTick: last };
      }
    }
    let missing = 0;
    if (last !== null) {
      const step = tick - last;
      if (this.tickStep === 0 || step < this.tickStep) this.tickStep = step;
      missing = Math.round(step / this.tickStep) - 1;
      if (missing > 0) {
        this.counts.missingTicks += missing;
        this.counts.tickGapEvents++;
      }
    }
    this.lastTick = tick;
    this.lastStampNs = stampNs;
    return { kind: 'accepted', missing, previousTick: last };
  }

  /** The stamp of the last accepted sample on this connection, ns; null before the first. */
  get lastAcceptedStampNs(): number | null {
    return this.lastStampNs;
  }

  /** A new connection: the next sample is judged afresh (counts are kept). */
  newConnection(): void {
    this.lastTick = null;
    this.lastStampNs = null;
    this.tickStep = 0;
  }

  stats(): LowStateSequenceStats {
    return { ...this.counts };
  }
}
