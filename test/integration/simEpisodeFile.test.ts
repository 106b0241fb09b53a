// The MCAP episode file of a real simulated episode: our reader round-trips it, @mcap/core's
// indexed reader (what Foxglove relies on) opens it independently, and trajectory_sha256 can be
// recomputed from the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelDecoders, withIndexedMcap } from '../helpers/traceMcap';
import { episodeMetricsJson } from '../../src/domain/metrics';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { TOPICS } from '../../src/services/episode/episodeSchemas';
import {
  executedStateFrames,
  readEpisodeFile,
  trajectorySha256OfEpisode,
} from '../../src/services/episode/episodeReader';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode, type SimEpisodeResult } from '../../src/services/sim/runSimEpisode';
import { OUR_G1, sharedData } from '../helpers/sharedData';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-episode-'));
const file = path.join(dir, 'dance.mcap');
let sim: EmbeddedSimulator;
let result: SimEpisodeResult;
let t0Ms: number;

beforeAll(async () => {
  sim = new EmbeddedSimulator({ modelFile: OUR_G1, workers: 1 });
  await sim.ready();
  const clip = clipHead(loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv')), 4);
  t0Ms = Date.now();
  result = await runSimEpisode(sim, {
    clip,
    binding: makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }),
    profile: loadRobotProfile(OUR_G1),
    seed: 7,
    out: file,
  });
});
afterAll(async () => {
  await sim?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('episode file (MCAP)', () => {
  it('round-trips through our reader', async () => {
    const ep = await readEpisodeFile(file);
    expect(ep.complete).toBe(true);
    expect(ep.executed.length).toBe(201);
    expect(ep.reference.length).toBe(201);
    const frames = executedStateFrames(ep);
    frames.forEach((f, k) => {
      const g = result.frames[k];
      expect(f.timeS).toBe(g.timeS);
      expect(Array.from(f.rootPosM!)).toEqual(Array.from(g.rootPosM!));
      expect(Array.from(f.jointPosRad)).toEqual(Array.from(g.jointPosRad));
      expect(Array.from(f.jointTauNm)).toEqual(Array.from(g.jointTauNm));
      expect(Array.from(f.imu.gyroRadS)).toEqual(Array.from(g.imu.gyroRadS));
      expect(f.contacts).toEqual(g.contacts);
    });
    expect(ep.commands.length).toBe(201);
    expect(ep.commands[0].rootAssistWrench).not.toBeNull();
    expect(ep.events.map((e) => e.type)).toEqual(['episode_start', 'episode_end']);
    const final = ep.metrics.filter((m) => m.kind === 'final');
    expect(final.length).toBe(1);
    expect(final[0].readings).toEqual(JSON.parse(JSON.stringify(episodeMetricsJson(result.metrics))));
    expect(ep.metadata.episode).toMatchObject({
      format: 'motionbench-episode/2',
      measured_precision: 'float64',
      seed: '7',
      binding: `builtin@${makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }).version}`,
    });
    expect(ep.metadata.result).toMatchObject({
      outcome: 'completed',
      frames: '201',
      trajectory_sha256: result.end.trajectorySha256,
    });
    // anyone holding the file can check the replay-audit hash
    expect(trajectorySha256OfEpisode(ep)).toBe(result.end.trajectorySha256);
  });

  it('opens with @mcap/core’s indexed reader: protobuf high-rate channels, JSON events and final metrics, zstd chunks, ns log times', async () => {
    await withIndexedMcap(file, async (reader) => {
      const channels = [...reader.channelsById.values()];
      // every topic but the robot's after-clip state (real trials only)
      expect(channels.map((c) => c.topic).sort()).toEqual(
        Object.values(TOPICS)
          .filter((t) => t !== TOPICS.afterClip)
          .sort(),
      );
      const json: string[] = [TOPICS.events, TOPICS.metrics];
      for (const c of channels) {
        const schema = reader.schemasById.get(c.schemaId)!;
        if (json.includes(c.topic)) {
          expect(c.messageEncoding).toBe('json');
          expect(schema.encoding).toBe('jsonschema');
          expect(JSON.parse(new TextDecoder().decode(schema.data)).type).toBe('object');
        } else {
          expect(c.messageEncoding).toBe('protobuf');
          expect(schema.encoding).toBe('protobuf');
        }
      }
      expect(reader.schemasById.get(channels.find((c) => c.topic === TOPICS.executed)!.schemaId)!.name).toBe(
        'motionbench.StateFrame',
      );
      // one Schema record per channel: 6 of ours, 4 of Foxglove's (the 3D tracks)
      expect(reader.schemasById.size).toBe(10);
      for (const ci of reader.chunkIndexes) expect(ci.compression).toBe('zstd');
      const counts = new Map<string, number>();
      for (const [id, n] of reader.statistics!.channelMessageCounts)
        counts.set(reader.channelsById.get(id)!.topic, Number(n));
      expect(Object.fromEntries(counts)).toEqual({
        [TOPICS.reference]: 201,
        [TOPICS.executed]: 201,
        [TOPICS.commands]: 201,
        [TOPICS.metricsLive]: 201,
        [TOPICS.execTransforms]: 201,
        [TOPICS.refTransforms]: 201,
        [TOPICS.execScene]: 1,
        [TOPICS.refScene]: 1,
        [TOPICS.metrics]: 1,
        [TOPICS.events]: 2,
      });
      const decode = channelDecoders(reader);
      let n = 0;
      let prev = 0n;
      for await (const m of reader.readMessages({ topics: [TOPICS.executed] })) {
        expect(m.logTime).toBeGreaterThanOrEqual(prev);
        prev = m.logTime;
        const msg = decode.get(m.channelId)!(m.data) as { timeS: number };
        expect(m.logTime - reader.statistics!.messageStartTime).toBe(BigInt(Math.round(msg.timeS * 1e9)));
        n++;
      }
      expect(n).toBe(201);
      // nanoseconds since the epoch, at the episode's wall-clock start
      const startMs = Number(reader.statistics!.messageStartTime / 1_000_000n);
      expect(Math.abs(startMs - t0Ms)).toBeLessThan(5000);
      expect(reader.statistics!.messageEndTime - reader.statistics!.messageStartTime).toBe(4_000_000_000n);
      const meta = [];
      for await (const m of reader.readMetadata()) meta.push(m.name);
      expect(meta).toEqual(['episode', 'result']);
    });
  });

  it('an interrupted file (no summary) still yields its complete chunks', async () => {
    const bytes = fs.readFileSync(file);
    const cut = path.join(dir, 'cut.mcap');
    fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.7)));
    const ep = await readEpisodeFile(cut);
    expect(ep.complete).toBe(false);
    expect(ep.executed.length).toBeGreaterThan(50);
    expect(ep.executed.length).toBeLessThan(201);
  });
});
