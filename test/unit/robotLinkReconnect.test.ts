import { describe, expect, it } from 'vitest';
import {
  checkReconnectPolicy,
  nextReconnect,
  reconnectReset,
  type ReconnectPolicy,
  type ReconnectState,
} from '../../src/domain/robotLink/reconnectBackoff';

// When the link connects again: exponential backoff from the initial delay, capped, reset by a
// success; and giving up after the attempt budget.

function schedule(p: ReconnectPolicy, n: number, s: ReconnectState = reconnectReset(p)) {
  const out: (number | 'give_up')[] = [];
  let state = s;
  for (let i = 0; i < n; i++) {
    const d = nextReconnect(state, p);
    state = d.state;
    out.push(d.kind === 'retry' ? d.delayMs : 'give_up');
  }
  return { out, state };
}

describe('reconnect backoff', () => {
  const DEFAULT: ReconnectPolicy = { initialDelayMs: 250, maxDelayMs: 5000, maxAttempts: Infinity };

  it('doubles from 250 ms up to the 5 s cap, and starts over after a success', () => {
    const { out, state } = schedule(DEFAULT, 8);
    expect(out).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect(state.attempts).toBe(8);
    const again = schedule(DEFAULT, 2, reconnectReset(DEFAULT));
    expect(again.out).toEqual([250, 500]);
  });

  it('gives up after maxAttempts consecutive attempts, and keeps giving up', () => {
    const p: ReconnectPolicy = { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 3 };
    const { out } = schedule(p, 5);
    expect(out).toEqual([50, 100, 200, 'give_up', 'give_up']);
    const d = nextReconnect({ attempts: 3, nextDelayMs: 200 }, p);
    expect(d).toMatchObject({ kind: 'give_up', attempts: 3 });
  });

  it('control: with no budget set it never gives up', () => {
    const { out } = schedule(DEFAULT, 1000);
    expect(out.includes('give_up')).toBe(false);
    expect(out.at(-1)).toBe(5000);
  });

  it('refuses a policy that cannot work', () => {
    expect(() => checkReconnectPolicy({ initialDelayMs: 0, maxDelayMs: 10, maxAttempts: 1 })).toThrow(/initial delay/);
    expect(() => checkReconnectPolicy({ initialDelayMs: 100, maxDelayMs: 50, maxAttempts: 1 })).toThrow(/max delay/);
    expect(() => checkReconnectPolicy({ initialDelayMs: 100, maxDelayMs: 100, maxAttempts: 1.5 })).toThrow(
      /max attempts/,
    );
    expect(checkReconnectPolicy(DEFAULT)).toBe(DEFAULT);
  });
});
