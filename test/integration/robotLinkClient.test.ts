import { afterEach, describe, expect, it } from 'vitest';
import type { BackendEvent, EpisodeEnd, Presence } from '../../src/domain/backend/backend';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import {
  ROBOT_LINK_DEFAULTS,
  connectRobot,
  type BridgeClientBackend,
} from '../../src/services/bridge/bridgeClientBackend';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { startHostileBridge, type HostileBridge } from '../helpers/hostileBridge';
import { sharedData } from '../helpers/sharedData';
import { sleep, waitFor } from './bridgeTestClient';

// The robot side of the link: connectRobot against a robot-like g1-bridge/1 publisher running as
// its own process (bench/robotLinkPublisher.ts, 500 Hz lowstate, wbc_status heartbeat, stamps on
// a declared stamp_origin_unix_ms clock). Freshness figures, tick gaps, and the robot's link
// thresholds: a frozen lowstate ends a running episode `link_lost` within 100 ms of the last
// frame even though the heartbeat goes on; a killed publisher loses the link at once.

const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz'));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function publisher(rateHz = 500): Promise<HostileBridge> {
  const pub = await startHostileBridge(rateHz);
  cleanups.push(() => pub.stop());
  return pub;
}

function robot(url: string): {
  backend: BridgeClientBackend;
  presence: Presence[];
  frameAt: { last: number; count: number };
  ends: EpisodeEnd[];
} {
  const frameAt = { last: 0, count: 0 };
  const presence: Presence[] = [];
  const ends: EpisodeEnd[] = [];
  const backend = connectRobot({
    url,
    reconnectInitialDelayMs: 200,
    onFrameReceived: (_frame, _stampNs, receivedAtMs) => {
      frameAt.last = receivedAtMs;
      frameAt.count++;
    },
  });
  backend.setListener(async (events: BackendEvent[]) => {
    for (const e of events) {
      if (e.type === 'presence') presence.push(e.presence);
      if (e.type === 'episode_end') ends.push(e.end);
    }
  });
  cleanups.push(() => backend.close());
  return { backend, presence, frameAt, ends };
}

