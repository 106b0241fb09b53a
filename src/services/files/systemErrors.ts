// Node's system errors (ENOENT, EACCES, ENOSPC, …): how they are recognised and what they say to an
// operator. Node has no class for them to test with `instanceof`: fs, net and child_process throw
// plain Errors carrying `errno` (libuv's negative number), `code` (its name) and `syscall`. One is
// recognised as an Error whose errno libuv itself names by its code, so an object that merely has
// `code` and `path` properties (a TraceStoreError, a FolderRefusedError, anything else) is not one.

import { getSystemErrorName } from 'node:util';

/** A system error as Node throws it (NodeJS.ErrnoException with the fields guaranteed). */
export interface SystemError extends Error {
  errno: number;
  code: string;
  syscall: string;
  /** The file concerned, for file-system calls. */
  path?: string;
  /** The second file, for rename, link, copy. */
  dest?: string;
}

/** True for an Error Node made from a libuv errno (fs, net, child_process), false for anything else. */
export function isSystemError(err: unknown): err is SystemError {
  if (!(err instanceof Error)) return false;
  const e = err as Partial<SystemError>;
  if (typeof e.errno !== 'number' || typeof e.code !== 'string' || typeof e.syscall !== 'string') return false;
  if (!Number.isInteger(e.errno) || e.errno >= 0) return false;
  try {
    return getSystemErrorName(e.errno) === e.code;
  } catch {
    return false;
  }
}

/** What a system error on a file means, in words: "no such file", "permission denied", … */
export function systemErrorReason(code: string): string {
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, not a file';
    default:
      return `cannot read (${code})`;
  }
}

/** The one-line message of a system error: "<path>: <reason>" when it names a file, else Node's own message. */
export function systemErrorMessage(err: SystemError): string {
  return typeof err.path === 'string' ? `${err.path}: ${systemErrorReason(err.code)}` : err.message;
}
