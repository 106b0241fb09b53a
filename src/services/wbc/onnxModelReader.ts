// Reads what an ONNX policy file says about itself without running it: graph inputs/outputs,
// metadata_props, external-data references and the time-indexed constants (the baked reference
// motion). Decoding is protobufjs (the maintained protobuf runtime for JS) with the subset of
// onnx.proto this needs, declared here by field number from the ONNX IR specification
// (onnx/onnx, onnx/onnx.proto3: ModelProto, GraphProto, NodeProto, TensorProto, …). Fields not
// declared are skipped by the decoder, so weights stay untouched bytes.

import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { InputError } from '../../domain/problems';
import { printable } from '../../domain/text/printable';
import {
  checkOnnxDeclaredSizes,
  ONNX_METADATA_MAX_ENTRIES,
  ONNX_STRING_MAX_BYTES,
  stringTooLong,
} from '../../domain/wbc/onnxDeclaredSizes';
import {
  onnxDtypeName,
  type OnnxFloatConstant,
  type OnnxModelInfo,
  type OnnxValueInfo,
} from '../../domain/wbc/onnxModelInfo';
import { readBoundedFile } from '../files/boundedRead';

const repeated = (type: string, id: number) => ({ rule: 'repeated', type, id });
const ONNX_SUBSET = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        StringStringEntryProto: { fields: { key: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
        OperatorSetIdProto: { fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } } },
        ModelProto: {
          fields: {
            producerName: { type: 'string', id: 2 },
            producerVersion: { type: 'string', id: 3 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: repeated('OperatorSetIdProto', 8),
            metadataProps: repeated('StringStringEntryProto', 14),
          },
        },
        GraphProto: {
          fields: {
            node: repeated('NodeProto', 1),
            initializer: repeated('TensorProto', 5),
            input: repeated('ValueInfoProto', 11),
            output: repeated('ValueInfoProto', 12),
          },
        },
        NodeProto: {
          fields: {
            input: repeated('string', 1),
            output: repeated('string', 2),
            opType: { type: 'string', id: 4 },
            attribute: repeated('AttributeProto', 5),
          },
        },
        AttributeProto: {
          fields: { name: { type: 'string', id: 1 }, i: { type: 'int64', id: 3 }, t: { type: 'TensorProto', id: 5 } },
        },
        TensorProto: {
          fields: {
            dims: repeated('int64', 1),
            dataType: { type: 'int32', id: 2 },
            floatData: repeated('float', 4),
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
            externalData: repeated('StringStringEntryProto', 13),
            dataLocation: { type: 'int32', id: 14 },
          },
        },
        ValueInfoProto: { fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 } } },
        TypeProto: { fields: { tensorType: { type: 'TypeProtoTensor', id: 1 } } },
        TypeProtoTensor: { fields: { elemType: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } } },
        TensorShapeProto: { fields: { dim: repeated('Dimension', 1) } },
        Dimension: { fields: { dimValue: { type: 'int64', id: 1 }, dimParam: { type: 'string', id: 2 } } },
      },
    },
  },
});
const ModelProto = ONNX_SUBSET.lookupType('onnx.ModelProto');

interface KV {
  key?: string;
  value?: string;
}
interface Tensor {
  dims?: number[];
  dataType?: number;
  floatData?: number[];
  name?: string;
  rawData?: Uint8Array;
  externalData?: KV[];
  dataLocation?: number;
}
interface Node {
  input?: string[];
  output?: string[];
  opType?: string;
  attribute?: { name?: string; t?: Tensor }[];
}
interface ValueInfo {
  name?: string;
  type?: { tensorType?: { elemType?: number; shape?: { dim?: { dimValue?: number; dimParam?: string }[] } } };
}
interface Model {
  producerName?: string;
  producerVersion?: string;
  opsetImport?: { domain?: string; version?: number }[];
  metadataProps?: KV[];
  graph?: { node?: Node[]; initializer?: Tensor[]; input?: ValueInfo[]; output?: ValueInfo[] };
}

const FLOAT = 1;
const EXTERNAL = 1;

function valueInfo(v: ValueInfo): OnnxValueInfo {
  const t = v.type?.tensorType;
  return {
    name: v.name ?? '',
    shape: (t?.shape?.dim ?? []).map((d) => (d.dimValue !== undefined ? Number(d.dimValue) : d.dimParam || '?')),
    dtype: t ? onnxDtypeName(t.elemType ?? 0) : 'not a tensor',
  };
}

