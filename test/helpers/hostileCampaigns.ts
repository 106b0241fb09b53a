import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

// Tampered copies of a real campaign, made with plain SQL on campaign.sqlite as a hostile or
// careless hand would (no MotionBench code writes them): rollouts recorded twice (what two writers
// on one campaign left before the writer lock), a damaged result_json, a metric column that
// disagrees with its result_json, a calibration record replaced.

/** Copies a closed campaign folder (database, WAL if any, episodes) to `dst` (which must not exist). */
export function copyCampaign(src: string, dst: string): string {
  fs.cpSync(src, dst, { recursive: true });
  fs.rmSync(path.join(dst, 'campaign.lock'), { force: true });
  return dst;
}

function withDb<T>(dir: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(dir, 'campaign.sqlite'), { fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * Records every finished simulation rollout a second time: a new run id (`<run>-dup`) on the same
 * branch, rollout index and seed, ended one second later, with a copy of its metrics rows (and its
 * MCAP file). Returns the duplicated run ids.
 */
export function duplicateRollouts(dir: string): string[] {
  return withDb(dir, (db) => {
    const cols = (table: string) =>
      (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const epCols = cols('episodes');
    const mCols = cols('metrics');
    const runs = (
      db
        .prepare(
          `SELECT e.run_id FROM episodes e JOIN branches b ON b.id = e.branch_id WHERE b.execution_domain = 'simulation' AND e.status = 'finished' AND e.rollout_index IS NOT NULL`,
        )
        .all() as { run_id: string }[]
    ).map((r) => r.run_id);
    const epSel = epCols.map((c) =>
      c === 'run_id'
        ? `run_id || '-dup'`
        : c === 'mcap_path'
          ? `'episodes/' || run_id || '-dup.mcap'`
          : c === 'ended_at'
            ? `strftime('%Y-%m-%dT%H:%M:%fZ', ended_at, '+1 second')`
            : c,
    );
    const mSel = mCols.map((c) => (c === 'run_id' ? `run_id || '-dup'` : c));
    db.transaction(() => {
      for (const run of runs) {
        db.prepare(
          `INSERT INTO episodes (${epCols.join(', ')}) SELECT ${epSel.join(', ')} FROM episodes WHERE run_id = ?`,
        ).run(run);
        db.prepare(
          `INSERT INTO metrics (${mCols.join(', ')}) SELECT ${mSel.join(', ')} FROM metrics WHERE run_id = ?`,
        ).run(run);
        const f = path.join(dir, 'episodes', `${run}.mcap`);
        if (fs.existsSync(f)) fs.copyFileSync(f, path.join(dir, 'episodes', `${run}-dup.mcap`));
      }
    })();
    return runs.map((r) => `${r}-dup`);
  });
}

/** The first finished simulation episode with metrics under its parent's contract: [run id, contract]. */
export function firstMeasuredRun(dir: string): { runId: string; contractId: string } {
  return withDb(dir, (db) => {
    const r = db
      .prepare(
        `SELECT m.run_id, m.contract_id FROM metrics m JOIN episodes e ON e.run_id = m.run_id ORDER BY e.started_at, m.run_id LIMIT 1`,
      )
      .get() as { run_id: string; contract_id: string };
    return { runId: r.run_id, contractId: r.contract_id };
  });
}

/** Replaces the stored result_json of a run's metrics row (`text` verbatim: it need not be JSON). */
export function setResultJson(dir: string, runId: string, text: string): void {
  withDb(dir, (db) => db.prepare('UPDATE metrics SET result_json = ? WHERE run_id = ?').run(text, runId));
}

/** Sets one scalar metric column of a run's metrics row (result_json left as it was). */
export function setMetricColumn(dir: string, runId: string, column: string, value: number | null): void {
  if (!/^[a-z_0-9]+$/.test(column)) throw new Error(`not a column name: ${column}`);
  withDb(dir, (db) => db.prepare(`UPDATE metrics SET ${column} = ? WHERE run_id = ?`).run(value, runId));
}

/** The stored calibrations: id and record_json. */
export function calibrations(dir: string): { id: string; record_json: string }[] {
  return withDb(dir, (db) => db.prepare('SELECT id, record_json FROM calibrations ORDER BY id').all()) as {
    id: string;
    record_json: string;
  }[];
}

/** Replaces a calibration's record_json (`text` verbatim). */
export function setCalibrationRecord(dir: string, id: string, text: string): void {
  withDb(dir, (db) => db.prepare('UPDATE calibrations SET record_json = ? WHERE id = ?').run(text, id));
}
