// What a policy file says about itself, as read from its ONNX protobuf (src/services/wbc/
// onnxModelReader.ts): the graph's inputs and outputs, the exporter's metadata_props, the
// external-data files it references, and the constants it gathers by its time input (the
// reference motion BeyondMimic and holosoma exports bake into the graph). Pure data.

/** One graph input or output. Symbolic dims stay strings; unknown dims are '?'. */
export interface OnnxValueInfo {
  name: string;
  shape: (number | string)[];
  /** ONNX element type as onnxruntime names it: 'float32', 'int64', … */
  dtype: string;
}

/** A float tensor constant of the graph, row-major. */
export interface OnnxFloatConstant {
  dims: number[];
  data: Float32Array;
}

export interface OnnxModelInfo {
  /** The .onnx file as the user named it. */
  file: string;
  producer: string;
  /** Default-domain opset. */
  opset: number;
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  /** metadata_props, in file order (keys unique: a repeated key is refused by the reader). */
  metadata: Record<string, string>;
  /** File names (relative to the .onnx) holding external tensor data, in first-use order. */
  externalData: { location: string; /** bytes the graph reads from it: max(offset + length) */ bytesNeeded: number }[];
  /**
   * Graph outputs computed as Gather(constant, index) along the constant's first axis, keyed by
   * output name: the baked per-frame reference. Their first dimension is the frame count.
   */
  timeIndexed: Record<string, OnnxFloatConstant>;
}

/**
 * TensorProto element types by their ONNX enum value, named as onnxruntime names them: the one
 * table for both the protobuf reader and the native binding's metadata.
 */
export const ONNX_DTYPES: readonly (string | undefined)[] = [
  undefined,
  'float32',
  'uint8',
  'int8',
  'uint16',
  'int16',
  'int32',
  'int64',
  'string',
  'bool',
  'float16',
  'float64',
  'uint32',
  'uint64',
];

export const onnxDtypeName = (t: number): string => ONNX_DTYPES[t] ?? `type${t}`;

export function findInput(info: OnnxModelInfo, name: string): OnnxValueInfo | undefined {
  return info.inputs.find((i) => i.name === name);
}

export function findOutput(info: OnnxModelInfo, name: string): OnnxValueInfo | undefined {
  return info.outputs.find((i) => i.name === name);
}

/** Width of a [1, D] or [D] input/output, or null when not fixed. */
export function vectorWidth(v: OnnxValueInfo): number | null {
  const s = v.shape;
  const last = s[s.length - 1];
  if (s.length === 0 || s.length > 2) return null;
  if (s.length === 2 && !(s[0] === 1 || typeof s[0] === 'string')) return null;
  return typeof last === 'number' ? last : null;
}

export const formatValueInfo = (v: OnnxValueInfo): string => `${v.name} [${v.shape.join(', ')}] ${v.dtype}`;
