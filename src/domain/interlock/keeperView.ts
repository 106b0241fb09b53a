import type { InterlockSnapshot, InterlockTrip } from './interlockMonitor';

// The console's view of an interlock whose port lives in a keeper process: it has only the
// snapshots the keeper sent. Two pure rules over them: how fresh the last one is *now* (a
// snapshot that waited in the channel can only make the answer false, never a stale status look
// fresh), and what the keeper's death means (it took the port with it: a port loss, a trip).

/** The last snapshot the keeper sent, its freshness judged at `atMs`; armed-and-fresh only while the link is open. */
export function keeperSnapshotAt(
  snap: InterlockSnapshot,
  atMs: number,
  freshLimitMs: number,
  linkOpen: boolean,
): InterlockSnapshot {
  const last = snap.freshness.lastStatusAtMs;
  const ageMs = last === null ? null : atMs - last;
  const fresh = ageMs !== null && ageMs >= 0 && ageMs <= freshLimitMs;
  return {
    ...snap,
    atMs,
    armedAndFresh: linkOpen && snap.armedAndFresh && fresh,
    freshness: { ...snap.freshness, ageMs },
  };
}

/** The trip a keeper's exit at `atMs` is (`port_closed`, the interlock lost) and the snapshot after it. */
export function keeperExitTrip(
  snap: InterlockSnapshot,
  atMs: number,
  detail: string,
): { trip: InterlockTrip; snapshot: InterlockSnapshot } {
  const lastStatusAtMs = snap.freshness.lastStatusAtMs;
  const trip: InterlockTrip = {
    reason: 'port_closed',
    atMs,
    fromState: snap.state,
    toState: 'lost',
    wasArmed: snap.state === 'armed',
    lastStatusAtMs,
    sinceLastStatusMs: lastStatusAtMs === null ? null : atMs - lastStatusAtMs,
    detail,
  };
  return { trip, snapshot: { ...snap, state: 'lost', portOpen: false, armedAndFresh: false, lastTrip: trip } };
}
