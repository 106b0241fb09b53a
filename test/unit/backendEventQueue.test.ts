import { describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import { BackendEventQueue } from '../../src/domain/backend/backendEventQueue';
import { createStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';

// The one bounded delivery queue of the robot link and the robot emulator: an idle listener gets
// an event at once, a busy one the next batch when its promise settles; at most maxQueuedFrames
// frames wait, the oldest dropped and counted; other events are never dropped.

const frame = (tick: number): StateFrame => {
  const f = createStateFrame(false);
  f.tick = tick;
  return f;
};
const frames = (runId: string, ...ticks: number[]): BackendEvent => ({
  type: 'frames',
  runId,
  frames: ticks.map(frame),
});
const ticksOf = (batch: BackendEvent[]) =>
  batch.map((e) => (e.type === 'frames' ? `${e.runId}:${e.frames.map((f) => f.tick).join(',')}` : e.type));

/** A listener that stays busy until released. */
function gatedListener() {
  const batches: BackendEvent[][] = [];
  let release: () => void = () => {};
  const listener = (batch: BackendEvent[]): Promise<void> => {
    batches.push(batch);
    return new Promise<void>((r) => (release = r));
  };
  const settle = async () => {
    release();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { batches, listener, settle };
}

describe('BackendEventQueue', () => {
  it('hands an event to an idle listener synchronously, inside push()', () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 10 });
    const { batches, listener } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 1));
    expect(batches.map(ticksOf)).toEqual([[':1']]);
  });

  it('while the listener is busy, waits in order, merges frames of the same run, and delivers it all as the next batch', async () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 10 });
    const { batches, listener, settle } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 1));
    q.push(frames('r1', 2));
    q.push(frames('r1', 3, 4));
    q.push({ type: 'presence', presence: 'stale' });
    q.push(frames('r1', 5));
    expect(batches).toHaveLength(1);
    await settle();
    expect(batches.map(ticksOf)).toEqual([[':1'], ['r1:2,3,4', 'presence', 'r1:5']]);
    expect(q.deliveredFrames).toBe(5);
  });

  it('bounds what waits: the oldest frames are dropped and counted, the newest kept, a notice leads the next batch', async () => {
    const notices: [number, number][] = [];
    const q = new BackendEventQueue({
      maxQueuedFrames: 5,
      dropNotice: (n, total) => {
        notices.push([n, total]);
        return { type: 'presence', presence: 'present' }; // any event: stands for the problem
      },
    });
    const { batches, listener, settle } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 0)); // in flight
    for (let k = 1; k <= 12; k++) q.push(frames('', k));
    q.push({
      type: 'episode_end',
      end: { runId: 'r', outcome: 'completed', reason: '', frames: 0, simSeconds: 0, wallSeconds: 0 },
    });
    expect(q.queuedFrames).toBe(5);
    expect(q.dropped).toBe(7);
    await settle();
    expect(notices).toEqual([[7, 7]]);
    expect(batches[1].map((e) => e.type)).toEqual(['presence', 'frames', 'episode_end']);
    expect(ticksOf(batches[1])[1]).toBe(':8,9,10,11,12');
  });

  it('control: within the bound nothing is dropped and no notice is made', async () => {
    let noticed = false;
    const q = new BackendEventQueue({ maxQueuedFrames: 5, dropNotice: () => ((noticed = true), null) });
    const { batches, listener, settle } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 0));
    for (let k = 1; k <= 5; k++) q.push(frames('', k));
    await settle();
    expect(q.dropped).toBe(0);
    expect(noticed).toBe(false);
    expect(ticksOf(batches[1])).toEqual([':1,2,3,4,5']);
  });

  it('never drops presence, problems or episode ends, however many wait', async () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 1 });
    const { batches, listener, settle } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 0));
    for (let k = 0; k < 50; k++) q.push({ type: 'presence', presence: k % 2 ? 'stale' : 'present' });
    await settle();
    expect(batches[1]).toHaveLength(50);
  });

  it('a failing listener loses only its batch; delivery goes on', async () => {
    const errors: unknown[] = [];
    const q = new BackendEventQueue({ maxQueuedFrames: 10, onListenerError: (e) => errors.push(e) });
    const seen: string[][] = [];
    let fail = true;
    q.setListener(async (batch) => {
      seen.push(ticksOf(batch));
      if (fail) {
        fail = false;
        throw new Error('recorder full');
      }
    });
    q.push(frames('', 1));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    q.push(frames('', 2));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(seen).toEqual([[':1'], [':2']]);
    expect((errors[0] as Error).message).toBe('recorder full');
  });

  it('holds nothing without a listener; removing the listener discards what waits', async () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 10 });
    q.push(frames('', 1));
    expect(q.queuedFrames).toBe(0);
    const { batches, listener } = gatedListener();
    q.setListener(listener);
    q.push(frames('', 2));
    q.push(frames('', 3));
    q.setListener(null);
    expect(q.queuedFrames).toBe(0);
    expect(batches.map(ticksOf)).toEqual([[':2']]);
    expect(() => new BackendEventQueue({ maxQueuedFrames: 0 })).toThrow(RangeError);
  });
});
