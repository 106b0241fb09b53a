import { InputError } from '../problems';
import { printable } from '../text/printable';

// What an ONNX file declares, bounded BEFORE it is decoded. The protobuf decoder materialises
// every string and every element of the fields it knows (onnxModelReader.ts declares a subset of
// onnx.proto3), so a file can make it build a 300 MB string from one metadata value, or millions
// of small objects from a graph of tiny nodes, within the 512 MiB a model file may have. This walk
// reads only the wire format (keys and lengths; a length-delimited field it does not descend into
// is skipped without reading its bytes) and refuses, naming the field:
//   - a string (metadata key or value, a node, tensor or value name) longer than ONNX_STRING_MAX_BYTES;
//   - more than ONNX_METADATA_MAX_ENTRIES metadata_props;
//   - more than ONNX_ELEMENTS_MAX decoded elements (messages and repeated numbers) in all;
//   - more than ONNX_FLOAT_DATA_MAX_BYTES of float_data (the decoder makes a JS number of each float;
//     raw_data stays untouched bytes and is not bounded here beyond the file's own limit).
// Field numbers are those of onnx/onnx.proto3, as in onnxModelReader.ts.

/**
 * Longest string decoded, bytes. The largest in the released policies is holosoma's embedded URDF
 * (metadata robot_urdf, 47 kB); names are under 1 kB. 1 MiB is 20 times that URDF.
 */
export const ONNX_STRING_MAX_BYTES = 1024 * 1024;
/** Most metadata_props entries: the released exports carry 11 at most. */
export const ONNX_METADATA_MAX_ENTRIES = 1024;
/**
 * Most decoded elements (each message and each repeated number of the fields read). The released
 * policies have 131–408 (MLPs); a transformer export of 10,000 nodes has about 100,000.
 */
export const ONNX_ELEMENTS_MAX = 2_000_000;
/** Most float_data bytes in all tensors read (exporters store weights and tables as raw_data). */
export const ONNX_FLOAT_DATA_MAX_BYTES = 64 * 1024 * 1024;

type FieldKind = 'string' | 'bytes' | 'varint' | 'float' | { message: string };

/** The fields of onnxModelReader.ts's subset: message → field number → kind. */
const SUBSET: Record<string, Record<number, FieldKind>> = {
  ModelProto: {
    2: 'string',
    3: 'string',
    7: { message: 'GraphProto' },
    8: { message: 'OperatorSetIdProto' },
    14: { message: 'StringStringEntryProto' },
  },
  StringStringEntryProto: { 1: 'string', 2: 'string' },
  OperatorSetIdProto: { 1: 'string', 2: 'varint' },
  GraphProto: {
    1: { message: 'NodeProto' },
    5: { message: 'TensorProto' },
    11: { message: 'ValueInfoProto' },
    12: { message: 'ValueInfoProto' },
  },
  NodeProto: { 1: 'string', 2: 'string', 4: 'string', 5: { message: 'AttributeProto' } },
  AttributeProto: { 1: 'string', 3: 'varint', 5: { message: 'TensorProto' } },
  TensorProto: {
    1: 'varint',
    2: 'varint',
    4: 'float',
    8: 'string',
    9: 'bytes',
    13: { message: 'StringStringEntryProto' },
    14: 'varint',
  },
  ValueInfoProto: { 1: 'string', 2: { message: 'TypeProto' } },
  TypeProto: { 1: { message: 'TypeProtoTensor' } },
  TypeProtoTensor: { 1: 'varint', 2: { message: 'TensorShapeProto' } },
  TensorShapeProto: { 1: { message: 'Dimension' } },
  Dimension: { 1: 'varint', 2: 'string' },
};

/** The snake_case field names used in messages. */
const FIELD_NAMES: Record<string, Record<number, string>> = {
  ModelProto: { 2: 'producer_name', 3: 'producer_version', 7: 'graph', 8: 'opset_import', 14: 'metadata_props' },
  GraphProto: { 1: 'node', 5: 'initializer', 11: 'input', 12: 'output' },
  NodeProto: { 1: 'input', 2: 'output', 4: 'op_type', 5: 'attribute' },
  AttributeProto: { 1: 'name', 5: 't' },
  TensorProto: { 4: 'float_data', 8: 'name', 13: 'external_data' },
  ValueInfoProto: { 1: 'name' },
  Dimension: { 2: 'dim_param' },
  StringStringEntryProto: { 1: 'key', 2: 'value' },
};

