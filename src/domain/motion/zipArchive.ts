// Minimal ZIP reader for NPZ files (numpy.savez / savez_compressed): the central directory
// (with ZIP64 extensions, which numpy writes), STORED and DEFLATE members, CRC-32 checked.
// Encrypted, multi-disk and other compression methods are rejected with a clear error, as are a
// directory of more than MAX_ZIP_ENTRIES members and a member name listed twice.
// DEFLATE members are inflated as a stream in small input slices, into a buffer of the size the
// central directory declares: a member that would inflate past its declared size is refused as
// soon as it does (a ZIP bomb costs neither memory nor time beyond what it declares), and the
// head of a member (an .npy header) can be read without inflating the rest.

import { Inflate } from 'fflate';
import { InputError } from '../problems';
import { MAX_INPUT_BYTES } from './clipCommon';

export interface ZipEntry {
  name: string;
  /** 0 = STORED, 8 = DEFLATE. */
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

/**
 * Most members a ZIP may list: a motion archive has about ten (an NPZ one per array, a torch.save
 * archive one per storage); the directory is refused before any entry is read beyond this.
 */
export const MAX_ZIP_ENTRIES = 10_000;

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_EOCD64_LOCATOR = 0x07064b50;

export const isZipMagic = (b: Uint8Array): boolean =>
  b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6));

function u64(dv: DataView, off: number, file: string, what: string): number {
  const lo = dv.getUint32(off, true);
  const hi = dv.getUint32(off + 4, true);
  if (hi >= 0x200000) throw new InputError({ file }, `ZIP ${what} is too large (${hi} * 2^32)`);
  return hi * 0x100000000 + lo;
}

