import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_PENDING_DISPLAY_S,
  MAX_UNACKED_PUSHES,
  parseApiEvent,
  parseRequest,
  type ApiEvent,
  type LiveFramesEvent,
  type SimEndEvent,
} from '../../src/api/contract';
import type {
  Backend,
  BackendCapabilities,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  InitialState,
  Presence,
  RunRequest,
} from '../../src/domain/backend/backend';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { ClipPairEvaluator, MB_METRICS_1 } from '../../src/domain/metrics';
import { computeClipId } from '../../src/domain/motion/clipCommon';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { PolicyRegistry } from '../../src/services/console/policyRegistry';
import { ClipCache } from '../../src/services/console/clipCache';
import { ConnectionRegistry } from '../../src/services/console/connectionRegistry';
import { EventHub, type DisplaySource, type LiveBatch } from '../../src/services/console/eventHub';
import { SimRecording } from '../../src/services/console/simRecording';
import { SimRunManager } from '../../src/services/console/simRuns';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';

// The console's simulation-run plumbing without a simulator: the push hub's flow control (acks,
// coalescing, drop-with-count, the end always delivered), the recording's 50 Hz timeline, and the
// run manager against a scripted backend (a remote-like one: 100 Hz frames, no root position, no
// live readings), including stops before and during the episode.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);

afterEach(() => {
  vi.useRealTimers();
});

/** A source of `n` frames at `hz`, ending when told. */
function fakeSource(runId: string, hz = 50): DisplaySource & { n: number; end: boolean } {
  const src = {
    runId,
    n: 0,
    end: false,
    recordedFrames: () => src.n,
    frameTimeS: (i: number) => i / hz,
    framesBatch: (from: number, to: number): LiveBatch => ({
      type: 'live.frames',
      source: 'sim_run',
      connectionId: 'embedded-sim',
      runId,
      jobId: null,
      firstFrame: from,
      frame: null,
      count: to - from,
      timeS: Array.from({ length: to - from }, (_, i) => (from + i) / hz),
      rootPosM: null,
      rootQuatWxyz: null,
      jointPosRad: new Array(29 * (to - from)).fill(0),
      readings: {
        mpjpeLMm: new Array(to - from).fill(null),
        jointRmseRad: new Array(to - from).fill(null),
        firstFailureFrame: new Array(to - from).fill(null),
        failed: null,
        failure: null,
      },
      ended: false,
    }),
    endEvent: (): Omit<SimEndEvent, 'seq' | 'droppedFrames'> | null =>
      src.end
        ? {
            type: 'sim.end',
            runId,
            outcome: 'completed',
            reason: 'done',
            frames: src.n,
            plannedFrames: src.n,
            simSeconds: (src.n - 1) / hz,
            wallSeconds: 1,
            trajectorySha256: null,
            failure: null,
            referenceLiftM: 0,
            metrics: {
              contract: 'mb-metrics/1',
              K: 0,
              failure: { available: false, reason: 'x' },
              progressSoft: { available: false, reason: 'x' },
              progressStop: { available: false, reason: 'x' },
              mpjpeLMm: { available: false, reason: 'x' },
              jointPosRmseRad: { available: false, reason: 'x' },
              jointVelRmseRadS: { available: false, reason: 'x' },
              jointAccRmsRadS2: { available: false, reason: 'x' },
              jointAccP95RadS2: { available: false, reason: 'x' },
              jointJerkRmsRadS3: { available: false, reason: 'x' },
              jointJerkP95RadS3: { available: false, reason: 'x' },
            },
            stopRequestedAtMs: null,
          }
        : null,
  };
  return src;
}

