import { afterEach, describe, expect, it } from 'vitest';
import { ListenerTakenError, type BackendEvent, type BackendListener } from '../../src/domain/backend/backend';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { BackendHub, backendHub, releaseBackendHub } from '../../src/services/stream/backendHub';
import { FakeBackend } from '../helpers/fakeBackend';

// The one owner of a backend's listener and the one fan-out of its events: 'every' subscribers
// (recorder, gate driver, live metrics) get every event in order and hold the backend back;
// 'latest' subscribers (the display) get the newest frame of each run, coalesced while they are
// busy; a failing subscriber is reported and starves no other.

/** A backend whose listener the test drives batch by batch. */
class DrivenBackend extends FakeBackend {
  listenerNow: BackendListener | null = null;
  override setListener(listener: BackendListener | null): void {
    super.setListener(listener);
    this.listenerNow = listener;
  }
  send(events: BackendEvent[]): Promise<void> {
    return this.listenerNow ? this.listenerNow(events) : Promise.resolve();
  }
}

const made: DrivenBackend[] = [];
const driven = (): DrivenBackend => {
  const b = new DrivenBackend({ id: `b${made.length}`, name: `backend ${made.length}` });
  made.push(b);
  return b;
};
afterEach(async () => {
  for (const b of made.splice(0)) {
    releaseBackendHub(b);
    await b.close();
  }
});

const framesOf = (runId: string, ...ticks: number[]): BackendEvent => ({
  type: 'frames',
  runId,
  frames: ticks.map((t) => {
    const f = createStateFrame(false);
    f.tick = t;
    return f;
  }),
});
const label = (batch: BackendEvent[]): string[] =>
  batch.map((e) => (e.type === 'frames' ? `${e.runId}:${e.frames.map((f) => f.tick).join(',')}` : e.type));
const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A subscriber busy until the test settles it. */
function gated() {
  const batches: BackendEvent[][] = [];
  const releases: (() => void)[] = [];
  const onEvents = (events: BackendEvent[]): Promise<void> => {
    batches.push(events);
    return new Promise<void>((r) => releases.push(r));
  };
  const settle = async (): Promise<void> => {
    for (const r of releases.splice(0)) r();
    await flush();
  };
  return { batches, onEvents, settle };
}

