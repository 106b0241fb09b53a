// Resume after an interruption, for real: (1) `motionbench qualify` is killed with SIGKILL in the
// middle of a campaign (a pair already decided, a rollout being recorded); running it again marks
// the interrupted episode infrastructure_error, reruns only that rollout and the ones not yet
// run, keeps the decided pair untouched, and ends with exactly one settled episode per pair and
// rollout. (2) A run cancelled through its AbortSignal stops cleanly: the rollout in flight
// finishes and is recorded, nothing new starts, decisions so far are kept, the rest is pending;
// resuming completes without repeating anything.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { runQualification, type QualificationProgress } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { loadWorkload } from '../../src/services/workload';
import { motionbench, MOTIONBENCH_BIN } from '../helpers/runCli';
import { REPO_ROOT } from '../helpers/sharedData';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-qual-resume-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const CLIPS = ['dyn_jump_forward', 'ub_wave_right'];

interface Row {
  run_id: string;
  parent_trace_id: string;
  rollout_index: number;
  status: string;
  outcome: string | null;
  reason: string | null;
  ended_at: string | null;
}

function readDb<T>(dir: string, fn: (d: Database.Database) => T): T | null {
  const file = path.join(dir, 'campaign.sqlite');
  if (!fs.existsSync(file)) return null;
  let d: Database.Database | null = null;
  try {
    d = new Database(file, { readonly: true, fileMustExist: true });
    return fn(d);
  } catch {
    return null; // not yet migrated
  } finally {
    d?.close();
  }
}

const episodes = (dir: string) =>
  readDb(
    dir,
    (d) =>
      d
        .prepare(
          `SELECT e.run_id, b.parent_trace_id, e.rollout_index, e.status, e.outcome, e.reason, e.ended_at FROM episodes e JOIN branches b ON b.id = e.branch_id ORDER BY e.started_at`,
        )
        .all() as Row[],
  ) ?? [];
const admissions = (dir: string) =>
  readDb(
    dir,
    (d) =>
      d
        .prepare(`SELECT parent_trace_id, admitted, decided_at, evidence_json FROM admissions ORDER BY parent_trace_id`)
        .all() as { parent_trace_id: string; admitted: number; decided_at: string; evidence_json: string }[],
  ) ?? [];

