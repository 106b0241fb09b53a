import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseApiEvent,
  type ApiEvent,
  type ClipDto,
  type ConnectionInfo,
  type SimEndEvent,
  type LiveFramesEvent,
  type SimRunResult,
  type SimRunStarted,
  type WsServerMessage,
} from '../../src/api/contract';
import { ClipPairEvaluator, episodeMetricsJson, MB_METRICS_1 } from '../../src/domain/metrics';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { placedClip } from '../../src/domain/sim/referencePlacement';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { sharedData } from '../helpers/sharedData';
import { openHostApiSocket } from '../helpers/hostApiClient';

// sim.run / sim.stop / sim.result / events.ack over the loopback host's WebSocket, with the real
// embedded simulator (one worker): frames pushed as events, the end with outcome, batch readings
// and trajectory sha256 — the same numbers and hash `motionbench sim` gets — the operator's stop,
// a client that falls behind (frames skipped for display and counted, the recording complete),
// and a client that goes away (its run stops).

const NPZ = sharedData('motions/g1_moves/npz/B_HandsUp.npz');

let tmp: string;
let server: HostServer;
let clip: MotionClip;
const profile = loadRobotProfile(DEFAULT_MODEL_FILE);

interface Client {
  call<T = unknown>(
    method: string,
    params: unknown,
  ): Promise<{ result?: T; error?: { code: string; message: string; field?: string } }>;
  events: ApiEvent[];
  /** Acknowledge every push as it arrives (default true). */
  autoAck: boolean;
  waitFor(pred: (e: ApiEvent) => boolean, timeoutMs?: number): Promise<ApiEvent>;
  close(): void;
  invalid: string[];
}

async function connect(): Promise<Client> {
  const ws = await openHostApiSocket(server);
  let next = 1;
  const pending = new Map<number, (m: WsServerMessage) => void>();
  const waiters: { pred: (e: ApiEvent) => boolean; resolve: (e: ApiEvent) => void }[] = [];
  const c: Client = {
    events: [],
    autoAck: true,
    invalid: [],
    call(method, params) {
      const id = next++;
      return new Promise((resolve) => {
        pending.set(id, (m) => resolve(m as never));
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    waitFor(pred, timeoutMs = 30_000) {
      const have = c.events.find(pred);
      if (have) return Promise.resolve(have);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out waiting for an event')), timeoutMs);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
    close: () => ws.close(),
  };
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as WsServerMessage & { event?: unknown };
    if ('event' in m) {
      const p = parseApiEvent(m.event);
      if (!p.ok) {
        c.invalid.push(p.reason);
        return;
      }
      c.events.push(p.event);
      if (c.autoAck) void c.call('events.ack', { seq: p.event.seq });
      for (const w of [...waiters]) {
        if (w.pred(p.event)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(p.event);
        }
      }
      return;
    }
    const r = m as { id: number };
    pending.get(r.id)?.(m);
    pending.delete(r.id);
  });
  return c;
}

const endOf = (c: Client, runId: string) =>
  c.waitFor((e) => e.type === 'sim.end' && e.runId === runId) as Promise<SimEndEvent>;
const framesOf = (c: Client, runId: string) =>
  c.events.filter((e): e is LiveFramesEvent => e.type === 'live.frames' && e.source === 'sim_run' && e.runId === runId);

async function loadClip(c: Client): Promise<ClipDto> {
  const r = await c.call<ClipDto>('clips.load', { path: NPZ });
  expect(r.error).toBeUndefined();
  return r.result!;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-hostsim-'));
  fs.writeFileSync(path.join(tmp, 'index.html'), '<!doctype html><title>stub</title>');
  server = await startHostServer({
    port: 0,
    rendererDir: tmp,
    backends: { embeddedSimulator: ({ modelFile }) => new EmbeddedSimulator({ modelFile, workers: 1 }) },
  });
  clip = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: NPZ });
});

