import type { Presence } from '../../domain/backend/backend';
import { SAFETY_MAX_ATTEMPTS, SAFETY_RETRY_MS } from '../robotLink/commandChannel';
import type { G1BridgeConnection } from '../robotLink/g1BridgeConnection';
import type { LinkClock, TimerHandle } from '../robotLink/linkClock';

// When a link is lost while its socket stays open (the server may be alive with only its state
// stream frozen), the socket is dropped and the link reconnects, but only once the stop and damp
// of the trip that follows have gone out on it and settled: a socket whose lowstate fell silent is
// kept SILENT_SOCKET_GRACE_MS at least (the gate trips on the presence event, and its stop and damp
// must arrive), then until no stop/damp is in flight on it, at the latest
// SILENT_SOCKET_MAX_MS after the loss.

/** How long a silent socket is kept at least, ms. */
export const SILENT_SOCKET_GRACE_MS = 300;
/** How long a silent socket is kept at most, ms: the grace plus every retry of a stop/damp. */
export const SILENT_SOCKET_MAX_MS = SILENT_SOCKET_GRACE_MS + SAFETY_RETRY_MS * SAFETY_MAX_ATTEMPTS;

export interface SilentSocketDropOptions {
  clock: LinkClock;
  /** The connection whose socket is open, if any. */
  liveConn: () => G1BridgeConnection | null;
  presence: () => Presence;
  /** Stop/damp deliveries not yet settled. */
  safetyInFlight: () => number;
  /** Drops `conn`'s socket (it has been silent long enough and nothing safety-relevant is pending on it). */
  drop: (conn: G1BridgeConnection) => void;
}

export class SilentSocketDrop {
  /** The drop of a silent socket, pending until its stop/damp deliveries settle. */
  private pending: { timer: TimerHandle | null; sinceMs: number; conn: G1BridgeConnection } | null = null;

  constructor(private readonly o: SilentSocketDropOptions) {}

  /** The link was declared lost: drop its socket when that is safe (nothing if no socket is open or a drop is pending). */
  schedule(): void {
    const conn = this.o.liveConn();
    if (!conn || this.pending) return;
    this.pending = { timer: null, sinceMs: this.o.clock.nowMs(), conn };
    this.dropIfDrained();
  }

  /**
   * Drops the silent socket once SILENT_SOCKET_GRACE_MS passed and no stop/damp is in flight on it
   * (at the latest SILENT_SOCKET_MAX_MS after the loss); until then re-checks when that can change.
   */
  dropIfDrained(): void {
    const d = this.pending;
    if (!d) return;
    const clock = this.o.clock;
    clock.clearTimeout(d.timer);
    d.timer = null;
    if (d.conn !== this.o.liveConn() || this.o.presence() !== 'lost') {
      // Another socket by now, or this one came back to life (state flows again): nothing to drop.
      this.pending = null;
      return;
    }
    const age = clock.nowMs() - d.sinceMs;
    const waitMs =
      age < SILENT_SOCKET_GRACE_MS
        ? SILENT_SOCKET_GRACE_MS - age
        : this.o.safetyInFlight() > 0
          ? SILENT_SOCKET_MAX_MS - age
          : 0;
    if (waitMs > 0) {
      d.timer = clock.setTimeout(() => this.dropIfDrained(), waitMs, { keepAlive: false });
      return;
    }
    this.pending = null;
    this.o.drop(d.conn);
  }

  /** Forgets a pending drop (the link is closing). */
  cancel(): void {
    this.o.clock.clearTimeout(this.pending?.timer ?? null);
    this.pending = null;
  }
}
