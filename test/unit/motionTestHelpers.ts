// Builders for motion-codec tests: synthetic clips, CSV text, .npy members and ZIP archives
// written byte by byte (so malformed variants are easy to make).
import { deflateSync } from 'fflate';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { expect } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { crc32 } from '../../src/domain/motion/zipArchive';

export const J = 29;

export interface SyntheticClip {
  N: number;
  rootPos: number[][];
  /** xyzw, as in the CSV */
  rootQuatXyzw: number[][];
  joints: number[][];
}

/** A smooth synthetic motion: root moving in x, yawing 0.05 rad/frame, joints ramping. */
export function syntheticClip(N: number): SyntheticClip {
  const rootPos: number[][] = [];
  const rootQuatXyzw: number[][] = [];
  const joints: number[][] = [];
  for (let k = 0; k < N; k++) {
    rootPos.push([0.01 * k, -0.02 * k, 0.79 + 0.001 * k]);
    const yaw = 0.05 * k;
    rootQuatXyzw.push([0, 0, Math.sin(yaw / 2), Math.cos(yaw / 2)]);
    joints.push(Array.from({ length: J }, (_, j) => 0.001 * (j + 1) * k - 0.01 * j * 0.1));
  }
  return { N, rootPos, rootQuatXyzw, joints };
}

export function csvRow(pos: number[], qXyzw: number[], joints: number[]): string {
  return [...pos, ...qXyzw, ...joints].map((v) => v.toFixed(6)).join(',');
}

