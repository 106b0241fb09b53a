import { describe, expect, it } from 'vitest';
import {
  claimListener,
  ListenerTakenError,
  type BackendEvent,
  type BackendListener,
} from '../../src/domain/backend/backend';
import { BackendEventQueue } from '../../src/domain/backend/backendEventQueue';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { FakeBackend } from '../helpers/fakeBackend';

// A backend's listener has exactly one owner: a second setListener while one is set throws a
// ListenerTakenError naming the backend (never a silent replacement that starves the first
// owner); setListener(null) releases, and a new listener may then be set. The rule lives in
// claimListener (the embedded simulator) and the shared BackendEventQueue (the g1-bridge/1
// client, the robot emulator, the G1 runner).

const owner = { id: 'robot-1', name: 'Robot 10.0.0.2:9000' };
const frames = (tick: number): BackendEvent => {
  const f = createStateFrame(false);
  f.tick = tick;
  return { type: 'frames', runId: '', frames: [f] };
};

describe('one listener per backend', () => {
  it('claimListener refuses a second listener, naming the backend; null releases and a new one may be set', () => {
    const first: BackendListener = async () => {};
    const second: BackendListener = async () => {};
    let current = claimListener(owner, null, first);
    expect(current).toBe(first);
    let thrown: unknown = null;
    try {
      claimListener(owner, current, second);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ListenerTakenError);
    expect((thrown as ListenerTakenError).backendId).toBe('robot-1');
    expect((thrown as ListenerTakenError).backendName).toBe('Robot 10.0.0.2:9000');
    expect((thrown as Error).message).toContain('"Robot 10.0.0.2:9000" (robot-1)');
    current = claimListener(owner, current, null);
    expect(current).toBeNull();
    expect(claimListener(owner, current, second)).toBe(second);
  });

  it('negative control: setting a listener on a backend without one, or null on one with none, never throws', () => {
    expect(() => claimListener(owner, null, async () => {})).not.toThrow();
    expect(() => claimListener(owner, null, null)).not.toThrow();
  });

  it('the shared BackendEventQueue throws on a second listener and keeps delivering to the first', () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 10, owner });
    const got: string[] = [];
    q.setListener(async () => void got.push('first'));
    expect(() => q.setListener(async () => void got.push('second'))).toThrow(ListenerTakenError);
    expect(() => q.setListener(async () => {})).toThrow(/Robot 10\.0\.0\.2:9000/);
    q.push(frames(1));
    expect(got).toEqual(['first']);
  });

  it('the queue released with null takes a new listener, which gets what is pushed after', async () => {
    const q = new BackendEventQueue({ maxQueuedFrames: 10, owner });
    const got: string[] = [];
    q.setListener(async () => void got.push('first'));
    q.setListener(null);
    q.setListener(async () => void got.push('second'));
    q.push(frames(1));
    await Promise.resolve();
    expect(got).toEqual(['second']);
  });

  it('a Backend (the Connections fake, through claimListener) refuses a second listener and accepts one after release', () => {
    const b = new FakeBackend({ id: 'remote-1', name: 'sim.example:9000' });
    b.setListener(async () => {});
    expect(() => b.setListener(async () => {})).toThrow(ListenerTakenError);
    b.setListener(null);
    expect(() => b.setListener(async () => {})).not.toThrow();
    void b.close();
  });
});
