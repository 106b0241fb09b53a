// Builders for the peers' motion formats in tests, written byte by byte: a protocol-2 pickle of a
// dict of tensors as torch.save writes it (see the real g1_crouch_to_run.motion's data.pkl: each
// tensor is REDUCE(torch._utils._rebuild_tensor_v2, (persistent storage id, offset, size,
// stride, False, OrderedDict()))), the torch.save ZIP around it, Fortran-order .npy members and
// a 0-d unicode .npy (np.savez of a str, as HoloMotion saves its metadata JSON).
import { readFileSync } from 'node:fs';
import { listNpzMembers } from '../../src/domain/motion/mjlabNpz';
import { readNpyFloatArray } from '../../src/domain/motion/npyArray';
import { readZipEntry } from '../../src/domain/motion/zipArchive';
import { enc, npyBytes, zipBytes, type ZipMember } from './motionTestHelpers';

/** Raw pickle opcodes and arguments, concatenated. */
export class PickleWriter {
  private parts: number[] = [];
  op(...bytes: number[]): this {
    this.parts.push(...bytes);
    return this;
  }
  str(s: string): this {
    const b = enc(s);
    this.op(0x58, b.length & 0xff, (b.length >> 8) & 0xff, (b.length >> 16) & 0xff, b.length >>> 24);
    this.parts.push(...b);
    return this;
  }
  int(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, v, true);
    return this.op(0x4a, ...b);
  }
  float(v: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, false);
    return this.op(0x47, ...b);
  }
  global(module: string, name: string): this {
    this.op(0x63);
    this.parts.push(...enc(`${module}\n${name}\n`));
    return this;
  }
  intTuple(values: readonly number[]): this {
    this.op(0x28);
    for (const v of values) this.int(v);
    return this.op(0x74);
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export interface TensorSpec {
  /** Storage key (member data/<key>). */
  key: string;
  storageType?: 'FloatStorage' | 'DoubleStorage' | 'BoolStorage';
  /** The whole storage, as numbers. */
  storage: ArrayLike<number>;
  offset?: number;
  shape: readonly number[];
  stride: readonly number[];
}

export type PickledValue = number | TensorSpec;

/** Appends the opcodes of one tensor, exactly as torch.save pickles it. */
function writeTensor(w: PickleWriter, t: TensorSpec): void {
  w.global('torch._utils', '_rebuild_tensor_v2');
  w.op(0x28); // MARK (the argument tuple)
  w.op(0x28)
    .str('storage')
    .global('torch', t.storageType ?? 'FloatStorage')
    .str(t.key)
    .str('cpu')
    .int(t.storage.length);
  w.op(0x74, 0x51); // TUPLE, BINPERSID
  w.int(t.offset ?? 0)
    .intTuple(t.shape)
    .intTuple(t.stride);
  w.op(0x89); // NEWFALSE (requires_grad)
  w.global('collections', 'OrderedDict').op(0x29, 0x52); // OrderedDict()
  w.op(0x74, 0x52); // TUPLE, REDUCE
}

/** data.pkl of a dict {key: int | float | tensor}, protocol 2. Integers are written as BININT, others as BINFLOAT. */
export function pickleDict(entries: Record<string, PickledValue>, inject?: (w: PickleWriter) => void): Uint8Array {
  const w = new PickleWriter().op(0x80, 2, 0x7d, 0x28); // PROTO 2, EMPTY_DICT, MARK
  for (const [k, v] of Object.entries(entries)) {
    w.str(k);
    if (typeof v === 'number') {
      if (Number.isInteger(v)) w.int(v);
      else w.float(v);
    } else writeTensor(w, v);
  }
  inject?.(w);
  return w.op(0x75, 0x2e).bytes(); // SETITEMS, STOP
}

/** The bytes of a storage: float32 / float64 little-endian, or one byte per bool. */
export function storageBytes(t: TensorSpec): Uint8Array {
  const type = t.storageType ?? 'FloatStorage';
  const size = type === 'DoubleStorage' ? 8 : type === 'BoolStorage' ? 1 : 4;
  const out = new Uint8Array(t.storage.length * size);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < t.storage.length; i++) {
    if (type === 'DoubleStorage') dv.setFloat64(i * 8, t.storage[i], true);
    else if (type === 'BoolStorage') out[i] = t.storage[i] ? 1 : 0;
    else dv.setFloat32(i * 4, t.storage[i], true);
  }
  return out;
}

