// A joblib.dump / pickle.dump file of numpy arrays read without Python, through the restricted
// unpickler of torchArchive.ts with a profile of its own: only numpy arrays and plain containers
// come out, nothing is ever called but the checked data constructors below.
//
// Two array layouts are read (joblib/joblib @ 1.4, joblib/numpy_pickle.py):
//   - joblib's: NEWOBJ(joblib.numpy_pickle.NumpyArrayWrapper, ()) then BUILD with the state dict
//     {subclass: numpy.ndarray, shape, order 'C'|'F', dtype, allow_mmap, numpy_array_alignment_bytes};
//     the array's raw bytes follow the BUILD opcode in the stream, outside the pickle's frames
//     (NumpyArrayWrapper.write_array / read_array): when numpy_array_alignment_bytes is present,
//     one byte n then n padding bytes come first. Count = product of shape; order 'F' stores the
//     transposed array (read back as C order here).
//   - numpy's own reduce: REDUCE(numpy.core.multiarray._reconstruct, (numpy.ndarray, (0,), b'b'))
//     then BUILD with (version, shape, dtype, is_fortran, raw bytes) (numpy ndarray.__reduce__ /
//     __setstate__), the raw bytes a BINBYTES string.
// A dtype is REDUCE(numpy.dtype, (code, False, True)) then BUILD with its state tuple
// (version, byte order, subarray, names, fields, elsize, alignment, flags); only plain numeric
// and bool codes in little-endian or no byte order are read (no structured, object or
// big-endian arrays: an object array would pickle arbitrary objects).
// numpy scalars (numpy.core.multiarray.scalar(dtype, bytes)) are read as numbers.
//
// Any other global (os.system, builtins.eval, …) is refused AT THE OPCODE that names it, with the
// byte offset and the global's name. Sizes: an array's byte count comes from its declared shape
// and dtype and must fit in the bytes that remain in the file before anything is read or
// allocated (the array is a view of the file's bytes; values are converted only when read), each
// dimension a safe non-negative integer, at most MAX_NUMPY_DIMS dimensions.

import {
  PickleBytes,
  PickleDict,
  PickleExtension,
  PickleGlobal,
  PickleTuple,
  restrictedUnpickle,
  type PickleProfile,
  type PickleStream,
  type PickleValue,
} from './torchArchive';

/** Most dimensions a numpy array may have (numpy's own NPY_MAXDIMS is 32 or 64). */
export const MAX_NUMPY_DIMS = 32;

const ARRAY_WRAPPER = 'joblib.numpy_pickle.NumpyArrayWrapper';
const NDARRAY = 'numpy.ndarray';
const DTYPE = 'numpy.dtype';
const RECONSTRUCT = ['numpy.core.multiarray._reconstruct', 'numpy._core.multiarray._reconstruct'];
const SCALAR = ['numpy.core.multiarray.scalar', 'numpy._core.multiarray.scalar'];

/** Every global the joblib profile accepts, for the refusal message. */
export const JOBLIB_PICKLE_GLOBALS: readonly string[] = [ARRAY_WRAPPER, NDARRAY, DTYPE, ...RECONSTRUCT, ...SCALAR];

/** Numeric and bool dtype codes read, with their item size. */
const DTYPES: Record<string, number> = {
  f2: 2,
  f4: 4,
  f8: 8,
  i1: 1,
  i2: 2,
  i4: 4,
  i8: 8,
  u1: 1,
  u2: 2,
  u4: 4,
  u8: 8,
  b1: 1,
};

/** A numpy dtype named by the pickle (a code like 'f4'; byte order '<' or '|'). */
export class NumpyDtype extends PickleExtension {
  byteOrder = '|';
  constructor(
    readonly code: string,
    readonly itemSize: number,
  ) {
    super();
  }
}

