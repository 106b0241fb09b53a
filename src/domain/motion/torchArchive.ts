// A torch.save archive read without Python, through a RESTRICTED unpickler: only tensors and
// plain containers come out, nothing is ever called but the two constructors below.
//
// Layout (torch/serialization.py, `_save` with the zip format, the default since torch 1.6):
// a ZIP whose members all sit in one folder `<archive>/`:
//   <archive>/data.pkl      the pickled object (protocol 2); tensors are pickled as
//                           REDUCE(torch._utils._rebuild_tensor_v2, (storage, offset, size,
//                           stride, requires_grad, backward_hooks[, metadata])), the storage as a
//                           persistent id ('storage', torch.<Type>Storage, key, location, numel)
//   <archive>/data/<key>    the raw bytes of each storage (numel × item size)
//   <archive>/byteorder     "little" or "big" (absent in old files: little)
//   <archive>/version, <archive>/.data/serialization_id (not read)
//
// The unpickler understands the opcodes of dicts, lists, tuples, strings, ints, floats, bools and
// None, the memo, marks, persistent ids and REDUCE. GLOBAL / STACK_GLOBAL may name only:
//   torch._utils._rebuild_tensor_v2 (called by REDUCE → a TorchTensor, nothing else runs),
//   collections.OrderedDict (called with no arguments → an empty dict: torch pickles each
//     tensor's backward_hooks so),
//   torch.<Type>Storage (only as the type inside a persistent id).
// Any other global (os.system, builtins.eval, …) is refused AT THE OPCODE that names it, with an
// error naming the global; so is any other opcode (BUILD, NEWOBJ, INST, OBJ, EXT*, bytes, …).
// Nothing from the file is executed or looked up: a "callable" is only a tag checked by name.
// Those rules are the torch profile (TORCH_PICKLE_PROFILE); restrictedUnpickle takes another
// PickleProfile for another file format (joblibPickle.ts: numpy arrays), which names its own
// globals and the checked data constructors its REDUCE, NEWOBJ and BUILD may run.
//
// Bounds, all checked as the opcodes run, so a refusal costs at most the bounds' worth of work:
//   - data.pkl is at most MAX_PICKLE_BYTES (from the ZIP entry's declared size, before inflation);
//   - at most MAX_PICKLE_VALUES values are made (every opcode that pushes one counts, a memo read
//     included), so neither the stack nor the containers can grow past that however the pickle
//     repeats EMPTY_DICT, NONE or BINGET; at most MAX_PICKLE_MEMO_ENTRIES memo entries and
//     MAX_PICKLE_MARK_DEPTH open MARKs (a motion dict's pickle has a few hundred values and three
//     nested MARKs);
//   - the reader is a loop over the opcodes with an explicit stack: nothing recurses, and nothing
//     spreads a container into arguments, so neither deep nesting nor a long APPENDS can overflow
//     the call stack. The object it returns may still nest deeply; its readers only look one level
//     down (the root dict's entries).
// Tensors: before a tensor's values are read, its layout is checked against its storage from the
// declared sizes alone (checkTensors): it must lie inside the storage and address every element
// at most once (stridedArray.ts stridedOverlapProblem: a stride 0, as `expand` makes, is refused,
// so a frame count is backed by one stored value per entry), the storage member must declare
// exactly numel × item size bytes, and the storages read together must fit MAX_INPUT_BYTES.

import { InputError } from '../problems';
import { MAX_INPUT_BYTES } from './clipCommon';
import { gatherStrided, stridedExtent, stridedOverlapProblem } from './stridedArray';
import { readZipDirectory, readZipEntry, type ZipEntry } from './zipArchive';

/** Largest data.pkl read: a motion dict's pickle is under a kilobyte. */
export const MAX_PICKLE_BYTES = 16 * 1024 * 1024;
/** Most values one pickle may make (a motion dict of tensors makes a few hundred). */
export const MAX_PICKLE_VALUES = 100_000;
/** Most memo entries one pickle may store. */
export const MAX_PICKLE_MEMO_ENTRIES = 100_000;
/** Most dimensions a tensor may have (torch's own limit is 64). */
export const MAX_TENSOR_DIMS = 64;
/** Most MARKs open at once (torch.save nests three: the dict's items, a tensor's arguments, its storage id). */
export const MAX_PICKLE_MARK_DEPTH = 64;

