// Opening campaign.sqlite with the settings the store's guarantees rest on (docs/TRACE_STORE.md):
//
// journal_mode = WAL   readers never block the writer and a crash never leaves a half-applied
//                      transaction (the WAL is replayed or ignored on the next open);
// synchronous  = FULL  every commit is fsynced to the WAL before it returns: a finished episode
//                      stays finished across a power loss, not only across a killed process.
//                      NORMAL would also keep the database consistent but could drop the last
//                      commits on power loss. Commits here are few (begin, events, finish — never
//                      per frame), so FULL costs a few fsyncs per episode;
// foreign_keys = ON    every episode has a branch, every branch a parent, every event and metrics
//                      row an episode;
// busy_timeout = 5 s   other processes (worker pool, console, CLI report) wait for the write lock
//                      instead of failing at once.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fromSqliteError, TraceStoreError } from './errors';
import { APPLICATION_ID } from './migrations';

export interface SqliteOpenOptions {
  readOnly: boolean;
  create: boolean;
  busyTimeoutMs: number;
  synchronous: 'FULL' | 'NORMAL';
}

export interface OpenedDatabase {
  db: Database.Database;
  /** A private copy opened instead of the original (read-only folder; see openReadOnlyCopy). */
  copyOf: string | null;
}

export function openDatabase(dbFile: string, o: SqliteOpenOptions): OpenedDatabase {
  let db: Database.Database;
  try {
    db = new Database(dbFile, { readonly: o.readOnly, fileMustExist: !o.create });
  } catch (err) {
    throw fromSqliteError(err, dbFile, 'cannot open the campaign database');
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.round(o.busyTimeoutMs))}`);
    db.pragma('foreign_keys = ON');
    checkApplicationId(db, dbFile);
    if (!o.readOnly) {
      const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
      if (mode.toLowerCase() !== 'wal')
        throw new TraceStoreError('io', dbFile, `${dbFile}: the database refused WAL mode (journal_mode is ${mode})`);
      db.pragma(`synchronous = ${o.synchronous}`);
    }
    return { db, copyOf: null };
  } catch (err) {
    db.close();
    const code = String((err as { code?: unknown })?.code ?? '');
    if (o.readOnly && (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_CANTOPEN'))
      return openReadOnlyCopy(dbFile, o);
    throw fromSqliteError(err, dbFile, 'cannot open the campaign database');
  }
}

/**
 * SQLite cannot read a WAL database in a folder it cannot write (it needs the -shm index):
 * SQLITE_READONLY_DIRECTORY. For browsing a read-only (e.g. archived) campaign, the database and
 * its WAL are copied to a private temporary folder and the copy is opened read-only.
 */
function openReadOnlyCopy(dbFile: string, o: SqliteOpenOptions): OpenedDatabase {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-campaign-ro-'));
  const copy = path.join(tmp, 'campaign.sqlite');
  try {
    fs.copyFileSync(dbFile, copy);
    if (fs.existsSync(`${dbFile}-wal`)) fs.copyFileSync(`${dbFile}-wal`, `${copy}-wal`);
    const db = new Database(copy, { fileMustExist: true });
    db.pragma(`busy_timeout = ${o.busyTimeoutMs}`);
    db.pragma('foreign_keys = ON');
    checkApplicationId(db, dbFile);
    db.pragma('query_only = ON');
    return { db, copyOf: copy };
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw fromSqliteError(err, dbFile, 'cannot open the campaign database read-only');
  }
}

function checkApplicationId(db: Database.Database, dbFile: string): void {
  const id = Number(db.pragma('application_id', { simple: true }));
  if (id !== 0 && id !== APPLICATION_ID) {
    throw new TraceStoreError(
      'not_a_campaign',
      dbFile,
      `${dbFile} is an SQLite database of another program (application_id 0x${id.toString(16)}), not a MotionBench campaign`,
    );
  }
  if (id === 0) {
    const tables = db
      .prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name <> 'schema_version'`)
      .get() as { n: number };
    const ours = db
      .prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`)
      .get() as { n: number };
    if (tables.n > 0 && ours.n === 0)
      throw new TraceStoreError(
        'not_a_campaign',
        dbFile,
        `${dbFile} holds tables but is not a MotionBench campaign database`,
      );
  }
}