function floatConstant(t: Tensor, file: string, what: string): OnnxFloatConstant | null {
  if (t.dataType !== FLOAT || t.dataLocation === EXTERNAL) return null;
  const dims = (t.dims ?? []).map(Number);
  if (dims.some((d) => !Number.isSafeInteger(d) || d < 0))
    throw new InputError({ file, key: what }, `constant has dims [${dims.join(', ')}]; expected non-negative integers`);
  const n = dims.reduce((a, b) => a * b, 1);
  let data: Float32Array;
  if (t.rawData && t.rawData.length > 0) {
    if (t.rawData.length !== 4 * n)
      throw new InputError(
        { file, key: what },
        `constant of shape [${dims.join(', ')}] holds ${t.rawData.length} bytes, expected ${4 * n}`,
      );
    // raw_data is little-endian (ONNX IR); copy to an aligned buffer.
    const bytes = new Uint8Array(4 * n);
    bytes.set(t.rawData);
    data = new Float32Array(bytes.buffer);
  } else {
    if ((t.floatData ?? []).length !== n)
      throw new InputError(
        { file, key: what },
        `constant of shape [${dims.join(', ')}] holds ${(t.floatData ?? []).length} floats, expected ${n}`,
      );
    data = Float32Array.from(t.floatData ?? []);
  }
  return { dims, data };
}