describe('the robot link (connectRobot) against a robot-like publisher process', () => {
  it('has the robot thresholds and reports rate, age, one-way latency and tick gaps', async () => {
    const pub = await publisher(500);
    const { backend, frameAt } = robot(pub.url);
    expect(backend.name).toBe(`robot at ${pub.url}`);
    await waitFor(() => backend.presence === 'present' && frameAt.count > 0, 10_000, 'present');
    expect(backend.capabilities).toMatchObject({
      executionDomain: 'real_robot',
      globalRootPosition: false,
      stateRateHz: 500,
      exactReset: false,
    });
    expect(backend.stampOriginUnixMs).toBeGreaterThan(1.7e12);
    await sleep(1200);
    const s = backend.linkStats();
    // a loaded 2-core machine may bunch frames, never invent them: the rate is about 500 Hz
    expect(s.stateRateHz).toBeGreaterThan(350);
    expect(s.stateRateHz).toBeLessThanOrEqual(520);
    expect(s.lastStateAgeMs).not.toBeNull();
    expect(s.lastStateAgeMs!).toBeLessThan(ROBOT_LINK_DEFAULTS.lostAfterMs);
    expect(s.oneWayLatencyMs).not.toBeNull();
    expect(s.oneWayLatencyMs!.count).toBeGreaterThan(400);
    expect(s.oneWayLatencyMs!.p50).toBeGreaterThanOrEqual(-1); // same host, same clock
    expect(s.oneWayLatencyMs!.p50).toBeLessThan(50);
    expect(s.oneWayLatencyMs!.p99).toBeGreaterThanOrEqual(s.oneWayLatencyMs!.p50);
    expect(s.missingTicks).toBe(0);
    expect(backend.oneWayLatencyMs(0, 0)).toBeCloseTo(performance.timeOrigin - backend.stampOriginUnixMs!, 6);
    pub.skip(7);
    await waitFor(() => backend.linkStats().tickGapEvents === 1, 3000, 'the tick gap');
    expect(backend.linkStats()).toMatchObject({ missingTicks: 7, tickGapEvents: 1, dropped: 0 });
    expect(backend.stats()).toMatchObject({
      missingTicks: 7,
      tickGapEvents: 1,
      malformed: 0,
      duplicate: 0,
      outOfOrder: 0,
    });
  });

  it('ends a running episode link_lost within 100 ms of the last lowstate while the heartbeat goes on, and sends stop', async () => {
    const pub = await publisher(500);
    const { backend, presence, frameAt } = robot(pub.url);
    const lease = await backend.acquire('robot-run-1');
    const running = lease.run({ clip: HANDS_UP, binding: makeBuiltinBinding(), seed: 0 });
    await waitFor(() => pub.commands.some((l) => l.command === 'start'), 10_000, 'start');
    const before = frameAt.count;
    await waitFor(() => frameAt.count > before + 100, 5000, '100 frames of the episode');
    pub.freeze();
    const end = await running;
    const endAt = performance.now();
    const silenceMs = endAt - frameAt.last;
    expect(end.outcome).toBe('link_lost');
    expect(end.reason).toMatch(/no state from .* for (9\d|100) ms during the episode/);
    expect(end.frames).toBeGreaterThan(100);
    // DESIGN §6 bound: within 100 ms of the last lowstate. The loss is declared at 95 ms (the 5 ms
    // margin absorbs the deadline timer's lateness), never before.
    expect(silenceMs).toBeGreaterThanOrEqual(ROBOT_LINK_DEFAULTS.lostAfterMs - 5);
    expect(silenceMs).toBeLessThanOrEqual(ROBOT_LINK_DEFAULTS.lostAfterMs);
    console.log(`robot link: frozen lowstate → link_lost end ${silenceMs.toFixed(2)} ms after the last lowstate`);
    expect(presence.slice(0, 3)).toEqual(['present', 'stale', 'lost']);
    await waitFor(
      () => pub.commands.some((l) => l.command === 'stop' && /link lost/.test(String(l.reason))),
      3000,
      'the stop sent on link loss',
    );
    await lease.release();
    // the stream resumes: present again after a reconnect
    pub.resume();
    await waitFor(() => backend.presence === 'present', 5000, 'present again');
  });

  it('does not take a pause of the console itself for a silent link: the lowstates that came meanwhile are read first', async () => {
    const pub = await publisher(500);
    const { backend, presence, frameAt } = robot(pub.url);
    const lease = await backend.acquire('robot-run-2');
    let ended = false;
    const running = lease.run({ clip: HANDS_UP, binding: makeBuiltinBinding(), seed: 0 }).finally(() => (ended = true));
    await waitFor(() => pub.commands.some((l) => l.command === 'start'), 10_000, 'start');
    await waitFor(() => frameAt.count > 100, 5000, 'frames');
    // This process stalls for 150 ms (as under a long GC or a starved CPU) while the publisher
    // process goes on sending: when the loop wakes, its timers run before the socket is read.
    const before = frameAt.count;
    const until = performance.now() + 150;
    while (performance.now() < until) {
      // busy
    }
    await sleep(50);
    expect(frameAt.count - before).toBeGreaterThan(50); // the frames sent during the stall were read
    expect(ended).toBe(false);
    expect(presence).not.toContain('lost');
    expect(backend.stats()).toMatchObject({ connects: 1, missingTicks: 0 });
    await lease.stop('aborted_by_operator', 'test over');
    expect((await running).outcome).toBe('aborted_by_operator');
    await lease.release();
  });

  it('loses the link at once when the publisher process dies', async () => {
    const pub = await publisher(500);
    const { backend, presence, frameAt } = robot(pub.url);
    await waitFor(() => backend.presence === 'present' && frameAt.count > 50, 10_000, 'present');
    pub.child.kill('SIGKILL');
    const killedAt = performance.now();
    await waitFor(() => backend.presence === 'lost', 2000, 'lost', 1);
    expect(performance.now() - killedAt).toBeLessThan(ROBOT_LINK_DEFAULTS.lostAfterMs + 40);
    expect(presence).toContain('lost');
  });
});
