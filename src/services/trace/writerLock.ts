// One writer per campaign. A process that opens a campaign for writing holds `campaign.lock`
// beside campaign.sqlite: a one-line JSON file naming the holder (host, pid, the pid's start time
// as /proc/<pid>/stat field 22 and as a wall-clock time, the command it runs, since when). A second
// process that opens the campaign for writing is refused with that identity in one line; readers
// (report, analyze, gap review) never take it (SQLite WAL lets them read beside the writer).
//
// The file is created with O_EXCL, and every creation or take-over happens inside an IMMEDIATE
// transaction on campaign.sqlite, so two processes never both decide they hold it (SQLite's write
// lock orders them). It is removed when the holder closes its last store, and at exit. A lock whose
// holder is certainly gone (same host, the pid does not exist, is a zombie, or now belongs to a
// process with another start time: a reused pid) is stale: it is taken over and the take-over is
// reported to the caller (the store records it as a `note` event). A holder on another host is
// never judged: its lock stays until it is removed by hand.
//
// Threads of one process share the lock (the same pid and start time): only the module instance
// that created the file removes it.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { fromFsError, fromSqliteError, TraceStoreError } from './errors';
import { currentWriter, processState } from './writerLiveness';

export const CAMPAIGN_LOCK = 'campaign.lock';
/** A lock file longer than this is not one this program wrote (it is read only up to here). */
const LOCK_MAX_BYTES = 4096;
/** The command line kept in the lock, characters. */
const PURPOSE_MAX_CHARS = 300;

export interface LockHolder {
  host: string;
  pid: number;
  /** /proc/<pid>/stat field 22 (clock ticks since boot), to tell a reused pid apart; null off Linux. */
  start: string | null;
  /** The holder's process start, ISO 8601 (wall clock). */
  startedAt: string;
  /** What the holder is doing (its command line, or the console job). */
  purpose: string;
  /** When the lock was taken, ISO 8601. */
  since: string;
  /** Random: tells this holding apart from a later one by the same process. */
  token: string;
}

export interface WriterLockHandle {
  readonly file: string;
  /** A stale lock this acquisition replaced (its holder was gone), or null. */
  readonly tookOver: LockHolder | null;
  release(): void;
}

interface Held {
  count: number;
  /** This module instance created the file (and removes it on the last release). */
  owned: boolean;
  holder: LockHolder;
}

const held = new Map<string, Held>();
let exitHook = false;

function defaultPurpose(): string {
  const [, script, ...args] = process.argv;
  const name = script ? path.basename(script).replace(/\.(mjs|cjs|js|ts)$/, '') : 'node';
  return [name, ...args].join(' ');
}

function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > PURPOSE_MAX_CHARS ? `${flat.slice(0, PURPOSE_MAX_CHARS - 1)}…` : flat;
}

/** "pid 123 on host-a (process started 2026-…Z), running \"motionbench qualify …\" since 2026-…Z" */
export function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} on ${h.host} (process started ${h.startedAt}), running "${h.purpose}" since ${h.since}`;
}

/** The holder in a lock file, or a string saying why it is not readable (an unfinished or foreign file). */
function readHolder(file: string): LockHolder | string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fromFsError(err, file, 'cannot read the campaign writer lock');
  }
  let text: string;
  try {
    const buf = Buffer.alloc(LOCK_MAX_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    if (n > LOCK_MAX_BYTES) return `longer than ${LOCK_MAX_BYTES} bytes`;
    text = buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return text.length === 0 ? 'empty' : 'not JSON';
  }
  const o = v as Partial<LockHolder> | null;
  if (
    !o ||
    typeof o !== 'object' ||
    typeof o.host !== 'string' ||
    !Number.isSafeInteger(o.pid) ||
    (o.start !== null && typeof o.start !== 'string') ||
    typeof o.token !== 'string'
  )
    return 'not a holder record';
  return {
    host: o.host,
    pid: o.pid!,
    start: o.start ?? null,
    startedAt: typeof o.startedAt === 'string' ? o.startedAt : 'unknown',
    purpose: typeof o.purpose === 'string' ? oneLine(o.purpose) : 'unknown',
    since: typeof o.since === 'string' ? o.since : 'unknown',
    token: o.token,
  };
}

function writeHolder(file: string, h: LockHolder): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
  try {
    fs.writeSync(fd, `${JSON.stringify(h)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function releaseOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const [file, h] of held) {
      if (!h.owned) continue;
      try {
        const now = readHolder(file);
        if (now && typeof now !== 'string' && now.token === h.holder.token) fs.unlinkSync(file);
      } catch {
        // at exit nothing more can be done; the next opener finds the lock stale
      }
    }
    held.clear();
  });
}