describe('BackendHub', () => {
  it('owns the backend listener: one hub per backend, and a second owner is refused', () => {
    const b = driven();
    const hub = backendHub(b);
    expect(backendHub(b)).toBe(hub);
    expect(() => new BackendHub(b)).toThrow(ListenerTakenError);
    releaseBackendHub(b);
    expect(b.listenerNow).toBeNull();
    expect(backendHub(b)).not.toBe(hub);
  });

  it("'every' subscribers see every event, in order, and the backend waits for all of them", async () => {
    const b = driven();
    const hub = backendHub(b);
    const slow = gated();
    const fast: string[][] = [];
    hub.subscribe({ name: 'recorder', delivery: 'every', onEvents: slow.onEvents });
    hub.subscribe({ name: 'gate', delivery: 'every', onEvents: (e) => void fast.push(label(e)) });
    let settled = false;
    const first = b.send([framesOf('r', 1, 2), { type: 'presence', presence: 'stale' }]).then(() => (settled = true));
    // Called synchronously, both in the same turn.
    expect(slow.batches.map(label)).toEqual([['r:1,2', 'presence']]);
    expect(fast).toEqual([['r:1,2', 'presence']]);
    await flush();
    expect(settled).toBe(false); // backpressure: the slow subscriber holds the batch
    await slow.settle();
    await first;
    for (let t = 3; t <= 40; t++) {
      const p = b.send([framesOf('r', t)]);
      await slow.settle();
      await p;
    }
    const ticks = (bs: string[][]): string => bs.flat().join(' ');
    expect(ticks(slow.batches.map(label))).toBe(ticks(fast));
    expect(fast.flat().filter((x) => x.startsWith('r:')).length).toBe(39);
    expect(fast.flat().at(-1)).toBe('r:40');
  });

  it("'latest' subscribers are coalesced to the newest frame per run, keep other events, and never hold the backend", async () => {
    const b = driven();
    const hub = backendHub(b);
    const display = gated();
    hub.subscribe({ name: 'display', delivery: 'latest', onEvents: display.onEvents });
    await b.send([framesOf('r', 1)]);
    // Busy with the first: these resolve at once and wait, coalesced.
    await b.send([framesOf('r', 2, 3)]);
    await b.send([{ type: 'presence', presence: 'stale' }]);
    await b.send([framesOf('r', 4, 5), framesOf('s', 9)]);
    await b.send([framesOf('r', 6)]);
    expect(display.batches.map(label)).toEqual([['r:1']]);
    await display.settle();
    expect(display.batches.map(label)).toEqual([['r:1'], ['presence', 's:9', 'r:6']]);
    await display.settle();
    expect(display.batches).toHaveLength(2);
  });

  it("negative control: an idle 'latest' subscriber gets each batch whole (coalescing only happens while it is busy)", async () => {
    const b = driven();
    const got: string[][] = [];
    backendHub(b).subscribe({ name: 'display', delivery: 'latest', onEvents: (e) => void got.push(label(e)) });
    await b.send([framesOf('r', 1, 2, 3)]);
    await flush();
    await b.send([framesOf('r', 4, 5)]);
    await flush();
    expect(got).toEqual([['r:1,2,3'], ['r:4,5']]);
  });

  it('unsubscribe stops delivery at once, also of a coalesced batch waiting for a busy display', async () => {
    const b = driven();
    const hub = backendHub(b);
    const every: string[][] = [];
    const display = gated();
    const offEvery = hub.subscribe({ name: 'metrics', delivery: 'every', onEvents: (e) => void every.push(label(e)) });
    const offDisplay = hub.subscribe({ name: 'display', delivery: 'latest', onEvents: display.onEvents });
    await b.send([framesOf('r', 1)]);
    await b.send([framesOf('r', 2)]);
    offEvery();
    offDisplay();
    offDisplay(); // twice is harmless
    await b.send([framesOf('r', 3)]);
    await display.settle();
    expect(every).toEqual([['r:1'], ['r:2']]);
    expect(display.batches.map(label)).toEqual([['r:1']]);
    expect(hub.size).toBe(0);
  });

  it('a subscriber that throws or rejects is reported and does not starve the others', async () => {
    const b = driven();
    const reported: string[] = [];
    const hub = backendHub(b, {
      onSubscriberError: (name, err) => reported.push(`${name}: ${(err as Error).message}`),
    });
    const own: unknown[] = [];
    const got: string[][] = [];
    hub.subscribe({
      name: 'thrower',
      delivery: 'every',
      onEvents: () => {
        throw new Error('sync boom');
      },
    });
    hub.subscribe({ name: 'rejecter', delivery: 'every', onEvents: () => Promise.reject(new Error('async boom')) });
    hub.subscribe({
      name: 'display',
      delivery: 'latest',
      onEvents: () => {
        throw new Error('draw boom');
      },
      onError: (err) => own.push(err),
    });
    hub.subscribe({ name: 'recorder', delivery: 'every', onEvents: (e) => void got.push(label(e)) });
    await b.send([framesOf('r', 1)]);
    await b.send([framesOf('r', 2)]);
    await flush();
    expect(got).toEqual([['r:1'], ['r:2']]);
    expect(reported).toEqual([
      'thrower: sync boom',
      'rejecter: async boom',
      'thrower: sync boom',
      'rejecter: async boom',
    ]);
    expect(own).toHaveLength(2);
  });

  it('release lets the listener go and ends every subscription', async () => {
    const b = driven();
    const hub = backendHub(b);
    const got: string[][] = [];
    hub.subscribe({ name: 'recorder', delivery: 'every', onEvents: (e) => void got.push(label(e)) });
    await b.send([framesOf('r', 1)]);
    releaseBackendHub(b);
    expect(hub.size).toBe(0);
    expect(b.listenerNow).toBeNull();
    await b.send([framesOf('r', 2)]);
    expect(got).toEqual([['r:1']]);
    // The backend takes a new owner after the release.
    expect(() => backendHub(b)).not.toThrow();
  });
});
