// Recording an episode into a campaign: the row is `running` before the first frame, the MCAP
// file holds reference, executed state, commands, live and final metrics and events with chunks
// on the flush policy, finish() closes it (an independent indexed reader opens it, its size and
// sha256 are those stored) and commits row, event and metrics together. Failures to create the
// file and aborted recordings stay on record as infrastructure errors.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodeMetricsJson, MB_METRICS_1 } from '../../src/domain/metrics';
import { readEpisodeFile, trajectorySha256OfEpisode } from '../../src/services/episode/episodeReader';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { resampleClip } from '../../src/domain/motion/resample';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { parentTraceInputs } from '../../src/services/trace';
import { OUR_G1, sharedData } from '../helpers/sharedData';
import { openCampaign, TraceStoreError, type CampaignStore } from '../../src/services/trace';
import {
  fixtureEnd,
  fixtureInputs,
  fixtureMetrics,
  syntheticFrame,
  syntheticFrames,
  tempDir,
} from '../helpers/traceFixtures';
import { checkMcapCrcs, readIndexed } from '../helpers/traceMcap';

const dir = tempDir('recorder');
let store: CampaignStore;
let parentId: string;
beforeAll(async () => {
  store = await openCampaign(dir, { create: true });
  parentId = store.ensureParentTrace(fixtureInputs()).id;
});
afterAll(() => {
  store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// A 50 Hz reference of 2 s (101 frames) for a 500 Hz robot stream.
const K = 101;
const reference = {
  frameCount: K,
  rateHz: 50,
  rootPosM: Float64Array.from({ length: 3 * K }, (_, i) => (i % 3 === 2 ? 0.78 : 0.001 * i)),
  rootQuatWxyz: Float64Array.from({ length: 4 * K }, (_, i) => (i % 4 === 0 ? 1 : 0)),
  jointPosRad: Float64Array.from({ length: 29 * K }, (_, i) => 0.001 * (i % 29)),
};

describe('EpisodeRecorder', () => {
  it('records 2 s of a 500 Hz stream and finishes with one commit; the file is a valid, indexed MCAP', async () => {
    const rec = await store.beginEpisode({
      parentTraceId: parentId,
      executionDomain: 'real_robot',
      backendId: 'g1-link@192.168.123.164',
      robotUnit: 'g1-unit-7',
      seed: 11,
      rolloutIndex: 2,
      reference,
      fileMetadata: { clip_name: 'arm wave' },
      flush: { everyFrames: 250, intervalMs: 500, fsync: true },
    });
    expect(rec.runId).toMatch(/^real-\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    // `running` before the first frame, with its episode_start event
    expect(store.getEpisode(rec.runId)).toMatchObject({
      status: 'running',
      outcome: null,
      frameCount: 0,
      mcapPath: `episodes/${rec.runId}.mcap`,
    });
    expect(store.listEvents({ runId: rec.runId }).map((e) => e.kind)).toEqual(['episode_start']);
    for (let i = 0; i < 1001; i += 100) {
      const frames = syntheticFrames(i, Math.min(1001, i + 100));
      const extras = frames.map((f, k) =>
        f.tick % 10 === 0
          ? {
              command: { jointTargetRad: f.jointPosRad, kp: new Array(29).fill(80), kd: new Array(29).fill(2) },
              live: { mpjpeLMm: 40 + k, jointRmseRad: 0.05, firstFailureFrame: -1 },
            }
          : null,
      );
      await rec.frames(frames, extras);
    }
    expect(rec.stats()).toMatchObject({ frames: 1001, chunks: 4 }); // 250-frame chunks closed, 1 open
    await rec.event('intervention', { reason: 'spotter touched the left hand', tS: 1.5 });
    const metrics = fixtureMetrics();
    const ep = await rec.finish(fixtureEnd(rec.runId, 1001), metrics);
    expect(ep).toMatchObject({
      status: 'finished',
      outcome: 'completed',
      reason: 'the clip ran to its end',
      frameCount: 1001,
      simSeconds: 2,
      robotUnit: 'g1-unit-7',
      rolloutIndex: 2,
      seed: 11,
    });
    const file = store.episodeFile(rec.runId);
    const bytes = fs.readFileSync(file);
    expect(ep.mcapBytes).toBe(bytes.length);
    expect(ep.mcapSha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(checkMcapCrcs(bytes)).toEqual({ dataSection: true, summary: true });
    expect(store.listEvents({ runId: rec.runId }).map((e) => e.kind)).toEqual([
      'episode_start',
      'intervention',
      'episode_end',
    ]);
    expect(store.getMetrics(rec.runId)?.result).toEqual(JSON.parse(JSON.stringify(metrics)));
    expect(rec.status).toBe('done');
    await expect(rec.frames(syntheticFrames(0, 1))).rejects.toThrow(/is finished/);

    const idx = await readIndexed(file);
    expect(idx.topics).toEqual({
      '/reference': K,
      '/executed/state': 1001,
      '/commands': 101,
      '/metrics': 1,
      '/metrics/live': 101,
      '/events': 3,
    });
    expect(idx.chunkCount).toBe(5);
    expect(idx.schemaCount).toBe(6);
    expect(idx.metadata.episode).toMatchObject({
      format: 'motionbench-episode/2',
      // a real-robot episode stores the measured joints and IMU as the G1 publishes them
      measured_precision: 'float32',
      run_id: rec.runId,
      parent_trace_id: parentId,
      branch_id: `${parentId}/real`,
      execution_domain: 'real_robot',
      robot_unit: 'g1-unit-7',
      contract: MB_METRICS_1.id,
      clip_name: 'arm wave',
      calibration_id: '',
    });
    expect(idx.metadata.result).toMatchObject({ outcome: 'completed', frames: '1001' });
    expect(idx.executed[1000].jointPosRad).toEqual(Array.from(syntheticFrame(1000).jointPosRad));
    const ep2 = await readEpisodeFile(file);
    expect(ep2.complete).toBe(true);
    expect(ep2.events.map((e) => e.type)).toEqual(['episode_start', 'intervention', 'episode_end']);
    expect(ep2.events[1]).toMatchObject({ reason: 'spotter touched the left hand', timeS: 1.5 });
    expect(ep2.metrics.find((m) => m.kind === 'final')?.readings).toEqual(
      JSON.parse(JSON.stringify(episodeMetricsJson(metrics))),
    );
    // reference frame k is written before the executed frames at its time
    expect(ep2.reference.map((r) => r.frame)).toEqual(Array.from({ length: K }, (_, k) => k));
  });

  it('never overwrites an existing file: the attempt is recorded as an infrastructure error naming the file', async () => {
    const file = store.episodeFile('taken-run');
    fs.writeFileSync(file, 'someone else’s bytes');
    const err = await store
      .beginEpisode({
        parentTraceId: parentId,
        executionDomain: 'simulation',
        backendId: 'sim-0',
        seed: 0,
        runId: 'taken-run',
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TraceStoreError);
    expect((err as TraceStoreError).path).toBe(file);
    expect((err as Error).message).toBe(
      `cannot create the episode file ${file}: the file already exists (an episode file is never overwritten) (EEXIST)`,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('someone else’s bytes');
    const ep = store.getEpisode('taken-run')!;
    expect(ep).toMatchObject({ status: 'interrupted', outcome: 'infrastructure_error' });
    expect(ep.reason).toContain('the episode file could not be created');
    expect(store.listEvents({ runId: 'taken-run' }).map((e) => e.kind)).toEqual(['episode_start', 'recovery']);
    // the run id itself stays taken
    await expect(
      store.beginEpisode({
        parentTraceId: parentId,
        executionDomain: 'simulation',
        backendId: 'sim-0',
        seed: 0,
        runId: 'taken-run',
      }),
    ).rejects.toThrow(/already exists in this campaign/);
  });

  it('abort() keeps every frame recorded so far and marks the episode interrupted', async () => {
    const rec = await store.beginEpisode({
      parentTraceId: parentId,
      executionDomain: 'simulation',
      backendId: 'sim-0',
      seed: 5,
      flush: { everyFrames: 1_000_000, fsync: false },
    });
    await rec.frames(syntheticFrames(0, 120, 50));
    await rec.abort('the simulator worker crashed');
    const ep = store.getEpisode(rec.runId)!;
    expect(ep).toMatchObject({
      status: 'interrupted',
      outcome: 'infrastructure_error',
      frameCount: 120,
      recoveredMcapPath: `episodes/${rec.runId}.recovered.mcap`,
    });
    expect(ep.reason).toBe(
      'interrupted: recording aborted: the simulator worker crashed; 120 executed frame(s) recovered up to t = 2.380 s',
    );
    const copy = await readIndexed(store.resolve(ep.recoveredMcapPath!));
    expect(copy.topics['/executed/state']).toBe(120);
    await expect(rec.finish(fixtureEnd(rec.runId, 120), null)).rejects.toThrow(/is failed/);
  });

  it('refuses bad requests before writing anything', async () => {
    const before = store.findEpisodes().length;
    await expect(
      store.beginEpisode({ parentTraceId: 'pt-nope', executionDomain: 'simulation', backendId: 'sim-0', seed: 0 }),
    ).rejects.toThrow(/parent trace pt-nope is not stored/);
    await expect(
      store.beginEpisode({
        parentTraceId: parentId,
        executionDomain: 'simulation',
        backendId: 'sim-0',
        seed: 0,
        runId: '../escape',
      }),
    ).rejects.toThrow(/run id/);
    await expect(
      store.beginEpisode({ parentTraceId: parentId, executionDomain: 'simulation', backendId: 'sim-0', seed: 0.5 }),
    ).rejects.toThrow(/seed must be an integer/);
    await expect(
      store.beginEpisode({
        parentTraceId: parentId,
        executionDomain: 'moon' as 'simulation',
        backendId: 'sim-0',
        seed: 0,
      }),
    ).rejects.toThrow(/unknown execution domain/);
    expect(store.findEpisodes().length).toBe(before);
    expect(fs.readdirSync(path.join(dir, 'episodes')).some((f) => f.includes('escape'))).toBe(false);
  });

  it('records a real simulated episode: the replay-audit hash recomputed from the campaign file is the simulator’s', async () => {
    const profile = loadRobotProfile(OUR_G1);
    const clip = clipHead(loadClipFile(sharedData('motions/lafan1_g1_csv/walk1_subject1.csv')), 2);
    const binding = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
    const parent = store.ensureParentTrace(parentTraceInputs({ binding, clip, profile, contract: MB_METRICS_1 }));
    const sim = new EmbeddedSimulator({ modelFile: OUR_G1, workers: 1 });
    try {
      await sim.ready();
      const ref = resampleClip(clip, 50);
      const rec = await store.beginEpisode({
        parentTraceId: parent.id,
        executionDomain: 'simulation',
        backendId: sim.id,
        seed: 3,
        rolloutIndex: 0,
        reference: {
          frameCount: ref.frameCount,
          rateHz: ref.fps,
          rootPosM: ref.rootPosM,
          rootQuatWxyz: ref.rootQuatWxyz,
          jointPosRad: ref.jointPosRad,
        },
      });
      // (recorded after the run here; a pipeline hands each batch to rec.frames() as it arrives)
      const result = await runSimEpisode(sim, { clip, binding, profile, seed: 3, runId: rec.runId });
      for (let i = 0; i < result.frames.length; i += 10)
        await rec.frames(result.frames.slice(i, i + 10), result.extras.slice(i, i + 10));
      const ep = await rec.finish(result.end, result.metrics);
      expect(ep).toMatchObject({
        status: 'finished',
        outcome: result.end.outcome,
        frameCount: result.frames.length,
        trajectorySha256: result.end.trajectorySha256,
        executionDomain: 'simulation',
      });
      const file = await readEpisodeFile(store.episodeFile(rec.runId));
      expect(trajectorySha256OfEpisode(file)).toBe(result.end.trajectorySha256);
      expect(file.commands.length).toBe(result.frames.length);
      expect(store.getMetrics(rec.runId)?.result).toEqual(JSON.parse(JSON.stringify(result.metrics)));
      expect(store.getMetrics(rec.runId)?.mpjpeLMm).toBe(
        result.metrics.mpjpeLMm.available ? result.metrics.mpjpeLMm.value : null,
      );
    } finally {
      await sim.close();
    }
  });
});