const MiB = 1024 * 1024;
const size = (n: number) => (n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${n} bytes`);

/** The refusal of a string longer than ONNX_STRING_MAX_BYTES at `key`. */
export function stringTooLong(file: string, key: string, bytes: number, metadata: boolean): InputError {
  return new InputError(
    { file, key },
    `${metadata ? 'a metadata value' : 'a string'} of ${size(bytes)}; strings in a policy file are limited to ${size(ONNX_STRING_MAX_BYTES)} (the largest released, an embedded URDF, is 47 kB; refused before decoding)`,
  );
}

class Walk {
  elements = 0;
  floatBytes = 0;
  metadataEntries = 0;
  constructor(
    readonly b: Uint8Array,
    readonly file: string,
  ) {}

  fail(key: string, reason: string): never {
    throw new InputError({ file: this.file, key }, reason);
  }

  malformed(what: string): never {
    throw new InputError({ file: this.file }, `not an ONNX model (protobuf: ${what})`);
  }

  varint(pos: number, end: number): [number, number] {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) this.malformed('a varint runs past its message');
      const byte = this.b[pos++];
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return [v, pos];
      mul *= 128;
    }
    this.malformed('a varint longer than 10 bytes');
  }

  count(n: number, key: string): void {
    this.elements += n;
    if (this.elements > ONNX_ELEMENTS_MAX)
      this.fail(
        key,
        `the model declares more than ${ONNX_ELEMENTS_MAX.toLocaleString('en-US')} graph elements; no G1 policy has that many (refused before decoding)`,
      );
  }

  /** The metadata key of an entry, for messages (decoded only when short). */
  entryKey(start: number, end: number): string {
    let pos = start;
    while (pos < end) {
      const [key, p1] = this.varint(pos, end);
      pos = p1;
      if ((key & 7) !== 2) return '?';
      const [len, p2] = this.varint(pos, end);
      if (key >>> 3 === 1) return len <= 256 ? printable(new TextDecoder().decode(this.b.subarray(p2, p2 + len))) : '?';
      pos = p2 + len;
    }
    return '?';
  }

  message(type: string, start: number, end: number, where: string): void {
    const fields = SUBSET[type];
    let pos = start;
    while (pos < end) {
      const [key, p1] = this.varint(pos, end);
      pos = p1;
      const num = Math.floor(key / 8);
      const wire = key & 7;
      const kind = fields[num];
      const name = FIELD_NAMES[type]?.[num] ?? `field ${num}`;
      const at = where ? `${where}.${name}` : name;
      if (wire === 0) {
        pos = this.varint(pos, end)[1];
        if (kind !== undefined) this.count(1, at);
      } else if (wire === 1) pos += 8;
      else if (wire === 5) {
        pos += 4;
        if (kind === 'float') {
          this.floatBytes += 4;
          this.count(1, at);
        }
      } else if (wire === 2) {
        const [len, p2] = this.varint(pos, end);
        pos = p2;
        if (pos + len > end) this.malformed(`${at} runs past its message`);
        if (kind === 'string') {
          if (len > ONNX_STRING_MAX_BYTES) {
            const meta = type === 'StringStringEntryProto' && where.startsWith('metadata_props');
            throw stringTooLong(this.file, meta ? where : at, len, meta);
          }
          this.count(1, at);
        } else if (kind === 'float') {
          this.floatBytes += len;
          this.count(Math.floor(len / 4), at);
        } else if (kind === 'varint') this.count(len, at);
        else if (kind !== undefined && kind !== 'bytes') {
          this.count(1, at);
          let sub = at;
          if (type === 'ModelProto' && num === 14) {
            if (++this.metadataEntries > ONNX_METADATA_MAX_ENTRIES)
              this.fail(
                'metadata_props',
                `more than ${ONNX_METADATA_MAX_ENTRIES} entries; the released exports carry at most 11`,
              );
            sub = `metadata_props.${this.entryKey(pos, pos + len)}`;
          }
          this.message(kind.message, pos, pos + len, sub);
        }
        pos += len;
      } else this.malformed(`${at} has wire type ${wire}`);
      if (this.floatBytes > ONNX_FLOAT_DATA_MAX_BYTES)
        this.fail(
          at,
          `more than ${size(ONNX_FLOAT_DATA_MAX_BYTES)} of float_data; exporters store tensors as raw_data (refused before decoding)`,
        );
    }
    if (pos !== end) this.malformed(`${where || 'the model'} runs past its end`);
  }
}

/** What an ONNX file declares: its decoded elements, float_data bytes and metadata entries. */
export interface OnnxDeclaredSizes {
  elements: number;
  floatDataBytes: number;
  metadataEntries: number;
}

/**
 * Throws InputError (file, key = the field) when the ONNX bytes declare more than the bounds
 * above; a malformed wire format is refused as "not an ONNX model". Returns what they declare.
 */
export function checkOnnxDeclaredSizes(bytes: Uint8Array, file: string): OnnxDeclaredSizes {
  const w = new Walk(bytes, file);
  w.message('ModelProto', 0, bytes.length, '');
  return { elements: w.elements, floatDataBytes: w.floatBytes, metadataEntries: w.metadataEntries };
}
