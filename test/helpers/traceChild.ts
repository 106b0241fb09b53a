// A recording process for the crash and failure tests (test/integration/traceCrash.test.ts,
// traceFailures.test.ts). Run with `node --import tsx test/helpers/traceChild.ts <mode> <dir> …`;
// it prints one JSON document per line on stdout so the parent knows exactly what was durable
// before it kills the process or reads its error.
//
// modes
//   kill-mid-episode <dir> <chunkFrames> <chunks> <extraFrames>
//       finishes episode A (600 frames), then records B: <chunks> whole chunks of <chunkFrames>
//       frames (synced), a human_reset event, <extraFrames> more frames left in the open chunk;
//       prints {"ready":…} and waits to be killed.
//   kill-loop <dir>
//       records 300-frame episodes (a chunk every 100 frames) back to back until killed, printing
//       {"finished": run_id} after each commit.
//   fill-disk <dir>
//       finishes a 200-frame episode, then records frames until a write fails; prints the error.
//   begin <dir>
//       tries to begin an episode and prints the error (read-only episodes folder).
//   open <dir>
//       tries to open the campaign for writing, then read-only; prints what happened.

import { MB_METRICS_1 } from '../../src/domain/metrics';
import { openCampaign, TraceStoreError, type CampaignStore } from '../../src/services/trace';
import { fixtureEnd, fixtureInputs, fixtureMetrics, syntheticFrame, syntheticFrames } from './traceFixtures';

const [mode, dir, ...rest] = process.argv.slice(2);
const say = (doc: Record<string, unknown>) => process.stdout.write(JSON.stringify(doc) + '\n');
const errorDoc = (err: unknown) =>
  err instanceof TraceStoreError
    ? { code: err.code, path: err.path, message: err.message }
    : { code: 'unexpected', message: String((err as Error)?.stack ?? err) };

async function episode(store: CampaignStore, parentId: string, frames: number, chunkFrames: number): Promise<string> {
  const rec = await store.beginEpisode({
    parentTraceId: parentId,
    executionDomain: 'real_robot',
    backendId: 'robot-emulator',
    robotUnit: 'g1-test-unit',
    seed: 1,
    flush: { everyFrames: chunkFrames, intervalMs: 60_000, fsync: true },
  });
  for (let i = 0; i < frames; i += 50) await rec.frames(syntheticFrames(i, Math.min(frames, i + 50)));
  await rec.finish(fixtureEnd(rec.runId, frames), fixtureMetrics(MB_METRICS_1.id));
  return rec.runId;
}

/** Root only: become another user now that every module is loaded (see runTraceChild). */
function dropPrivileges(): void {
  const uid = process.env.MB_TRACE_CHILD_UID;
  if (uid === undefined) return;
  process.setgroups?.([]);
  process.setgid?.(Number(process.env.MB_TRACE_CHILD_GID ?? uid));
  process.setuid?.(Number(uid));
  if (process.getuid?.() !== Number(uid)) throw new Error(`could not become uid ${uid}`);
}

async function main(): Promise<void> {
  dropPrivileges();
  switch (mode) {
    case 'kill-mid-episode': {
      const [chunkFrames, chunks, extra] = rest.map(Number);
      const store = await openCampaign(dir, { create: true });
      const parent = store.ensureParentTrace(fixtureInputs());
      const a = await episode(store, parent.id, 600, 200);
      say({ finished: a });
      const rec = await store.beginEpisode({
        parentTraceId: parent.id,
        executionDomain: 'real_robot',
        backendId: 'robot-emulator',
        robotUnit: 'g1-test-unit',
        seed: 2,
        flush: { everyFrames: chunkFrames, intervalMs: 60_000, fsync: true },
      });
      say({ running: rec.runId, pid: process.pid });
      const n = chunkFrames * chunks;
      for (let i = 0; i < n; i += 25) await rec.frames(syntheticFrames(i, Math.min(n, i + 25)));
      await rec.flush();
      say({ durable: rec.stats().durableFrames, lastTimeS: (n - 1) / 500 });
      await rec.event('human_reset', { reason: 'operator put the robot back on its feet', detail: { by: 'test' } });
      await rec.frames(syntheticFrames(n, n + extra));
      say({ ready: true, written: rec.stats().frames, durable: rec.stats().durableFrames });
      setInterval(() => undefined, 1000);
      return;
    }
    case 'kill-loop': {
      const store = await openCampaign(dir, { create: true });
      const parent = store.ensureParentTrace(fixtureInputs());
      for (;;) say({ finished: await episode(store, parent.id, 300, 100) });
    }
    case 'fill-disk': {
      const store = await openCampaign(dir);
      const parent = store.ensureParentTrace(fixtureInputs());
      say({ finished: await episode(store, parent.id, 200, 100) });
      const rec = await store.beginEpisode({
        parentTraceId: parent.id,
        executionDomain: 'real_robot',
        backendId: 'robot-emulator',
        seed: 3,
        flush: { everyFrames: 100, intervalMs: 60_000, fsync: true },
      });
      say({ running: rec.runId });
      const f = syntheticFrame(0);
      try {
        for (let i = 0; i < 200_000; i++) await rec.frames([syntheticFrame(i, 500, f)]);
        say({ error: null });
      } catch (err) {
        say({ error: errorDoc(err), durableBefore: rec.stats().durableFrames, written: rec.stats().frames });
      }
      // The store still works for what fits: the episode row says what happened.
      say({ episode: store.getEpisode(rec.runId) });
      store.close();
      return;
    }
    case 'begin': {
      const store = await openCampaign(dir);
      const parent = store.ensureParentTrace(fixtureInputs());
      try {
        await store.beginEpisode({
          parentTraceId: parent.id,
          executionDomain: 'simulation',
          backendId: 'sim-0',
          seed: 9,
          runId: 'refused-by-folder',
        });
        say({ error: null });
      } catch (err) {
        say({ error: errorDoc(err) });
      }
      say({ episode: store.getEpisode('refused-by-folder') });
      store.close();
      return;
    }
    case 'open': {
      try {
        (await openCampaign(dir)).close();
        say({ writable: true });
      } catch (err) {
        say({ writable: false, error: errorDoc(err) });
      }
      try {
        const ro = await openCampaign(dir, { readOnly: true });
        say({ readOnly: true, episodes: ro.findEpisodes().map((e) => e.runId), viaCopy: ro.readingCopy !== null });
        ro.close();
      } catch (err) {
        say({ readOnly: false, error: errorDoc(err) });
      }
      return;
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

main().catch((err) => {
  say({ fatal: errorDoc(err) });
  process.exitCode = 1;
});