/** torch.<Type>Storage names allowed in persistent ids, with their element type. */
const STORAGE_TYPES = {
  DoubleStorage: { dtype: 'float64', itemSize: 8 },
  FloatStorage: { dtype: 'float32', itemSize: 4 },
  HalfStorage: { dtype: 'float16', itemSize: 2 },
  BFloat16Storage: { dtype: 'bfloat16', itemSize: 2 },
  LongStorage: { dtype: 'int64', itemSize: 8 },
  IntStorage: { dtype: 'int32', itemSize: 4 },
  ShortStorage: { dtype: 'int16', itemSize: 2 },
  CharStorage: { dtype: 'int8', itemSize: 1 },
  ByteStorage: { dtype: 'uint8', itemSize: 1 },
  BoolStorage: { dtype: 'bool', itemSize: 1 },
} as const;
type StorageTypeName = keyof typeof STORAGE_TYPES;
export type TorchDtype = (typeof STORAGE_TYPES)[StorageTypeName]['dtype'];

const REBUILD_TENSOR = 'torch._utils._rebuild_tensor_v2';
const ORDERED_DICT = 'collections.OrderedDict';
/** Every global the unpickler accepts, for the refusal message. */
export const ALLOWED_PICKLE_GLOBALS: readonly string[] = [
  REBUILD_TENSOR,
  ORDERED_DICT,
  ...Object.keys(STORAGE_TYPES).map((n) => `torch.${n}`),
];

/** A tuple from the pickle (kept apart from lists only so the reader can say which it saw). */
export class PickleTuple {
  constructor(readonly items: readonly PickleValue[]) {}
}
/** A dict (or OrderedDict) from the pickle; keys must be strings or integers. */
export class PickleDict {
  readonly entries = new Map<string | number, PickleValue>();
}
/**
 * A value made by a reader profile's own constructors (a joblib/numpy array, a numpy dtype):
 * never code, only data the profile checked.
 */
export abstract class PickleExtension {}
/** A byte string from the pickle (a view of the file's bytes). */
export class PickleBytes extends PickleExtension {
  constructor(readonly bytes: Uint8Array) {
    super();
  }
}
/** An allowed global, named by the pickle: only a tag, never resolved to code. */
export class PickleGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualified(): string {
    return `${this.module}.${this.name}`;
  }
}
/** A storage named by a persistent id: its bytes are the archive member data/<key>. */
export interface TorchStorageRef {
  kind: 'storage';
  dtype: TorchDtype;
  itemSize: number;
  key: string;
  location: string;
  numel: number;
}
/** A tensor: a strided view (element offset, shape, element strides) into a storage. */
export class TorchTensor {
  constructor(
    readonly storage: TorchStorageRef,
    readonly offset: number,
    readonly shape: readonly number[],
    readonly stride: readonly number[],
  ) {}
}
export type PickleValue =
  | PickleExtension
  | null
  | boolean
  | number
  | string
  | PickleValue[]
  | PickleTuple
  | PickleDict
  | PickleGlobal
  | TorchStorageRef
  | TorchTensor;

/** The unpickler's byte stream, for a profile whose BUILD reads raw bytes that follow it (joblib). */
export interface PickleStream {
  /** Bytes not yet read. */
  remaining(): number;
  /** The next `n` bytes (a view, not a copy); refused when fewer remain. */
  take(n: number): Uint8Array;
  /** Offset of the next byte. */
  position(): number;
}

/**
 * What one file format's pickles may hold beyond plain containers: the globals they may name,
 * the constructors REDUCE, NEWOBJ and BUILD may run (each a checked data constructor of the
 * reader's own, never a lookup), and whether byte strings may appear. `what` ends each refusal.
 */
export interface PickleProfile {
  allowedGlobals: readonly string[];
  what: string;
  reduce(fn: PickleValue, args: PickleValue, bad: (msg: string) => never): PickleValue;
  persistentId?(pid: PickleValue, bad: (msg: string) => never): PickleValue;
  newObj?(cls: PickleValue, args: PickleValue, bad: (msg: string) => never): PickleValue;
  build?(obj: PickleValue, state: PickleValue, stream: PickleStream, bad: (msg: string) => never): PickleValue;
  bytes?: boolean;
}

const isStorageRef = (v: PickleValue): v is TorchStorageRef =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (v as TorchStorageRef).kind === 'storage';

