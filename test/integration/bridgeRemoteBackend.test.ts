import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackendEvent, EpisodeEnd, Presence, Problem } from '../../src/domain/backend/backend';
import type { StateFrame } from '../../src/domain/robot/stateFrame';
import { resampleClip } from '../../src/domain/motion/resample';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { G1_BRIDGE_LIMITS } from '../../src/domain/bridge/g1BridgeContract';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { startBridgeServer, type BridgeServer } from '../../src/services/bridge/bridgeServer';
import { BridgeClientBackend, type BridgeClientOptions } from '../../src/services/bridge/bridgeClientBackend';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { sharedData } from '../helpers/sharedData';
import { FakeBackend } from '../unit/bridgeFakeBackend';
import { PlainClient, RawBridgeServer, lowState, sleep, waitFor } from './bridgeTestClient';

// BridgeClientBackend (the console's client for any g1-bridge/1 simulator or robot)
// against the bridge server over a fake backend, and against a raw server sending bad frames.

const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz'));
const binding = makeBuiltinBinding();

class Recorder {
  readonly frames: StateFrame[] = [];
  readonly presence: Presence[] = [];
  readonly problems: Problem[] = [];
  readonly ends: EpisodeEnd[] = [];
  runIds = new Set<string>();
  delayMs = 0;
  listener = async (events: BackendEvent[]): Promise<void> => {
    for (const e of events) {
      if (e.type === 'frames') {
        this.frames.push(...e.frames);
        this.runIds.add(e.runId);
      } else if (e.type === 'presence') this.presence.push(e.presence);
      else if (e.type === 'problem') this.problems.push(e.problem);
      else if (e.type === 'episode_end') this.ends.push(e.end);
    }
    if (this.delayMs > 0) await sleep(this.delayMs);
  };
  codes(): string[] {
    return this.problems.map((p) => p.code);
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function serve(
  opts: { speed?: number; globalRoot?: boolean; port?: number } = {},
): Promise<{ server: BridgeServer; backend: FakeBackend }> {
  const backend = new FakeBackend({ globalRoot: opts.globalRoot ?? true });
  const server = await startBridgeServer({ backend, speed: opts.speed ?? 0, port: opts.port ?? 0 });
  cleanups.push(() => server.close());
  return { server, backend };
}

function remote(url: string, opts: Partial<BridgeClientOptions> = {}): { backend: BridgeClientBackend; rec: Recorder } {
  const backend = new BridgeClientBackend({ url, reconnectInitialDelayMs: 50, reconnectMaxDelayMs: 200, ...opts });
  const rec = new Recorder();
  backend.setListener(rec.listener);
  cleanups.push(() => backend.close());
  return { backend, rec };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('BridgeClientBackend against the bridge server', () => {
  it('declares capabilities from what is advertised and runs a clip end to end', async () => {
    const { server, backend: fake } = await serve();
    const { backend, rec } = remote(server.url, { id: 'remote-1' });
    expect(backend.id).toBe('remote-1');
    expect(backend.presence).toBe('connecting');
    const lease = await backend.acquire('episode-7');
    expect(backend.presence).toBe('present');
    expect(backend.capabilities).toEqual({
      executionDomain: 'simulation',
      globalRootPosition: true,
      rootOrientation: true,
      contacts: false,
      jointTorque: true,
      stateRateHz: 50,
      exactReset: true,
      bindingKinds: ['builtin', 'remote'],
    });
    await expect(backend.acquire('another')).rejects.toThrow(/leased by run episode-7/);
    const initial = initialStateFromClipFrame(HANDS_UP);
    await lease.reset(initial);
    expect(fake.resets).toEqual([initial]);
    const end = await lease.run({ clip: HANDS_UP, binding, seed: 11 });
    const ref = resampleClip(HANDS_UP, 50);
    const K = ref.frameCount;
    expect(end).toMatchObject({ runId: 'episode-7', outcome: 'completed', frames: K });
    expect(end.simSeconds).toBeCloseTo((K - 1) / 50, 9);
    await waitFor(() => rec.ends.length === 1, 2000, 'episode_end event');
    expect(rec.ends[0]).toEqual(end);
    const runFrames = rec.frames.filter((f) => f.timeS >= 0);
    expect(runFrames).toHaveLength(K);
    expect([...rec.runIds]).toEqual(['episode-7']);
    runFrames.forEach((f, k) => {
      expect(f.timeS).toBeCloseTo(k / 50, 9);
      expect(f.referenceFrame).toBe(Math.min(HANDS_UP.frameCount - 1, Math.round((k / 50) * 60)));
    });
    const f = runFrames[100];
    expect(Array.from(f.rootPosM!)).toEqual(Array.from(ref.rootPosM.subarray(300, 303)));
    expect(f.jointPosRad[7]).toBeCloseTo(ref.jointPosRad[100 * 29 + 7] + 0.07, 12);
    expect(f.jointTauNm[3]).toBeCloseTo(0.3, 12);
    expect(fake.calls).toEqual([
      'acquire episode-7',
      'reset episode-7',
      `run episode-7 ${HANDS_UP.id}`,
      'end episode-7 completed',
      'release episode-7',
    ]);
    await lease.release();
    expect(rec.presence[0]).toBe('present');
    expect(backend.stats()).toMatchObject({
      received: K,
      accepted: K,
      malformed: 0,
      duplicate: 0,
      outOfOrder: 0,
      dropped: 0,
    });
    await waitFor(() => backend.linkStats().latencyMs !== null, 3000, 'a ping round trip');
    expect(backend.linkStats().latencyMs).toBeLessThan(1000);
    // the next episode gets a new lease
    const lease2 = await backend.acquire('episode-8');
    await lease2.release();
  });

  it('has no global root when the server does not advertise root_state', async () => {
    const { server } = await serve({ globalRoot: false });
    const { backend, rec } = remote(server.url);
    const lease = await backend.acquire('r');
    expect(backend.capabilities.globalRootPosition).toBe(false);
    const short = { ...HANDS_UP };
    const end = await lease.run({ clip: short, binding, seed: 0 });
    expect(end.outcome).toBe('completed');
    expect(rec.frames.every((f) => f.rootPosM === null && f.rootQuatWxyz !== null)).toBe(true);
    await lease.release();
  });

  it('stops mid-clip', async () => {
    const { server } = await serve({ speed: 1 });
    const { backend, rec } = remote(server.url);
    const lease = await backend.acquire('stop-me');
    const running = lease.run({ clip: HANDS_UP, binding, seed: 0 });
    await waitFor(() => rec.frames.length >= 20, 5000, '20 frames');
    await lease.stop('estop', 'e-stop pressed');
    const end = await running;
    expect(end).toMatchObject({ runId: 'stop-me', outcome: 'estop', reason: expect.stringMatching(/e-stop pressed/) });
    expect(end.frames).toBeGreaterThanOrEqual(20);
    expect(end.frames).toBeLessThan(100);
    await lease.release();
  });

  it('refuses to start when another client controls the server, and reports refusals', async () => {
    const { server } = await serve();
    const other = await PlainClient.connect(server.url);
    cleanups.push(() => other.close());
    other.advertiseCommands();
    await other.until(() => other.statuses.some((s) => s.id === 'g1-bridge/control-granted'), 3000, 'control');
    const { backend } = remote(server.url);
    await expect(backend.acquire('x')).rejects.toThrow(/controlled by another client/);
  });

  it('a stop before the episode starts ends it empty with the stop outcome', async () => {
    const { server, backend: fake } = await serve();
    const { backend } = remote(server.url);
    const lease = await backend.acquire('early');
    const running = lease.run({ clip: HANDS_UP, binding, seed: 0 });
    await lease.stop('intervention', 'operator stepped in');
    const end = await running;
    expect(end).toMatchObject({
      runId: 'early',
      outcome: 'intervention',
      frames: 0,
      reason: expect.stringMatching(/operator stepped in/),
    });
    await lease.release();
    expect(fake.calls.filter((c) => c.startsWith('run'))).toEqual([]);
  });

  it('loses the link when the server goes away (episode ends link_lost) and reconnects when it is back', async () => {
    const port = await freePort();
    const first = await serve({ speed: 1, port });
    const { backend, rec } = remote(first.server.url);
    const lease = await backend.acquire('lost-1');
    const running = lease.run({ clip: HANDS_UP, binding, seed: 0 });
    await waitFor(() => rec.frames.length >= 10, 5000, 'frames');
    await first.server.close();
    const end = await running;
    expect(end).toMatchObject({ outcome: 'link_lost', reason: expect.stringMatching(/lost during the episode/) });
    expect(backend.presence).toBe('lost');
    await lease.release();
    expect(rec.codes()).toContain('link_lost');
    await serve({ port });
    await waitFor(() => backend.presence === 'present', 5000, 'present again');
    expect(rec.presence).toEqual(['present', 'lost', 'present']);
    expect(backend.stats().connects).toBe(2);
    const lease2 = await backend.acquire('lost-2');
    expect((await lease2.run({ clip: HANDS_UP, binding, seed: 0 })).outcome).toBe('completed');
    await lease2.release();
  });

  it('acquire waits for the link, then rejects with the presence when nobody answers', async () => {
    const port = await freePort();
    const { backend, rec } = remote(`ws://127.0.0.1:${port}`, { connectTimeoutMs: 300 });
    await expect(backend.acquire('nobody')).rejects.toThrow(/not connected \(connecting after 300 ms\)/);
    expect(rec.codes()).toContain('connect_failed');
  });
});

describe('BridgeClientBackend against a raw server', () => {
  async function raw(opts: { withRoot?: boolean } = {}): Promise<RawBridgeServer> {
    const s = await RawBridgeServer.start(opts);
    cleanups.push(() => s.close());
    return s;
  }

  it('counts, reports and drops malformed, duplicate and out-of-order frames', async () => {
    const s = await raw();
    const { backend, rec } = remote(s.url, { problemIntervalMs: 0 });
    await waitFor(() => backend.presence === 'present' && s.sockets.size === 1, 3000, 'present');
    await sleep(50); // subscriptions reach the server
    s.publish(s.channel.lowstate, lowState(10, 1_000_000));
    s.publish(s.channel.lowstate, lowState(10, 1_000_000)); // duplicate
    s.publish(s.channel.lowstate, lowState(9, 900_000)); // out of order
    s.publish(s.channel.lowstate, { ...lowState(11, 1_100_000), q: new Array(28).fill(0) }); // 28 joints
    s.publish(s.channel.lowstate, JSON.stringify(lowState(12, 1_200_000)).replace('"dq":[0', '"dq":[NaN')); // NaN literal
    s.publish(s.channel.lowstate, {
      ...lowState(13, 1_300_000),
      imu: { quat_wxyz: [0.5, 0, 0, 0], gyro: [0, 0, 0], accel: [0, 0, 0] },
    });
    s.publish(s.channel.lowstate, lowState(14, 1_400_000));
    s.publish(s.channel.wbcStatus, { state: 'sleeping', clip_id: null, frame: null });
    await waitFor(() => backend.stats().received === 7 && backend.stats().malformedOther === 1, 3000, 'all messages');
    expect(backend.stats()).toMatchObject({
      received: 7,
      accepted: 2,
      malformed: 3,
      duplicate: 1,
      outOfOrder: 1,
      malformedOther: 1,
    });
    await waitFor(() => rec.frames.length === 2, 1000, 'two frames');
    expect(rec.frames.map((f) => f.tick)).toEqual([10, 14]);
    expect(rec.frames[1].timeS).toBeCloseTo(0.0004, 12);
    const codes = rec.codes();
    for (const c of ['duplicate_frame', 'out_of_order_frame', 'malformed_frame', 'malformed_wbc_status'])
      expect(codes).toContain(c);
    const msgs = rec.problems.map((p) => p.message).join('\n');
    expect(msgs).toMatch(/q: must have 29 values, found 28/);
    expect(msgs).toMatch(/NaN is not a JSON number/);
    expect(msgs).toMatch(/imu\.quat_wxyz: quaternion/);
    // oversized, a string and a NaN inside an array: counted, dropped, the link stays up
    const big = { ...lowState(15, 1_500_000), pad: 'x'.repeat(G1_BRIDGE_LIMITS.lowStateBytes) };
    s.publish(s.channel.lowstate, big);
    s.publish(s.channel.lowstate, { ...lowState(16, 1_600_000), q: [...new Array(28).fill(0), '0.1'] });
    s.publish(s.channel.lowstate, JSON.stringify(lowState(17, 1_700_000)).replace('"tau_est":[0', '"tau_est":[NaN'));
    s.publish(s.channel.lowstate, lowState(18, 1_800_000));
    await waitFor(() => backend.stats().received === 11, 3000, 'the second batch');
    expect(backend.stats()).toMatchObject({ received: 11, accepted: 3, malformed: 6, oversized: 1 });
    await waitFor(() => rec.frames.length === 3, 1000, 'three frames');
    expect(rec.frames[2].tick).toBe(18);
    expect(rec.codes()).toContain('oversized_frame');
    const all = rec.problems.map((p) => p.message).join('\n');
    expect(all).toMatch(/more than the 65536-byte limit/);
    expect(all).toMatch(/q\[28\]: must be a finite number, found/);
    expect(backend.presence).toBe('present');
    // a robot-like server without metadata for reset/kinds still gives sensible capabilities
    expect(backend.capabilities).toMatchObject({
      globalRootPosition: false,
      stateRateHz: 500,
      exactReset: true,
      bindingKinds: ['remote'],
    });
  });

  it('takes a 500 Hz stream whole: every frame accepted and delivered in order, none dropped', async () => {
    const s = await raw();
    const { backend, rec } = remote(s.url);
    await waitFor(() => backend.presence === 'present' && s.sockets.size === 1, 3000, 'present');
    await sleep(50);
    // 1 s at 500 Hz, in bursts of 5 every 10 ms (as a busy publisher sends)
    const N = 500;
    let k = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        for (let i = 0; i < 5 && k < N; i++, k++)
          s.publish(s.channel.lowstate, lowState(k + 1, 2_000_000 * (k + 1), 0.001 * k));
        if (k >= N) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    await waitFor(() => rec.frames.length === N, 3000, `${N} frames`);
    expect(rec.frames.map((f) => f.tick)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(rec.frames[N - 1].timeS).toBeCloseTo((N - 1) * 0.002, 12);
    expect(rec.frames[N - 1].jointPosRad[0]).toBeCloseTo(0.001 * (N - 1), 12);
    expect(backend.stats()).toMatchObject({
      received: N,
      accepted: N,
      dropped: 0,
      missingTicks: 0,
      tickGapEvents: 0,
      malformed: 0,
    });
    const link = backend.linkStats();
    expect(link.stateRateHz).toBeGreaterThan(0);
    expect(link.stateRateHz).toBeLessThanOrEqual(N);
    expect(link.oneWayLatencyMs).toBeNull(); // the server declares no stamp origin
  });

  it('goes stale, then lost, when the stream stops, and present again when it resumes', async () => {
    const s = await raw();
    const { backend, rec } = remote(s.url, { staleAfterMs: 100, lostAfterMs: 300 });
    await waitFor(() => backend.presence === 'present', 3000, 'present');
    await waitFor(() => backend.presence === 'lost', 3000, 'lost');
    expect(rec.presence.slice(0, 3)).toEqual(['present', 'stale', 'lost']);
    expect(rec.codes()).toEqual(expect.arrayContaining(['link_stale', 'link_lost']));
    // the silent socket is dropped and a new one made; a streaming server keeps it present
    const timer = setInterval(() => s.publish(s.channel.wbcStatus, { state: 'idle', clip_id: null, frame: null }), 20);
    try {
      await waitFor(() => backend.presence === 'present', 3000, 'present again');
      await sleep(300);
      expect(backend.presence).toBe('present');
    } finally {
      clearInterval(timer);
    }
  });

  it('bounds its queue behind a slow listener and counts the frames it drops', async () => {
    const s = await raw({ withRoot: true });
    const { backend, rec } = remote(s.url, { maxQueuedFrames: 20 });
    await waitFor(() => backend.presence === 'present' && s.sockets.size === 1, 3000, 'present');
    await sleep(50);
    rec.delayMs = 100; // the listener takes 100 ms per batch
    for (let k = 0; k < 200; k++) {
      s.publish(s.channel.rootState, {
        stamp_ns: 1_000_000 * (k + 1),
        pos: [k, 0, 0.8],
        quat_wxyz: [1, 0, 0, 0],
        source: 'mocap',
      });
      s.publish(s.channel.lowstate, lowState(k + 1, 1_000_000 * (k + 1)));
    }
    await waitFor(() => backend.stats().received === 200, 3000, '200 frames received');
    await waitFor(() => rec.codes().includes('frames_dropped'), 3000, 'drop problem');
    const st = backend.stats();
    expect(st.accepted).toBe(200);
    expect(st.dropped).toBeGreaterThan(0);
    await waitFor(() => rec.frames.length + backend.stats().dropped === 200, 3000, 'every frame delivered or counted');
    // the newest frames are kept; root_state paired by stamp
    const last = rec.frames[rec.frames.length - 1];
    expect(last.tick).toBe(200);
    expect(last.rootPosM![0]).toBe(199);
    expect(rec.problems.find((p) => p.code === 'frames_dropped')!.message).toMatch(
      /frames dropped: the listener fell behind the stream/,
    );
  });
});
