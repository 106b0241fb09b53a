// A campaign whose episodes mix `motionbench-episode/1` (JSON, the older format) and `/2`
// (protobuf + zstd + 3D tracks): the console's trial.episode (Gap review, overlay) and
// `motionbench report` give the same answers as on the all-/2 campaign, and
// `motionbench export-layout` writes a Foxglove layout whose every topic and message-path field
// exists in the campaign's /2 files, as their own schemas declare it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrialEpisode } from '../../src/services/console/trialEpisode';
import { executedStateFrames, readEpisodeFile } from '../../src/services/episode/episodeReader';
import { EpisodeWriter } from '../../src/services/episode/episodeWriter';
import { openCampaign } from '../../src/services/trace';
import { buildStandInGapCampaign } from '../helpers/gapCampaign';
import { motionbench } from '../helpers/runCli';
import { withIndexedMcap } from '../helpers/traceMcap';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-mixed-'));
const dir = path.join(root, 'campaign');
let runIds: string[] = [];
const before: Record<string, unknown> = {};
let reportBefore = '';

/** Rewrites an episode file as motionbench-episode/1, from what the program's reader gives back. */
async function downgradeToJson(file: string): Promise<void> {
  const ep = await readEpisodeFile(file);
  const tmp = `${file}.json-tmp`;
  const w = await EpisodeWriter.create(tmp, {
    encoding: 'json',
    startMs: Number(ep.startNs! / 1_000_000n),
    episode: Object.fromEntries(
      Object.entries(ep.metadata.episode).filter(([k]) => k !== 'format' && k !== 'measured_precision'),
    ),
    reference: {
      frameCount: ep.reference.length,
      rateHz: 50,
      rootPosM: Float64Array.from(ep.reference.flatMap((r) => r.rootPosM)),
      rootQuatWxyz: Float64Array.from(ep.reference.flatMap((r) => r.rootQuatWxyz)),
      jointPosRad: Float64Array.from(ep.reference.flatMap((r) => r.jointPosRad)),
    },
  });
  const frames = executedStateFrames(ep);
  const live = ep.metrics.filter((m) => m.kind === 'live');
  await w.writeFrames(
    frames,
    frames.map((_, k) => ({
      command: ep.commands[k] ? { jointTargetRad: ep.commands[k].jointTargetRad } : null,
      live: live[k]
        ? {
            mpjpeLMm: live[k].mpjpeLMm ?? null,
            jointRmseRad: live[k].jointRmseRad ?? null,
            firstFailureFrame: live[k].firstFailureFrame ?? -1,
          }
        : null,
    })),
  );
  for (const e of ep.events) await w.writeEvent(e.timeS, e.type, e.message, e.data);
  for (const m of ep.metrics.filter((x) => x.kind === 'final')) await w.writeFinalMetrics(m.timeS, m.readings ?? {});
  await w.close(ep.metadata.result ?? {});
  fs.renameSync(tmp, file);
}

beforeAll(async () => {
  await buildStandInGapCampaign(dir);
  const store = await openCampaign(dir, { readOnly: true });
  runIds = store.findEpisodes().map((e) => e.runId);
  store.close();
  for (const id of runIds) before[id] = await readTrialEpisode(dir, id);
  reportBefore = (await motionbench('report', '--campaign', dir, '--json')).stdout;
  // every other episode back to the JSON format
  const s = await openCampaign(dir, { readOnly: true });
  for (const id of runIds.filter((_, i) => i % 2 === 0)) await downgradeToJson(s.episodeFile(id));
  s.close();
}, 240_000);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('a campaign of /1 and /2 episodes', () => {
  it('trial.episode and the report answer exactly as before the mix', async () => {
    const formats = new Map<string, string>();
    const s = await openCampaign(dir, { readOnly: true });
    for (const id of runIds) formats.set(id, (await readEpisodeFile(s.episodeFile(id))).metadata.episode.format);
    s.close();
    expect(new Set(formats.values())).toEqual(new Set(['motionbench-episode/1', 'motionbench-episode/2']));
    for (const id of runIds) expect(await readTrialEpisode(dir, id)).toEqual(before[id]);
    const report = await motionbench('report', '--campaign', dir, '--json');
    expect(report.code).toBe(0);
    const undated = (text: string) => ({ ...JSON.parse(text), generated_at: null }) as unknown;
    expect(undated(report.stdout)).toEqual(undated(reportBefore));
  });

  it('export-layout: a Foxglove layout whose topics and fields are the /2 files’ own; /1 episodes counted apart', async () => {
    const out = path.join(root, 'layout.json');
    const r = await motionbench('export-layout', '--campaign', dir, '--out', out, '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    const n1 = runIds.filter((_, i) => i % 2 === 0).length;
    expect(doc.episodes).toMatchObject({
      total: runIds.length,
      byFormat: { 'motionbench-episode/1': n1, 'motionbench-episode/2': runIds.length - n1 },
      with3dTracks: runIds.length - n1,
    });
    expect(doc.followFrame).toBe('exec/pelvis');
    const layout = JSON.parse(fs.readFileSync(out, 'utf8'));
    const scene = layout.configById['3D!motionbench'];
    expect(scene.followTf).toBe('exec/pelvis');
    const plotPaths: string[] = Object.values(layout.configById as Record<string, { paths?: { value: string }[] }>)
      .flatMap((c) => c.paths ?? [])
      .map((p) => p.value);
    expect(plotPaths.length).toBeGreaterThan(0);

    // every topic the layout names is in a /2 episode, with the field its path names
    const s = await openCampaign(dir, { readOnly: true });
    const file = s.episodeFile(runIds[1]);
    s.close();
    await withIndexedMcap(file, async (reader) => {
      const channels = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
      for (const topic of Object.keys(scene.topics)) expect(channels.has(topic)).toBe(true);
      for (const p of plotPaths) {
        const m = /^(\/[\w/]+)\.(\w+)(\[\d+\])?$/.exec(p);
        expect(m).not.toBeNull();
        const ch = channels.get(m![1])!;
        expect(ch).toBeDefined();
        const schema = reader.schemasById.get(ch.schemaId)!;
        const type = protobuf.Root.fromDescriptor(schema.data, { keepCase: true }).lookupType(schema.name);
        expect(type.fields[m![2]]).toBeDefined();
      }
    });
    // refuses to replace the layout
    const again = await motionbench('export-layout', '--campaign', dir, '--out', out);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; pass --force/);
  });
});