/** The opcodes of pickle protocols 0–5, by byte, for error messages. */
const OPCODE_NAMES: Record<number, string> = {
  0x28: 'MARK',
  0x2e: 'STOP',
  0x30: 'POP',
  0x31: 'POP_MARK',
  0x32: 'DUP',
  0x46: 'FLOAT',
  0x49: 'INT',
  0x4a: 'BININT',
  0x4b: 'BININT1',
  0x4c: 'LONG',
  0x4d: 'BININT2',
  0x4e: 'NONE',
  0x50: 'PERSID',
  0x51: 'BINPERSID',
  0x52: 'REDUCE',
  0x53: 'STRING',
  0x54: 'BINSTRING',
  0x55: 'SHORT_BINSTRING',
  0x56: 'UNICODE',
  0x58: 'BINUNICODE',
  0x61: 'APPEND',
  0x62: 'BUILD',
  0x63: 'GLOBAL',
  0x64: 'DICT',
  0x7d: 'EMPTY_DICT',
  0x65: 'APPENDS',
  0x67: 'GET',
  0x68: 'BINGET',
  0x69: 'INST',
  0x6a: 'LONG_BINGET',
  0x6c: 'LIST',
  0x5d: 'EMPTY_LIST',
  0x6f: 'OBJ',
  0x70: 'PUT',
  0x71: 'BINPUT',
  0x72: 'LONG_BINPUT',
  0x73: 'SETITEM',
  0x74: 'TUPLE',
  0x29: 'EMPTY_TUPLE',
  0x75: 'SETITEMS',
  0x47: 'BINFLOAT',
  0x80: 'PROTO',
  0x81: 'NEWOBJ',
  0x82: 'EXT1',
  0x83: 'EXT2',
  0x84: 'EXT4',
  0x85: 'TUPLE1',
  0x86: 'TUPLE2',
  0x87: 'TUPLE3',
  0x88: 'NEWTRUE',
  0x89: 'NEWFALSE',
  0x8a: 'LONG1',
  0x8b: 'LONG4',
  0x42: 'BINBYTES',
  0x43: 'SHORT_BINBYTES',
  0x8c: 'SHORT_BINUNICODE',
  0x8d: 'BINUNICODE8',
  0x8e: 'BINBYTES8',
  0x8f: 'EMPTY_SET',
  0x90: 'ADDITEMS',
  0x91: 'FROZENSET',
  0x92: 'NEWOBJ_EX',
  0x93: 'STACK_GLOBAL',
  0x94: 'MEMOIZE',
  0x95: 'FRAME',
  0x96: 'BYTEARRAY8',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
};

/**
 * Unpickles `bytes` with the restrictions above. Errors are InputErrors at `{file, key}` naming
 * the opcode position, e.g. "the pickle names the global os.system (at byte 2), which is not
 * allowed: only tensors and plain containers are read".
 */
