// Errors of the trace store. Every one names the file or folder concerned and says what failed
// in words an operator can act on; `code` lets callers branch (e.g. only `busy` is worth a retry).

import { describeErrno, EpisodeFileError, errnoOf } from '../episode/chunkedMcapWriter';

export type TraceStoreErrorCode =
  /** No campaign at the path (and `create` was not asked). */
  | 'not_found'
  /** The path exists but is not a campaign folder (or the database is not ours). */
  | 'not_a_campaign'
  /** The folder or a file in it cannot be written by this process. */
  | 'read_only'
  /** No space left (or a file-size limit reached). */
  | 'disk_full'
  /** campaign.sqlite was written by a newer program. */
  | 'schema_too_new'
  /** A record with the same key but different content exists (ids name one thing forever). */
  | 'conflict'
  /** Bad input to the API. */
  | 'invalid'
  /** Another process holds the campaign's writer lock (writerLock.ts), or the database lock longer than busy_timeout. */
  | 'busy'
  /** The database file is damaged. */
  | 'corrupt'
  /** The operation does not fit the record's state (e.g. finishing an episode twice). */
  | 'state'
  | 'io';

export class TraceStoreError extends Error {
  override readonly name = 'TraceStoreError';
  constructor(
    readonly code: TraceStoreErrorCode,
    /** The file or folder concerned. */
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function codeOfErrno(errno: string): TraceStoreErrorCode {
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'read_only';
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return 'disk_full';
    case 'ENOENT':
      return 'not_found';
    case 'EEXIST':
      return 'conflict';
    default:
      return 'io';
  }
}

/** A file-system error as a TraceStoreError: "<action> <path>: <what it means> (<errno>)". */
export function fromFsError(err: unknown, file: string, action: string): TraceStoreError {
  if (err instanceof TraceStoreError) return err;
  if (err instanceof EpisodeFileError)
    return new TraceStoreError(codeOfErrno(err.code), err.file, err.message, { cause: err });
  const errno = errnoOf(err);
  return new TraceStoreError(codeOfErrno(errno), file, `${action} ${file}: ${describeErrno(errno)} (${errno})`, {
    cause: err,
  });
}

/** A better-sqlite3 error as a TraceStoreError naming the database file. */
export function fromSqliteError(err: unknown, dbFile: string, action: string): TraceStoreError {
  if (err instanceof TraceStoreError) return err;
  const code = String((err as { code?: unknown })?.code ?? '');
  const msg = (err as Error)?.message ?? String(err);
  let kind: TraceStoreErrorCode = 'io';
  let what = msg;
  if (
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_PERM' ||
    code === 'SQLITE_AUTH'
  ) {
    kind = 'read_only';
    what = `the database or its folder is not writable by this process — ${msg}`;
  } else if (
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_IOERR_WRITE' ||
    code === 'SQLITE_IOERR_FSYNC' ||
    code === 'SQLITE_IOERR_TRUNCATE'
  ) {
    kind = 'disk_full';
    what = `the disk is full or the file cannot grow — ${msg}`;
  } else if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    kind = 'busy';
    what = `another process holds the database lock — ${msg}`;
  } else if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    kind = code === 'SQLITE_NOTADB' ? 'not_a_campaign' : 'corrupt';
    what = code === 'SQLITE_NOTADB' ? `not an SQLite database — ${msg}` : `the database is damaged — ${msg}`;
  } else if (code.startsWith('SQLITE_CONSTRAINT')) {
    kind = 'conflict';
  }
  return new TraceStoreError(kind, dbFile, `${action} ${dbFile}: ${what}${code ? ` (${code})` : ''}`, { cause: err });
}