/** Decodes ONNX bytes. `file` names the file in errors and is the base of external-data paths. */
export function readOnnxModelInfo(bytes: Uint8Array, file: string): OnnxModelInfo {
  checkOnnxDeclaredSizes(bytes, file);
  let m: Model;
  try {
    m = ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, defaults: false }) as Model;
  } catch (e) {
    throw new InputError({ file }, `not an ONNX model (protobuf: ${(e as Error).message})`);
  }
  const g = m.graph;
  if (!g) throw new InputError({ file }, 'not an ONNX model (no graph)');
  const metadata: Record<string, string> = {};
  for (const p of m.metadataProps ?? []) {
    const k = p.key ?? '';
    if (Object.hasOwn(metadata, k))
      throw new InputError({ file, key: `metadata_props.${printable(k)}` }, 'key appears twice');
    metadata[k] = p.value ?? '';
  }
  const constants = new Map<string, Tensor>();
  for (const t of g.initializer ?? []) if (t.name) constants.set(t.name, t);
  for (const n of g.node ?? []) {
    if (n.opType !== 'Constant') continue;
    const t = n.attribute?.find((a) => a.name === 'value')?.t;
    if (t && n.output?.[0]) constants.set(n.output[0], t);
  }
  // External data: every initializer stored outside the file.
  const ext = new Map<string, number>();
  for (const t of g.initializer ?? []) {
    if (t.dataLocation !== EXTERNAL) continue;
    const kv = Object.fromEntries((t.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']));
    const loc = kv.location;
    if (!loc)
      throw new InputError({ file, key: `initializer ${printable(t.name ?? '')}` }, 'external data without a location');
    const end = Number(kv.offset ?? 0) + Number(kv.length ?? 0);
    if (!Number.isSafeInteger(end) || end < 0)
      throw new InputError(
        { file, key: `initializer ${printable(t.name ?? '')}` },
        `external data offset "${printable(kv.offset ?? '')}" and length "${printable(kv.length ?? '')}" are not byte counts`,
      );
    ext.set(loc, Math.max(ext.get(loc) ?? 0, end));
  }
  const inputs = (g.input ?? []).map(valueInfo).filter((v) => !constants.has(v.name));
  const outputs = (g.output ?? []).map(valueInfo);
  const outputNames = new Set(outputs.map((o) => o.name));
  const timeIndexed: Record<string, OnnxFloatConstant> = {};
  for (const n of g.node ?? []) {
    if (n.opType !== 'Gather' || !n.output?.[0] || !outputNames.has(n.output[0])) continue;
    const axis = n.attribute?.find((a) => a.name === 'axis');
    if (axis && Number((axis as { i?: number }).i ?? 0) !== 0) continue;
    const src = constants.get(n.input?.[0] ?? '');
    if (!src) continue;
    const c = floatConstant(src, file, `constant gathered into ${n.output[0]}`);
    if (c && c.dims.length >= 2) timeIndexed[n.output[0]] = c;
  }
  const opset = (m.opsetImport ?? []).find((o) => !o.domain || o.domain === 'ai.onnx')?.version ?? 0;
  return {
    file,
    producer: `${m.producerName ?? ''} ${m.producerVersion ?? ''}`.trim(),
    opset: Number(opset),
    inputs,
    outputs,
    metadata,
    externalData: [...ext].map(([location, bytesNeeded]) => ({ location, bytesNeeded })),
    timeIndexed,
  };
}

/** Most top-level fields looked at on disk; the rest are walked once the file is read. */
const ON_DISK_FIELDS_MAX = 10_000;

/** A varint of `b` at `i`: [value, next index], or null when it does not end within `b`. */
function varintAt(b: Uint8Array, i: number): [number, number] | null {
  let v = 0;
  let mul = 1;
  for (let k = 0; k < 10 && i < b.length; k++) {
    const byte = b[i++];
    v += (byte & 0x7f) * mul;
    if (byte < 0x80) return [v, i];
    mul *= 128;
  }
  return null;
}

/**
 * The metadata_props of an .onnx checked ON DISK, by positional reads of field keys and lengths
 * only, before the file is read whole: a metadata key or value longer than ONNX_STRING_MAX_BYTES,
 * or more than ONNX_METADATA_MAX_ENTRIES entries, is refused without reading it (a 300 MB
 * joint_names never enters memory). Anything malformed is left to the full walk after the read.
 */
function checkMetadataOnDisk(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return; // the bounded read reports it
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return;
    const buf = new Uint8Array(24);
    const at = (pos: number, n = buf.length) => {
      const into = n <= buf.length ? buf : new Uint8Array(n);
      return into.subarray(0, fs.readSync(fd, into, 0, n, pos));
    };
    let entries = 0;
    let pos = 0;
    for (let n = 0; pos < st.size && n < ON_DISK_FIELDS_MAX; n++) {
      const b = at(pos);
      const key = varintAt(b, 0);
      if (!key) return;
      const wire = key[0] & 7;
      if (wire === 0) {
        const v = varintAt(b, key[1]);
        if (!v) return;
        pos += v[1];
        continue;
      }
      if (wire === 1 || wire === 5) {
        pos += key[1] + (wire === 1 ? 8 : 4);
        continue;
      }
      if (wire !== 2) return;
      const len = varintAt(b, key[1]);
      if (!len) return;
      const body = pos + len[1];
      if (Math.floor(key[0] / 8) === 14) {
        if (++entries > ONNX_METADATA_MAX_ENTRIES)
          throw new InputError(
            { file, key: 'metadata_props' },
            `more than ${ONNX_METADATA_MAX_ENTRIES} entries; the released exports carry at most 11`,
          );
        checkEntryOnDisk(file, at, body, body + len[0]);
      }
      pos = body + len[0];
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** One StringStringEntryProto on disk: its key and value lengths within the string bound. */
function checkEntryOnDisk(file: string, at: (pos: number, n?: number) => Uint8Array, start: number, end: number): void {
  let name = '?';
  for (let pos = start; pos < end;) {
    const b = at(pos);
    const key = varintAt(b, 0);
    if (!key || (key[0] & 7) !== 2) return;
    const len = varintAt(b, key[1]);
    if (!len) return;
    const field = Math.floor(key[0] / 8);
    if (len[0] > ONNX_STRING_MAX_BYTES)
      throw stringTooLong(file, field === 1 ? 'metadata_props' : `metadata_props.${name}`, len[0], true);
    if (field === 1 && len[0] <= 256) name = printable(new TextDecoder().decode(at(pos + len[1], len[0])));
    pos += len[1] + len[0];
  }
}

/**
 * Reads an .onnx file (bounded) and checks that each external-data file it references exists
 * beside it, is a regular file inside its folder and is long enough. Returns the info and the
 * bytes (for hashing); `externalFiles` are the absolute paths, in the model's order.
 */
export function readOnnxFile(file: string): {
  info: OnnxModelInfo;
  bytes: Uint8Array;
  externalFiles: string[];
  /** Sizes of externalFiles (stat), bytes, in the same order. */
  externalBytes: number[];
} {
  checkMetadataOnDisk(file);
  let bytes: Uint8Array;
  try {
    bytes = readBoundedFile(file, 'onnxModel');
  } catch (e) {
    throw e instanceof InputError
      ? e
      : new InputError({ file }, `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const info = readOnnxModelInfo(bytes, file);
  const dir = path.dirname(path.resolve(file));
  const externalFiles: string[] = [];
  const externalBytes: number[] = [];
  for (const x of info.externalData) {
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(x.location))
      throw new InputError(
        { file, key: 'external_data' },
        `external data location "${printable(x.location)}" holds a control character; refused`,
      );
    const p = path.resolve(dir, x.location);
    if (path.dirname(p) !== dir && !p.startsWith(dir + path.sep))
      throw new InputError(
        { file, key: 'external_data' },
        `external data "${printable(x.location)}" lies outside the model's folder; refused`,
      );
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      throw new InputError(
        { file, key: 'external_data' },
        `the weights are stored in "${printable(x.location)}" beside the model, and that file is missing (${printable(p)}); keep the .onnx and its .onnx.data side by side`,
      );
    }
    if (!st.isFile())
      throw new InputError(
        { file, key: 'external_data' },
        `external data "${printable(x.location)}" is not a regular file`,
      );
    if (st.size < x.bytesNeeded)
      throw new InputError(
        { file, key: 'external_data' },
        `external data "${printable(x.location)}" has ${st.size} bytes; the graph reads up to byte ${x.bytesNeeded} (truncated or the wrong file)`,
      );
    externalFiles.push(p);
    externalBytes.push(st.size);
  }
  return { info, bytes, externalFiles, externalBytes };
}
