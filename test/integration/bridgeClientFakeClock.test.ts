import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import { connectRobot, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { FakeLinkClock } from '../helpers/fakeLinkClock';
import { RawBridgeServer, lowState, waitFor } from './bridgeTestClient';

// The composed robot link client (connectRobot) over a real loopback socket, with every timer and
// age on a fake clock: the socket I/O is real, time moves only when the test says. So the
// thresholds are met exactly (not "within a few ms on an idle machine"), whatever the load.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

/** Lets the listener take what was queued behind the batch it was given synchronously. */
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function recorder(backend: BridgeClientBackend) {
  const log: string[] = [];
  backend.setListener(async (events: BackendEvent[]) => {
    for (const e of events) {
      if (e.type === 'presence') log.push(`presence ${e.presence}`);
      else if (e.type === 'problem') log.push(`problem ${e.problem.code}`);
      else if (e.type === 'problem_cleared') log.push(`cleared ${e.code}`);
    }
  });
  return log;
}

async function rig() {
  const server = await RawBridgeServer.start();
  cleanups.push(() => server.close());
  const clock = new FakeLinkClock(10_000);
  const backend = connectRobot({ url: server.url, clock, reconnectInitialDelayMs: 50 });
  cleanups.push(() => backend.close());
  const log = recorder(backend);
  await waitFor(() => backend.presence === 'present' && server.sockets.size === 1, 5000, 'present');
  await new Promise((r) => setTimeout(r, 50)); // the subscription reaches the server
  let tick = 0;
  const frame = async () => {
    const before = backend.stats().accepted;
    tick++;
    server.publish(server.channel.lowstate, lowState(tick, tick * 2_000_000));
    await waitFor(() => backend.stats().accepted === before + 1, 5000, `lowstate ${tick}`);
  };
  return { server, clock, backend, log, frame };
}

describe('the robot link client on a fake clock', () => {
  it('goes stale exactly 50.5 ms after the last lowstate (not before), and withdraws link_stale on the next frame', async () => {
    const { clock, backend, log, frame } = await rig();
    await frame();
    const last = clock.nowMs();
    clock.advanceTo(last + 50.4);
    await flush();
    expect(backend.presence).toBe('present');
    expect(log).not.toContain('problem link_stale');
    clock.advanceTo(last + 50.5);
    await flush();
    expect(backend.presence).toBe('stale');
    expect(log.slice(-2)).toEqual(['presence stale', 'problem link_stale']);
    await frame();
    await flush();
    expect(backend.presence).toBe('present');
    expect(log.slice(-2)).toEqual(['presence present', 'cleared link_stale']);
    expect(log.filter((l) => l === 'problem link_stale')).toHaveLength(1);
  });

  it('goes lost 95.5 ms after the last lowstate, drops the silent socket after its 300 ms grace, reconnects after the backoff and withdraws link_lost', async () => {
    const { server, clock, backend, log, frame } = await rig();
    await frame();
    const last = clock.nowMs();
    clock.advanceTo(last + 95.4);
    expect(backend.presence).toBe('stale');
    clock.advanceTo(last + 95.5);
    await flush();
    expect(backend.presence).toBe('lost');
    expect(log.slice(-3)).toEqual(['presence lost', 'cleared link_stale', 'problem link_lost']);
    // The silent socket stays open through the grace (the trip's stop and damp go out on it) …
    clock.advanceTo(last + 95.5 + 299);
    expect(backend.stats().connects).toBe(1);
    expect(server.sockets.size).toBe(1);
    // … then it is dropped and a new one made 50 ms later (the first backoff step).
    clock.advanceTo(last + 95.5 + 300);
    await waitFor(() => server.sockets.size === 0, 5000, 'the silent socket dropped');
    clock.advanceBy(49);
    expect(backend.stats().connects).toBe(1);
    clock.advanceBy(1);
    await waitFor(() => backend.presence === 'present', 5000, 'present again');
    await flush();
    expect(backend.stats().connects).toBe(2);
    expect(log.slice(-2)).toEqual(['presence present', 'cleared link_lost']);
  });
});

describe('closing the client', () => {
  it('closes its socket (the server sees it go), ends disconnected, and leaves no timer behind', async () => {
    const { server, clock, backend, log, frame } = await rig();
    await frame();
    expect(server.sockets.size).toBe(1); // control: open before close()
    await backend.close();
    await waitFor(() => server.sockets.size === 0, 5000, 'the server sees the socket closed');
    await flush();
    expect(backend.presence).toBe('disconnected');
    expect(log.at(-1)).toBe('presence disconnected');
    expect(clock.pendingTimers()).toBe(0);
    clock.advanceBy(10_000);
    expect(backend.stats().connects).toBe(1); // no reconnect after close
  });
});

/** A TCP port that accepts and drops every connection: each is one failed connect attempt. */
async function refusingPort() {
  let attempts = 0;
  const srv = net.createServer((s) => {
    attempts++;
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => srv.close(() => r())));
  return { url: `ws://127.0.0.1:${(srv.address() as AddressInfo).port}`, attempts: () => attempts };
}

describe('reconnect on a fake clock: the backoff schedule and giving up', () => {
  async function failing(maxAttempts: number) {
    const port = await refusingPort();
    const clock = new FakeLinkClock(0);
    const backend = connectRobot({
      url: port.url,
      clock,
      reconnectInitialDelayMs: 1000,
      reconnectMaxDelayMs: 4000,
      reconnectMaxAttempts: maxAttempts,
    });
    cleanups.push(() => backend.close());
    const log = recorder(backend);
    /** The reconnect timer (the only one due ≥ 500 ms ahead; the freshness tick is 20 ms). */
    const reconnectDueIn = () => {
      const far = clock.dueTimes().filter((t) => t >= clock.nowMs() + 500);
      return far.length > 0 ? far[0] - clock.nowMs() : null;
    };
    const attemptFailed = (n: number) =>
      waitFor(
        () => port.attempts() === n && backend.stats().connects === 0 && log.includes('problem connect_failed'),
        5000,
        `attempt ${n}`,
      );
    return { clock, backend, log, port, reconnectDueIn, attemptFailed };
  }

  it('tries again after 1 s, 2 s, 4 s, then gives up after its 3 attempts and schedules nothing more', async () => {
    const r = await failing(3);
    const delays: (number | null)[] = [];
    for (let n = 1; n <= 4; n++) {
      await r.attemptFailed(n);
      await waitFor(() => n === 4 || r.reconnectDueIn() !== null, 5000, `reconnect ${n} scheduled`);
      delays.push(r.reconnectDueIn());
      if (n < 4) r.clock.advanceBy(r.reconnectDueIn()!);
    }
    expect(delays).toEqual([1000, 2000, 4000, null]);
    await waitFor(() => r.log.includes('problem reconnect_gave_up'), 5000, 'gave up');
    expect(r.reconnectDueIn()).toBeNull();
    r.clock.advanceBy(60_000);
    expect(r.port.attempts()).toBe(4);
    expect(r.log.filter((l) => l === 'problem connect_failed')).toHaveLength(1); // a condition: reported once
  });

  it('control: without an attempt budget it keeps trying (capped at 4 s)', async () => {
    const r = await failing(Infinity);
    for (let n = 1; n <= 4; n++) {
      await r.attemptFailed(n);
      await waitFor(() => r.reconnectDueIn() !== null, 5000, `reconnect ${n} scheduled`);
      if (n === 4) expect(r.reconnectDueIn()).toBe(4000);
      r.clock.advanceBy(r.reconnectDueIn()!);
    }
    await r.attemptFailed(5);
    expect(r.log).not.toContain('problem reconnect_gave_up');
  });
});
