import { describe, expect, it } from 'vitest';
import { InterlockMonitor, keeperExitTrip, keeperSnapshotAt, type InterlockSnapshot } from '../../src/domain/interlock';

// The console's view of an interlock whose port lives in the keeper process: freshness judged at
// the moment of asking, and the keeper's exit as a port_closed trip.

function armedSnapshot(lastStatusAtMs: number | null): InterlockSnapshot {
  const s = new InterlockMonitor().snapshot(0);
  return { ...s, state: 'armed', armedAndFresh: true, freshness: { ...s.freshness, lastStatusAtMs } };
}

describe('keeperSnapshotAt', () => {
  it('is armed and fresh only while the last status is at most freshLimitMs old and the link is open', () => {
    const snap = armedSnapshot(1000);
    expect(keeperSnapshotAt(snap, 1040, 50, true)).toMatchObject({ atMs: 1040, armedAndFresh: true });
    expect(keeperSnapshotAt(snap, 1040, 50, true).freshness.ageMs).toBe(40);
    expect(keeperSnapshotAt(snap, 1050, 50, true).armedAndFresh).toBe(true);
    // NEGATIVE CONTROLS: a status that waited too long, a link already ended, a status from the future.
    expect(keeperSnapshotAt(snap, 1051, 50, true).armedAndFresh).toBe(false);
    expect(keeperSnapshotAt(snap, 1040, 50, false).armedAndFresh).toBe(false);
    expect(keeperSnapshotAt(snap, 999, 50, true).armedAndFresh).toBe(false);
    expect(keeperSnapshotAt(armedSnapshot(null), 1040, 50, true)).toMatchObject({
      armedAndFresh: false,
      freshness: { ageMs: null },
    });
    expect(keeperSnapshotAt({ ...snap, armedAndFresh: false }, 1040, 50, true).armedAndFresh).toBe(false);
  });
});

describe('keeperExitTrip', () => {
  it('is a port_closed trip from the last state, and the interlock lost after it', () => {
    const { trip, snapshot } = keeperExitTrip(
      armedSnapshot(1000),
      1030,
      'the interlock keeper process exited (SIGKILL)',
    );
    expect(trip).toEqual({
      reason: 'port_closed',
      atMs: 1030,
      fromState: 'armed',
      toState: 'lost',
      wasArmed: true,
      lastStatusAtMs: 1000,
      sinceLastStatusMs: 30,
      detail: 'the interlock keeper process exited (SIGKILL)',
    });
    expect(snapshot).toMatchObject({ state: 'lost', portOpen: false, armedAndFresh: false, lastTrip: trip });
    const safe = keeperExitTrip({ ...armedSnapshot(null), state: 'safe' }, 5, 'x').trip;
    expect(safe).toMatchObject({ wasArmed: false, fromState: 'safe', sinceLastStatusMs: null });
  });
});
