// NumPy .npy reader (format versions 1.0, 2.0 and 3.0): magic, header dict (descr,
// fortran_order, shape), then the raw data. Only float32/float64 arrays are converted;
// everything else is rejected with an InputError naming the member (`key`).
//
// Layout: with fortran_order False the data is in C order (last index fastest); with True it is
// in Fortran order (first index fastest: element (i0, …, i_{n-1}) at Σ i_k·(d0·…·d_{k-1})), which
// numpy writes for an array that is Fortran-contiguous, e.g. after a transpose or some fancy
// indexing (numpy/lib/format.py: write_array writes `array.T` when fortran_order). Either way the
// values come back in C order; NpyFloatArray.fortranOrder says which one was stored.

import { InputError } from '../problems';
import { fortranOrderStrides, gatherStrided } from './stridedArray';

export interface NpyHeader {
  descr: string;
  fortranOrder: boolean;
  shape: number[];
  /** Byte offset of the data within the member. */
  dataOffset: number;
  version: string;
}

export interface NpyFloatArray {
  shape: number[];
  /** Values in C order, converted to float64 (transposed from the file when it was Fortran order). */
  data: Float64Array;
  descr: string;
  /** The member was stored in Fortran order (fortran_order True). */
  fortranOrder: boolean;
}

type PyValue = string | number | boolean | null | PyValue[] | { [k: string]: PyValue };

/**
 * Deepest nesting of containers read in a header: numpy writes a dict holding a tuple (depth 2);
 * a structured dtype's descr adds a list of tuples. Deeper headers are refused before the
 * recursive reader below could exhaust the call stack.
 */
export const MAX_NPY_HEADER_DEPTH = 16;
/** Most dimensions an array may have (numpy 2's NPY_MAXDIMS is 64). */
export const MAX_NPY_DIMS = 64;
/** The keys of a .npy header dict: numpy's reader refuses any other, as this one does. */
const NPY_HEADER_KEYS: readonly string[] = ['descr', 'fortran_order', 'shape'];

/**
 * Parses the Python literal subset numpy writes in .npy headers. Dicts come back as objects
 * without a prototype, so a key such as `__proto__` or `constructor` is an own key like any other
 * (and then refused by parseNpyHeader), never an inherited one.
 */
function parsePyLiteral(src: string, fail: (msg: string) => never): PyValue {
  let i = 0;
  const ws = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  const value = (depth: number): PyValue => {
    ws();
    const c = src[i];
    if ((c === '{' || c === '(' || c === '[') && depth >= MAX_NPY_HEADER_DEPTH)
      fail(`containers nest more than ${MAX_NPY_HEADER_DEPTH} deep at header position ${i}`);
    if (c === '{') {
      i++;
      const obj = Object.create(null) as { [k: string]: PyValue };
      for (;;) {
        ws();
        if (src[i] === '}') {
          i++;
          return obj;
        }
        const k = value(depth + 1);
        if (typeof k !== 'string') fail('header dict keys must be strings');
        if (Object.prototype.hasOwnProperty.call(obj, k)) fail(`key '${k}' appears twice`);
        ws();
        if (src[i] !== ':') fail(`expected ':' at header position ${i}`);
        i++;
        obj[k] = value(depth + 1);
        ws();
        if (src[i] === ',') i++;
        else if (src[i] !== '}') fail(`expected ',' or '}' at header position ${i}`);
      }
    }
    if (c === '(' || c === '[') {
      const close = c === '(' ? ')' : ']';
      i++;
      const arr: PyValue[] = [];
      for (;;) {
        ws();
        if (src[i] === close) {
          i++;
          return arr;
        }
        arr.push(value(depth + 1));
        ws();
        if (src[i] === ',') i++;
        else if (src[i] !== close) fail(`expected ',' or '${close}' at header position ${i}`);
      }
    }
    if (c === "'" || c === '"') {
      const end = src.indexOf(c, i + 1);
      if (end < 0) fail('unterminated string in header');
      const s = src.slice(i + 1, end);
      i = end + 1;
      return s;
    }
    const m = /^(True|False|None|[-+]?\d+L?)/.exec(src.slice(i, i + 32));
    if (!m) fail(`unexpected ${c === undefined ? 'end of header' : `'${c}'`} at header position ${i}`);
    i += m[0].length;
    if (m[0] === 'True') return true;
    if (m[0] === 'False') return false;
    if (m[0] === 'None') return null;
    return parseInt(m[0], 10);
  };
  const v = value(0);
  ws();
  if (i !== src.length) fail(`unexpected text after the header dict at position ${i}`);
  return v;
}