/** A torch.save ZIP: <prefix>/data.pkl, byteorder, version and one data/<key> per distinct storage. */
export function torchZipBytes(
  prefix: string,
  pickle: Uint8Array,
  tensors: readonly TensorSpec[],
  extra: ZipMember[] = [],
): Uint8Array {
  const members: ZipMember[] = [
    { name: `${prefix}/data.pkl`, data: pickle },
    { name: `${prefix}/byteorder`, data: enc('little') },
  ];
  const seen = new Set<string>();
  for (const t of tensors) {
    if (seen.has(t.key)) continue;
    seen.add(t.key);
    members.push({ name: `${prefix}/data/${t.key}`, data: storageBytes(t) });
  }
  members.push({ name: `${prefix}/version`, data: enc('3\n') }, ...extra);
  return zipBytes(members);
}

/** A contiguous (C-order) tensor spec of `values` with `shape`. */
export function contiguousTensor(key: string, shape: number[], values: ArrayLike<number>): TensorSpec {
  const stride = shape.map((_, k) => shape.slice(k + 1).reduce((a, d) => a * d, 1));
  return { key, storage: values, shape, stride };
}

/** C-order `values` of `shape` rearranged as Fortran order (first index fastest). */
export function toFortranOrder(shape: readonly number[], values: ArrayLike<number>): number[] {
  const n = values.length;
  const out = new Array<number>(n);
  const cStride = shape.map((_, k) => shape.slice(k + 1).reduce((a, d) => a * d, 1));
  const fStride = shape.map((_, k) => shape.slice(0, k).reduce((a, d) => a * d, 1));
  for (let c = 0; c < n; c++) {
    let f = 0;
    for (let k = 0; k < shape.length; k++) f += (Math.floor(c / cStride[k]) % shape[k]) * fStride[k];
    out[f] = values[c];
  }
  return out;
}

/** A 0-d unicode .npy ('<U n', shape ()), as np.savez saves a Python str. */
export function npyUnicodeScalarBytes(text: string): Uint8Array {
  const cps = [...text].map((ch) => ch.codePointAt(0)!);
  const width = Math.max(1, cps.length);
  let dict = `{'descr': '<U${width}', 'fortran_order': False, 'shape': (), }`;
  dict += ' '.repeat((64 - ((10 + dict.length + 1) % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + dict.length + 4 * width);
  out.set([0x93, ...enc('NUMPY'), 1, 0, dict.length & 0xff, dict.length >> 8]);
  out.set(enc(dict), 10);
  const dv = new DataView(out.buffer, 10 + dict.length);
  cps.forEach((cp, i) => dv.setUint32(i * 4, cp, true));
  return out;
}

/** The float members of a real NPZ file, by key (shape and C-order values). */
export function readRealNpzArrays(file: string): Map<string, { shape: number[]; data: Float64Array }> {
  const bytes = new Uint8Array(readFileSync(file));
  const out = new Map<string, { shape: number[]; data: Float64Array }>();
  for (const [key, entry] of listNpzMembers(bytes, file)) {
    if (key === 'fps') continue;
    const a = readNpyFloatArray(readZipEntry(bytes, entry, file, key), file, key);
    out.set(key, { shape: a.shape, data: a.data });
  }
  return out;
}

/** An .npy member of float32 values (exact for values that came from float32). */
export const f4 = (shape: number[], values: ArrayLike<number>, fortran = false): Uint8Array =>
  npyBytes(shape, fortran ? toFortranOrder(shape, values) : values, { descr: '<f4', fortran });