/** A numpy array: its declared shape and dtype and a view of its bytes in the file, C order. */
export class NumpyArray extends PickleExtension {
  constructor(
    readonly dtype: NumpyDtype,
    readonly shape: readonly number[],
    readonly data: Uint8Array,
    /** 'F' when the bytes hold the transposed array (joblib's order 'F'). */
    readonly order: 'C' | 'F',
  ) {
    super();
  }
  get count(): number {
    return this.shape.reduce((a, d) => a * d, 1);
  }
  /** The values as float64 in C order. */
  toFloat64(): Float64Array {
    const n = this.count;
    const dv = new DataView(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    const out = new Float64Array(n);
    const code = this.dtype.code;
    const s = this.dtype.itemSize;
    const get = (i: number): number => {
      const o = i * s;
      switch (code) {
        case 'f2':
          return f16(dv.getUint16(o, true));
        case 'f4':
          return dv.getFloat32(o, true);
        case 'f8':
          return dv.getFloat64(o, true);
        case 'i1':
          return dv.getInt8(o);
        case 'i2':
          return dv.getInt16(o, true);
        case 'i4':
          return dv.getInt32(o, true);
        case 'i8':
          return Number(dv.getBigInt64(o, true));
        case 'u1':
        case 'b1':
          return dv.getUint8(o);
        case 'u2':
          return dv.getUint16(o, true);
        case 'u4':
          return dv.getUint32(o, true);
        default:
          return Number(dv.getBigUint64(o, true));
      }
    };
    if (this.order === 'C' || this.shape.length < 2) for (let i = 0; i < n; i++) out[i] = get(i);
    else {
      // stored as the transpose: element (i0, …, ik) at the Fortran-order offset
      const shape = this.shape;
      const idx = new Array<number>(shape.length).fill(0);
      for (let i = 0; i < n; i++) {
        let f = 0;
        let stride = 1;
        for (let d = 0; d < shape.length; d++) {
          f += idx[d] * stride;
          stride *= shape[d];
        }
        out[i] = get(f);
        for (let d = shape.length - 1; d >= 0; d--) {
          if (++idx[d] < shape[d]) break;
          idx[d] = 0;
        }
      }
    }
    return out;
  }
}

function f16(h: number): number {
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  const sign = h & 0x8000 ? -1 : 1;
  if (e === 0) return sign * 2 ** -14 * (m / 1024);
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * 2 ** (e - 15) * (1 + m / 1024);
}

/** The placeholder NEWOBJ makes for joblib's wrapper, replaced by its array at BUILD. */
class ArrayWrapperPending extends PickleExtension {}
/** The placeholder numpy's _reconstruct makes, replaced by its array at BUILD. */
class ReconstructPending extends PickleExtension {}

const shapeOf = (v: PickleValue, bad: (msg: string) => never): number[] => {
  if (!(v instanceof PickleTuple)) return bad('an array shape that is not a tuple');
  if (v.items.length > MAX_NUMPY_DIMS)
    return bad(`an array with ${v.items.length} dimensions, more than ${MAX_NUMPY_DIMS}`);
  return v.items.map((d) =>
    typeof d === 'number' && Number.isSafeInteger(d) && d >= 0
      ? d
      : bad('an array shape whose dimensions are not non-negative integers'),
  );
};

/**
 * The array's bytes from the stream, sized from its declared shape and dtype and checked against
 * the bytes left in the file before they are taken.
 */
function takeArray(
  shape: readonly number[],
  dtype: NumpyDtype,
  stream: PickleStream,
  bad: (msg: string) => never,
): Uint8Array {
  let count = 1;
  for (const d of shape) {
    count *= d;
    if (!Number.isSafeInteger(count * dtype.itemSize))
      bad(`an array of shape (${shape.join(', ')}) declares more elements than can be addressed`);
  }
  const n = count * dtype.itemSize;
  if (n > stream.remaining())
    bad(
      `an array of shape (${shape.join(', ')}) and dtype ${dtype.code} declares ${n} bytes, but the file has ${stream.remaining()} left; refused before reading`,
    );
  return stream.take(n);
}

function dtypeOf(v: PickleValue, bad: (msg: string) => never): NumpyDtype {
  if (!(v instanceof NumpyDtype)) return bad('an array whose dtype is not a numpy.dtype');
  if (v.byteOrder !== '<' && v.byteOrder !== '|' && v.byteOrder !== '=')
    return bad(`an array of byte order '${v.byteOrder}': only little-endian arrays are read`);
  return v;
}

export const JOBLIB_PICKLE_PROFILE: PickleProfile = {
  allowedGlobals: JOBLIB_PICKLE_GLOBALS,
  what: 'only numpy arrays and plain containers are read',
  bytes: true,
  reduce(fn, args, bad) {
    if (!(fn instanceof PickleGlobal)) return bad('REDUCE of something that is not a global');
    if (!(args instanceof PickleTuple)) return bad(`REDUCE of ${fn.qualified} without an argument tuple`);
    const a = args.items;
    if (fn.qualified === DTYPE) {
      const code = a[0];
      if (typeof code !== 'string' || !(code in DTYPES))
        return bad(
          `numpy.dtype(${typeof code === 'string' ? code : '…'}): only the numeric and bool dtypes ${Object.keys(DTYPES).join(', ')} are read`,
        );
      return new NumpyDtype(code, DTYPES[code]);
    }
    if (RECONSTRUCT.includes(fn.qualified)) {
      const cls = a[0];
      if (!(cls instanceof PickleGlobal) || cls.qualified !== NDARRAY)
        return bad(`${fn.qualified} of something that is not numpy.ndarray`);
      return new ReconstructPending();
    }
    if (SCALAR.includes(fn.qualified)) {
      const dtype = dtypeOf(a[0], bad);
      const raw = a[1];
      if (!(raw instanceof PickleBytes) || raw.bytes.length !== dtype.itemSize)
        return bad(`${fn.qualified}: the value is not ${dtype.itemSize} bytes`);
      return new NumpyArray(dtype, [], raw.bytes, 'C').toFloat64()[0];
    }
    return bad(`REDUCE calls ${fn.qualified}, which is not a constructor the reader allows`);
  },
  newObj(cls, args, bad) {
    if (!(cls instanceof PickleGlobal) || cls.qualified !== ARRAY_WRAPPER)
      return bad(`NEWOBJ of ${cls instanceof PickleGlobal ? cls.qualified : 'something that is not a global'}`);
    if (!(args instanceof PickleTuple) || args.items.length !== 0)
      return bad(`${ARRAY_WRAPPER} is called with arguments`);
    return new ArrayWrapperPending();
  },
  build(obj, state, stream, bad) {
    if (obj instanceof NumpyDtype) {
      const s = state instanceof PickleTuple ? state.items : null;
      if (!s || s.length !== 8 || typeof s[1] !== 'string')
        return bad('a numpy.dtype state that is not (version, byte order, subarray, names, fields, …)');
      if (s[2] !== null || s[3] !== null || s[4] !== null) return bad('a structured or sub-array dtype');
      obj.byteOrder = s[1];
      return obj;
    }
    if (obj instanceof ArrayWrapperPending) {
      if (!(state instanceof PickleDict)) return bad(`${ARRAY_WRAPPER}'s state is not a dict`);
      const e = state.entries;
      const sub = e.get('subclass');
      if (!(sub instanceof PickleGlobal) || sub.qualified !== NDARRAY)
        return bad(`${ARRAY_WRAPPER} of a subclass other than numpy.ndarray`);
      const order = e.get('order');
      if (order !== 'C' && order !== 'F') return bad(`${ARRAY_WRAPPER} with order ${String(order)}`);
      const shape = shapeOf(e.get('shape') ?? null, bad);
      const dtype = dtypeOf(e.get('dtype') ?? null, bad);
      const align = e.get('numpy_array_alignment_bytes');
      if (align !== undefined && align !== null) {
        // joblib writes one byte n, then n padding bytes, before an aligned array
        const pad = stream.take(1)[0];
        stream.take(pad);
      }
      return new NumpyArray(dtype, shape, takeArray(shape, dtype, stream, bad), order as 'C' | 'F');
    }
    if (obj instanceof ReconstructPending) {
      const s = state instanceof PickleTuple ? state.items : null;
      if (!s || s.length !== 5) return bad('a numpy array state that is not (version, shape, dtype, is_fortran, data)');
      const shape = shapeOf(s[1], bad);
      const dtype = dtypeOf(s[2], bad);
      if (typeof s[3] !== 'boolean') return bad('a numpy array state whose is_fortran is not a bool');
      const raw = s[4];
      if (!(raw instanceof PickleBytes)) return bad('a numpy array whose data is not a byte string');
      const want = shape.reduce((a, d) => a * d, 1) * dtype.itemSize;
      if (raw.bytes.length !== want)
        return bad(
          `a numpy array of shape (${shape.join(', ')}) and dtype ${dtype.code} holds ${raw.bytes.length} bytes, not ${want}`,
        );
      return new NumpyArray(dtype, shape, raw.bytes, s[3] ? 'F' : 'C');
    }
    return bad('BUILD of something that is not a numpy array or dtype');
  },
};

/**
 * Unpickles a joblib/numpy pickle with JOBLIB_PICKLE_PROFILE. Errors are InputErrors at
 * `{file, key: 'pickle'}` naming the byte offset; the file's size is bounded by its reader (the
 * clip limit).
 */
export function readJoblibPickle(bytes: Uint8Array, file: string): PickleValue {
  return restrictedUnpickle(bytes, file, 'pickle', JOBLIB_PICKLE_PROFILE);
}

/** True when the bytes start as a pickle (PROTO opcode, protocol 2–5). */
export function isPickleMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x80 && bytes[1] >= 2 && bytes[1] <= 5;
}
