import { afterEach, describe, expect, it } from 'vitest';
import { apiEventSchema, LIVE_SOURCES, type ApiEvent } from '../../src/api/contract';
import { useConnectionStore } from '../../renderer/src/api/connectionStore';
import type { ConsoleClient } from '../../renderer/src/api/consoleClient';
import { handleApiEvent, onPush, pushHasOwner, type PushType } from '../../renderer/src/api/pushRouter';
import { signUpFeaturePushes } from '../../renderer/src/app/featurePushes';

// The renderer's push registry: features sign up for the push types they own, one owner per
// type; each push goes to its owner and is acknowledged whatever happens (the services' flow
// control), also when its handler throws or no feature owns it.

const acked: number[] = [];
useConnectionStore.setState({
  client: {
    transport: null as never,
    call: async (method: string, params: unknown) => {
      if (method === 'events.ack') acked.push((params as { seq: number }).seq);
      return {} as never;
    },
  } as unknown as ConsoleClient,
});
const offs: (() => void)[] = [];
afterEach(() => {
  for (const off of offs.splice(0)) off();
  acked.length = 0;
});

const prompt = (seq: number): ApiEvent => ({ type: 'qualification.progress', seq }) as unknown as ApiEvent; // only its type and seq are read here
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('push registry', () => {
  it('the app signs a feature up for every push of the contract, each exactly once', () => {
    offs.push(signUpFeaturePushes());
    const types = apiEventSchema.options.map((o) => o.shape.type.value as PushType);
    expect(types.length).toBeGreaterThan(5);
    for (const t of types) expect(pushHasOwner(t), t).toBe(true);
    // the live stream has one owner per source
    for (const s of LIVE_SOURCES) expect(pushHasOwner(`live.frames/${s}`), s).toBe(true);
    // Signing up again would give a type a second owner.
    expect(() => signUpFeaturePushes()).toThrow(/already has a handler/);
  });

  it('routes a push to the feature that owns its type and acknowledges it', async () => {
    const got: number[] = [];
    offs.push(onPush(['qualification.progress'], (e) => got.push(e.seq)));
    handleApiEvent(prompt(7));
    await flush();
    expect(got).toEqual([7]);
    expect(acked).toEqual([7]);
  });

  it('routes the live stream by its source (negative control: another source does not reach the owner)', async () => {
    const got: string[] = [];
    offs.push(onPush(['live.frames/sim_run'], (e) => got.push(e.source)));
    handleApiEvent({ type: 'live.frames', seq: 3, source: 'sim_run' } as unknown as ApiEvent);
    handleApiEvent({ type: 'live.frames', seq: 4, source: 'robot_idle' } as unknown as ApiEvent);
    await flush();
    expect(got).toEqual(['sim_run']);
    expect(acked).toEqual([3, 4]);
  });

  it('refuses a second owner of a type; the sign-off frees it', () => {
    const off = onPush(['qualification.progress'], () => {});
    expect(() => onPush(['qualification.progress', 'sim.end'], () => {})).toThrow(/qualification\.progress/);
    expect(pushHasOwner('sim.end')).toBe(false); // a refused sign-up takes nothing
    off();
    expect(pushHasOwner('qualification.progress')).toBe(false);
    offs.push(onPush(['qualification.progress'], () => {}));
  });

  it('acknowledges a push whose handler throws, and one no feature owns (negative control: nothing routed)', async () => {
    const got: number[] = [];
    offs.push(
      onPush(['qualification.progress'], (e) => {
        got.push(e.seq);
        throw new Error('handler failed');
      }),
    );
    expect(() => handleApiEvent(prompt(1))).toThrow('handler failed');
    handleApiEvent({ type: 'sim.end', seq: 2 } as unknown as ApiEvent);
    await flush();
    expect(got).toEqual([1]);
    expect(acked).toEqual([1, 2]);
  });
});