export function restrictedUnpickle(
  bytes: Uint8Array,
  file: string,
  key: string,
  profile: PickleProfile = TORCH_PICKLE_PROFILE,
): PickleValue {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: PickleValue[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PickleValue>();
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let p = 0;
  let at = 0; // position of the opcode being run, for messages
  let values = 0;
  const bad = (msg: string): never => {
    throw new InputError({ file, key }, `${msg} (at byte ${at} of the pickle)`);
  };
  const push = (v: PickleValue) => {
    if (++values > MAX_PICKLE_VALUES)
      bad(`the pickle makes more than ${MAX_PICKLE_VALUES} values; a motion file's pickle makes a few hundred`);
    stack.push(v);
  };
  const memoize = (i: number, v: PickleValue) => {
    if (!memo.has(i) && memo.size >= MAX_PICKLE_MEMO_ENTRIES)
      bad(`the pickle stores more than ${MAX_PICKLE_MEMO_ENTRIES} memo entries`);
    memo.set(i, v);
  };
  const need = (n: number) => {
    if (p + n > bytes.length) bad('the pickle is truncated');
  };
  const u8 = (): number => {
    need(1);
    return bytes[p++];
  };
  const u32 = () => {
    need(4);
    const v = dv.getUint32(p, true);
    p += 4;
    return v;
  };
  const u64 = () => {
    need(8);
    const lo = dv.getUint32(p, true);
    const hi = dv.getUint32(p + 4, true);
    p += 8;
    if (hi >= 0x200000) bad('a length in the pickle is implausibly large');
    return hi * 0x100000000 + lo;
  };
  const text = (n: number): string => {
    need(n);
    let s: string;
    try {
      s = utf8.decode(bytes.subarray(p, p + n));
    } catch {
      return bad('a string in the pickle is not valid UTF-8');
    }
    p += n;
    return s;
  };
  const line = (): string => {
    const end = bytes.indexOf(0x0a, p);
    if (end < 0) bad('the pickle is truncated (GLOBAL without its newline)');
    const s = text(end - p);
    p = end + 1;
    return s;
  };
  // As in Python's unpickler, a MARK starts a fresh stack: nothing below it can be popped or read.
  const floor = () => (marks.length > 0 ? marks[marks.length - 1] : 0);
  const pop = (): PickleValue => {
    if (stack.length <= floor()) bad('the pickle pops an empty stack');
    return stack.pop() as PickleValue;
  };
  const top = (): PickleValue => {
    if (stack.length <= floor()) bad('the pickle reads an empty stack');
    return stack[stack.length - 1];
  };
  const popMark = (): PickleValue[] => {
    const m = marks.pop();
    if (m === undefined) return bad('the pickle closes a MARK it never opened');
    return stack.splice(m);
  };
  const namedGlobal = (mod: string, name: string): PickleGlobal => {
    const g = new PickleGlobal(mod, name);
    if (!profile.allowedGlobals.includes(g.qualified))
      bad(
        `the pickle names the global ${g.qualified}, which is not allowed: ${profile.what} (allowed globals: ${profile.allowedGlobals.join(', ')})`,
      );
    return g;
  };
  const dictKey = (k: PickleValue): string | number => {
    if (typeof k === 'string' || typeof k === 'number') return k;
    return bad('a dict key in the pickle is not a string or an integer');
  };
  const setItems = (d: PickleValue, items: PickleValue[]) => {
    if (!(d instanceof PickleDict)) bad('SETITEM(S) on something that is not a dict');
    if (items.length % 2 !== 0) bad('SETITEMS with an odd number of items');
    for (let i = 0; i < items.length; i += 2) (d as PickleDict).entries.set(dictKey(items[i]), items[i + 1]);
  };
  const int = (v: number): number => {
    if (!Number.isSafeInteger(v)) bad('an integer in the pickle is beyond 2^53');
    return v;
  };

  const refuseOpcode = (op: number): never =>
    bad(
      `the pickle uses opcode ${OPCODE_NAMES[op] ?? `0x${op.toString(16).padStart(2, '0')}`}, which is not allowed: ${profile.what}`,
    );
  const stream: PickleStream = {
    remaining: () => bytes.length - p,
    take(n) {
      need(n);
      p += n;
      return bytes.subarray(p - n, p);
    },
    position: () => p,
  };

  for (;;) {
    at = p;
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) bad('pickle protocol above 5');
        break;
      case 0x95: // FRAME (length of the next frame: informational)
        u64();
        break;
      case 0x2e: // STOP
        if (stack.length !== 1 || marks.length !== 0) bad('the pickle ends with an unbalanced stack');
        return stack[0];
      case 0x28: // MARK
        if (marks.length >= MAX_PICKLE_MARK_DEPTH)
          bad(`the pickle opens more than ${MAX_PICKLE_MARK_DEPTH} nested MARKs`);
        marks.push(stack.length);
        break;
      case 0x29: // EMPTY_TUPLE
        push(new PickleTuple([]));
        break;
      case 0x5d: // EMPTY_LIST
        push([]);
        break;
      case 0x7d: // EMPTY_DICT
        push(new PickleDict());
        break;
      case 0x4e: // NONE
        push(null);
        break;
      case 0x88: // NEWTRUE
        push(true);
        break;
      case 0x89: // NEWFALSE
        push(false);
        break;
      case 0x4b: // BININT1
        push(u8());
        break;
      case 0x4d: // BININT2
        need(2);
        push(dv.getUint16(p, true));
        p += 2;
        break;
      case 0x4a: // BININT
        need(4);
        push(dv.getInt32(p, true));
        p += 4;
        break;
      case 0x8a: {
        // LONG1: n bytes, little-endian two's complement
        const n = u8();
        need(n);
        if (n > 7) bad('an integer in the pickle is beyond 2^53');
        let v = 0;
        for (let i = n - 1; i >= 0; i--) v = v * 256 + bytes[p + i];
        if (n > 0 && bytes[p + n - 1] & 0x80) v -= 2 ** (8 * n);
        p += n;
        push(int(v));
        break;
      }
      case 0x47: // BINFLOAT (big-endian double)
        need(8);
        push(dv.getFloat64(p, false));
        p += 8;
        break;
      case 0x58: // BINUNICODE
        push(text(u32()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        push(text(u8()));
        break;
      case 0x8d: // BINUNICODE8
        push(text(u64()));
        break;
      case 0x71: // BINPUT
        memoize(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memoize(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memoize(memo.size, top());
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const i = op === 0x68 ? u8() : u32();
        if (!memo.has(i)) bad(`the pickle reads memo ${i}, never stored`);
        push(memo.get(i) as PickleValue);
        break;
      }
      case 0x74: // TUPLE
        push(new PickleTuple(popMark()));
        break;
      case 0x85: // TUPLE1
        push(new PickleTuple([pop()]));
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        push(new PickleTuple([pop(), b]));
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        push(new PickleTuple([pop(), b, c]));
        break;
      }
      case 0x6c: // LIST
        push(popMark());
        break;
      case 0x61: {
        // APPEND
        const v = pop();
        const l = top();
        if (!Array.isArray(l)) bad('APPEND to something that is not a list');
        (l as PickleValue[]).push(v);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        const l = top();
        if (!Array.isArray(l)) bad('APPENDS to something that is not a list');
        for (const item of items) (l as PickleValue[]).push(item); // no spread: items may be many
        break;
      }
      case 0x64: {
        // DICT
        const d = new PickleDict();
        setItems(d, popMark());
        push(d);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        setItems(top(), items);
        break;
      }
      case 0x63: {
        // GLOBAL "module\nname\n"
        const mod = line();
        push(namedGlobal(mod, line()));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const mod = pop();
        if (typeof mod !== 'string' || typeof name !== 'string') bad('STACK_GLOBAL without two strings');
        push(namedGlobal(mod as string, name as string));
        break;
      }
      case 0x51: {
        // BINPERSID: ('storage', torch.<Type>Storage, key, location, numel)
        if (!profile.persistentId) refuseOpcode(op);
        push(profile.persistentId!(pop(), bad));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        push(profile.reduce(fn, args, bad));
        break;
      }
      case 0x81: {
        // NEWOBJ: cls.__new__(cls, *args), only through the profile's constructor
        if (!profile.newObj) refuseOpcode(op);
        const args = pop();
        const cls = pop();
        push(profile.newObj!(cls, args, bad));
        break;
      }
      case 0x62: {
        // BUILD: obj.__setstate__(state), only through the profile's constructor
        if (!profile.build) refuseOpcode(op);
        const state = pop();
        const obj = pop();
        push(profile.build!(obj, state, stream, bad));
        break;
      }
      case 0x42: // BINBYTES
      case 0x43: // SHORT_BINBYTES
      case 0x8e: {
        // BINBYTES8: kept as a view of the file's bytes
        if (!profile.bytes) refuseOpcode(op);
        const n = op === 0x43 ? u8() : op === 0x42 ? u32() : u64();
        push(new PickleBytes(stream.take(n)));
        break;
      }
      default:
        refuseOpcode(op);
    }
  }
}

function storageRef(pid: PickleValue, bad: (msg: string) => never): TorchStorageRef {
  const items = pid instanceof PickleTuple ? pid.items : null;
  if (!items || items.length !== 5 || items[0] !== 'storage')
    return bad("a persistent id that is not ('storage', type, key, location, numel)");
  const [, type, key, location, numel] = items;
  if (!(type instanceof PickleGlobal) || type.module !== 'torch' || !(type.name in STORAGE_TYPES))
    return bad('a persistent id whose storage type is not a torch.<Type>Storage');
  if (typeof key !== 'string' || !/^[0-9A-Za-z_]+$/.test(key)) return bad('a storage key that is not a plain name');
  if (typeof location !== 'string') return bad('a storage location that is not a string');
  if (typeof numel !== 'number' || !Number.isSafeInteger(numel) || numel < 0)
    return bad('a storage size that is not a non-negative integer');
  const t = STORAGE_TYPES[type.name as StorageTypeName];
  return { kind: 'storage', dtype: t.dtype, itemSize: t.itemSize, key, location, numel };
}

const intTuple = (v: PickleValue): number[] | null =>
  v instanceof PickleTuple && v.items.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)
    ? (v.items as number[])
    : null;

