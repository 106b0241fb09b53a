// Hostile files for the hostile-input suites (test/integration/hostileFiles.test.ts,
// hostStopLatency.test.ts): devices and FIFOs where a file is expected, symlinks to them, a ZIP
// bomb shaped as a motion NPZ, a 200 MB CSV. Each attack (reading devices, FIFOs, inflation) is
// reproduced with real files; add new ones here so the suite can grow.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { MAX_INPUT_BYTES } from '../../src/domain/motion/clipCommon';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { npyBytes, zipEntries } from '../unit/motionTestHelpers';
import { REPO_ROOT } from './sharedData';
import { nodeArgsFor } from './tsChild';

/** A character device that reads as an endless stream of zero bytes. */
export const DEV_ZERO = '/dev/zero';

/** A fresh folder in os.tmpdir(); `cleanup` removes it. */
export function hostileDir(prefix = 'mb-hostile-'): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A named pipe with no writer: a blocking open or read of it never returns. */
export function makeFifo(dir: string, name: string): string {
  const p = path.join(dir, name);
  execFileSync('mkfifo', [p]);
  return p;
}

/** `dir/name` → `target` (e.g. a clip-looking name pointing at /dev/zero). */
export function symlinkTo(dir: string, name: string, target: string): string {
  const p = path.join(dir, name);
  fs.symlinkSync(target, p);
  return p;
}

/** A model whose <include> is `includeTarget` (through a symlink named part.xml, so the MJCF looks ordinary). */
export function mjcfIncluding(dir: string, includeTarget: string): string {
  fs.mkdirSync(dir, { recursive: true });
  symlinkTo(dir, 'part.xml', includeTarget);
  const model = path.join(dir, 'model.xml');
  fs.writeFileSync(model, '<mujoco model="hostile">\n  <include file="part.xml"/>\n</mujoco>\n');
  return model;
}

/** A workload folder whose workload.json is a symlink to `target`. */
export function workloadWithManifest(dir: string, target: string): string {
  fs.mkdirSync(dir, { recursive: true });
  symlinkTo(dir, 'workload.json', target);
  return dir;
}

// ---- NPZ amplification ------------------------------------------------------------------------

/** One .npy member of a streamed NPZ: a header and `bytes` of data, a `pattern` repeated. */
interface BombMember {
  name: string;
  shape: number[];
  /** One period of the data (a multiple of 8 bytes: float64 values). */
  pattern: Uint8Array;
}

/** A version 1.0 .npy header for a C-order <f8 array of `shape` (npyBytes without values). */
export function npyHeader(shape: number[]): Uint8Array {
  return npyBytes(shape, []);
}

/** DEFLATEs a header plus `dataBytes` of a repeated pattern, streaming through native zlib (no big buffer); returns the stream and CRC-32. */
async function deflateMember(
  header: Uint8Array,
  pattern: Uint8Array,
  dataBytes: number,
): Promise<{ compressed: Uint8Array; crc: number; size: number }> {
  const chunks: Buffer[] = [];
  const deflater = zlib.createDeflateRaw({ level: 9 });
  deflater.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    deflater.once('end', resolve);
    deflater.once('error', reject);
  });
  const block = new Uint8Array(1 << 20);
  for (let i = 0; i < block.length; i += pattern.length)
    block.set(pattern.subarray(0, Math.min(pattern.length, block.length - i)), i);
  let crc = zlib.crc32(header);
  deflater.write(header);
  for (let left = dataBytes; left > 0;) {
    const part = block.subarray(0, Math.min(left, block.length));
    crc = zlib.crc32(part, crc);
    left -= part.length;
    if (!deflater.write(part)) await new Promise((r) => deflater.once('drain', r));
  }
  deflater.end();
  await ended;
  return { compressed: new Uint8Array(Buffer.concat(chunks)), crc: crc >>> 0, size: header.length + dataBytes };
}

/** A DEFLATE member as stored: its compressed stream, the CRC-32 and the uncompressed size the ZIP declares. */
export interface DeflatedMember {
  name: string;
  compressed: Uint8Array;
  crc: number;
  size: number;
}

/** A ZIP (no ZIP64: every member < 4 GiB) of DEFLATE members, declaring what each member says. */
export function zipOf(members: DeflatedMember[]): Uint8Array {
  return zipEntries(members.map((m) => ({ name: m.name, method: 8, body: m.compressed, crc: m.crc, size: m.size })));
}

/** Frames and bodies of the amplification NPZ: joint_pos (N, 29) float64 is just under the per-member limit. */
export const BOMB_FRAMES = Math.floor((MAX_INPUT_BYTES - 128) / (G1_NUM_JOINTS * 8));
export const BOMB_BODIES = 7;

/**
 * The inflation (amplification) attack: a ~1 MB NPZ of DEFLATE members (zeros and unit
 * quaternions, ~1000:1) that each inflate to just under the per-member limit (MAX_INPUT_BYTES),
 * ~990 MB in all, with consistent shapes (a valid clip of 1.16 M frames). `mismatch`: body_quat_w
 * has one frame fewer, so the clip is refused — and must be before any member is inflated.
 */
