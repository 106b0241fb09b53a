// Crash safety, for real (DESIGN §7): a child process records into a campaign and
// is killed with SIGKILL — once at a known point in the middle of an episode (after a known
// number of synced chunks, with more frames in the open chunk), and twice at arbitrary moments of
// a loop of back-to-back episodes (mid-frames, mid-finish, mid-begin). On reopen:
// PRAGMA integrity_check is ok and no foreign key dangles, finished episodes are intact (their
// files open with an indexed reader and hash to the stored sha256), no episode stays `running`,
// and the interrupted one is marked infrastructure_error with a recovery event and its frames up
// to the last flushed chunk readable — in the original (streaming reader) and in the rewritten
// indexed copy.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import { childDocs, runTraceChild, syntheticFrame, tempDir } from '../helpers/traceFixtures';
import { checkMcapCrcs, readIndexed } from '../helpers/traceMcap';

const root = tempDir('crash');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function expectFinishedIntact(store: CampaignStore, runId: string, frames: number): Promise<void> {
  const ep = store.getEpisode(runId)!;
  expect(ep).toMatchObject({ status: 'finished', outcome: 'completed', frameCount: frames });
  const bytes = fs.readFileSync(store.episodeFile(runId));
  expect(bytes.length).toBe(ep.mcapBytes);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(ep.mcapSha256);
  expect(checkMcapCrcs(bytes)).toEqual({ dataSection: true, summary: true });
  const idx = await readIndexed(store.episodeFile(runId));
  expect(idx.topics['/executed/state']).toBe(frames);
  expect(store.getMetrics(runId)).not.toBeNull();
  expect(
    store
      .listEvents({ runId })
      .map((e) => e.kind)
      .at(-1),
  ).toBe('episode_end');
}

describe('SIGKILL while recording', () => {
  it('mid-episode: finished episode intact, interrupted one marked with its 600 flushed frames readable', async () => {
    const dir = `${root}/mid`;
    const r = await runTraceChild(['kill-mid-episode', dir, '200', '3', '150'], {
      killWhen: (l) => l.startsWith('{"ready"'),
    });
    expect(r.signal).toBe('SIGKILL');
    const docs = childDocs(r);
    const finished = docs.find((d) => d.finished)!.finished as string;
    const running = docs.find((d) => d.running)!.running as string;
    expect(docs.find((d) => d.durable !== undefined && d.ready === undefined)).toMatchObject({ durable: 600 });
    expect(docs.find((d) => d.ready)).toMatchObject({ written: 750, durable: 600 });

    const store = await openCampaign(dir);
    try {
      expect(store.integrityCheck()).toEqual({ integrity: [], foreignKeys: [] });
      await expectFinishedIntact(store, finished, 600);

      expect(store.recovered.map((x) => x.runId)).toEqual([running]);
      const ep = store.getEpisode(running)!;
      expect(ep).toMatchObject({
        status: 'interrupted',
        outcome: 'infrastructure_error',
        frameCount: 600,
        mcapBytes: null,
        recoveredMcapPath: `episodes/${running}.recovered.mcap`,
      });
      expect(ep.reason).toMatch(
        new RegExp(
          `^interrupted: the recording process \\(pid ${docs.find((d) => d.pid)!.pid} on .+\\) stopped before the episode finished; 600 executed frame\\(s\\) recovered up to t = 1\\.198 s$`,
        ),
      );
      const events = store.listEvents({ runId: running });
      // the human-gated reset was committed when it happened, though its MCAP chunk was lost
      expect(events.map((e) => e.kind)).toEqual(['episode_start', 'human_reset', 'recovery']);
      expect(events[1].reason).toBe('operator put the robot back on its feet');
      expect(events[2].detail).toMatchObject({
        cause: 'writer_gone',
        recovered_frames: 600,
        file_complete: false,
        recovered_file: `episodes/${running}.recovered.mcap`,
      });

      // the truncated original, through the streaming reader: exactly the flushed frames, bit-exact
      const cut = await readEpisodeFile(store.episodeFile(running));
      expect(cut.complete).toBe(false);
      expect(cut.executed.length).toBe(600);
      expect(cut.executed[599].jointPosRad).toEqual(Array.from(syntheticFrame(599).jointPosRad));
      expect(cut.metadata.episode).toMatchObject({ run_id: running, robot_unit: 'g1-test-unit' });
      // the rewritten copy, through the indexed reader
      const copy = await readIndexed(store.resolve(ep.recoveredMcapPath!));
      expect(copy.topics['/executed/state']).toBe(600);
      expect(copy.metadata.recovery).toMatchObject({ run_id: running, recovered_executed_frames: '600' });
      expect(copy.executed.map((m) => m.tick)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    } finally {
      store.close();
    }
    // Reopening again changes nothing: recovery is idempotent. (A temporary copy left by a
    // recovery that was itself killed is removed.)
    const stale = `${dir}/episodes/${running}.recovered.mcap.tmp-4194999`;
    fs.writeFileSync(stale, 'half a copy');
    const again = await openCampaign(dir);
    expect(fs.existsSync(stale)).toBe(false);
    expect(again.recovered).toEqual([]);
    expect(again.listEvents({ kind: 'recovery' })).toHaveLength(1);
    again.close();
  });

  it.each([
    ['shortly after the third commit', 3, 5],
    ['a while after the second commit', 2, 170],
  ])(
    'at an arbitrary moment (%s): the index stays consistent and nothing is left running',
    async (_label, afterCommits, delayMs) => {
      const dir = `${root}/loop-${afterCommits}`;
      let commits = 0;
      const r = await runTraceChild(['kill-loop', dir], {
        killWhen: (l) => l.startsWith('{"finished"') && ++commits >= afterCommits,
        killDelayMs: delayMs,
      });
      expect(r.signal).toBe('SIGKILL');
      const printed = childDocs(r).map((d) => d.finished as string);
      expect(printed.length).toBeGreaterThanOrEqual(afterCommits);

      const store = await openCampaign(dir);
      try {
        expect(store.integrityCheck()).toEqual({ integrity: [], foreignKeys: [] });
        const all = store.findEpisodes();
        expect(all.filter((e) => e.status === 'running')).toEqual([]);
        for (const id of printed) await expectFinishedIntact(store, id, 300);
        const finished = all.filter((e) => e.status === 'finished');
        for (const e of finished) await expectFinishedIntact(store, e.runId, 300);
        const interrupted = all.filter((e) => e.status === 'interrupted');
        expect(interrupted.length).toBeLessThanOrEqual(1);
        expect(finished.length + interrupted.length).toBe(all.length);
        for (const e of interrupted) {
          expect(e.outcome).toBe('infrastructure_error');
          expect(e.frameCount % 100).toBe(0); // whole chunks only
          expect(store.listEvents({ runId: e.runId, kind: 'recovery' })).toHaveLength(1);
          const file = store.episodeFile(e.runId);
          if (!fs.existsSync(file)) continue;
          if (e.frameCount === 0) {
            // Killed between creating the file and writing its header records: nothing to read, and
            // the reader must say so plainly rather than return a half-parsed episode.
            const read = await readEpisodeFile(file).then(
              (ep) => ep.executed.length,
              (err: Error) => err.message,
            );
            if (typeof read === 'number') expect(read).toBe(0);
            else expect(read.startsWith(`${file}: not a`)).toBe(true);
          } else expect((await readEpisodeFile(file)).executed.length).toBe(e.frameCount);
        }
      } finally {
        store.close();
      }
    },
  );
});