/** The .npy magic string. */
const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
/** Longest .npy header dict accepted, bytes. */
export const MAX_NPY_HEADER_BYTES = 1 << 20;

function npyPreamble(
  bytes: Uint8Array,
  bad: (msg: string) => never,
): { major: number; minor: number; start: number; headerLen: number } {
  if (bytes.length < 10) bad(`not a readable .npy array: only ${bytes.length} bytes (truncated?)`);
  for (let i = 0; i < 6; i++) if (bytes[i] !== NPY_MAGIC[i]) bad('not a .npy array: bad magic (expected "\\x93NUMPY")');
  const major = bytes[6];
  const minor = bytes[7];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLen: number;
  let start: number;
  if (major === 1) {
    headerLen = dv.getUint16(8, true);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) bad('truncated .npy header');
    headerLen = dv.getUint32(8, true);
    start = 12;
  } else {
    return bad(`unsupported .npy format version ${major}.${minor} (1.0, 2.0 and 3.0 are read)`);
  }
  if (headerLen > MAX_NPY_HEADER_BYTES) bad(`bad .npy header: header length ${headerLen} is implausible`);
  return { major, minor, start, headerLen };
}

/**
 * How many leading bytes of a member hold its whole .npy header, from its first 12 bytes (or all
 * of a shorter member): read that many, then parseNpyHeader, without touching the data.
 */
export function npyHeaderExtent(head: Uint8Array, file: string, key: string): number {
  const { start, headerLen } = npyPreamble(head.length >= 12 ? head.subarray(0, 12) : head, (msg): never => {
    throw new InputError({ file, key }, msg);
  });
  return start + headerLen;
}

export function parseNpyHeader(bytes: Uint8Array, file: string, key: string): NpyHeader {
  const bad = (msg: string): never => {
    throw new InputError({ file, key }, msg);
  };
  const { major, minor, start, headerLen } = npyPreamble(bytes, bad);
  if (start + headerLen > bytes.length)
    bad(`.npy header (${headerLen} bytes) runs past the end of the member (truncated?)`);
  const headerBytes = bytes.subarray(start, start + headerLen);
  const text =
    major === 3 ? new TextDecoder('utf-8').decode(headerBytes) : new TextDecoder('latin1').decode(headerBytes);
  const dict = parsePyLiteral(text, (msg) => bad(`bad .npy header: ${msg}`));
  if (dict === null || typeof dict !== 'object' || Array.isArray(dict)) return bad('bad .npy header: not a dict');
  const unexpected = Object.keys(dict).filter((k) => !NPY_HEADER_KEYS.includes(k));
  if (unexpected.length > 0)
    bad(
      `bad .npy header: unexpected key${unexpected.length > 1 ? 's' : ''} ${unexpected.map((k) => `'${k.slice(0, 40)}'`).join(', ')} (a header has exactly ${NPY_HEADER_KEYS.join(', ')})`,
    );
  const descr = dict['descr'];
  const fortran = dict['fortran_order'];
  const shape = dict['shape'];
  if (typeof descr !== 'string')
    bad(
      `bad .npy header: descr ${descr === undefined ? 'missing' : `${JSON.stringify(descr)} is not a simple dtype (structured arrays are not supported)`}`,
    );
  if (typeof fortran !== 'boolean') bad('bad .npy header: fortran_order missing or not True/False');
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === 'number' && Number.isInteger(d) && d >= 0)) {
    bad('bad .npy header: shape missing or not a tuple of non-negative integers');
  }
  if ((shape as number[]).length > MAX_NPY_DIMS)
    bad(`bad .npy header: shape has ${(shape as number[]).length} dimensions, more than ${MAX_NPY_DIMS}`);
  return {
    descr: descr as string,
    fortranOrder: fortran as boolean,
    shape: shape as number[],
    dataOffset: start + headerLen,
    version: `${major}.${minor}`,
  };
}