/** Lists the members of a ZIP archive from its central directory. */
export function readZipDirectory(bytes: Uint8Array, file: string): ZipEntry[] {
  const len = bytes.length;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (len < 22) throw new InputError({ file }, `not a readable ZIP/NPZ archive: only ${len} bytes (truncated file?)`);
  if (!isZipMagic(bytes)) {
    throw new InputError({ file }, 'not a ZIP/NPZ archive: bad magic (expected "PK\\x03\\x04")');
  }
  let eocd = -1;
  for (let i = len - 22; i >= Math.max(0, len - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === SIG_EOCD && i + 22 + dv.getUint16(i + 20, true) <= len) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new InputError({ file }, 'unreadable ZIP/NPZ archive: end of central directory not found (truncated file?)');
  }
  const diskNo = dv.getUint16(eocd + 4, true);
  const cdDisk = dv.getUint16(eocd + 6, true);
  let entryCount = dv.getUint16(eocd + 10, true);
  let cdSize = dv.getUint32(eocd + 12, true);
  let cdOffset = dv.getUint32(eocd + 16, true);
  if (entryCount === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const loc = eocd - 20;
    if (loc < 0 || dv.getUint32(loc, true) !== SIG_EOCD64_LOCATOR) {
      throw new InputError({ file }, 'unreadable ZIP64 archive: ZIP64 end-of-central-directory locator missing');
    }
    const rec = u64(dv, loc + 8, file, 'ZIP64 record offset');
    if (rec + 56 > len || dv.getUint32(rec, true) !== SIG_EOCD64) {
      throw new InputError({ file }, 'unreadable ZIP64 archive: bad ZIP64 end-of-central-directory record');
    }
    entryCount = u64(dv, rec + 32, file, 'entry count');
    cdSize = u64(dv, rec + 40, file, 'central directory size');
    cdOffset = u64(dv, rec + 48, file, 'central directory offset');
  } else if (diskNo !== 0 || cdDisk !== 0) {
    throw new InputError({ file }, 'multi-disk (split) ZIP archives are not supported');
  }
  if (cdOffset + cdSize > len) {
    throw new InputError(
      { file },
      `unreadable ZIP/NPZ archive: central directory (offset ${cdOffset}, ${cdSize} bytes) lies beyond the end of the ${len}-byte file (truncated?)`,
    );
  }
  if (entryCount > MAX_ZIP_ENTRIES)
    throw new InputError(
      { file },
      `the ZIP directory lists ${entryCount} members, more than the ${MAX_ZIP_ENTRIES} read (a motion archive has about ten)`,
    );
  const entries: ZipEntry[] = [];
  const names = new Set<string>();
  let p = cdOffset;
  const decoder = new TextDecoder('utf-8');
  for (let e = 0; e < entryCount; e++) {
    if (p + 46 > len || dv.getUint32(p, true) !== SIG_CENTRAL) {
      throw new InputError({ file }, `unreadable ZIP/NPZ archive: central directory entry ${e} is damaged`);
    }
    const flags = dv.getUint16(p + 8, true);
    const method = dv.getUint16(p + 10, true);
    const crc32 = dv.getUint32(p + 16, true);
    let compressedSize = dv.getUint32(p + 20, true);
    let uncompressedSize = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    let localHeaderOffset = dv.getUint32(p + 42, true);
    if (p + 46 + nameLen + extraLen + commentLen > len) {
      throw new InputError(
        { file },
        `unreadable ZIP/NPZ archive: central directory entry ${e} runs past the end of the file`,
      );
    }
    const name = decoder.decode(bytes.subarray(p + 46, p + 46 + nameLen));
    // ZIP64 extended information: present fields are those whose 32-bit value is 0xFFFFFFFF.
    let x = p + 46 + nameLen;
    const xEnd = x + extraLen;
    while (x + 4 <= xEnd) {
      const id = dv.getUint16(x, true);
      const size = dv.getUint16(x + 2, true);
      if (id === 0x0001) {
        let q = x + 4;
        const qEnd = Math.min(q + size, xEnd);
        if (uncompressedSize === 0xffffffff && q + 8 <= qEnd) {
          uncompressedSize = u64(dv, q, file, 'member size');
          q += 8;
        }
        if (compressedSize === 0xffffffff && q + 8 <= qEnd) {
          compressedSize = u64(dv, q, file, 'member size');
          q += 8;
        }
        if (localHeaderOffset === 0xffffffff && q + 8 <= qEnd) {
          localHeaderOffset = u64(dv, q, file, 'member offset');
        }
      }
      x += 4 + size;
    }
    if (names.has(name))
      throw new InputError(
        { file },
        `the ZIP directory lists the member ${name.slice(0, 200)} twice: which one to read is ambiguous`,
      );
    names.add(name);
    entries.push({ name, method, flags, crc32, compressedSize, uncompressedSize, localHeaderOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

let crcTable: Uint32Array | null = null;

export function crc32(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  const t = crcTable;
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Compressed input per Inflate.push: bounds one push's output (DEFLATE inflates at most ~1032:1). */
const INFLATE_SLICE_BYTES = 16 * 1024;
/** The same when only a member's head is read: at most ~260 kB inflated per push. */
const HEAD_SLICE_BYTES = 256;

/** The member's stored (compressed) bytes, after checking it is one we can read. */
function memberData(bytes: Uint8Array, entry: ZipEntry, file: string, key: string): Uint8Array {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (entry.flags & 1) throw new InputError({ file, key }, 'encrypted ZIP members are not supported');
  if (entry.method !== 0 && entry.method !== 8) {
    throw new InputError(
      { file, key },
      `ZIP compression method ${entry.method} is not supported (only stored and deflate)`,
    );
  }
  if (entry.uncompressedSize > MAX_INPUT_BYTES) {
    throw new InputError(
      { file, key },
      `member is ${(entry.uncompressedSize / 1048576).toFixed(1)} MiB uncompressed, over the ${MAX_INPUT_BYTES / 1048576} MiB limit`,
    );
  }
  const h = entry.localHeaderOffset;
  if (h + 30 > bytes.length || dv.getUint32(h, true) !== SIG_LOCAL) {
    throw new InputError(
      { file, key },
      `unreadable ZIP/NPZ archive: local header of the member not found at offset ${h} (truncated or damaged file?)`,
    );
  }
  const start = h + 30 + dv.getUint16(h + 26, true) + dv.getUint16(h + 28, true);
  const end = start + entry.compressedSize;
  if (end > bytes.length) {
    throw new InputError(
      { file, key },
      `member data runs past the end of the file (${end} > ${bytes.length} bytes; truncated file?)`,
    );
  }
  if (entry.method === 0 && entry.compressedSize !== entry.uncompressedSize) {
    throw new InputError({ file, key }, 'stored member has different compressed and uncompressed sizes');
  }
  return bytes.subarray(start, end);
}

/**
 * Inflates `raw` into at most `want` bytes. With `want` = the declared size, the whole member:
 * more output than declared is refused on the spot. With a smaller `want`, only the head: stops
 * once `want` bytes are out.
 */
function inflateBounded(raw: Uint8Array, declared: number, want: number, file: string, key: string): Uint8Array {
  const whole = want >= declared;
  const out = new Uint8Array(Math.min(want, declared));
  let n = 0;
  let overflow = false;
  const inflater = new Inflate((chunk) => {
    const room = out.length - n;
    if (chunk.length > room) {
      if (whole) overflow = true;
      out.set(chunk.subarray(0, room), n);
      n = out.length;
    } else {
      out.set(chunk, n);
      n += chunk.length;
    }
  });
  try {
    const slice = whole ? INFLATE_SLICE_BYTES : HEAD_SLICE_BYTES;
    for (let p = 0; p < raw.length; p += slice) {
      const end = Math.min(p + slice, raw.length);
      inflater.push(raw.subarray(p, end), end === raw.length);
      if (overflow)
        throw new InputError(
          { file, key },
          `inflates to more than the ${declared} bytes its ZIP entry declares (damaged or hostile file)`,
        );
      if (!whole && n >= want) return out;
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError({ file, key }, `DEFLATE data is corrupt (${(err as Error).message})`);
  }
  if (whole && n !== declared) throw new InputError({ file, key }, `inflated to ${n} bytes, expected ${declared}`);
  return out.subarray(0, n);
}

/**
 * The first `n` uncompressed bytes of a member (fewer if it is shorter), inflating no more of it
 * than that: for reading an .npy header before deciding whether to inflate the data. Not CRC-checked.
 */
export function readZipEntryHead(
  bytes: Uint8Array,
  entry: ZipEntry,
  file: string,
  n: number,
  key: string = entry.name,
): Uint8Array {
  const raw = memberData(bytes, entry, file, key);
  const want = Math.min(n, entry.uncompressedSize);
  if (entry.method === 0) return raw.subarray(0, want);
  if (want === 0) return new Uint8Array(0);
  return inflateBounded(raw, entry.uncompressedSize, want, file, key);
}

/**
 * The uncompressed bytes of one member (a view into `bytes` for STORED members). Errors name
 * `key` (default: the member name).
 */
export function readZipEntry(bytes: Uint8Array, entry: ZipEntry, file: string, key: string = entry.name): Uint8Array {
  const raw = memberData(bytes, entry, file, key);
  const data =
    entry.method === 0 ? raw : inflateBounded(raw, entry.uncompressedSize, entry.uncompressedSize, file, key);
  const crc = crc32(data);
  if (crc !== entry.crc32) {
    throw new InputError(
      { file, key },
      `CRC-32 mismatch (stored ${hex32(entry.crc32)}, computed ${hex32(crc)}): the file is damaged`,
    );
  }
  return data;
}

const hex32 = (v: number) => v.toString(16).padStart(8, '0');