describe('EventHub', () => {
  it('sends each run’s new frames at the push rate, contiguous, and the end once', () => {
    vi.useFakeTimers();
    const hub = new EventHub({ pushRateHz: 10 });
    const got: ApiEvent[] = [];
    const client = hub.attach({ send: (e) => got.push(e) });
    const src = fakeSource('r1');
    hub.watch(client, src);
    src.n = 7;
    vi.advanceTimersByTime(100);
    src.n = 12;
    vi.advanceTimersByTime(100);
    vi.advanceTimersByTime(100); // nothing new: nothing sent
    expect(got.map((e) => e.type === 'live.frames' && [e.seq, e.firstFrame, e.count])).toEqual([
      [0, 0, 7],
      [1, 7, 5],
    ]);
    client.ack(1);
    src.n = 13;
    src.end = true;
    hub.ended(src);
    expect(got.slice(2).map((e) => [e.type, e.seq])).toEqual([
      ['live.frames', 2],
      ['sim.end', 3],
    ]);
    for (const e of got) expect(parseApiEvent(e)).toMatchObject({ ok: true });
    vi.advanceTimersByTime(1000);
    expect(got).toHaveLength(4); // the stream is closed; the timer stopped
  });

  it('holds back a client that does not acknowledge, bounds what waits, counts what it skips, and still delivers the end', () => {
    vi.useFakeTimers();
    const dropped: [string, number, boolean][] = [];
    const hub = new EventHub({ pushRateHz: 10, onDropped: (run, _c, n, final) => dropped.push([run, n, final]) });
    const got: ApiEvent[] = [];
    const client = hub.attach({ send: (e) => got.push(e) });
    const src = fakeSource('r1');
    hub.watch(client, src);
    for (let i = 1; i <= 20; i++) {
      src.n = i * 50; // one second of frames per tick
      vi.advanceTimersByTime(100);
    }
    // MAX_UNACKED_PUSHES pushes, then nothing until acknowledged.
    const frames = got.filter((e): e is LiveFramesEvent => e.type === 'live.frames');
    expect(frames).toHaveLength(MAX_UNACKED_PUSHES);
    expect(hub.unackedOf(client)).toBe(MAX_UNACKED_PUSHES);
    // Acknowledging releases one batch with what waited: at most MAX_PENDING_DISPLAY_S of frames, the rest skipped and counted.
    client.ack(frames.at(-1)!.seq);
    vi.advanceTimersByTime(100);
    const next = got.at(-1) as LiveFramesEvent;
    expect(next.firstFrame! + next.count).toBe(1000);
    expect(next.timeS.at(-1)! - next.timeS[0]).toBeLessThanOrEqual(MAX_PENDING_DISPLAY_S);
    expect(next.droppedFrames).toBe(next.firstFrame! - 200);
    // Reported once, when the first frames were skipped.
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toEqual(['r1', expect.any(Number), false]);
    expect(dropped[0][1]).toBeGreaterThan(0);
    // Behind again at the end: the rest is skipped, and the end arrives anyway with the total.
    client.ack(-1); // a stale ack changes nothing
    for (let i = 0; i < MAX_UNACKED_PUSHES; i++) {
      src.n += 10;
      vi.advanceTimersByTime(100);
    }
    src.n += 10;
    src.end = true;
    hub.ended(src);
    const end = got.at(-1) as SimEndEvent;
    expect(end.type).toBe('sim.end');
    const sent = got.filter((e): e is LiveFramesEvent => e.type === 'live.frames').reduce((s, e) => s + e.count, 0);
    expect(end.droppedFrames).toBe(src.n - sent);
    expect(dropped).toHaveLength(2);
    expect(dropped.at(-1)).toEqual(['r1', end.droppedFrames, true]);
  });

  it('forgets a client that detached, and tells its listeners', () => {
    vi.useFakeTimers();
    const hub = new EventHub({ pushRateHz: 10 });
    const got: ApiEvent[] = [];
    const client = hub.attach({ send: (e) => got.push(e) });
    let told = 0;
    client.onDetach(() => told++);
    const src = fakeSource('r1');
    hub.watch(client, src);
    client.detach();
    client.detach();
    src.n = 5;
    vi.advanceTimersByTime(500);
    expect(got).toEqual([]);
    expect(told).toBe(1);
    hub.watch(client, src); // watching with a detached client does nothing
    vi.advanceTimersByTime(500);
    expect(got).toEqual([]);
  });
});

