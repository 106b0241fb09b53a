// Disk full and read-only campaign folders give a clear error naming the path and lose nothing
// already written. The failures are real, also when the tests run as root (CI),
// where permission bits do not stop anything:
//
// - disk full: the recording process runs under a file-size limit (RLIMIT_FSIZE, `ulimit -f`),
//   which the kernel enforces for root too: a write past it fails with EFBIG, exactly where a full
//   disk fails with ENOSPC (both map to code `disk_full`). /dev/full (ENOSPC) is covered in
//   test/unit/traceChunkedMcap.test.ts.
// - read-only folders: as root, the writing process is started as uid/gid 65534 (nobody) on a
//   folder it owns but whose write bits are cleared, so the kernel really refuses; as any other
//   user, the same folder is refused to the test's own uid.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import { openCampaign } from '../../src/services/trace';
import {
  childDocs,
  fixtureEnd,
  fixtureInputs,
  fixtureMetrics,
  runTraceChild,
  syntheticFrames,
  tempDir,
} from '../helpers/traceFixtures';
import { readIndexed } from '../helpers/traceMcap';

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const root = tempDir('fail');
beforeAll(() => fs.chmodSync(root, 0o755));
afterAll(() => {
  for (const d of fs.readdirSync(root)) chmodTree(path.join(root, d), true);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Makes a tree writable again (true) or read-only (false): folders 755/555, files 644/444. */
function chmodTree(p: string, writable: boolean): void {
  const st = fs.statSync(p);
  if (st.isDirectory()) {
    if (writable) fs.chmodSync(p, 0o755);
    for (const e of fs.readdirSync(p)) chmodTree(path.join(p, e), writable);
    if (!writable) fs.chmodSync(p, 0o555);
  } else fs.chmodSync(p, writable ? 0o644 : 0o444);
}

/** A campaign with one finished episode, written by this process. */
async function campaignWithOneEpisode(dir: string): Promise<string> {
  const store = await openCampaign(dir, { create: true });
  const p = store.ensureParentTrace(fixtureInputs());
  const rec = await store.beginEpisode({
    parentTraceId: p.id,
    executionDomain: 'simulation',
    backendId: 'sim-0',
    seed: 0,
  });
  await rec.frames(syntheticFrames(0, 300, 50));
  await rec.finish(fixtureEnd(rec.runId, 300, 'completed', 50), fixtureMetrics());
  store.close();
  return rec.runId;
}

/** Hands the campaign to the user the child runs as (root: nobody). */
function handOver(dir: string): { uid?: number; gid?: number } {
  if (!IS_ROOT) return {};
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  return { uid: NOBODY, gid: NOBODY };
}

function takeBack(dir: string): void {
  chmodTree(dir, true);
  if (IS_ROOT) execFileSync('chown', ['-R', '0:0', dir]);
}

async function expectIntact(dir: string, runId: string, frames: number): Promise<void> {
  const store = await openCampaign(dir);
  try {
    expect(store.integrityCheck()).toEqual({ integrity: [], foreignKeys: [] });
    expect(store.getEpisode(runId)).toMatchObject({ status: 'finished', outcome: 'completed', frameCount: frames });
    expect((await readIndexed(store.episodeFile(runId))).topics['/executed/state']).toBe(frames);
    expect(store.getMetrics(runId)).not.toBeNull();
  } finally {
    store.close();
  }
}

describe('disk full (file-size limit enforced by the kernel, also for root)', () => {
  it('the failing write names the episode file; the episode is marked with what reached the disk; earlier episodes intact', async () => {
    const dir = path.join(root, 'full');
    (await openCampaign(dir, { create: true })).close();
    // 8192 blocks: 4 MiB (POSIX sh: 512-byte blocks; 8 MiB where a shell counts KiB). The first
    // episode (~0.4 MB) and the index fit; the second grows until a write fails.
    const r = await runTraceChild(['fill-disk', dir], { fileSizeLimitBlocks: 8192, timeoutMs: 60_000 });
    const docs = childDocs(r);
    expect(docs.find((d) => d.fatal)).toBeUndefined();
    const finished = docs.find((d) => d.finished)!.finished as string;
    const running = docs.find((d) => d.running)!.running as string;
    const failure = docs.find((d) => d.error !== undefined)!;
    const file = path.join(dir, 'episodes', `${running}.mcap`);
    expect(failure.error).toMatchObject({ code: 'disk_full', path: file });
    expect((failure.error as { message: string }).message).toBe(
      `cannot write the episode file ${file}: file too large (the disk or the process file-size limit is exhausted) (EFBIG)`,
    );
    const durable = failure.durableBefore as number;
    expect(durable).toBeGreaterThan(500);
    expect(durable % 100).toBe(0);
    expect(failure.written as number).toBeGreaterThan(durable);
    // the child's own index already says what happened
    const seen = docs.find((d) => d.episode)!.episode as {
      status: string;
      outcome: string;
      frameCount: number;
      reason: string;
    };
    expect(seen).toMatchObject({ status: 'interrupted', outcome: 'infrastructure_error', frameCount: durable });
    expect(seen.reason).toContain(`writing frames failed: cannot write the episode file ${file}`);

    await expectIntact(dir, finished, 200);
    const store = await openCampaign(dir);
    try {
      expect(store.recovered).toEqual([]);
      expect(store.getEpisode(running)).toMatchObject({ status: 'interrupted', frameCount: durable });
      expect(store.listEvents({ runId: running, kind: 'recovery' })[0].detail).toMatchObject({
        cause: 'write_failed',
        code: 'disk_full',
        recovered_frames: durable,
      });
      const cut = await readEpisodeFile(file);
      expect(cut.executed.length).toBe(durable);
    } finally {
      store.close();
    }
  });
});

describe(`read-only campaign folder (${IS_ROOT ? 'written as uid 65534: root ignores permission bits' : 'written as this user'})`, () => {
  it('a read-only episodes folder refuses the episode with a clear error; the attempt and everything before stay on record', async () => {
    const dir = path.join(root, 'ro-episodes');
    const first = await campaignWithOneEpisode(dir);
    const who = handOver(dir);
    fs.chmodSync(path.join(dir, 'episodes'), 0o555);
    const r = await runTraceChild(['begin', dir], who);
    takeBack(dir);
    const docs = childDocs(r);
    expect(docs.find((d) => d.fatal)).toBeUndefined();
    const file = path.join(dir, 'episodes', 'refused-by-folder.mcap');
    expect(docs[0].error).toEqual({
      code: 'read_only',
      path: file,
      message: `cannot create the episode file ${file}: permission denied (the folder or file is read-only for this user) (EACCES)`,
    });
    expect(docs[1].episode).toMatchObject({ status: 'interrupted', outcome: 'infrastructure_error', frameCount: 0 });
    expect(fs.existsSync(file)).toBe(false);
    await expectIntact(dir, first, 300);
    const store = await openCampaign(dir);
    expect(store.getEpisode('refused-by-folder')?.reason).toContain('the episode file could not be created');
    store.close();
  });

  it('a read-only campaign folder cannot be opened for writing (error names it) but can be read; nothing is lost', async () => {
    const dir = path.join(root, 'ro-all');
    const first = await campaignWithOneEpisode(dir);
    const who = handOver(dir);
    chmodTree(dir, false);
    const r = await runTraceChild(['open', dir], who);
    takeBack(dir);
    const docs = childDocs(r);
    expect(docs.find((d) => d.fatal)).toBeUndefined();
    expect(docs[0]).toEqual({
      writable: false,
      error: {
        code: 'read_only',
        path: dir,
        message: `cannot write to the campaign folder ${dir}: permission denied (the folder or file is read-only for this user) (EACCES)`,
      },
    });
    expect(docs[1]).toEqual({ readOnly: true, episodes: [first], viaCopy: true });
    await expectIntact(dir, first, 300);
  });
});
