// Reads a file a user named (a clip, a model, a binding, a manifest, an episode) with a bound:
// only regular files, and no more than a per-kind limit. The file is opened O_RDONLY|O_NONBLOCK
// (so a FIFO with no writer does not block the open), the DESCRIPTOR is fstat'ed (not the path:
// a symlink to /dev/zero, or a file swapped after a stat, is judged by what was opened), and at
// most limit + 1 bytes are read, so a file that grows while it is read is still refused.
//
// Refusals are InputErrors naming the file ("not a regular file (character device)", "file is
// 300.0 MiB, larger than the 256 MiB limit for motion files"). Errors of the open itself (ENOENT,
// EACCES, ...) are rethrown as Node's own errors: every caller already maps those to its messages.

import fs from 'node:fs';
import { InputError } from '../../domain/problems';
import { MAX_INPUT_BYTES } from '../../domain/motion/clipCommon';

const MiB = 1024 * 1024;

/**
 * The largest file read for each kind of input, bytes. Generous for real data (the G1 Moves and
 * LAFAN1 clips are 1–3 MB, our G1 MJCF 30 kB, a WBC policy a few MB), small enough that a hostile
 * path cannot exhaust memory.
 */
export const FILE_LIMITS = {
  /** Motion clips (CSV, NPZ, JSON): the codecs' own limit (a 2M-frame CSV is about 256 MiB). */
  clip: { bytes: MAX_INPUT_BYTES, what: 'motion files' },
  /** One MJCF (XML) file: the model or one of its includes. */
  mjcf: { bytes: 16 * MiB, what: 'MJCF files' },
  /** One mesh (STL/OBJ) or other asset a model references. */
  mesh: { bytes: 128 * MiB, what: 'mesh files' },
  /** An ONNX policy (weights included). */
  onnxModel: { bytes: 512 * MiB, what: 'ONNX models' },
  /** JSON documents: binding files, workload manifests, fps sidecars, emulator profiles. */
  json: { bytes: 16 * MiB, what: 'JSON documents' },
  /** An episode (MCAP) file read back whole for replay and reports. */
  episode: { bytes: 1024 * MiB, what: 'episode files' },
  /** A file hashed into a parent-trace identity (the robot model). */
  hashed: { bytes: 512 * MiB, what: 'hashed input files' },
} as const;

export type FileKind = keyof typeof FILE_LIMITS;
export interface FileLimit {
  bytes: number;
  /** Plural noun for messages: "larger than the 16 MiB limit for <what>". */
  what: string;
}

const limitOf = (kind: FileKind | FileLimit): FileLimit => (typeof kind === 'string' ? FILE_LIMITS[kind] : kind);

// O_NONBLOCK does not exist on Windows (nor do FIFOs that block an open there).
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

function describeType(st: fs.Stats): string {
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isFIFO()) return 'FIFO (named pipe)';
  if (st.isSocket()) return 'socket';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

const mib = (n: number): string => (n / MiB).toFixed(1);
const limitText = (l: FileLimit): string => (l.bytes % MiB === 0 ? `${l.bytes / MiB} MiB` : `${l.bytes}-byte`);

function tooLarge(file: string, size: number, l: FileLimit): InputError {
  return new InputError({ file }, `file is ${mib(size)} MiB, larger than the ${limitText(l)} limit for ${l.what}`);
}

/** Throws unless the opened descriptor is a regular file. */
function checkRegular(file: string, st: fs.Stats): void {
  if (st.isDirectory()) throw new InputError({ file }, 'is a directory, not a regular file');
  if (!st.isFile()) throw new InputError({ file }, `not a regular file (${describeType(st)})`);
}

/** Throws unless the opened descriptor is a regular file within the limit. */
function checkOpened(file: string, st: fs.Stats, l: FileLimit): void {
  checkRegular(file, st);
  if (st.size > l.bytes) throw tooLarge(file, st.size, l);
}

/**
 * The read buffer: sized from the descriptor (+1 byte to see growth) at first, doubled only if
 * the file grows while it is read — refused once it holds more than the limit.
 */
function roomFor(buf: Buffer | null, n: number, size: number, file: string, l: FileLimit): Buffer {
  if (buf === null) return Buffer.allocUnsafe(Math.min(size, l.bytes) + 1);
  if (n < buf.length) return buf;
  if (n > l.bytes) throw grew(file, l);
  const bigger = Buffer.allocUnsafe(Math.min(Math.max(buf.length * 2, 64 * 1024), l.bytes + 1));
  buf.copy(bigger, 0, 0, n);
  return bigger;
}

function grew(file: string, l: FileLimit): InputError {
  return new InputError({ file }, `file grew past the ${limitText(l)} limit for ${l.what} while it was read`);
}

/** The bytes of a regular file of at most the kind's limit. Throws InputError (refusals) or Node's errno error (open). */
export function readBoundedFile(file: string, kind: FileKind | FileLimit): Uint8Array {
  const l = limitOf(kind);
  const fd = fs.openSync(file, OPEN_FLAGS);
  try {
    const st = fs.fstatSync(fd);
    checkOpened(file, st, l);
    let buf = roomFor(null, 0, st.size, file, l);
    let n = 0;
    for (;;) {
      buf = roomFor(buf, n, st.size, file, l);
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > l.bytes) throw grew(file, l);
    return new Uint8Array(buf.buffer, buf.byteOffset, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** readBoundedFile as UTF-8 text. */
export function readBoundedText(file: string, kind: FileKind | FileLimit): string {
  const b = readBoundedFile(file, kind);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
}

/** readBoundedFile without blocking the event loop on the reads. */
export async function readBoundedFileAsync(file: string, kind: FileKind | FileLimit): Promise<Uint8Array> {
  const l = limitOf(kind);
  const h = await fs.promises.open(file, OPEN_FLAGS);
  try {
    const st = await h.stat();
    checkOpened(file, st, l);
    let buf = roomFor(null, 0, st.size, file, l);
    let n = 0;
    for (;;) {
      buf = roomFor(buf, n, st.size, file, l);
      const { bytesRead } = await h.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > l.bytes) throw grew(file, l);
    return new Uint8Array(buf.buffer, buf.byteOffset, n);
  } finally {
    await h.close();
  }
}

/** readBoundedFileAsync as UTF-8 text. */
export async function readBoundedTextAsync(file: string, kind: FileKind | FileLimit): Promise<string> {
  const b = await readBoundedFileAsync(file, kind);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
}

/** The first `n` bytes of a regular file (fewer if it is shorter), for format sniffing. */
export function readFileHead(file: string, n: number): Uint8Array {
  const fd = fs.openSync(file, OPEN_FLAGS);
  try {
    checkRegular(file, fs.fstatSync(fd));
    const buf = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = fs.readSync(fd, buf, got, n - got, null);
      if (r === 0) break;
      got += r;
    }
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

/** "no such file", "permission denied", or Node's message: the reason for an errno error of an open. */
export function describeOpenError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return 'no such file';
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return 'permission denied';
  if (e?.code === 'ENXIO') return 'not a regular file (socket or device without a reader)';
  return e?.message ?? String(err);
}