describe('SimRecording', () => {
  it('is its own 50 Hz timeline when it was recorded on one; a 100 Hz recording is resampled to it', () => {
    const rec = new SimRecording(29, 2);
    const f = createStateFrame();
    for (let k = 0; k < 5; k++) {
      f.timeS = k / 50;
      f.rootPosM!.set([k, 0, 1]);
      f.jointPosRad.fill(k / 10);
      expect(rec.append(f, null)).toBe(true);
    }
    f.timeS = 0.01; // backwards: refused
    expect(rec.append(f, null)).toBe(false);
    const t = rec.onTimeline(50);
    expect(t.frameCount).toBe(5);
    expect(t.rootPosM.buffer).toBe(rec.rootPosM.buffer); // no copy

    const fast = new SimRecording(29);
    for (let i = 0; i < 11; i++) {
      f.timeS = i / 100;
      f.rootPosM!.set([i, 0, 1]);
      f.jointPosRad.fill(i);
      fast.append(f, null);
    }
    const r = fast.onTimeline(50);
    expect(r.frameCount).toBe(6);
    expect(Array.from({ length: 6 }, (_, k) => r.rootPosM[3 * k])).toEqual([0, 2, 4, 6, 8, 10]);
    expect(r.jointPosRad[29 * 3]).toBe(6);
  });
});

// ---- the run manager against a scripted backend ----------------------------------------------

/** A remote-like simulator: frames at `hz` without a root position and without live readings. */
class ScriptedBackend implements Backend {
  readonly id = 'scripted';
  readonly name = 'scripted';
  presence: Presence = 'present';
  readonly capabilities: BackendCapabilities = {
    executionDomain: 'simulation',
    globalRootPosition: false,
    rootOrientation: true,
    contacts: false,
    jointTorque: false,
    stateRateHz: 100,
    exactReset: true,
    bindingKinds: ['builtin'],
  };
  private listener: BackendListener | null = null;
  resets: InitialState[] = [];
  runs: RunRequest[] = [];
  stops = 0;
  /** Hold reset() until released (to land a stop before the episode). */
  holdReset: Promise<void> | null = null;
  constructor(
    private readonly hz: number,
    private readonly frames: number,
  ) {}
  setListener(l: BackendListener | null): void {
    this.listener = l;
  }
  async acquire(runId: string): Promise<BackendLease> {
    let stopped = false;
    return {
      runId,
      reset: async (s) => {
        this.resets.push(s);
        await this.holdReset;
      },
      run: async (req): Promise<EpisodeEnd> => {
        this.runs.push(req);
        let n = 0;
        for (; n < this.frames && !stopped; n++) {
          const f = createStateFrame(false);
          f.timeS = n / this.hz;
          f.jointPosRad.set(
            req.clip.jointPosRad.subarray(
              29 * Math.min(req.clip.frameCount - 1, Math.round((n / this.hz) * req.clip.fps)),
              29 * Math.min(req.clip.frameCount - 1, Math.round((n / this.hz) * req.clip.fps)) + 29,
            ),
          );
          await this.listener?.([{ type: 'frames', runId, frames: [f] }]);
          await new Promise((r) => setTimeout(r, 1));
        }
        return {
          runId,
          outcome: stopped ? 'aborted_by_operator' : 'completed',
          reason: stopped ? 'stop' : 'end',
          frames: n,
          simSeconds: (n - 1) / this.hz,
          wallSeconds: 0.1,
        };
      },
      stop: async () => {
        this.stops++;
        stopped = true;
      },
      release: async () => {},
    };
  }
  async close(): Promise<void> {}
}

function testClip(frames: number, fps = 50): MotionClip {
  const rootPosM = new Float64Array(3 * frames);
  const rootQuatWxyz = new Float64Array(4 * frames);
  const jointPosRad = new Float64Array(29 * frames);
  for (let k = 0; k < frames; k++) {
    rootPosM.set([0, 0, 0.79], 3 * k);
    rootQuatWxyz.set([1, 0, 0, 0], 4 * k);
    for (let j = 0; j < 29; j++) jointPosRad[29 * k + j] = 0.2 * Math.sin(k / 10 + j);
  }
  return {
    id: computeClipId(fps, frames, rootPosM, rootQuatWxyz, jointPosRad),
    name: 'sine',
    fps,
    frameCount: frames,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    provenance: { file: 'sine.json', format: 'motionbench-json', fileSha256: '0'.repeat(64), fpsSource: 'file' },
    warnings: [],
  };
}

