import type { RobotLinkStats } from '../../domain/backend/backend';
import { SampleRing } from '../../domain/interlock/sampleRing';
import { ArrivalTimes } from '../../domain/robotLink/arrivalRate';
import type { StateIntakeStats } from '../../domain/robotLink/stateIntake';
import type { LinkClock } from '../robotLink/linkClock';

// The bridge client's counts and link figures: connections, state intake counts (both intakes
// summed: one connection uses one of them, a URL may serve either over time), frames dropped for a
// slow listener, ping round trip, state rate over the last second, age of the last lowstate and,
// when the server declares its stamp clock's origin, one-way latency percentiles.

/** Link figures (the Connections panel reads `latencyMs`; the rest is for the trial runner and benchmarks). */
export type BridgeLinkStats = RobotLinkStats;

export interface BridgeClientStats {
  connects: number;
  /** lowstate messages received / accepted as frames. */
  received: number;
  accepted: number;
  malformed: number;
  duplicate: number;
  outOfOrder: number;
  /** Frames dropped because the listener was too slow. */
  dropped: number;
  /** Messages of other topics that failed validation (root_state, wbc_status). */
  malformedOther: number;
  /** Protocol (control or binary) frames refused before parsing, or whose handling threw. */
  malformedControl: number;
  /** lowstates larger than G1_BRIDGE_LIMITS.lowStateBytes (also counted as malformed). */
  oversized: number;
  /** Ticks missing between consecutive accepted lowstates, and the number of such gaps. */
  missingTicks: number;
  tickGapEvents: number;
}

export interface LinkFiguresOptions {
  clock: LinkClock;
  /** One-way latency percentiles are over this many most recent frames. */
  latencyWindow: number;
  intakes: readonly { stats(): StateIntakeStats }[];
  /** Frames dropped so far because the listener was too slow. */
  dropped: () => number;
  /** `stamp_origin_unix_ms` of the current server, null when it declares none. */
  stampOriginUnixMs: () => number | null;
}

/** Receive times kept for the rate over the last second (enough for a 5 kHz stream). */
const STATE_TIME_RING = 8192;

export class LinkFigures {
  /** Connections opened. */
  connects = 0;
  /** Protocol frames from the server refused. */
  malformedControl = 0;
  /** The latest ping round trip, ms. */
  rttMs: number | null = null;
  private readonly arrivals = new ArrivalTimes(STATE_TIME_RING);
  private readonly latency: SampleRing;

  constructor(private readonly o: LinkFiguresOptions) {
    this.latency = new SampleRing(Math.max(1, Math.floor(o.latencyWindow)));
  }

  /** An accepted lowstate stamped `stampNs`, received at `receivedAtMs` (the clock's nowMs()). */
  frameArrived(receivedAtMs: number, stampNs: number): void {
    this.arrivals.record(receivedAtMs);
    const latencyMs = this.oneWayLatencyMs(stampNs, receivedAtMs);
    if (latencyMs !== null) this.latency.add(latencyMs);
  }

  /**
   * One-way latency of a frame stamped `stampNs` by the publisher, as of `atMs` (the clock's
   * nowMs(), default now), ms: (wall clock then − stamp origin) − stamp. Null unless the server
   * declared `stamp_origin_unix_ms`.
   */
  oneWayLatencyMs(stampNs: number, atMs: number = this.o.clock.nowMs()): number | null {
    const origin = this.o.stampOriginUnixMs();
    return origin === null ? null : this.o.clock.timeOriginUnixMs + atMs - origin - stampNs / 1e6;
  }

  /** Both intakes' counts. */
  private intakeStats(): StateIntakeStats {
    const [first, ...more] = this.o.intakes.map((i) => i.stats());
    const sum = { ...first } as Record<keyof StateIntakeStats, number>;
    for (const s of more) for (const k of Object.keys(sum) as (keyof StateIntakeStats)[]) sum[k] += s[k];
    return sum;
  }

  stats(): BridgeClientStats {
    const s = this.intakeStats();
    return {
      connects: this.connects,
      received: s.received,
      accepted: s.accepted,
      malformed: s.malformed,
      duplicate: s.duplicate,
      outOfOrder: s.outOfOrder,
      dropped: this.o.dropped(),
      malformedOther: s.malformedOther,
      malformedControl: this.malformedControl,
      oversized: s.oversized,
      missingTicks: s.missingTicks,
      tickGapEvents: s.tickGapEvents,
    };
  }

  linkStats(): BridgeLinkStats {
    const now = this.o.clock.nowMs();
    const s = this.intakeStats();
    const last = this.arrivals.lastAtMs;
    const p50 = this.latency.percentile(50);
    return {
      latencyMs: this.rttMs,
      stateRateHz: this.arrivals.countWithin(now, 1000),
      lastStateAgeMs: last === null ? null : now - last,
      missingTicks: s.missingTicks,
      tickGapEvents: s.tickGapEvents,
      oneWayLatencyMs:
        p50 === null
          ? null
          : {
              p50,
              p99: this.latency.percentile(99) as number,
              max: this.latency.maxEver as number,
              count: this.latency.count,
            },
      dropped: this.o.dropped(),
    };
  }
}