export function csvText(c: SyntheticClip): string {
  return c.rootPos.map((p, k) => csvRow(p, c.rootQuatXyzw[k], c.joints[k])).join('\n') + '\n';
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

export interface NpyOptions {
  descr?: string;
  fortran?: boolean;
  version?: 1 | 2;
  /** Replace the whole header dict text. */
  header?: string;
  magic?: Uint8Array;
  /** Cut this many bytes from the end. */
  truncate?: number;
}

/** A .npy member holding `values` (C order) with the given shape. */
export function npyBytes(shape: number[], values: ArrayLike<number>, opts: NpyOptions = {}): Uint8Array {
  const descr = opts.descr ?? '<f8';
  const shapeText = `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
  let dict =
    opts.header ??
    `{'descr': '${descr}', 'fortran_order': ${opts.fortran ? 'True' : 'False'}, 'shape': ${shapeText}, }`;
  const version = opts.version ?? 1;
  const pre = version === 1 ? 10 : 12;
  const total = pre + dict.length + 1;
  dict += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const m = /^([<>|=])([fiu])(\d)$/.exec(descr);
  const size = m ? Number(m[3]) : 8;
  const le = !m || m[1] !== '>';
  const data = new Uint8Array(values.length * size);
  const dv = new DataView(data.buffer);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!m || m[2] === 'f') {
      if (size === 4) dv.setFloat32(i * 4, v, le);
      else if (size === 8) dv.setFloat64(i * 8, v, le);
      // other float sizes (f2, f16): left as zero bytes, only the header matters
    } else if (m[2] === 'i') {
      if (size === 8) dv.setBigInt64(i * 8, BigInt(v), le);
      else if (size === 4) dv.setInt32(i * 4, v, le);
      else if (size === 2) dv.setInt16(i * 2, v, le);
      else dv.setInt8(i, v);
    } else {
      if (size === 8) dv.setBigUint64(i * 8, BigInt(v), le);
      else if (size === 4) dv.setUint32(i * 4, v, le);
      else if (size === 2) dv.setUint16(i * 2, v, le);
      else dv.setUint8(i, v);
    }
  }
  const out = new Uint8Array(pre + dict.length + data.length);
  out.set(opts.magic ?? [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);
  out[6] = version;
  out[7] = 0;
  const odv = new DataView(out.buffer);
  if (version === 1) odv.setUint16(8, dict.length, true);
  else odv.setUint32(8, dict.length, true);
  for (let i = 0; i < dict.length; i++) out[pre + i] = dict.charCodeAt(i);
  out.set(data, pre + dict.length);
  return opts.truncate ? out.subarray(0, out.length - opts.truncate) : out;
}

export interface ZipMember {
  name: string;
  data: Uint8Array;
  /** 0 stored (default), 8 deflate */
  method?: 0 | 8;
  /** Write a wrong CRC. */
  badCrc?: boolean;
}

/** One ZIP entry as stored: its bytes (compressed or not), the CRC-32 and uncompressed size it declares. */
export interface ZipEntry {
  name: string;
  method: 0 | 8;
  body: Uint8Array;
  crc: number;
  size: number;
}

/** A ZIP archive (local headers, central directory, end record) of entries as given, declaring what each says. */
export function zipEntries(entries: ZipEntry[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const m of entries) {
    const name = enc(m.name);
    const local = new Uint8Array(30 + name.length);
    const l = new DataView(local.buffer);
    l.setUint32(0, 0x04034b50, true);
    l.setUint16(4, 20, true);
    l.setUint16(8, m.method, true);
    l.setUint32(14, m.crc, true);
    l.setUint32(18, m.body.length, true);
    l.setUint32(22, m.size, true);
    l.setUint16(26, name.length, true);
    local.set(name, 30);
    const cd = new Uint8Array(46 + name.length);
    const c = new DataView(cd.buffer);
    c.setUint32(0, 0x02014b50, true);
    c.setUint16(4, 20, true);
    c.setUint16(6, 20, true);
    c.setUint16(10, m.method, true);
    c.setUint32(16, m.crc, true);
    c.setUint32(20, m.body.length, true);
    c.setUint32(24, m.size, true);
    c.setUint16(28, name.length, true);
    c.setUint32(42, offset, true);
    cd.set(name, 46);
    chunks.push(local, m.body);
    central.push(cd);
    offset += local.length + m.body.length;
  }
  const cdSize = central.reduce((s, b) => s + b.length, 0);
  const eocd = new Uint8Array(22);
  const e = new DataView(eocd.buffer);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, entries.length, true);
  e.setUint16(10, entries.length, true);
  e.setUint32(12, cdSize, true);
  e.setUint32(16, offset, true);
  const all = [...chunks, ...central, eocd];
  const out = new Uint8Array(all.reduce((s, b) => s + b.length, 0));
  let p = 0;
  for (const b of all) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}

/** A ZIP archive (local headers, central directory, end record), like numpy.savez writes. */
export function zipBytes(members: ZipMember[]): Uint8Array {
  return zipEntries(
    members.map((m) => {
      const method = m.method ?? 0;
      return {
        name: m.name,
        method,
        body: method === 8 ? deflateSync(m.data) : m.data,
        crc: (crc32(m.data) ^ (m.badCrc ? 1 : 0)) >>> 0,
        size: m.data.length,
      };
    }),
  );
}

export interface NpzArrays {
  fps?: Uint8Array | null;
  joint_pos?: Uint8Array | null;
  joint_vel?: Uint8Array | null;
  body_pos_w?: Uint8Array | null;
  body_quat_w?: Uint8Array | null;
  [extra: string]: Uint8Array | null | undefined;
}

/** Default .npy members for a synthetic clip (B = 2 bodies, wxyz root quaternion on body 0). */
/** A 1-D unicode .npy member ('<U n', UTF-32LE, NUL padded), as numpy saves a list of strings. */
export function npyStringBytes(values: readonly string[]): Uint8Array {
  const width = Math.max(1, ...values.map((v) => [...v].length));
  let dict = `{'descr': '<U${width}', 'fortran_order': False, 'shape': (${values.length},), }`;
  dict += ' '.repeat((64 - ((10 + dict.length + 1) % 64)) % 64) + '\n';
  const head = new Uint8Array(10 + dict.length);
  head.set([0x93, ...enc('NUMPY'), 1, 0, dict.length & 0xff, dict.length >> 8]);
  head.set(enc(dict), 10);
  const data = new Uint8Array(4 * width * values.length);
  const dv = new DataView(data.buffer);
  values.forEach((v, i) => [...v].forEach((ch, c) => dv.setUint32((i * width + c) * 4, ch.codePointAt(0)!, true)));
  const out = new Uint8Array(head.length + data.length);
  out.set(head);
  out.set(data, head.length);
  return out;
}

/** Members of a synthetic NPZ; it names its joints (canonical order), so its joint order is decided. */
export function npzMembersFor(c: SyntheticClip, descr = '<f8', fps = 50): Record<string, Uint8Array> {
  const B = 2;
  const bodyPos: number[] = [];
  const bodyQuat: number[] = [];
  for (let k = 0; k < c.N; k++) {
    const [x, y, z, w] = c.rootQuatXyzw[k];
    bodyPos.push(...c.rootPos[k], c.rootPos[k][0], c.rootPos[k][1] + 0.1, c.rootPos[k][2] - 0.1);
    bodyQuat.push(w, x, y, z, 1, 0, 0, 0);
  }
  return {
    fps: npyBytes([1], [fps], { descr: '<f8' }),
    joint_pos: npyBytes([c.N, J], c.joints.flat(), { descr }),
    joint_vel: npyBytes([c.N, J], new Array(c.N * J).fill(0.25), { descr }),
    body_pos_w: npyBytes([c.N, B, 3], bodyPos, { descr }),
    body_quat_w: npyBytes([c.N, B, 4], bodyQuat, { descr }),
    joint_names: npyStringBytes(G1_JOINT_NAMES),
  };
}

/** An NPZ from members; `null` drops a member, a Uint8Array replaces it. */
export function npzBytes(base: Record<string, Uint8Array>, overrides: NpzArrays = {}, method: 0 | 8 = 0): Uint8Array {
  const merged: Record<string, Uint8Array | null | undefined> = { ...base, ...overrides };
  const members: ZipMember[] = [];
  for (const [k, v] of Object.entries(merged)) if (v) members.push({ name: `${k}.npy`, data: v, method });
  return zipBytes(members);
}

/** Asserts that `fn` throws an InputError whose location and message match. */
export function expectInputError(
  fn: () => unknown,
  loc: { file?: string; line?: number; column?: number; key?: string },
  message?: RegExp,
): InputError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected an InputError to be thrown').toBeInstanceOf(InputError);
  const err = caught as InputError;
  if (loc.file !== undefined) expect(err.location.file).toBe(loc.file);
  if (loc.line !== undefined) expect(err.location.line).toBe(loc.line);
  if (loc.column !== undefined) expect(err.location.column).toBe(loc.column);
  if (loc.key !== undefined) expect(err.location.key).toBe(loc.key);
  if (loc.file !== undefined) expect(err.message).toContain(loc.file);
  if (message) expect(err.message).toMatch(message);
  return err;
}

/**
 * A ZIP64 archive: sizes and offsets in the central directory are 0xFFFFFFFF with the real
 * values in ZIP64 extra fields, and the end record points to a ZIP64 end record via a locator.
 */
export function zip64Bytes(members: ZipMember[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const m of members) {
    const name = enc(m.name);
    const crc = crc32(m.data);
    const local = new Uint8Array(30 + name.length + 20);
    const l = new DataView(local.buffer);
    l.setUint32(0, 0x04034b50, true);
    l.setUint16(4, 45, true);
    l.setUint32(14, crc, true);
    l.setUint32(18, 0xffffffff, true);
    l.setUint32(22, 0xffffffff, true);
    l.setUint16(26, name.length, true);
    l.setUint16(28, 20, true);
    local.set(name, 30);
    l.setUint16(30 + name.length, 1, true);
    l.setUint16(32 + name.length, 16, true);
    l.setBigUint64(34 + name.length, BigInt(m.data.length), true);
    l.setBigUint64(42 + name.length, BigInt(m.data.length), true);
    const cd = new Uint8Array(46 + name.length + 28);
    const c = new DataView(cd.buffer);
    c.setUint32(0, 0x02014b50, true);
    c.setUint16(4, 45, true);
    c.setUint16(6, 45, true);
    c.setUint32(16, crc, true);
    c.setUint32(20, 0xffffffff, true);
    c.setUint32(24, 0xffffffff, true);
    c.setUint16(28, name.length, true);
    c.setUint16(30, 28, true);
    c.setUint32(42, 0xffffffff, true);
    cd.set(name, 46);
    const x = 46 + name.length;
    c.setUint16(x, 1, true);
    c.setUint16(x + 2, 24, true);
    c.setBigUint64(x + 4, BigInt(m.data.length), true); // uncompressed
    c.setBigUint64(x + 12, BigInt(m.data.length), true); // compressed
    c.setBigUint64(x + 20, BigInt(offset), true); // local header offset
    parts.push(local, m.data);
    central.push(cd);
    offset += local.length + m.data.length;
  }
  const cdSize = central.reduce((s, b) => s + b.length, 0);
  const eocd64At = offset + cdSize;
  const eocd64 = new Uint8Array(56);
  const e64 = new DataView(eocd64.buffer);
  e64.setUint32(0, 0x06064b50, true);
  e64.setBigUint64(4, 44n, true);
  e64.setBigUint64(24, BigInt(members.length), true);
  e64.setBigUint64(32, BigInt(members.length), true);
  e64.setBigUint64(40, BigInt(cdSize), true);
  e64.setBigUint64(48, BigInt(offset), true);
  const locator = new Uint8Array(20);
  const lc = new DataView(locator.buffer);
  lc.setUint32(0, 0x07064b50, true);
  lc.setBigUint64(8, BigInt(eocd64At), true);
  lc.setUint32(16, 1, true);
  const eocd = new Uint8Array(22);
  const e = new DataView(eocd.buffer);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, 0xffff, true);
  e.setUint16(10, 0xffff, true);
  e.setUint32(12, 0xffffffff, true);
  e.setUint32(16, 0xffffffff, true);
  const all = [...parts, ...central, eocd64, locator, eocd];
  const out = new Uint8Array(all.reduce((s, b) => s + b.length, 0));
  let p = 0;
  for (const b of all) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}