/**
 * Takes the writer lock of the campaign whose database `db` is (file `dbFile`), or throws a
 * TraceStoreError('busy') naming the holder. `purpose` says what this process is doing.
 */
export function acquireWriterLock(db: Database.Database, dbFile: string, purpose?: string): WriterLockHandle {
  const file = path.join(path.dirname(dbFile), CAMPAIGN_LOCK);
  const mine = held.get(file);
  if (mine) {
    mine.count++;
    return handle(file, null);
  }
  const me = currentWriter();
  const self: LockHolder = {
    host: me.host,
    pid: me.pid,
    start: me.start,
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    purpose: oneLine(purpose ?? defaultPurpose()),
    since: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  let result: { owned: boolean; holder: LockHolder; tookOver: LockHolder | null };
  try {
    result = db.transaction(() => takeIn(file, self))!.immediate();
  } catch (err) {
    if (err instanceof TraceStoreError) throw err;
    if (
      typeof (err as { code?: unknown })?.code === 'string' &&
      String((err as { code: string }).code).startsWith('SQLITE')
    )
      throw fromSqliteError(err, dbFile, 'cannot take the writer lock of');
    throw fromFsError(err, file, 'cannot take the campaign writer lock');
  }
  held.set(file, { count: 1, owned: result.owned, holder: result.holder });
  if (result.owned) releaseOnExit();
  return handle(file, result.tookOver);
}

/** Inside the IMMEDIATE transaction: create the file, share it with this process, take over a stale one, or refuse. */
function takeIn(file: string, self: LockHolder): { owned: boolean; holder: LockHolder; tookOver: LockHolder | null } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeHolder(file, self);
      return { owned: true, holder: self, tookOver: null };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const h = readHolder(file);
    if (h === null) continue; // released between the two calls
    if (typeof h === 'string') {
      // Created but never completed (its creator died between O_EXCL and the write: the write
      // happens inside this same transaction kind, so a live creator cannot be caught half-way),
      // or not ours: unusable, taken over.
      fs.unlinkSync(file);
      writeHolder(file, self);
      return {
        owned: true,
        holder: self,
        tookOver: {
          host: 'unknown',
          pid: 0,
          start: null,
          startedAt: 'unknown',
          purpose: `an unreadable lock file (${h})`,
          since: 'unknown',
          token: '',
        },
      };
    }
    const state = processState(h);
    if (state === 'self') return { owned: false, holder: h, tookOver: null };
    if (state === 'dead') {
      fs.unlinkSync(file);
      writeHolder(file, self);
      return { owned: true, holder: self, tookOver: h };
    }
    const where =
      state === 'unknown'
        ? `; it is on another host, so its liveness cannot be checked here (remove ${file} by hand only once that process has ended)`
        : '';
    throw new TraceStoreError('busy', file, `${refusalOf(path.dirname(file), h)}${where}`);
  }
  throw new TraceStoreError('busy', file, `cannot take the campaign writer lock ${file}: it keeps changing hands`);
}

function handle(file: string, tookOver: LockHolder | null): WriterLockHandle {
  let released = false;
  return {
    file,
    tookOver,
    release() {
      if (released) return;
      released = true;
      const h = held.get(file);
      if (!h) return;
      if (--h.count > 0) return;
      held.delete(file);
      if (!h.owned) return;
      try {
        const now = readHolder(file);
        if (now && typeof now !== 'string' && now.token === h.holder.token) fs.unlinkSync(file);
      } catch {
        // A lock left behind is found stale by the next opener (this process will be gone).
      }
    },
  };
}

/** The holder named in a campaign's lock file, or null when nobody holds it (for status displays). */
export function writerLockHolder(campaignDir: string): LockHolder | null {
  const h = readHolder(path.join(campaignDir, CAMPAIGN_LOCK));
  return h && typeof h !== 'string' ? h : null;
}

/**
 * The campaign's writer-lock refusal for this process, or null when it may write: a one-line
 * sentence naming another live process that holds the lock (a stale or own lock is no refusal).
 * For a job to be refused before it starts; openCampaign makes the binding check.
 */
export function otherWriterOf(campaignDir: string): string | null {
  const file = path.join(campaignDir, CAMPAIGN_LOCK);
  let h: LockHolder | string | null;
  try {
    h = readHolder(file);
  } catch {
    return null;
  }
  if (!h || typeof h === 'string') return null;
  const state = processState(h);
  if (state === 'self' || state === 'dead') return null;
  return refusalOf(campaignDir, h);
}

function refusalOf(campaignDir: string, h: LockHolder): string {
  return `the campaign ${campaignDir} is being written by another process: ${describeHolder(h)}; one writer per campaign, reading (report, analyze) still works`;
}
