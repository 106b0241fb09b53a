// One writer per campaign, with real `motionbench qualify` child processes (real MuJoCo, SQLite,
// MCAP): a second qualify on a campaign another qualify is writing is refused, naming the first's
// host, pid, process start time and command in one line, and records nothing; once the first has
// ended, the second runs; a kill -9'd holder's lock is stale and taken over (said on stderr and
// recorded as a note event). In-process: a pid reused by a later process does not keep a lock, a
// live process of another kind does, readers never need the lock.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { openCampaign, TraceStoreError } from '../../src/services/trace';
import { processStartOf } from '../../src/services/trace/writerLiveness';
import { waveQualifyArgs } from '../helpers/qualifiedWavePair';
import { MOTIONBENCH_BIN } from '../helpers/runCli';
import { REPO_ROOT } from '../helpers/sharedData';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-writer-lock-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const qualifyArgs = (campaign: string) => waveQualifyArgs(campaign, 1);

interface Run {
  child: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
}

function start(args: string[]): Run {
  const child = spawn(process.execPath, [MOTIONBENCH_BIN, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => err, exit };
}

/** Waits for the plan line: printed once the campaign is open (and so locked) and before the first rollout ends. */
async function waitForPlan(r: Run): Promise<void> {
  const t0 = Date.now();
  while (!/qualify: \d+ pairs, /.test(r.stderr())) {
    if (r.child.exitCode !== null) throw new Error(`qualify ended early: ${r.stderr()}`);
    if (Date.now() - t0 > 120_000) throw new Error(`no plan line: ${r.stderr()}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** A whole `motionbench` run with its wall time and peak RSS (GNU time's %M, KiB). */
function timed(args: string[]): { code: number | null; stderr: string; wallMs: number; maxRssKiB: number | null } {
  const t0 = performance.now();
  const viaTime = fs.existsSync('/usr/bin/time');
  const r = spawnSync(
    viaTime ? '/usr/bin/time' : process.execPath,
    viaTime ? ['-f', 'MAXRSS_KIB=%M', process.execPath, MOTIONBENCH_BIN, ...args] : [MOTIONBENCH_BIN, ...args],
    { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const wallMs = performance.now() - t0;
  const m = /MAXRSS_KIB=(\d+)/.exec(r.stderr);
  return {
    code: r.status,
    stderr: r.stderr.replace(/.*MAXRSS_KIB=\d+\n?/, '').replace(/Command exited with non-zero status \d+\n?/, ''),
    wallMs,
    maxRssKiB: m ? Number(m[1]) : null,
  };
}

const episodesOf = (campaign: string) => {
  const db = new Database(path.join(campaign, 'campaign.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        'SELECT e.run_id, e.rollout_index, b.parent_trace_id, e.status FROM episodes e JOIN branches b ON b.id = e.branch_id',
      )
      .all() as { run_id: string; rollout_index: number; parent_trace_id: string; status: string }[];
  } finally {
    db.close();
  }
};

describe('M5: one writer per campaign (two real qualify processes)', () => {
  it('a second qualify is refused naming the first (host, pid, start time, command); after the first ends it runs; no rollout is recorded twice', async () => {
    const campaign = path.join(root, 'two-writers');
    const first = start(qualifyArgs(campaign));
    await waitForPlan(first);
    // Hold the first right where it writes: it keeps the campaign open while stopped.
    first.child.kill('SIGSTOP');
    let second: ReturnType<typeof timed>;
    try {
      second = timed(qualifyArgs(campaign));
    } finally {
      first.child.kill('SIGCONT');
    }
    console.log(
      `M5 refusal: second qualify exit ${second.code} after ${second.wallMs.toFixed(0)} ms (process start included), peak RSS ${second.maxRssKiB} KiB`,
    );
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split('\n');
    const refusal = lines.at(-1)!;
    expect(refusal).toMatch(
      new RegExp(
        `^motionbench: the campaign ${campaign.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is being written by another process: pid ${first.child.pid} on ${os.hostname()} \\(process started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\), running "motionbench qualify .*--campaign ${campaign.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" since \\d{4}-`,
      ),
    );
    expect(second.maxRssKiB ?? 0).toBeLessThan(1024 * 1024);

    expect(await first.exit).toBe(0);
    expect(fs.existsSync(path.join(campaign, 'campaign.lock'))).toBe(false);
    const eps = episodesOf(campaign);
    expect(eps).toHaveLength(1);

    // Negative control: with the first gone, the same command runs (the pair is already decided).
    const again = timed(qualifyArgs(campaign));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('1 already decided');
    expect(episodesOf(campaign)).toHaveLength(1);
    expect(fs.existsSync(path.join(campaign, 'campaign.lock'))).toBe(false);
  }, 240_000);

  it("a kill -9'd holder's lock is stale: the next qualify takes it over, says so, records it, and runs", async () => {
    const campaign = path.join(root, 'killed-holder');
    const doomed = start(qualifyArgs(campaign));
    await waitForPlan(doomed);
    doomed.child.kill('SIGKILL');
    await doomed.exit;
    expect(fs.existsSync(path.join(campaign, 'campaign.lock'))).toBe(true);

    const next = timed(qualifyArgs(campaign));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(
      `qualify: took over the stale writer lock of pid ${doomed.child.pid} on ${os.hostname()} (process started `,
    );
    expect(fs.existsSync(path.join(campaign, 'campaign.lock'))).toBe(false);
    const store = await openCampaign(campaign, { readOnly: true });
    try {
      const notes = store
        .listEvents({ kind: 'note' })
        .filter((e) => (e.detail as Record<string, unknown>)?.writer_lock_taken_over);
      expect(notes).toHaveLength(1);
      expect(notes[0].reason).toContain(`pid ${doomed.child.pid}`);
      expect((notes[0].detail as { writer_lock_taken_over: { pid: number } }).writer_lock_taken_over.pid).toBe(
        doomed.child.pid,
      );
      const settled = store.findEpisodes({ status: 'finished' });
      expect(settled).toHaveLength(1);
    } finally {
      store.close();
    }
  }, 240_000);
});

describe('M5: the writer lock in one process', () => {
  const lockOf = (dir: string) => path.join(dir, 'campaign.lock');
  const holder = (pid: number, start: string | null, purpose = 'a test holder') =>
    `${JSON.stringify({ host: os.hostname(), pid, start, startedAt: '2026-01-01T00:00:00.000Z', purpose, since: '2026-01-01T00:00:01.000Z', token: 'feedfacecafebeef' })}\n`;

  it('a live process of this host holds it: a writer is refused naming it, a reader still reads', async () => {
    const dir = path.join(root, 'live-holder');
    (await openCampaign(dir, { create: true })).close();
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 50));
      fs.writeFileSync(lockOf(dir), holder(sleeper.pid!, processStartOf(sleeper.pid!), 'sleep 60'));
      const t0 = performance.now();
      const err = await openCampaign(dir).then(
        (s) => (s.close(), null),
        (e: unknown) => e,
      );
      const ms = performance.now() - t0;
      expect(err).toBeInstanceOf(TraceStoreError);
      expect((err as TraceStoreError).code).toBe('busy');
      expect((err as Error).message).toBe(
        `the campaign ${dir} is being written by another process: pid ${sleeper.pid} on ${os.hostname()} (process started 2026-01-01T00:00:00.000Z), running "sleep 60" since 2026-01-01T00:00:01.000Z; one writer per campaign, reading (report, analyze) still works`,
      );
      expect(ms).toBeLessThan(2000);
      const reader = await openCampaign(dir, { readOnly: true });
      expect(reader.campaign.id).toMatch(/^cmp-/);
      reader.close();
      expect(fs.existsSync(lockOf(dir))).toBe(true); // the refused writer left the holder's lock alone
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a pid now used by a later process (another start time) does not hold it: taken over', async () => {
    const dir = path.join(root, 'reused-pid');
    (await openCampaign(dir, { create: true })).close();
    // This very process, with a start time it never had: the pid was reused.
    fs.writeFileSync(lockOf(dir), holder(process.pid, '1'));
    const s = await openCampaign(dir);
    try {
      expect(s.writerLockTakenOver).toMatchObject({ pid: process.pid, start: '1' });
      expect(JSON.parse(fs.readFileSync(lockOf(dir), 'utf8')).start).toBe(processStartOf(process.pid));
    } finally {
      s.close();
    }
    expect(fs.existsSync(lockOf(dir))).toBe(false);
  });

  it('an unreadable (half-written) lock file is taken over; two stores of this process share the lock', async () => {
    const dir = path.join(root, 'half-written');
    (await openCampaign(dir, { create: true })).close();
    fs.writeFileSync(lockOf(dir), '');
    const a = await openCampaign(dir);
    expect(a.writerLockTakenOver?.purpose).toBe('an unreadable lock file (empty)');
    const b = await openCampaign(dir);
    expect(b.writerLockTakenOver).toBeNull();
    b.close();
    expect(fs.existsSync(lockOf(dir))).toBe(true); // a still holds it
    a.close();
    expect(fs.existsSync(lockOf(dir))).toBe(false);
  });

  it('the console refuses a qualification or a trial on a campaign another process writes, naming it; once it is gone the job is no longer refused for it', async () => {
    const dir = path.join(root, 'console-job');
    (await openCampaign(dir, { create: true })).close();
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    const api = createConsoleApi({ transport: 'host' });
    try {
      await new Promise((r) => setTimeout(r, 50));
      fs.writeFileSync(
        lockOf(dir),
        holder(sleeper.pid!, processStartOf(sleeper.pid!), 'motionbench qualify (another)'),
      );
      const qualify = {
        campaignDir: dir,
        workload: 'core-v1',
        bindings: ['builtin'],
        clips: ['ub_wave_right'],
      } as const;
      const t0 = performance.now();
      const q = await api.invoke('qualification.start', qualify);
      const ms = performance.now() - t0;
      expect(q).toMatchObject({ ok: false, error: { code: 'busy', field: 'params.campaignDir' } });
      expect(!q.ok && q.error.message).toBe(
        `the campaign ${dir} is being written by another process: pid ${sleeper.pid} on ${os.hostname()} (process started 2026-01-01T00:00:00.000Z), running "motionbench qualify (another)" since 2026-01-01T00:00:01.000Z; one writer per campaign, reading (report, analyze) still works`,
      );
      expect(ms).toBeLessThan(2000);
      const t = await api.invoke('trial.start', { campaignDir: dir, pairId: 'pt-0', connectionId: 'robot' });
      expect(t).toMatchObject({ ok: false, error: { code: 'busy', field: 'params.campaignDir' } });
      expect(!t.ok && t.error.message).toContain(`pid ${sleeper.pid} on ${os.hostname()}`);

      // Negative control: the holder gone, its lock is stale and no refusal names it.
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('close', r));
      const after = await api.invoke('qualification.start', qualify);
      expect(after.ok ? '' : after.error.message).not.toMatch(/being written by another process/);
      if (after.ok) await api.invoke('qualification.cancel', { all: true });
    } finally {
      sleeper.kill('SIGKILL');
      await api.close();
    }
  }, 120_000);
});
