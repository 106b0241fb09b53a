// The episode file's chunked writer: explicit chunk boundaries, durability counts, a valid
// summary (checked by @mcap/core's indexed reader and by recomputing both CRCs from the bytes),
// recovery of a file cut anywhere, and real write failures (/dev/full, an existing file).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkedMcapWriter, EpisodeFileError } from '../../src/services/episode/chunkedMcapWriter';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import { recoverEpisodeFile } from '../../src/services/episode/episodeRecovery';
import { EpisodeWriter } from '../../src/services/episode/episodeWriter';
import { syntheticFrame, syntheticFrames, tempDir } from '../helpers/traceFixtures';
import { checkMcapCrcs, readIndexed } from '../helpers/traceMcap';

const dir = tempDir('mcap');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const enc = new TextEncoder();

async function rawWriter(file: string): Promise<{ w: ChunkedMcapWriter; ch: number }> {
  const w = await ChunkedMcapWriter.open(file, { chunkSizeBytes: 1 << 30, fsync: true, exclusive: true });
  w.start({ profile: '', library: 'test' });
  const schemaId = w.registerSchema({ name: 'n', encoding: 'jsonschema', data: enc.encode('{"type":"object"}') });
  const ch = w.registerChannel({ schemaId, topic: '/executed/state', messageEncoding: 'json', metadata: new Map() });
  return { w, ch };
}

const msg = (ch: number, i: number) => ({
  channelId: ch,
  sequence: i,
  logTime: BigInt(i) * 2_000_000n,
  publishTime: BigInt(i) * 2_000_000n,
  data: enc.encode(JSON.stringify({ timeS: i / 500, tick: i })),
});

