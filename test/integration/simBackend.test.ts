// The embedded simulator backend on real MuJoCo worker threads (no mocks): replay audit,
// backpressure, stop, crash recovery, leases, the builtin tracker's behaviour with and without
// root assist, and Menagerie's scene beside our model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import { quatHeading } from '../../src/domain/math/quat';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { initialStateFromCalibration, initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator, isSimFramesEvent, type SimEpisodeEnd } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { backendHub } from '../../src/services/stream/backendHub';
import { MENAGERIE_G1, MENAGERIE_SCENE, OUR_G1, sharedData } from '../helpers/sharedData';

const lafan = (name: string) => loadClipFile(sharedData('motions/lafan1_g1_csv', `${name}.csv`));
const assist = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
const noAssist = makeBuiltinBinding();

describe('embedded simulator (our G1, 2 workers)', () => {
  let sim: EmbeddedSimulator;
  const profile = loadRobotProfile(OUR_G1);
  const dance = lafan('dance1_subject2');
  const walk = lafan('walk1_subject1');
  const events: BackendEvent[] = [];

  beforeAll(async () => {
    sim = new EmbeddedSimulator({ modelFile: OUR_G1, workers: 2 });
    await sim.ready();
  });
  afterAll(async () => {
    await sim?.close();
  });

  /**
   * Listens to the simulator's events through its one hub (runSimEpisode subscribes there too: the
   * backend has one listener owner); returns the unsubscribe.
   */
  function listen(onEvents: (events: BackendEvent[]) => Promise<void>): () => void {
    return backendHub(sim).subscribe({ name: 'simBackend test', delivery: 'every', onEvents });
  }

  /** Runs one episode on a given worker (by holding the other one), collecting raw frames. */
  async function runOn(
    worker: number,
    clip = clipHead(dance, 3),
    opts: { seed?: number; noise?: number; initialShiftM?: number } = {},
  ) {
    const held = [];
    let lease = await sim.acquire(`audit-${worker}-${Math.random()}`);
    while (lease.workerIndex !== worker) {
      held.push(lease);
      lease = await sim.acquire(`audit-${worker}-${Math.random()}`);
    }
    for (const h of held) await h.release();
    const frames: Float64Array[] = [];
    const unlisten = listen(async (evs) => {
      for (const e of evs)
        if (isSimFramesEvent(e) && e.runId === lease.runId)
          for (const f of e.frames)
            frames.push(
              Float64Array.of(f.timeS, ...f.rootPosM!, ...f.rootQuatWxyz!, ...f.jointPosRad, ...f.jointVelRadS),
            );
    });
    const initial = initialStateFromClipFrame(clip);
    if (opts.initialShiftM)
      initial.rootPosM = [initial.rootPosM[0] + opts.initialShiftM, initial.rootPosM[1], initial.rootPosM[2]];
    await lease.reset(initial);
    const end = await lease.run({
      clip,
      binding: assist,
      seed: opts.seed ?? 0,
      options: { initialJointNoiseRad: opts.noise ?? 0 },
    });
    await lease.release();
    unlisten();
    return { end, frames };
  }

  it('replay audit: the same episode is bit-identical twice in one worker and once in another', async () => {
    const a = await runOn(0);
    const b = await runOn(0);
    const c = await runOn(1);
    expect(a.end.outcome).toBe('completed');
    expect(a.end.frames).toBe(151);
    expect(a.end.trajectorySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(b.end.trajectorySha256).toBe(a.end.trajectorySha256);
    expect(c.end.trajectorySha256).toBe(a.end.trajectorySha256);
    expect(c.end.workerIndex).toBe(1);
    for (let k = 0; k < a.frames.length; k++) {
      expect(Buffer.from(b.frames[k].buffer).equals(Buffer.from(a.frames[k].buffer))).toBe(true);
      expect(Buffer.from(c.frames[k].buffer).equals(Buffer.from(a.frames[k].buffer))).toBe(true);
    }
  });

  it('the hash changes when the initial state moves by 1e-9 m, or the seed changes under 1e-9 rad seeded noise', async () => {
    const base = await runOn(0);
    const shifted = await runOn(1, undefined, { initialShiftM: 1e-9 });
    expect(shifted.end.trajectorySha256).not.toBe(base.end.trajectorySha256);
    const noisy1 = await runOn(0, undefined, { seed: 1, noise: 1e-9 });
    const noisy1again = await runOn(1, undefined, { seed: 1, noise: 1e-9 });
    const noisy2 = await runOn(0, undefined, { seed: 2, noise: 1e-9 });
    expect(noisy1again.end.trajectorySha256).toBe(noisy1.end.trajectorySha256);
    expect(noisy2.end.trajectorySha256).not.toBe(noisy1.end.trajectorySha256);
    expect(noisy1.end.trajectorySha256).not.toBe(base.end.trajectorySha256);
  });

  it('without root assist the PD tracker falls within seconds; with 3 kN/m it tracks walk and dance', async () => {
    const results: Record<string, SimEpisodeEnd & { mpjpe: number | null }> = {};
    await Promise.all(
      [
        ['walk, no assist', clipHead(walk, 8), noAssist],
        ['walk, assist', clipHead(walk, 8), assist],
        ['dance, no assist', clipHead(dance, 4), noAssist],
        ['dance, assist', clipHead(dance, 4), assist],
      ].map(async ([name, clip, binding]) => {
        const r = await runSimEpisode(sim, {
          clip: clip as never,
          binding: binding as never,
          profile,
          keepFrames: false,
        });
        // the streaming detector (worker) and the batch reducer (main) agree on the failure
        expect(r.metrics.failure.available && r.metrics.failure.value).toEqual(r.end.failure ?? null);
        results[name as string] = { ...r.end, mpjpe: r.metrics.mpjpeLMm.available ? r.metrics.mpjpeLMm.value : null };
      }),
    );
    expect(results['walk, no assist'].outcome).toBe('hard_failure');
    expect(results['walk, no assist'].failure!.timeS).toBeLessThan(7);
    expect(results['dance, no assist'].outcome).toBe('hard_failure');
    expect(results['dance, no assist'].failure!.timeS).toBeLessThan(3);
    expect(results['walk, assist'].outcome).toBe('completed');
    expect(results['dance, assist'].outcome).toBe('completed');
    expect(results['walk, assist'].mpjpe!).toBeLessThan(100);
    expect(results['dance, assist'].mpjpe!).toBeLessThan(60);
  });

  it('backpressure: a slow listener holds the worker to at most 2 undelivered batches and loses nothing', async () => {
    const lease = await sim.acquire('slow-listener');
    let frames = 0;
    let last = -1;
    const unlisten = listen(async (evs) => {
      for (const e of evs) {
        if (!isSimFramesEvent(e)) continue;
        for (const f of e.frames) {
          expect(f.tick).toBe(last + 1);
          last = f.tick;
        }
        frames += e.frames.length;
        await new Promise((r) => setTimeout(r, 15));
      }
    });
    const before = sim.stats.batches;
    const end = await lease.run({
      clip: clipHead(dance, 4),
      binding: assist,
      seed: 0,
      options: { framesPerBatch: 5, maxBatchesInFlight: 2 },
    });
    await lease.release();
    unlisten();
    expect(end.frames).toBe(201);
    expect(frames).toBe(201);
    expect(sim.stats.batches - before).toBe(41);
    expect(sim.stats.maxPendingBatches).toBeLessThanOrEqual(2);
    // 41 batches behind a 15 ms listener: the episode cannot finish faster than the listener
    expect(end.wallSeconds).toBeGreaterThan(41 * 0.015 * 0.9);
  });

  it('stop ends the episode at once with the given outcome, keeping the frames so far', async () => {
    const lease = await sim.acquire('stop-me');
    let frames = 0;
    let stopping: Promise<void> | null = null;
    const unlisten = listen(async (evs) => {
      for (const e of evs) {
        if (e.type === 'frames') {
          frames += e.frames.length;
          if (frames >= 50 && !stopping) stopping = lease.stop('estop', 'e-stop pressed in test');
        }
        events.push(e);
      }
    });
    const end = await lease.run({ clip: clipHead(walk, 30), binding: assist, seed: 0, options: { paceRealTime: 5 } });
    await stopping;
    await lease.release();
    unlisten();
    expect(end.outcome).toBe('estop');
    expect(end.reason).toBe('e-stop pressed in test');
    expect(end.frames).toBe(frames);
    expect(end.frames).toBeGreaterThanOrEqual(50);
    expect(end.frames).toBeLessThan(1501);
    expect(events.some((e) => e.type === 'episode_end' && e.end.outcome === 'estop')).toBe(true);
  });

  it('a worker crash ends the episode infrastructure_error with its frames; the worker is replaced and still deterministic', async () => {
    const problems: string[] = [];
    let frames = 0;
    const lease = await sim.acquire('crash');
    const unlisten = listen(async (evs) => {
      for (const e of evs) {
        if (e.type === 'frames') frames += e.frames.length;
        if (e.type === 'problem') problems.push(e.problem.code);
      }
    });
    const crashed = await lease.run({
      clip: clipHead(dance, 3),
      binding: assist,
      seed: 0,
      options: { crashAtFrame: 60, framesPerBatch: 10 },
    });
    expect(crashed.outcome).toBe('infrastructure_error');
    expect(crashed.reason).toMatch(/crashed/);
    expect(crashed.frames).toBe(frames);
    expect(crashed.frames).toBeGreaterThan(0);
    expect(crashed.frames).toBeLessThanOrEqual(61);
    expect(problems).toContain('sim_worker_crashed');
    // The same lease runs again on the replacement worker, with the audit hash of any worker.
    const again = await lease.run({ clip: clipHead(dance, 3), binding: assist, seed: 0 });
    await lease.release();
    unlisten();
    expect(again.outcome).toBe('completed');
    const reference = await runOn(again.workerIndex === 0 ? 1 : 0);
    expect(again.trajectorySha256).toBe(reference.end.trajectorySha256);
  });

  it('leases are exclusive per worker and bound to a run id', async () => {
    const a = await sim.acquire('lease-a');
    await expect(sim.acquire('lease-a')).rejects.toThrow(/already holds a lease/);
    const b = await sim.acquire('lease-b');
    expect(b.workerIndex).not.toBe(a.workerIndex);
    await expect(sim.acquire('lease-c')).rejects.toThrow(/all 2 simulator workers are leased/);
    const waiting = sim.acquireWhenFree('lease-c');
    await a.release();
    const c = await waiting;
    expect(c.workerIndex).toBe(a.workerIndex);
    await expect(a.run({ clip: clipHead(dance, 1), binding: assist, seed: 0 })).rejects.toThrow(/released/);
    await b.release();
    await c.release();
    expect(sim.presence).toBe('present');
    expect(sim.capabilities).toMatchObject({ executionDomain: 'simulation', exactReset: true, stateRateHz: 50 });
  });

  it('refuses what it cannot run before anything moves', async () => {
    const lease = await sim.acquire('refusals');
    await expect(
      lease.reset({ rootPosM: [0, 0, 0.8], rootQuatWxyz: [1, 0, 0, 0], jointPosRad: [1, 2], placeOnFloor: true }),
    ).rejects.toThrow(/jointPosRad has 2 values/);
    const remote = { ...assist, kind: 'remote' as const, checkpointHash: null };
    await expect(lease.run({ clip: clipHead(dance, 1), binding: remote as never, seed: 0 })).rejects.toThrow(
      /cannot run "remote"/,
    );
    const odd = makeBuiltinBinding({ controlRateHz: 60 });
    await expect(lease.run({ clip: clipHead(dance, 1), binding: odd, seed: 0 })).rejects.toThrow(
      /not a multiple of the 50 Hz/,
    );
    await lease.release();
  });

  it('reset from a calibration: roll, pitch and joints measured, x/y/heading from the clip, feet on the floor', async () => {
    const clip = clipHead(walk, 2);
    const roll = 0.03;
    const pitch = -0.02;
    // measured attitude: arbitrary yaw 1.2 rad, small roll/pitch (ZYX)
    const cz = Math.cos(0.6),
      sz = Math.sin(0.6),
      cy = Math.cos(pitch / 2),
      sy = Math.sin(pitch / 2),
      cx = Math.cos(roll / 2),
      sx = Math.sin(roll / 2);
    const q: [number, number, number, number] = [
      cz * cy * cx + sz * sy * sx,
      cz * cy * sx - sz * sy * cx,
      cz * sy * cx + sz * cy * sx,
      sz * cy * cx - cz * sy * sx,
    ];
    const joints = Array.from(clip.jointPosRad.subarray(0, 29), (v, j) => v + (j === 3 ? 0.05 : 0));
    const initial = initialStateFromCalibration({ rootQuatWxyz: q, jointPosRad: joints }, clip);
    const lease = await sim.acquire('calibrated');
    await lease.reset(initial);
    const s = lease.resolvedInitialState!;
    await lease.release();
    expect(s.rootPosM[0]).toBeCloseTo(clip.rootPosM[0], 12);
    expect(s.rootPosM[1]).toBeCloseTo(clip.rootPosM[1], 12);
    expect(quatHeading(s.rootQuatWxyz)).toBeCloseTo(
      quatHeading([clip.rootQuatWxyz[0], clip.rootQuatWxyz[1], clip.rootQuatWxyz[2], clip.rootQuatWxyz[3]]),
      12,
    );
    expect(s.jointPosRad[3]).toBeCloseTo(joints[3], 12);
    // standing on the floor: the pelvis of our G1 sits ~0.79 m up
    expect(s.rootPosM[2]).toBeGreaterThan(0.7);
    expect(s.rootPosM[2]).toBeLessThan(0.82);
  });
});

describe('embedded simulator with MuJoCo Menagerie G1', () => {
  it('runs scene.xml (meshes) and refuses g1.xml, which has no floor', async () => {
    const sim = new EmbeddedSimulator({ modelFile: MENAGERIE_SCENE, workers: 1 });
    try {
      const info = await sim.ready();
      expect(info.modelName).toMatch(/g1/);
      const profile = loadRobotProfile(MENAGERIE_SCENE);
      const r = await runSimEpisode(sim, { clip: clipHead(lafan('dance1_subject2'), 3), binding: assist, profile });
      expect(r.end.outcome).toBe('completed');
      expect(r.metrics.mpjpeLMm.available && r.metrics.mpjpeLMm.value).toBeLessThan(60);
      // the lowest foot sphere touches the floor: the solve moved the root off the clip's height
      expect(Math.abs(r.end.initialState!.floorShiftM)).toBeLessThan(0.2);
    } finally {
      await sim.close();
    }
    const bare = new EmbeddedSimulator({ modelFile: MENAGERIE_G1, workers: 1 });
    await expect(bare.ready()).rejects.toThrow(/no floor.*scene\.xml/);
    expect(bare.presence).toBe('lost');
    await bare.close();
  });
});
