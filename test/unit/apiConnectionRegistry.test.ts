import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PROBLEMS_SENT } from '../../src/api/contract';
import { ApiFailure } from '../../src/services/console/apiFailure';
import {
  ConnectionRegistry,
  EMBEDDED_SIM_ID,
  EMBEDDED_SIM_NAME,
  RATE_WINDOW_MS,
  type BackendFactories,
} from '../../src/services/console/connectionRegistry';
import type { BackendListener } from '../../src/domain/backend/backend';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { FakeBackend } from '../helpers/fakeBackend';

// The Connections registry with scripted backends and a hand-driven clock.

let registries: ConnectionRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.map((r) => r.close()));
  registries = [];
});

function setup(factories: BackendFactories) {
  let now = 1_000_000;
  const registry = new ConnectionRegistry({ factories, modelFile: '/models/g1.xml', now: () => now });
  registries.push(registry);
  return { registry, advance: (ms: number) => (now += ms) };
}

function failureOf(p: Promise<unknown>): Promise<ApiFailure> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(ApiFailure);
      return err as ApiFailure;
    },
  );
}

describe('ConnectionRegistry', () => {
  it('lists the embedded simulator first, not started until used', async () => {
    let created = 0;
    const { registry } = setup({
      embeddedSimulator: ({ modelFile }) => {
        created++;
        expect(modelFile).toBe('/models/g1.xml');
        return new FakeBackend({ id: 'sim', initialPresence: 'present', declaredRateHz: 50 });
      },
    });
    const [e] = registry.list();
    expect(e).toMatchObject({
      id: EMBEDDED_SIM_ID,
      name: EMBEDDED_SIM_NAME,
      kind: 'embedded_simulator',
      presence: 'disconnected',
      active: false,
      available: true,
      removable: false,
      rateHz: null,
      declaredRateHz: null,
      problems: [],
    });
    expect(created).toBe(0);
    // Two concurrent connects create one backend.
    const [a, b] = await Promise.all([registry.connect(EMBEDDED_SIM_ID), registry.connect(EMBEDDED_SIM_ID)]);
    expect(created).toBe(1);
    expect(a).toMatchObject({ presence: 'present', active: true, declaredRateHz: 50 });
    expect(b.active).toBe(true);
    expect(await registry.backend(EMBEDDED_SIM_ID)).toBe(await registry.backend(EMBEDDED_SIM_ID));
    expect(created).toBe(1);
  });

  it('lists entries without an implementation with a problem, and refuses to connect them', async () => {
    const { registry } = setup({});
    const [e] = registry.list();
    expect(e.available).toBe(false);
    expect(e.problems[0]).toMatchObject({ severity: 'error', code: 'backend_unavailable' });
    expect((await failureOf(registry.connect(EMBEDDED_SIM_ID))).code).toBe('unsupported');
    // A remote entry is still listed (so the operator sees why it does nothing).
    const r = await registry.addRemote('ws://10.0.0.5:8765');
    expect(r).toMatchObject({ available: false, presence: 'disconnected', active: false });
    expect(r.problems[0].code).toBe('backend_unavailable');
  });

  it('adds remote simulators by ws/wss URL, normalised, in order, refusing bad URLs and duplicates', async () => {
    const urls: string[] = [];
    const { registry } = setup({
      remoteSimulator: ({ id, url }) => {
        urls.push(url);
        return new FakeBackend({ id });
      },
    });
    const a = await registry.addRemote('  WS://Sim-Host.local:8765 ');
    expect(a).toMatchObject({
      id: 'remote-1',
      url: 'ws://sim-host.local:8765/',
      name: 'sim-host.local:8765',
      presence: 'connecting',
      active: true,
      removable: true,
    });
    const b = await registry.addRemote('wss://10.1.2.3/bridge');
    expect(b).toMatchObject({ id: 'remote-2', url: 'wss://10.1.2.3/bridge', name: '10.1.2.3' });
    expect(urls).toEqual(['ws://sim-host.local:8765/', 'wss://10.1.2.3/bridge']);
    expect(registry.list().map((e) => e.id)).toEqual([EMBEDDED_SIM_ID, 'remote-1', 'remote-2']);

    const dup = await failureOf(registry.addRemote('ws://sim-host.local:8765/'));
    expect(dup).toMatchObject({ code: 'conflict', field: 'params.url' });
    expect(dup.message).toContain('already listed');
    for (const [bad, reason] of [
      ['http://sim:8765', /ws:\/\/ or wss:\/\//],
      ['ws://', /not a URL/],
      ['ws://user:pw@sim:1', /credentials/],
      ['sim:8765', /ws:\/\/ or wss:\/\//],
      ['', /enter/],
    ] as const) {
      const f = await failureOf(registry.addRemote(bad));
      expect(f.code).toBe('bad_params');
      expect(f.field).toBe('params.url');
      expect(f.message).toMatch(reason);
    }
    expect(registry.list()).toHaveLength(3);
  });

  it('measures the frame rate over a 2 s window and the age of the last frame', async () => {
    let backend!: FakeBackend;
    const { registry, advance } = setup({
      embeddedSimulator: () => (backend = new FakeBackend({ id: 's', initialPresence: 'present' })),
    });
    await registry.connect(EMBEDDED_SIM_ID);
    expect(registry.get(EMBEDDED_SIM_ID)).toMatchObject({ rateHz: null, lastFrameAgeMs: null });
    // 50 Hz source in batches of 5 every 100 ms, for 1.5 s.
    for (let i = 0; i < 15; i++) {
      backend.emitFrames(5, 50);
      advance(100);
    }
    const info = registry.get(EMBEDDED_SIM_ID);
    expect(info.rateHz).toBeCloseTo(50, 6);
    expect(info.lastFrameAgeMs).toBe(100);
    advance(RATE_WINDOW_MS);
    expect(registry.get(EMBEDDED_SIM_ID)).toMatchObject({ rateHz: null, lastFrameAgeMs: 100 + RATE_WINDOW_MS });
  });

  it('falls back to arrival times when source times do not advance', async () => {
    let backend!: FakeBackend;
    const { registry, advance } = setup({
      embeddedSimulator: () => (backend = new FakeBackend({ id: 's', initialPresence: 'present' })),
    });
    await registry.connect(EMBEDDED_SIM_ID);
    // A source whose stamps do not advance (1/∞ = 0 s per frame), one frame every 40 ms.
    for (let i = 0; i < 11; i++) {
      backend.emitFrames(1, Number.POSITIVE_INFINITY); // timeS stays 0
      advance(40);
    }
    expect(registry.get(EMBEDDED_SIM_ID).rateHz).toBeCloseTo(25, 6);
  });

  it('shows a 500 Hz robot stream as 500 Hz across episode starts and ends (its clock restarts there)', async () => {
    // The robot link times frames from the episode start during an episode and from the
    // connection's first frame outside one (bridgeClientBackend): stamps jump back at a start and
    // forward at an end. The bridge client hands frames over in batches (here 5 per 10 ms).
    let listener: BackendListener | null = null;
    class RobotLike extends FakeBackend {
      override setListener(l: BackendListener | null): void {
        listener = l;
        super.setListener(l);
      }
    }
    const { registry, advance } = setup({
      robot: ({ id }) =>
        new RobotLike({ id, initialPresence: 'present', executionDomain: 'real_robot', declaredRateHz: 500 }),
    });
    const r = await registry.addRemote('ws://127.0.0.1:9100', 'robot');
    let tick = 0;
    const batch = (timeS: (k: number) => number): void => {
      const frames = Array.from({ length: 5 }, (_, k) => {
        const f = createStateFrame();
        f.tick = tick++;
        f.timeS = timeS(k);
        return f;
      });
      void listener!([{ type: 'frames', runId: 'robot', frames }]);
      advance(10);
    };
    const rates: number[] = [];
    const sample = (i: number): void => {
      if (i % 10 === 9) rates.push(registry.get(r.id).rateHz!);
    };
    const connectedS = 30; // the connection's clock: 30 s of stream before the episode
    for (let i = 0; i < 300; i++, sample(i)) batch((k) => connectedS + (5 * i + k) / 500); // 3 s idle
    for (let i = 0; i < 300; i++, sample(i)) batch((k) => (5 * i + k) / 500); // 3 s episode, clock from its start
    for (let i = 0; i < 300; i++, sample(i)) batch((k) => connectedS + 6 + (5 * i + k) / 500); // 3 s idle again
    expect(rates).toHaveLength(90);
    for (const hz of rates.slice(1)) {
      expect(hz).toBeGreaterThan(495);
      expect(hz).toBeLessThan(505);
    }
    expect(registry.get(r.id)).toMatchObject({ declaredRateHz: 500, lastFrameAgeMs: 10 });
  });

  it('keeps the newest problems first, bounded, and shows the backend latency', async () => {
    let backend!: FakeBackend;
    const { registry } = setup({
      remoteSimulator: ({ id }) => (backend = new FakeBackend({ id, initialPresence: 'present', latencyMs: 3.5 })),
    });
    const r = await registry.addRemote('ws://127.0.0.1:9000');
    for (let i = 0; i < 12; i++)
      backend.emitProblem({ severity: 'warn', code: `p${i}`, message: `problem ${i}`, atMs: i });
    const info = registry.get(r.id);
    expect(info.problems).toHaveLength(MAX_PROBLEMS_SENT);
    expect(info.problems[0].code).toBe('p11');
    expect(info.latencyMs).toBe(3.5);
    backend.setPresence('lost');
    expect(registry.get(r.id).presence).toBe('lost');
  });

  it('fans events out to subscribers and turns a failing subscriber into a problem', async () => {
    let backend!: FakeBackend;
    const { registry } = setup({
      embeddedSimulator: () => (backend = new FakeBackend({ id: 's', initialPresence: 'present' })),
    });
    const seen: string[] = [];
    const off = registry.subscribe(EMBEDDED_SIM_ID, async (events) => {
      seen.push(...events.map((e) => e.type));
    });
    registry.subscribe(EMBEDDED_SIM_ID, async () => {
      throw new Error('recorder full');
    });
    await registry.connect(EMBEDDED_SIM_ID);
    backend.emitFrames(2, 50);
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['frames']);
    expect(registry.get(EMBEDDED_SIM_ID).problems[0]).toMatchObject({ code: 'subscriber_error' });
    expect(registry.get(EMBEDDED_SIM_ID).problems[0].message).toContain('recorder full');
    off();
    backend.emitFrames(1, 50);
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['frames']);
  });

  it('leases a backend per run and refuses to disconnect or remove it meanwhile', async () => {
    let backend!: FakeBackend;
    const { registry } = setup({
      remoteSimulator: ({ id }) => (backend = new FakeBackend({ id, initialPresence: 'present' })),
    });
    const r = await registry.addRemote('ws://127.0.0.1:9001');
    const lease = await registry.acquire(r.id, 'run-42');
    expect(backend.leasedBy).toBe('run-42');
    expect(registry.get(r.id).leasedRunId).toBe('run-42');
    expect((await failureOf(registry.acquire(r.id, 'run-43'))).code).toBe('conflict');
    expect((await failureOf(registry.disconnect(r.id))).code).toBe('conflict');
    expect((await failureOf(registry.remove(r.id))).code).toBe('conflict');
    await lease.release();
    await lease.release(); // idempotent
    expect(registry.get(r.id).leasedRunId).toBeNull();
    await registry.remove(r.id);
    expect(backend.closed).toBe(true);
    expect(registry.list().map((e) => e.id)).toEqual([EMBEDDED_SIM_ID]);
  });

  it('disconnects (entry stays), reconnects with a new backend, never removes the embedded simulator', async () => {
    const made: FakeBackend[] = [];
    const { registry } = setup({
      embeddedSimulator: () =>
        made[made.push(new FakeBackend({ id: `s${made.length}`, initialPresence: 'present' })) - 1],
    });
    await registry.connect(EMBEDDED_SIM_ID);
    const off = await registry.disconnect(EMBEDDED_SIM_ID);
    expect(off).toMatchObject({ presence: 'disconnected', active: false });
    expect(made[0].closed).toBe(true);
    await registry.connect(EMBEDDED_SIM_ID);
    expect(made).toHaveLength(2);
    const f = await failureOf(registry.remove(EMBEDDED_SIM_ID));
    expect(f.code).toBe('conflict');
    expect((await failureOf(registry.connect('remote-99'))).code).toBe('not_found');
  });

  it('closes a backend that finishes starting after a disconnect', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const backend = new FakeBackend({ id: 's', initialPresence: 'present' });
    const { registry } = setup({
      embeddedSimulator: async () => {
        await gate;
        return backend;
      },
    });
    const connecting = registry.connect(EMBEDDED_SIM_ID);
    expect(registry.get(EMBEDDED_SIM_ID).presence).toBe('connecting');
    await registry.disconnect(EMBEDDED_SIM_ID);
    release();
    expect((await failureOf(connecting)).code).toBe('conflict');
    expect(backend.closed).toBe(true);
    expect(registry.get(EMBEDDED_SIM_ID).active).toBe(false);
  });

  it('records a factory that throws as a problem', async () => {
    const { registry } = setup({
      embeddedSimulator: () => {
        throw new Error('MuJoCo could not load assets/g1/g1.xml');
      },
    });
    const f = await failureOf(registry.connect(EMBEDDED_SIM_ID));
    expect(f.code).toBe('internal');
    const info = registry.get(EMBEDDED_SIM_ID);
    expect(info).toMatchObject({ presence: 'disconnected', active: false });
    expect(info.problems[0]).toMatchObject({ severity: 'error', code: 'backend_create_failed' });
    expect(info.problems[0].message).toContain('MuJoCo could not load');
  });

  it('closes every backend on close and refuses new work afterwards', async () => {
    const made: FakeBackend[] = [];
    const { registry } = setup({
      embeddedSimulator: () => made[made.push(new FakeBackend({ id: 'e' })) - 1],
      remoteSimulator: ({ id }) => made[made.push(new FakeBackend({ id })) - 1],
    });
    await registry.connect(EMBEDDED_SIM_ID);
    await registry.addRemote('ws://127.0.0.1:9002');
    await registry.close();
    expect(made.map((b) => b.closed)).toEqual([true, true]);
    expect((await failureOf(registry.addRemote('ws://127.0.0.1:9003'))).code).toBe('conflict');
  });
});