const shapeText = (shape: number[]) => `(${shape.join(', ')})`;

/** Element count of a shape (may exceed 2^53 for hostile headers: then only "too many" matters). */
export const npyElementCount = (shape: number[]): number => shape.reduce((a, d) => a * d, 1);

/**
 * Checks a header describes a float32/float64 array (either byte order, C or Fortran order) and
 * returns its item size and byte order. Errors as readNpyFloatArray reports them.
 */
export function checkNpyFloatHeader(
  h: NpyHeader,
  file: string,
  key: string,
): { itemSize: 4 | 8; littleEndian: boolean } {
  const m = /^([<>=|])f([48])$/.exec(h.descr);
  if (!m || m[1] === '|') {
    throw new InputError(
      { file, key },
      `dtype '${h.descr}' is not supported (expected float32 or float64: <f4, <f8, >f4 or >f8)`,
    );
  }
  return { itemSize: Number(m[2]) as 4 | 8, littleEndian: m[1] !== '>' }; // '=' is the writer's native order: little-endian on every platform numpy ships for
}

/**
 * Checks that `dataBytes` (the bytes after the header: from the ZIP entry's declared size, or the
 * member itself) is exactly what the header's shape and item size need.
 */
export function checkNpyDataSize(h: NpyHeader, itemSize: number, dataBytes: number, file: string, key: string): void {
  const need = npyElementCount(h.shape) * itemSize;
  if (dataBytes < need)
    throw new InputError(
      { file, key },
      `array data is truncated: shape ${shapeText(h.shape)} needs ${need} bytes, the member has ${dataBytes}`,
    );
  if (dataBytes > need)
    throw new InputError(
      { file, key },
      `array data has ${dataBytes - need} unexpected trailing bytes for shape ${shapeText(h.shape)}`,
    );
}

/**
 * Reads a float32/float64 .npy array (either byte order) into a Float64Array in C order; a
 * Fortran-order member is transposed on the way (its element (i0, …, i_{n-1}) is stored at
 * Σ i_k·(d0·…·d_{k-1})). 0-d and 1-d arrays are the same in both orders.
 */
export function readNpyFloatArray(bytes: Uint8Array, file: string, key: string): NpyFloatArray {
  const h = parseNpyHeader(bytes, file, key);
  const { itemSize, littleEndian } = checkNpyFloatHeader(h, file, key);
  const count = npyElementCount(h.shape);
  checkNpyDataSize(h, itemSize, bytes.length - h.dataOffset, file, key);
  const need = count * itemSize;
  const dv = new DataView(bytes.buffer, bytes.byteOffset + h.dataOffset, need);
  let out: Float64Array;
  if (h.fortranOrder && h.shape.length > 1) {
    const read =
      itemSize === 4
        ? (i: number) => dv.getFloat32(i * 4, littleEndian)
        : (i: number) => dv.getFloat64(i * 8, littleEndian);
    out = gatherStrided(h.shape, fortranOrderStrides(h.shape), 0, read);
  } else {
    out = new Float64Array(count);
    if (itemSize === 4) for (let i = 0; i < count; i++) out[i] = dv.getFloat32(i * 4, littleEndian);
    else for (let i = 0; i < count; i++) out[i] = dv.getFloat64(i * 8, littleEndian);
  }
  return { shape: h.shape, data: out, descr: h.descr, fortranOrder: h.fortranOrder };
}

/**
 * Checks a header describes a scalar of a float or integer dtype, shape () or (1,); returns its
 * item size, kind and byte order. Errors as readNpyScalar reports them.
 */