function setup(backend: ScriptedBackend, realRobotWork: () => string | null = () => null) {
  const registry = new ConnectionRegistry({
    factories: { embeddedSimulator: () => backend },
    modelFile: DEFAULT_MODEL_FILE,
  });
  const clips = new ClipCache(2);
  const hub = new EventHub({ pushRateHz: 50 });
  const manager = new SimRunManager({
    registry,
    clips,
    hub,
    profile: () => profile,
    bindings: new PolicyRegistry({
      clips,
      files: {
        openPolicy: () => Promise.reject(new Error('no policy is opened in this test')),
        checkPolicy: () => Promise.reject(new Error('no policy is checked in this test')),
      },
      modelFile: DEFAULT_MODEL_FILE,
    }),
    realRobotWork,
  });
  const got: ApiEvent[] = [];
  const client = hub.attach({
    send: (e) => {
      got.push(e);
      client.ack(e.seq);
    },
  });
  return { registry, clips, hub, manager, client, got };
}

const endOf = async (got: ApiEvent[], runId: string): Promise<SimEndEvent> => {
  await vi.waitFor(() => expect(got.some((e) => e.type === 'sim.end' && e.runId === runId)).toBe(true), {
    timeout: 5000,
  });
  return got.find((e) => e.type === 'sim.end' && e.runId === runId) as SimEndEvent;
};

