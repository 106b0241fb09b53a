import type { GateEvent } from '../../domain/safety/safetyTypes';
import { openInterlockKeeper, type OpenInterlockKeeperOptions } from '../interlock/interlockKeeperLink';
import type { InterlockLink } from '../interlock/serialInterlock';

// The interlock box as the safety gate hears it: openInterlock's callbacks turned into gate events
// (`interlock_status` for every counted status, `estop` for EV ESTOP / ST ESTOP, `interlock_lost`
// for silence or a lost port) that any number of watchers — the trial runner's gate, the console's
// status light — can subscribe to. Times are the interlock's monotonic clock (performance.now()).
// The link runs in the interlock keeper process (interlockKeeperLink.ts: heartbeats that this
// process's busy loop cannot delay, with a watchdog on this loop).

export interface InterlockFeed {
  readonly link: InterlockLink;
  /** Adds a watcher; returns the unsubscribe. */
  subscribe(listener: (e: GateEvent) => void): () => void;
  close(): Promise<void>;
}

export async function openInterlockFeed(
  options: Omit<OpenInterlockKeeperOptions, 'onTrip' | 'onDeviceStatus' | 'onEvent'> &
    Partial<Pick<OpenInterlockKeeperOptions, 'onTrip'>>,
): Promise<InterlockFeed> {
  const watchers = new Set<(e: GateEvent) => void>();
  const emit = (e: GateEvent): void => {
    for (const w of [...watchers]) {
      try {
        w(e);
      } catch {
        // one watcher's failure is its own
      }
    }
  };
  const link = await openInterlockKeeper({
    ...options,
    onDeviceStatus: (s) => emit({ type: 'interlock_status', atMs: s.atMs, status: s.state }),
    onEvent: (ev, atMs) => {
      if (ev === 'ESTOP') emit({ type: 'estop', atMs, reason: 'EV ESTOP from the interlock box' });
    },
    onTrip: (trip, snapshot) => {
      if (trip.reason === 'estop_event' || trip.reason === 'status_estop')
        emit({ type: 'estop', atMs: trip.atMs, reason: `interlock: ${trip.detail}` });
      else if (trip.reason === 'device_disarmed') emit({ type: 'interlock_status', atMs: trip.atMs, status: 'SAFE' });
      // A link lost while it was armed (motion may have been permitted) is a trip. One lost before
      // arming — e.g. a box that takes longer than 100 ms to answer after the port opens — only
      // leaves the status stale, which refuses motion (docs/SAFETY_GATE.md: outside motion, a lost
      // link refuses, it does not trip; a trip would also damp a robot standing idle).
      else if (trip.wasArmed)
        emit({ type: 'interlock_lost', atMs: trip.atMs, reason: `interlock ${trip.reason}: ${trip.detail}` });
      options.onTrip?.(trip, snapshot);
    },
  });
  return {
    link,
    subscribe(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    close: () => link.close(),
  };
}