export async function amplificationNpz(opts: { mismatch?: boolean } = {}): Promise<Uint8Array> {
  const N = BOMB_FRAMES;
  const B = BOMB_BODIES;
  const zeros = new Uint8Array(8);
  const unitQuat = new Uint8Array(32);
  new DataView(unitQuat.buffer).setFloat64(0, 1, true); // w = 1, x = y = z = 0
  const fps = npyHeader([1]);
  const fpsData = new Uint8Array(8);
  new DataView(fpsData.buffer).setFloat64(0, 50, true);
  const members: BombMember[] = [
    { name: 'joint_pos.npy', shape: [N, G1_NUM_JOINTS], pattern: zeros },
    { name: 'joint_vel.npy', shape: [N, G1_NUM_JOINTS], pattern: zeros },
    { name: 'body_pos_w.npy', shape: [N, B, 3], pattern: zeros },
    { name: 'body_quat_w.npy', shape: [opts.mismatch ? N - 1 : N, B, 4], pattern: unitQuat },
  ];
  const fpsMember = await deflateMember(fps, fpsData, 8);
  const built = [{ name: 'fps.npy', ...fpsMember }];
  for (const m of members)
    built.push({
      name: m.name,
      ...(await deflateMember(npyHeader(m.shape), m.pattern, m.shape.reduce((a, d) => a * d, 1) * 8)),
    });
  return zipOf(built);
}

/**
 * A member whose .npy header inflates (a sync-flushed DEFLATE block, then a 1 KiB stored block of
 * zeros) but whose data then cannot inflate (an invalid block type), declaring `dataBytes` of
 * data: reading it past its head fails, so any error other than "DEFLATE data is corrupt" proves
 * the reader decided from the header alone — whatever size the ZIP declares.
 */
export function headerOnlyMember(
  name: string,
  shape: number[],
  dataBytes = shape.reduce((a, d) => a * d, 1) * 8,
): DeflatedMember {
  const header = npyHeader(shape);
  const flushed = zlib.deflateRawSync(header, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const stored = new Uint8Array(5 + 1024); // BFINAL 0, BTYPE 00 (byte-aligned after the flush), LEN 1024, NLEN
  stored.set([0x00, 0x00, 0x04, 0xff, 0xfb]);
  const compressed = new Uint8Array(flushed.length + stored.length + 16);
  compressed.set(flushed);
  compressed.set(stored, flushed.length);
  compressed.fill(0xff, flushed.length + stored.length);
  return { name, compressed, crc: 0, size: header.length + dataBytes };
}

/** Declared uncompressed bytes of the members of a ZIP (from its central directory). */
export function declaredInflatedBytes(zip: Uint8Array): number {
  const dv = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let total = 0;
  for (let i = 0; i + 46 <= zip.length; i++)
    if (dv.getUint32(i, true) === 0x02014b50) total += dv.getUint32(i + 24, true);
  return total;
}

// ---- a read in a child process, under a watchdog ---------------------------------------------

export const HOSTILE_LOAD_CHILD = path.join(REPO_ROOT, 'test/helpers/hostileLoadChild.ts');

export interface ChildLoadReport {
  ok: boolean;
  error?: string;
  /** RSS before the read, MiB. */
  rssBeforeMiB: number;
  /** Peak RSS of the process (getrusage maxrss; the watchdog's last sample when it killed the read), MiB. */
  peakRssMiB: number;
  /** process.memoryUsage().arrayBuffers after the read, MiB (-1 when the watchdog killed it). */
  arrayBuffersMiB: number;
  ms: number;
  /** The watchdog killed a runaway read (too much memory or time). */
  killed?: boolean;
}

/** Which of the services' readers hostileLoadChild.ts runs on the file. */
export type ChildReader = 'clip' | 'mjcf' | 'mujoco' | 'onnx' | 'binding' | 'workload' | 'episode' | 'hash' | 'mesh';

/** Reads `file` with one of the services' readers in a fresh `node --import tsx` process, under a watchdog, and reports its memory. */
export function readInChild(reader: ChildReader, file: string, fps?: number): Promise<ChildLoadReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeArgsFor(HOSTILE_LOAD_CHILD), reader, file, ...(fps !== undefined ? [String(fps)] : [])],
      { cwd: REPO_ROOT },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as ChildLoadReport);
      } catch {
        reject(new Error(`hostileLoadChild exited ${code}: ${err || out}`));
      }
    });
  });
}

// ---- a big CSV --------------------------------------------------------------------------------

/** Writes a LAFAN1-G1 CSV of at least `bytes` bytes (36 columns, 9 decimals); returns its frame count. */
export function writeBigCsv(file: string, bytes: number): number {
  const fd = fs.openSync(file, 'w');
  let size = 0;
  let k = 0;
  try {
    while (size < bytes) {
      const lines: string[] = [];
      for (let j = 0; j < 1000; j++, k++) {
        const v = [(0.001 * k) % 5, 0.1, 0.79, 0, 0, 0, 1];
        for (let i = 0; i < G1_NUM_JOINTS; i++) v.push(Math.sin(k * 0.01 + i) * 0.1);
        lines.push(v.map((x) => x.toFixed(9)).join(','));
      }
      const s = `${lines.join('\n')}\n`;
      fs.writeSync(fd, s);
      size += s.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return k;
}