afterAll(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('host: simulation runs', () => {
  it('refuses bad requests with the field named', async () => {
    const c = await connect();
    const dto = await loadClip(c);
    expect(dto.id).toBe(clip.id);
    const base = { connectionId: 'embedded-sim', clipId: dto.id, binding: 'builtin' };
    const bad = async (params: unknown) => (await c.call('sim.run', params)).error;
    expect(await bad({ ...base, binding: '/etc/passwd' })).toMatchObject({
      code: 'bad_params',
      field: 'params.binding',
    });
    expect(await bad({ ...base, binding: 'builtin:assist=-3' })).toMatchObject({
      code: 'bad_params',
      field: 'params.binding',
    });
    expect(await bad({ ...base, binding: 'builtin:assist=2000000' })).toMatchObject({
      code: 'bad_params',
      field: 'params.binding',
    });
    expect(await bad({ ...base, clipId: 'clip-0123456789abcdef' })).toMatchObject({
      code: 'not_found',
      field: 'params.clipId',
    });
    expect(await bad({ ...base, connectionId: 'remote-9' })).toMatchObject({
      code: 'not_found',
      field: 'params.connectionId',
    });
    expect(await bad({ ...base, seed: -1 })).toMatchObject({ code: 'bad_params', field: 'params.seed' });
    expect(await bad({ ...base, maxSeconds: 0 })).toMatchObject({ code: 'bad_params', field: 'params.maxSeconds' });
    expect((await c.call('sim.stop', {})).error).toMatchObject({ code: 'bad_params', field: 'params.runId' });
    expect((await c.call('sim.stop', { runId: 'sim-x', all: true })).error).toMatchObject({ code: 'bad_params' });
    expect((await c.call('sim.stop', { runId: 'sim-none' })).error).toMatchObject({ code: 'not_found' });
    expect((await c.call('sim.result', { runId: 'sim-none' })).error).toMatchObject({ code: 'not_found' });
    c.close();
  });

  it('runs a clip: frames pushed in batches, the end with outcome, batch readings and the sha256 `motionbench sim` gets', async () => {
    const c = await connect();
    const dto = await loadClip(c);
    const r = await c.call<SimRunStarted>('sim.run', {
      connectionId: 'embedded-sim',
      clipId: dto.id,
      binding: 'builtin:assist=3000',
      paceRealTime: 4,
      maxSeconds: 3,
    });
    expect(r.error).toBeUndefined();
    const started = r.result!;
    expect(started).toMatchObject({
      connectionId: 'embedded-sim',
      clipId: clip.id,
      seed: 0,
      paceRealTime: 4,
      durationS: 3,
      plannedFrames: 151,
    });
    expect(started.binding).toMatchObject({
      spec: 'builtin:assist=3000',
      kind: 'builtin',
      id: 'builtin',
      assistNPerM: 3000,
    });
    expect(started.binding.label).toContain('reference tracker, not a policy');
    // The connection is leased by the run; another run on it is refused meanwhile.
    const second = await c.call('sim.run', { connectionId: 'embedded-sim', clipId: dto.id, binding: 'builtin' });
    expect(second.error).toMatchObject({ code: 'conflict', field: 'params.connectionId' });

    const end = await endOf(c, started.runId);
    expect(c.invalid).toEqual([]);
    expect(end).toMatchObject({
      outcome: 'completed',
      frames: 151,
      plannedFrames: 151,
      droppedFrames: 0,
      failure: null,
      stopRequestedAtMs: null,
    });
    expect(end.simSeconds).toBeCloseTo(3, 12);
    // 3 s at 4× real time = 0.75 s of wall time; at 15 pushes a second that is several batches.
    const batches = framesOf(c, started.runId);
    expect(batches.length).toBeGreaterThanOrEqual(5);
    let k = 0;
    for (const b of batches) {
      expect(b.firstFrame).toBe(k);
      expect(b.timeS).toEqual(Array.from({ length: b.count }, (_, i) => (k + i) / 50));
      expect(b.jointPosRad).toHaveLength(29 * b.count);
      expect(b.rootPosM).toHaveLength(3 * b.count);
      expect(b.rootQuatWxyz).toHaveLength(4 * b.count);
      expect(b.connectionId).toBe('embedded-sim');
      expect(b.readings!.mpjpeLMm.every((v) => v !== null && v >= 0)).toBe(true);
      expect(b.readings!.firstFailureFrame!.every((v) => v === -1)).toBe(true);
      k += b.count;
    }
    expect(k).toBe(end.frames);
    const cat = (key: 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad') =>
      Float64Array.from(batches.flatMap((b) => b[key]!));

    // The readings are the batch reducer's over the frames pushed (what `motionbench metrics` gives).
    const head = clipHead(clip, 3);
    const exec = {
      fps: 50,
      frameCount: k,
      rootPosM: cat('rootPosM'),
      rootQuatWxyz: cat('rootQuatWxyz'),
      jointPosRad: cat('jointPosRad'),
    };
    // Judged against the reference as placed for the run: the same clip stretch's lift, which the
    // replay audit below reports (runSimEpisode, what `motionbench sim` runs).
    const sim = new EmbeddedSimulator({ workers: 1 });
    let audit: Awaited<ReturnType<typeof runSimEpisode>>;
    try {
      audit = await runSimEpisode(sim, {
        clip: head,
        binding: await resolveBindingSpec('builtin:assist=3000'),
        profile,
        keepFrames: false,
      });
    } finally {
      await sim.close();
    }
    const lift = audit.end.referenceLiftM ?? 0;
    expect(end.referenceLiftM).toBe(lift);
    const mine = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(placedClip(head, lift), exec).metrics;
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(mine)));
    expect(episodeMetricsJson(end.metrics as never)).toEqual(episodeMetricsJson(mine));
    expect(end.metrics.mpjpeLMm).toMatchObject({ available: true });

    // The recording (sim.result) is exactly the frames pushed.
    const res = (await c.call<SimRunResult>('sim.result', { runId: started.runId })).result!;
    expect(res).toMatchObject({
      state: 'ended',
      end: { outcome: 'completed', trajectorySha256: end.trajectorySha256 },
    });
    expect(res.trajectory.jointPosRad).toEqual(Array.from(exec.jointPosRad));
    expect(res.trajectory.rootPosM).toEqual(Array.from(exec.rootPosM));

    // Replay audit: the same clip stretch, binding and seed through runSimEpisode (what `motionbench
    // sim` runs) give the same trajectory hash and readings.
    expect(audit.end.trajectorySha256).toBe(end.trajectorySha256);
    expect(episodeMetricsJson(audit.metrics)).toEqual(episodeMetricsJson(mine));
    // The lease is released at the end.
    const list = (await c.call<ConnectionInfo[]>('connections.list', {})).result!;
    expect(list[0].leasedRunId).toBeNull();
    c.close();
  });

  it('stops a run at once with aborted_by_operator, keeping its frames; stop all reaches every run', async () => {
    const c = await connect();
    const dto = await loadClip(c);
    const started = (
      await c.call<SimRunStarted>('sim.run', {
        connectionId: 'embedded-sim',
        clipId: dto.id,
        binding: 'builtin:assist=3000',
      })
    ).result!;
    expect(started.paceRealTime).toBe(1);
    await c.waitFor((e) => e.type === 'live.frames' && e.runId === started.runId && e.firstFrame! + e.count >= 40);
    const t0 = performance.now();
    const stop = await c.call<{ stopped: string[] }>('sim.stop', { all: true, reason: 'operator stop (test)' });
    expect(stop.result).toEqual({ stopped: [started.runId] });
    const end = await endOf(c, started.runId);
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(500);
    expect(end).toMatchObject({ outcome: 'aborted_by_operator', reason: 'operator stop (test)' });
    expect(end.stopRequestedAtMs).not.toBeNull();
    expect(end.frames).toBeGreaterThanOrEqual(40);
    expect(end.frames).toBeLessThan(started.plannedFrames);
    expect(end.trajectorySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(end.metrics.mpjpeLMm).toMatchObject({ available: true }); // over the frames it has
    expect(framesOf(c, started.runId).reduce((s, b) => s + b.count, 0)).toBe(end.frames);
    // Stopping an ended run reaches nothing.
    expect((await c.call('sim.stop', { runId: started.runId })).result).toEqual({ stopped: [] });
    c.close();
  });

  it('a client that does not acknowledge gets frames skipped for display, counted; the end still arrives; the recording is whole', async () => {
    const c = await connect();
    c.autoAck = false;
    const dto = await loadClip(c);
    // 7.3 s of clip at 2× real time: ~3.7 s of wall time; the client takes 4 pushes, then nothing.
    const started = (
      await c.call<SimRunStarted>('sim.run', {
        connectionId: 'embedded-sim',
        clipId: dto.id,
        binding: 'builtin:assist=3000',
        paceRealTime: 2,
      })
    ).result!;
    const end = await endOf(c, started.runId);
    const batches = framesOf(c, started.runId);
    expect(batches.length).toBe(4);
    const sent = batches.reduce((s, b) => s + b.count, 0);
    expect(end.outcome).toBe('completed');
    expect(end.droppedFrames).toBe(end.frames - sent);
    expect(end.droppedFrames).toBeGreaterThan(200);
    const res = (await c.call<SimRunResult>('sim.result', { runId: started.runId })).result!;
    expect(res.trajectory.frames).toBe(end.frames);
    const list = (await c.call<ConnectionInfo[]>('connections.list', {})).result!;
    const problem = list[0].problems.find((p) => p.code === 'display_frames_dropped');
    expect(problem?.message).toContain(`${end.droppedFrames} frame(s) were not sent for display`);
    c.close();
  });

  it('stops the runs of a client that goes away', async () => {
    const a = await connect();
    const b = await connect();
    const dto = await loadClip(b);
    const started = (
      await b.call<SimRunStarted>('sim.run', { connectionId: 'embedded-sim', clipId: dto.id, binding: 'builtin' })
    ).result!;
    await b.waitFor((e) => e.type === 'live.frames' && e.runId === started.runId);
    b.close();
    await expect
      .poll(async () => (await a.call<SimRunResult>('sim.result', { runId: started.runId })).result!.state, {
        timeout: 5000,
      })
      .toBe('ended');
    const res = (await a.call<SimRunResult>('sim.result', { runId: started.runId })).result!;
    expect(res.end).toMatchObject({
      outcome: 'aborted_by_operator',
      reason: 'the console that started the run disconnected',
    });
    a.close();
  });
});