function reduce(fn: PickleValue, args: PickleValue, bad: (msg: string) => never): PickleValue {
  if (!(fn instanceof PickleGlobal)) return bad('REDUCE of something that is not a global');
  if (!(args instanceof PickleTuple)) return bad(`REDUCE of ${fn.qualified} without an argument tuple`);
  if (fn.qualified === ORDERED_DICT) {
    if (args.items.length !== 0) return bad('collections.OrderedDict is called with arguments');
    return new PickleDict();
  }
  if (fn.qualified === REBUILD_TENSOR) {
    const a = args.items;
    if (a.length !== 6 && a.length !== 7)
      return bad(`${REBUILD_TENSOR} is called with ${a.length} arguments (6 or 7 expected)`);
    const [storage, offset, size, stride, requiresGrad, hooks] = a;
    if (!isStorageRef(storage)) return bad(`${REBUILD_TENSOR}: the first argument is not a storage`);
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
      return bad(`${REBUILD_TENSOR}: the storage offset is not a non-negative integer`);
    const shape = intTuple(size);
    const strides = intTuple(stride);
    if (!shape || !strides || shape.length !== strides.length)
      return bad(`${REBUILD_TENSOR}: size and stride are not tuples of non-negative integers of one length`);
    if (shape.length > MAX_TENSOR_DIMS)
      return bad(`${REBUILD_TENSOR}: the tensor has ${shape.length} dimensions, more than ${MAX_TENSOR_DIMS}`);
    if (typeof requiresGrad !== 'boolean') return bad(`${REBUILD_TENSOR}: requires_grad is not a bool`);
    if (!(hooks instanceof PickleDict) || hooks.entries.size !== 0)
      return bad(`${REBUILD_TENSOR}: the tensor has backward hooks`);
    const last = stridedExtent(shape, strides, offset);
    if (last >= storage.numel)
      return bad(
        `${REBUILD_TENSOR}: the tensor (offset ${offset}, size (${shape.join(', ')}), stride (${strides.join(', ')})) reaches element ${last} of a ${storage.numel}-element storage`,
      );
    return new TorchTensor(storage, offset, shape, strides);
  }
  return bad(`REDUCE calls ${fn.qualified}, which is not a constructor the reader allows`);
}