export function checkNpyScalarHeader(
  h: NpyHeader,
  file: string,
  key: string,
): { size: 1 | 2 | 4 | 8; kind: 'f' | 'i' | 'u'; littleEndian: boolean } {
  const bad = (msg: string): never => {
    throw new InputError({ file, key }, msg);
  };
  const m = /^([<>=|])([fiu])([1248])$/.exec(h.descr);
  if (!m || (m[2] === 'f' && m[3] !== '4' && m[3] !== '8')) {
    bad(`dtype '${h.descr}' is not supported for a scalar (expected a float or integer dtype)`);
  }
  if (!(h.shape.length === 0 || (h.shape.length === 1 && h.shape[0] === 1))) {
    bad(`shape (${h.shape.join(', ')}${h.shape.length === 1 ? ',' : ''}) is not a scalar; expected () or (1,)`);
  }
  return { size: Number(m![3]) as 1 | 2 | 4 | 8, kind: m![2] as 'f' | 'i' | 'u', littleEndian: m![1] !== '>' };
}

/**
 * Reads a scalar stored as shape () or (1,), of a float or integer dtype (BeyondMimic's
 * exporter saves `fps=[50]`, an int64 array; G1 Moves saves float64).
 */
export function readNpyScalar(bytes: Uint8Array, file: string, key: string): number {
  const h = parseNpyHeader(bytes, file, key);
  const { size, kind, littleEndian: le } = checkNpyScalarHeader(h, file, key);
  if (bytes.length - h.dataOffset < size) throw new InputError({ file, key }, 'array data is truncated');
  const dv = new DataView(bytes.buffer, bytes.byteOffset + h.dataOffset, size);
  if (kind === 'f') return size === 4 ? dv.getFloat32(0, le) : dv.getFloat64(0, le);
  if (kind === 'i') {
    return size === 1
      ? dv.getInt8(0)
      : size === 2
        ? dv.getInt16(0, le)
        : size === 4
          ? dv.getInt32(0, le)
          : Number(dv.getBigInt64(0, le));
  }
  return size === 1
    ? dv.getUint8(0)
    : size === 2
      ? dv.getUint16(0, le)
      : size === 4
        ? dv.getUint32(0, le)
        : Number(dv.getBigUint64(0, le));
}

/**
 * Reads a 1-D fixed-width unicode .npy array (dtype '<U n' / '>U n': UTF-32 code units, NUL
 * padded) as strings, or returns null when the member holds something else (e.g. a pickled
 * object array, dtype 'O', which cannot be read without running Python).
 */
export function readNpyStringArray(bytes: Uint8Array, file: string, key: string): string[] | null {
  return readNpyUnicode(bytes, file, key, 1);
}

/**
 * Reads a 0-d fixed-width unicode .npy array (dtype '<U n', shape ()) as a string, or returns null
 * when the member holds something else. numpy.savez saves a Python str this way
 * (`np.savez(f, metadata=json.dumps(meta))`, as HoloMotion writes its metadata).
 */
export function readNpyUnicodeScalar(bytes: Uint8Array, file: string, key: string): string | null {
  const s = readNpyUnicode(bytes, file, key, 0);
  return s ? s[0] : null;
}

function readNpyUnicode(bytes: Uint8Array, file: string, key: string, dims: 0 | 1): string[] | null {
  const h = parseNpyHeader(bytes, file, key);
  const m = /^([<>=|])U(\d+)$/.exec(h.descr);
  if (!m || h.shape.length !== dims) return null; // 0-d and 1-d: Fortran order stores the same bytes
  const width = Number(m[2]);
  const count = dims === 0 ? 1 : h.shape[0];
  checkNpyDataSize(h, 4 * width, bytes.length - h.dataOffset, file, key);
  const dv = new DataView(bytes.buffer, bytes.byteOffset + h.dataOffset, 4 * width * count);
  const little = m[1] !== '>';
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let s = '';
    for (let c = 0; c < width; c++) {
      const cp = dv.getUint32((i * width + c) * 4, little);
      if (cp === 0) break;
      if (cp > 0x10ffff) throw new InputError({ file, key }, `element ${i} holds an invalid code point ${cp}`);
      s += String.fromCodePoint(cp);
    }
    out.push(s);
  }
  return out;
}