describe('ChunkedMcapWriter', () => {
  it('closes chunks where told; only closed chunks become durable and readable', async () => {
    const file = path.join(dir, 'explicit.mcap');
    const { w, ch } = await rawWriter(file);
    for (let i = 0; i < 30; i++) w.addMessage(msg(ch, i));
    expect(w.flushChunk()).toBe(true);
    for (let i = 30; i < 45; i++) w.addMessage(msg(ch, i));
    await w.settle();
    expect(w.durableMessages(ch)).toBe(30);
    expect(w.messagesOf(ch)).toBe(45);
    // Read while still open (as after a kill -9): the closed chunk only.
    const mid = await recoverEpisodeFile(file);
    expect(mid).toMatchObject({ exists: true, complete: false, executedFrames: 30, lastExecutedTimeS: 29 / 500 });
    expect(w.flushChunk()).toBe(true);
    expect(w.flushChunk()).toBe(false);
    const { bytes, sha256 } = await w.end();
    const data = fs.readFileSync(file);
    expect(bytes).toBe(data.length);
    expect(sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect(checkMcapCrcs(data)).toEqual({ dataSection: true, summary: true });
    const idx = await readIndexed(file);
    expect(idx.chunkCount).toBe(2);
    expect(idx.topics).toEqual({ '/executed/state': 45 });
    expect(idx.executed.map((m) => m.tick)).toEqual(Array.from({ length: 45 }, (_, i) => i));
  });

  it('recovers every whole chunk of a file cut at any byte, and rewrites a valid indexed copy', async () => {
    const file = path.join(dir, 'cut-source.mcap');
    const { w, ch } = await rawWriter(file);
    const boundaries: number[] = [];
    for (let i = 0; i < 100; i++) {
      w.addMessage(msg(ch, i));
      if (i % 10 === 9) {
        w.flushChunk();
        await w.settle();
        boundaries.push(fs.statSync(file).size);
      }
    }
    await w.end();
    const data = fs.readFileSync(file);
    // [cut, whole frames before it]: inside a chunk record, at a boundary, just after one, inside
    // the last chunk, one byte short of the footer (every chunk whole, no summary).
    const cuts: [number, number][] = [
      [boundaries[0] - 300, 0],
      [boundaries[0], 10],
      [boundaries[4] + 7, 50],
      [boundaries[9] - 300, 90],
      [data.length - 1, 100],
    ];
    for (const [cut, whole] of cuts) {
      const f = path.join(dir, `cut-${cut}.mcap`);
      fs.writeFileSync(f, data.subarray(0, cut));
      const out = path.join(dir, `cut-${cut}.recovered.mcap`);
      const r = await recoverEpisodeFile(f, { rewriteTo: out, blockBytes: 4096 });
      expect(r.executedFrames).toBe(whole);
      expect(r.complete).toBe(false);
      expect(r.rewrittenFile).toBe(out);
      const idx = await readIndexed(out);
      expect(idx.topics['/executed/state'] ?? 0).toBe(whole);
      expect(idx.metadata.recovery).toMatchObject({
        source_file: path.basename(f),
        recovered_executed_frames: String(whole),
      });
      expect(checkMcapCrcs(fs.readFileSync(out))).toEqual({ dataSection: true, summary: true });
      expect(fs.readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    }
    // A complete file needs no copy.
    const r = await recoverEpisodeFile(file, { rewriteTo: path.join(dir, 'complete.recovered.mcap') });
    expect(r).toMatchObject({ complete: true, executedFrames: 100, rewrittenFile: null });
    expect(fs.existsSync(path.join(dir, 'complete.recovered.mcap'))).toBe(false);
    // A corrupted byte inside a chunk stops recovery at the chunk before it (CRC checked).
    const bad = Uint8Array.from(data.subarray(0, boundaries[5]));
    bad[boundaries[2] + 60] ^= 0xff;
    fs.writeFileSync(path.join(dir, 'flipped.mcap'), bad);
    const flipped = await recoverEpisodeFile(path.join(dir, 'flipped.mcap'));
    expect(flipped.executedFrames).toBe(30);
    expect(flipped.error).toMatch(/crc/i);
    // No file at all.
    expect(await recoverEpisodeFile(path.join(dir, 'missing.mcap'))).toMatchObject({
      exists: false,
      executedFrames: 0,
    });
  });

  it('a full device fails with ENOSPC naming the file (a real failure, also for root)', async () => {
    const w = await ChunkedMcapWriter.open('/dev/full', { fsync: false });
    w.start({ profile: '', library: 'test' });
    const err = await w.settle().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EpisodeFileError);
    expect((err as EpisodeFileError).code).toBe('ENOSPC');
    expect((err as Error).message).toBe(
      'cannot write the episode file /dev/full: no space left on the device (ENOSPC)',
    );
    expect(() => w.registerSchema({ name: 'x', encoding: '', data: new Uint8Array() })).toThrow(/ENOSPC/);
    await w.abandon();
  });

  it('never replaces an existing file when exclusive', async () => {
    const file = path.join(dir, 'exists.mcap');
    fs.writeFileSync(file, 'precious');
    const err = await ChunkedMcapWriter.open(file, { exclusive: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EpisodeFileError);
    expect((err as Error).message).toContain(`${file}: the file already exists`);
    expect(fs.readFileSync(file, 'utf8')).toBe('precious');
  });
});

describe('EpisodeWriter flush policy', () => {
  it('closes a chunk every N frames and counts durable frames', async () => {
    const file = path.join(dir, 'every.mcap');
    const w = await EpisodeWriter.create(file, {
      episode: { run_id: 'every' },
      flush: { everyFrames: 100, maxChunkBytes: 1 << 30, fsync: true },
    });
    await w.writeFrames(syntheticFrames(0, 250));
    await w.flush();
    expect(w.stats()).toMatchObject({ frames: 250, durableFrames: 250, chunks: 3 });
    await w.writeFrames(syntheticFrames(250, 260));
    const cut = await recoverEpisodeFile(file);
    expect(cut.executedFrames).toBe(250);
    await w.close({ outcome: 'completed' });
    const ep = await readEpisodeFile(file);
    expect(ep.complete).toBe(true);
    expect(ep.executed.length).toBe(260);
    expect(ep.executed[259].jointPosRad).toEqual(Array.from(syntheticFrame(259).jointPosRad));
  });

  it('a stalled stream is flushed by the interval timer (nothing waits in memory longer than the interval)', async () => {
    const file = path.join(dir, 'stalled.mcap');
    const w = await EpisodeWriter.create(file, {
      episode: { run_id: 'stalled' },
      flush: { everyFrames: 1000, intervalMs: 40, fsync: true },
    });
    await w.writeFrames(syntheticFrames(0, 7));
    expect(w.stats().durableFrames).toBe(0);
    const t0 = Date.now();
    while (w.stats().durableFrames < 7 && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 10));
    expect(w.stats().durableFrames).toBe(7);
    expect((await recoverEpisodeFile(file)).executedFrames).toBe(7);
    await w.abandon();
  });
});