/** The torch.save profile: tensors (by persistent id and _rebuild_tensor_v2) and OrderedDict. */
export const TORCH_PICKLE_PROFILE: PickleProfile = {
  allowedGlobals: ALLOWED_PICKLE_GLOBALS,
  what: 'only tensors and plain containers are read',
  reduce,
  persistentId: storageRef,
};

/** An opened torch.save archive: its unpickled object and its storages, read on demand. */
export interface TorchArchive {
  /** The folder all members sit in (`<archive>` above). */
  prefix: string;
  root: PickleValue;
  littleEndian: boolean;
  /**
   * Checks, from declared sizes alone (nothing inflated, nothing allocated), that each named
   * float tensor is backed by its storage (see the header) and that the storages they use fit
   * MAX_INPUT_BYTES together. Errors name the tensor's field.
   */
  checkTensors(tensors: readonly (readonly [field: string, tensor: TorchTensor])[]): void;
  /** A float32/float64 tensor's values in C order, after the checks of checkTensors; errors name `field`. */
  readFloatTensor(t: TorchTensor, field: string): Float64Array;
}

/** True when a ZIP directory is a torch.save archive: one `<folder>/data.pkl`, every member in that folder. */
export function isTorchArchiveDirectory(entries: readonly ZipEntry[]): boolean {
  const pkl = entries.filter((e) => /^[^/]+\/data\.pkl$/.test(e.name));
  if (pkl.length !== 1) return false;
  const prefix = pkl[0].name.slice(0, -'data.pkl'.length);
  return entries.every((e) => e.name.startsWith(prefix));
}

/**
 * Opens a torch.save ZIP archive: reads the directory, unpickles data.pkl with the restricted
 * unpickler, and returns the object with a reader for its tensors. Errors name the member.
 */