describe('SimRunManager', () => {
  it('runs a clip on a backend without a root position: frames pushed, readings that need one unavailable with the reason', async () => {
    const backend = new ScriptedBackend(100, 101);
    const { manager, clips, client, got, registry } = setup(backend);
    const clip = testClip(51); // 1 s at 50 fps
    clips.put(clip);
    const started = await manager.run(
      { connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin:assist=500', seed: 7 },
      client,
    );
    expect(started).toMatchObject({
      clipId: clip.id,
      seed: 7,
      paceRealTime: 1,
      durationS: 1,
      plannedFrames: 51,
      binding: { spec: 'builtin:assist=500', assistNPerM: 500 },
    });
    const end = await endOf(got, started.runId);
    expect(backend.resets[0]).toMatchObject({ placeOnFloor: true, rootPosM: [0, 0, 0.79] });
    expect(backend.runs[0]).toMatchObject({ seed: 7, options: { paceRealTime: 1 } });
    expect(end).toMatchObject({ outcome: 'completed', frames: 101, trajectorySha256: null, droppedFrames: 0 });
    const pushed = got.filter((e): e is LiveFramesEvent => e.type === 'live.frames');
    expect(pushed.reduce((s, e) => s + e.count, 0)).toBe(101);
    expect(pushed[0]).toMatchObject({ source: 'sim_run', connectionId: started.connectionId, runId: started.runId });
    expect(pushed[0].rootPosM).toBeNull();
    expect(pushed[0].readings!.mpjpeLMm[0]).toBeNull();
    // Without a root position: no failure detection, no MPJPE-l; joint readings from the 50 Hz resample.
    expect(end.metrics.failure).toMatchObject({ available: false });
    expect(end.metrics.mpjpeLMm).toMatchObject({ available: false });
    expect(end.metrics.jointPosRmseRad).toMatchObject({ available: true });
    const res = manager.result(started.runId);
    expect(res.trajectory.rootPosM).toBeNull();
    expect(res.trajectory.frames).toBe(101);
    // The same numbers from the 50 Hz resample of the recording, evaluated here.
    const rec = new SimRecording(29);
    for (let i = 0; i < 101; i++) {
      const f = createStateFrame(false);
      f.timeS = res.trajectory.timeS[i];
      f.jointPosRad.set(res.trajectory.jointPosRad.slice(29 * i, 29 * i + 29));
      rec.append(f, null);
    }
    const mine = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(clip, rec.onTimeline(50), {
      hasGlobalRootPosition: false,
      hasGlobalRootHeading: false,
    }).metrics;
    expect(end.metrics).toEqual(JSON.parse(JSON.stringify(mine)));
    expect(registry.get('embedded-sim').leasedRunId).toBeNull();
    await manager.close();
    await registry.close();
  });

  it('a stop before the episode began ends the run with no frames and every reading unavailable', async () => {
    const backend = new ScriptedBackend(50, 50);
    let release!: () => void;
    backend.holdReset = new Promise((r) => (release = r));
    const { manager, clips, client, got, registry } = setup(backend);
    const clip = testClip(51);
    clips.put(clip);
    const started = await manager.run({ connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin' }, client);
    // The connection is taken while the run starts.
    await expect(
      manager.run({ connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin' }, client),
    ).rejects.toMatchObject({ code: 'conflict' });
    await vi.waitFor(() => expect(backend.resets).toHaveLength(1));
    expect(manager.stop({ all: true, reason: 'operator stop (button)' })).toEqual({ stopped: [started.runId] });
    release();
    const end = await endOf(got, started.runId);
    expect(backend.runs).toHaveLength(0);
    expect(end).toMatchObject({
      outcome: 'aborted_by_operator',
      reason: 'operator stop (button) (before the simulation began)',
      frames: 0,
    });
    for (const key of ['progressSoft', 'mpjpeLMm', 'jointPosRmseRad', 'jointJerkP95RadS3'] as const) {
      expect(end.metrics[key]).toMatchObject({
        available: false,
        reason: expect.stringContaining('the run recorded 0 frame(s)'),
      });
    }
    await manager.close();
    await registry.close();
  });

  it('a stop during the episode reaches the backend; the client going away stops its runs', async () => {
    const backend = new ScriptedBackend(50, 100_000);
    const { manager, clips, client, got, registry, hub } = setup(backend);
    const clip = testClip(51);
    clips.put(clip);
    const a = await manager.run({ connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin' }, client);
    await vi.waitFor(() => expect(manager.result(a.runId).trajectory.frames).toBeGreaterThan(5));
    expect(manager.stop({ runId: a.runId, reason: 'panel stop' })).toEqual({ stopped: [a.runId] });
    const end = await endOf(got, a.runId);
    expect(end).toMatchObject({ outcome: 'aborted_by_operator', reason: 'panel stop' });
    expect(backend.stops).toBeGreaterThanOrEqual(1);

    const other = hub.attach({ send: () => {} });
    const b = await manager.run({ connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin' }, other);
    await vi.waitFor(() => expect(manager.result(b.runId).trajectory.frames).toBeGreaterThan(2));
    other.detach();
    await vi.waitFor(() => expect(manager.result(b.runId).state).toBe('ended'));
    expect(manager.result(b.runId).end).toMatchObject({
      outcome: 'aborted_by_operator',
      reason: 'the console that started the run disconnected',
    });
    expect(manager.active()).toEqual([]);
    await manager.close();
    await registry.close();
  });

  it('a backend that ends `completed` with no frame recorded ends the run infrastructure_error, never completed', async () => {
    const backend = new ScriptedBackend(50, 0);
    const { manager, clips, client, got, registry } = setup(backend);
    const clip = testClip(51);
    clips.put(clip);
    const started = await manager.run({ connectionId: 'embedded-sim', clipId: clip.id, binding: 'builtin' }, client);
    const end = await endOf(got, started.runId);
    expect(backend.runs).toHaveLength(1); // the backend ran and said `completed`
    expect(end).toMatchObject({ outcome: 'infrastructure_error', frames: 0, plannedFrames: 51 });
    expect(end.reason).toBe(
      'the backend reported "end" but the console recorded 0 of 51 frames on embedded-sim: nothing was tracked',
    );
    await manager.close();
    await registry.close();
  });

  it('refuses a run on the embedded simulator while a real trial runs, unless the request overrides it', async () => {
    let realWork: string | null = 'trial trial-1 is running (pair pt-1)';
    const backend = new ScriptedBackend(50, 20);
    const { manager, clips, client, got, registry } = setup(backend, () => realWork);
    const clip = testClip(51);
    clips.put(clip);
    const run = (override?: boolean) =>
      manager.run(
        {
          connectionId: 'embedded-sim',
          clipId: clip.id,
          binding: 'builtin',
          ...(override !== undefined && { allowDuringRealTrial: override }),
        },
        client,
      );
    for (const override of [undefined, false])
      await expect(run(override)).rejects.toMatchObject({
        code: 'conflict',
        field: 'params.allowDuringRealTrial',
        message:
          "trial trial-1 is running (pair pt-1) on this machine: a simulation here would take the cores its robot's timing needs; wait for its end, or set allowDuringRealTrial to run anyway",
      });
    expect(backend.runs).toHaveLength(0);
    const forced = await run(true);
    expect(await endOf(got, forced.runId)).toMatchObject({ outcome: 'completed', frames: 20 });
    // Negative control: once the trial ended, the same request without the override runs.
    realWork = null;
    const after = await run();
    expect(await endOf(got, after.runId)).toMatchObject({ outcome: 'completed', frames: 20 });
    await manager.close();
    await registry.close();
  });

  it('refuses a clip it does not hold, and an unknown run', async () => {
    const { manager, client, registry } = setup(new ScriptedBackend(50, 5));
    await expect(
      manager.run({ connectionId: 'embedded-sim', clipId: 'clip-00', binding: 'builtin' }, client),
    ).rejects.toMatchObject({ code: 'not_found', field: 'params.clipId' });
    expect(() => manager.stop({ runId: 'nope' })).toThrow(/no run "nope"/);
    expect(() => manager.result('nope')).toThrow(/no run "nope"/);
    await registry.close();
  });
});

describe('sim API contract', () => {
  it('accepts builtin specs only, never a path', () => {
    const base = { connectionId: 'embedded-sim', clipId: 'clip-0123' };
    for (const binding of ['builtin', 'builtin:assist=3000', 'builtin:assist=0.5'])
      expect(parseRequest('sim.run', { ...base, binding }).ok).toBe(true);
    for (const binding of [
      'builtin:',
      'builtin:assist=',
      'builtin:assist=1e3',
      'builtin:gain=3',
      '/tmp/b.json',
      'onnx',
      'builtin:assist=3000,assist=1',
    ]) {
      expect(parseRequest('sim.run', { ...base, binding }), binding).toMatchObject({
        ok: false,
        error: { field: 'params.binding' },
      });
    }
    expect(parseRequest('sim.run', { ...base, binding: 'builtin', paceRealTime: null })).toMatchObject({ ok: true });
    expect(parseRequest('sim.run', { ...base, binding: 'builtin', paceRealTime: 0 })).toMatchObject({
      ok: false,
      error: { field: 'params.paceRealTime' },
    });
    expect(parseRequest('sim.run', { ...base, binding: 'builtin', clipId: '../x' })).toMatchObject({
      ok: false,
      error: { field: 'params.clipId' },
    });
    expect(parseRequest('sim.stop', { all: true })).toMatchObject({ ok: true });
    expect(parseRequest('sim.stop', { runId: 'sim-1' })).toMatchObject({ ok: true });
    expect(parseRequest('sim.stop', { all: false })).toMatchObject({ ok: false });
    expect(parseRequest('events.ack', { seq: -1 })).toMatchObject({ ok: false, error: { field: 'params.seq' } });
  });

  it('validates pushed events, naming the field', () => {
    const frames = fakeSource('r1').framesBatch(0, 2);
    expect(parseApiEvent({ ...frames, seq: 0, droppedFrames: 0 })).toMatchObject({ ok: true });
    expect(parseApiEvent({ ...frames, seq: 0, droppedFrames: 0, timeS: [0, Number.NaN] })).toMatchObject({ ok: false });
    expect(parseApiEvent({ ...frames, seq: 0 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('droppedFrames'),
    });
    expect(parseApiEvent({ type: 'sim.other', seq: 0 })).toMatchObject({ ok: false });
  });
});