/** Exactly one settled (finished, not infrastructure_error) episode per parent and rollout index. */
function expectOneSettledPerRollout(rows: Row[], pairs: number, rollouts = 3): void {
  const settled = rows.filter((r) => r.status === 'finished' && r.outcome !== 'infrastructure_error');
  const keys = settled.map((r) => `${r.parent_trace_id}#${r.rollout_index}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys).toHaveLength(pairs * rollouts);
}

describe('qualification resumes after an interruption', () => {
  it('SIGKILL mid-campaign: the rerun recovers the interrupted rollout, keeps the decided pair, duplicates nothing', async () => {
    const dir = path.join(root, 'killed');
    const args = [
      'qualify',
      '--workload',
      'core-v1',
      '--binding',
      'builtin:assist=3000',
      '--campaign',
      dir,
      ...CLIPS.flatMap((c) => ['--clip', c]),
      '--workers',
      '1',
    ];
    const child = spawn(process.execPath, [MOTIONBENCH_BIN, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += String(b)));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    // Kill once a pair is decided and a later rollout is being recorded.
    const deadline = Date.now() + 90_000;
    let killed = false;
    while (Date.now() < deadline && child.exitCode === null) {
      const running =
        readDb(
          dir,
          (d) => (d.prepare(`SELECT count(*) AS n FROM episodes WHERE status = 'running'`).get() as { n: number }).n,
        ) ?? 0;
      if (running > 0 && admissions(dir).length >= 1) {
        child.kill('SIGKILL');
        killed = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 15));
    }
    expect(killed, stderr).toBe(true);
    expect(await exited).toBe('SIGKILL');

    const beforeRows = episodes(dir);
    const beforeAdm = admissions(dir);
    // One worker plus the rollout prepared ahead (runQualification's ROLLOUTS_PREPARED_AHEAD): at
    // most two episodes are open when the process dies, and every one of them is recovered.
    const inFlight = beforeRows.filter((r) => r.status === 'running').length;
    expect(inFlight).toBeGreaterThanOrEqual(1);
    expect(inFlight).toBeLessThanOrEqual(2);
    expect(beforeAdm.length).toBeGreaterThanOrEqual(1);
    expect(beforeAdm.length).toBeLessThan(2);

    const r = await motionbench(...args, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      pairs_total: 2,
      pairs_skipped: beforeAdm.length,
      pairs_pending: 0,
      cancelled: false,
      recovered_episodes: inFlight,
    });
    expect(doc.pairs_decided).toBe(2 - beforeAdm.length);

    const rows = episodes(dir);
    const interrupted = rows.filter((x) => x.status === 'interrupted');
    expect(interrupted).toHaveLength(inFlight);
    for (const i of interrupted) {
      expect(i.outcome).toBe('infrastructure_error');
      expect(i.reason).toMatch(
        /^interrupted: the recording process \(pid \d+ on .+\) stopped before the episode finished/,
      );
      // Each interrupted rollout was rerun under the same pair and index; nothing else was repeated.
      const redo = rows.filter((x) => x.parent_trace_id === i.parent_trace_id && x.rollout_index === i.rollout_index);
      expect(redo.map((x) => x.status)).toEqual(['interrupted', 'finished']);
    }
    expect(rows.filter((x) => x.status === 'running')).toHaveLength(0);
    expectOneSettledPerRollout(rows, 2);
    const settledBefore = beforeRows.filter((x) => x.status === 'finished').map((x) => x.run_id);
    expect(rows.filter((x) => x.status === 'finished')).toHaveLength(6);
    expect(settledBefore.every((id) => rows.some((x) => x.run_id === id && x.status === 'finished'))).toBe(true);
    // Decisions made before the kill are untouched; every pair has one.
    const after = admissions(dir);
    expect(after).toHaveLength(2);
    for (const a of beforeAdm) expect(after.find((x) => x.parent_trace_id === a.parent_trace_id)).toEqual(a);
    for (const a of after) {
      const ids = (JSON.parse(a.evidence_json).rollouts as { run_id: string }[]).map((x) => x.run_id);
      expect(ids.every((id) => rows.find((x) => x.run_id === id)?.status === 'finished')).toBe(true);
    }
  }, 150_000);

  it('cancellation through the AbortSignal stops cleanly; resuming completes without duplicates', async () => {
    const dir = path.join(root, 'cancelled');
    const profile = loadRobotProfile();
    const workload = loadWorkload('core-v1', { profile });
    const binding = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
    const ac = new AbortController();
    const seen: QualificationProgress[] = [];
    const clips = ['ub_wave_right', 'ub_reach_up_side'];
    const s1 = await runQualification({
      campaignDir: dir,
      workload,
      bindings: [binding],
      profile,
      clips,
      workers: 1,
      signal: ac.signal,
      onProgress: (p) => {
        seen.push(p);
        // Cancel while the second pair's first rollout is running.
        if (p.kind === 'tick' && p.pairsDone === 1 && !ac.signal.aborted) ac.abort();
      },
    });
    expect(s1.cancelled).toBe(true);
    expect(s1.pairsDecided).toBe(1);
    expect(s1.pairsPending).toBe(1);
    expect(seen[0].kind).toBe('plan');
    expect(seen.some((p) => p.kind === 'pair' && p.etaS !== null)).toBe(true);
    // The rollouts in flight finished and were recorded as usual, and nothing started after the
    // signal: the second pair's first, and its second when the worker had already taken it while
    // the first was being recorded (the scheduler keeps a free worker busy), which a tick that
    // comes late on a loaded machine sees.
    const rows1 = episodes(dir);
    console.log(`cancelled with ${rows1.length - 3} of the second pair's rollouts in flight`);
    expect(rows1.every((r) => r.status === 'finished')).toBe(true);
    expect(rows1.length).toBeGreaterThanOrEqual(4);
    expect(rows1.length).toBeLessThanOrEqual(5);
    expect(admissions(dir)).toHaveLength(1);

    const s2 = await runQualification({ campaignDir: dir, workload, bindings: [binding], profile, clips, workers: 1 });
    expect(s2).toMatchObject({
      cancelled: false,
      pairsSkipped: 1,
      pairsDecided: 1,
      pairsPending: 0,
      recoveredEpisodes: 0,
    });
    expect(s2.episodesRecorded).toBe(6 - rows1.length);
    expectOneSettledPerRollout(episodes(dir), 2);
    expect(admissions(dir)).toHaveLength(2);
  }, 120_000);
});