export function openTorchArchive(bytes: Uint8Array, file: string): TorchArchive {
  const entries = readZipDirectory(bytes, file);
  if (!isTorchArchiveDirectory(entries))
    throw new InputError(
      { file },
      'not a torch.save archive: expected one <archive>/data.pkl with every member in that folder',
    );
  const byName = new Map(entries.map((e) => [e.name, e]));
  const pklEntry = entries.find((e) => /^[^/]+\/data\.pkl$/.test(e.name))!;
  const prefix = pklEntry.name.slice(0, -'data.pkl'.length);
  const pklKey = pklEntry.name;
  if (pklEntry.uncompressedSize > MAX_PICKLE_BYTES)
    throw new InputError(
      { file, key: pklKey },
      `the pickle is ${pklEntry.uncompressedSize} bytes, more than the ${MAX_PICKLE_BYTES} read`,
    );
  const root = restrictedUnpickle(readZipEntry(bytes, pklEntry, file, pklKey), file, pklKey);

  const orderEntry = byName.get(`${prefix}byteorder`);
  let littleEndian = true;
  if (orderEntry) {
    const order = new TextDecoder('latin1').decode(readZipEntry(bytes, orderEntry, file, orderEntry.name)).trim();
    if (order !== 'little' && order !== 'big')
      throw new InputError({ file, key: orderEntry.name }, `byteorder is '${order}', not 'little' or 'big'`);
    littleEndian = order === 'little';
  }

  /** The storage member of `s`, checked against the element count the pickle declares for it. */
  const storageEntry = (s: TorchStorageRef, field: string): ZipEntry => {
    const name = `${prefix}data/${s.key}`;
    const e = byName.get(name);
    if (!e) throw new InputError({ file, key: field }, `its storage ${name} is not in the archive`);
    const want = s.numel * s.itemSize;
    if (e.uncompressedSize !== want)
      throw new InputError(
        { file, key: field },
        `its storage ${name} holds ${e.uncompressedSize} bytes, but ${s.numel} ${s.dtype} elements need ${want}`,
      );
    return e;
  };
  const checkTensor = (t: TorchTensor, field: string): ZipEntry => {
    const s = t.storage;
    if (s.dtype !== 'float32' && s.dtype !== 'float64')
      throw new InputError({ file, key: field }, `is a ${s.dtype} tensor; float32 or float64 expected`);
    const layout = `size (${t.shape.join(', ')}), stride (${t.stride.join(', ')})`;
    const overlap = stridedOverlapProblem(t.shape, t.stride);
    if (overlap)
      throw new InputError(
        { file, key: field },
        `the tensor (${layout}) repeats stored values: ${overlap}; every entry must be its own stored element`,
      );
    const count = t.shape.reduce((a, d) => a * d, 1);
    if (count > s.numel)
      throw new InputError(
        { file, key: field },
        `the tensor (${layout}) has ${count} elements but its storage holds only ${s.numel}`,
      );
    const last = stridedExtent(t.shape, t.stride, t.offset);
    if (last >= s.numel)
      throw new InputError(
        { file, key: field },
        `the tensor (offset ${t.offset}, ${layout}) reaches element ${last} of a ${s.numel}-element storage`,
      );
    return storageEntry(s, field);
  };

  const cache = new Map<string, DataView>();
  let inflated = 0;
  const storageView = (s: TorchStorageRef, field: string): DataView => {
    const hit = cache.get(s.key);
    if (hit) return hit;
    const e = storageEntry(s, field);
    inflated += e.uncompressedSize;
    if (inflated > MAX_INPUT_BYTES)
      throw new InputError(
        { file, key: field },
        `the storages read exceed the ${MAX_INPUT_BYTES / 1048576} MiB budget`,
      );
    const data = readZipEntry(bytes, e, file, e.name);
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    cache.set(s.key, dv);
    return dv;
  };

  return {
    prefix: prefix.slice(0, -1),
    root,
    littleEndian,
    checkTensors(tensors) {
      const storages = new Map<string, number>();
      for (const [field, t] of tensors) storages.set(t.storage.key, checkTensor(t, field).uncompressedSize);
      const total = [...storages.values()].reduce((a, n) => a + n, 0);
      if (total > MAX_INPUT_BYTES)
        throw new InputError(
          { file, key: tensors.map(([f]) => f).join(', ') },
          `their storages declare ${(total / 1048576).toFixed(1)} MiB, more than the ${MAX_INPUT_BYTES / 1048576} MiB budget`,
        );
    },
    readFloatTensor(t, field) {
      checkTensor(t, field);
      const s = t.storage;
      const dv = storageView(s, field);
      const le = littleEndian;
      const read =
        s.dtype === 'float32' ? (i: number) => dv.getFloat32(i * 4, le) : (i: number) => dv.getFloat64(i * 8, le);
      return gatherStrided(t.shape, t.stride, t.offset, read);
    },
  };
}
