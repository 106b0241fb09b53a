import fs from 'node:fs';
import { seededUniform } from '../../src/domain/stats/prng';
import path from 'node:path';
import type { ControlObservation, ControlReference } from '../../src/domain/wbc/controller';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import type { OnnxBinding, PolicyInterface } from '../../src/domain/wbc/wbcBinding';

// A minimal ONNX (protobuf) encoder for tests, so policies with known weights are built here
// instead of downloaded. Only what small policies need: ModelProto with ir_version,
// opset_import (domain "", version 13), and a GraphProto of nodes, raw-data initializers and
// typed inputs/outputs with static or symbolic dims. Field numbers are those of onnx.proto3.
//
// Protobuf wire format: each field is a key varint (field_number << 3 | wire_type) followed by
// a varint (wire type 0) or a length-delimited payload (wire type 2: length varint + bytes).

const WIRE_VARINT = 0;
const WIRE_LEN = 2;

/** Appends protobuf fields to a growing byte list. */
export class ProtoWriter {
  private readonly chunks: number[] = [];

  private rawVarint(v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > Number.MAX_SAFE_INTEGER) throw new Error(`varint out of range: ${v}`);
    while (v >= 0x80) {
      this.chunks.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.chunks.push(v);
  }

  private key(field: number, wire: number): void {
    this.rawVarint(field * 8 + wire);
  }

  /** int32/int64/enum field with a non-negative value. */
  varint(field: number, v: number): this {
    this.key(field, WIRE_VARINT);
    this.rawVarint(v);
    return this;
  }

  bytes(field: number, b: Uint8Array): this {
    this.key(field, WIRE_LEN);
    this.rawVarint(b.length);
    for (let i = 0; i < b.length; i++) this.chunks.push(b[i]);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  message(field: number, m: ProtoWriter): this {
    return this.bytes(field, m.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }
}

/** TensorProto.DataType values. */
export const OnnxDataType = { float32: 1, int64: 7, float64: 11 } as const;
export type OnnxElemType = keyof typeof OnnxDataType;

export interface OnnxInitializer {
  name: string;
  dims: number[];
  type: OnnxElemType;
  values: ArrayLike<number>;
}

export interface OnnxValueInfo {
  name: string;
  type: OnnxElemType;
  /** Numbers are fixed sizes; strings are symbolic (dynamic) dims such as "batch". */
  dims: (number | string)[];
}

/** An integer node attribute (AttributeProto type INT), e.g. Cast `to`, Gather `axis`. Non-negative. */
export interface OnnxIntAttribute {
  name: string;
  i: number;
}

export interface OnnxNode {
  opType: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  /** Integer attributes only (enough for Cast `to` and Gather `axis`). */
  attributes?: OnnxIntAttribute[];
}

export interface OnnxGraphSpec {
  name?: string;
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  opset?: number;
  irVersion?: number;
  /** ModelProto.metadata_props (field 14), in insertion order: what exporters write there. */
  metadata?: Record<string, string>;
}

function rawData(type: OnnxElemType, values: ArrayLike<number>): Uint8Array {
  const n = values.length;
  if (type === 'float32') {
    const buf = new Uint8Array(n * 4);
    const dv = new DataView(buf.buffer);
    for (let i = 0; i < n; i++) dv.setFloat32(i * 4, values[i], true);
    return buf;
  }
  if (type === 'float64') {
    const buf = new Uint8Array(n * 8);
    const dv = new DataView(buf.buffer);
    for (let i = 0; i < n; i++) dv.setFloat64(i * 8, values[i], true);
    return buf;
  }
  const buf = new Uint8Array(n * 8);
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < n; i++) dv.setBigInt64(i * 8, BigInt(values[i]), true);
  return buf;
}

function tensorProto(t: OnnxInitializer): ProtoWriter {
  const count = t.dims.reduce((a, b) => a * b, 1);
  if (count !== t.values.length)
    throw new Error(`initializer ${t.name}: dims ${t.dims} need ${count} values, got ${t.values.length}`);
  const w = new ProtoWriter();
  for (const d of t.dims) w.varint(1, d); // dims (unpacked repeated int64 is accepted by parsers)
  w.varint(2, OnnxDataType[t.type]); // data_type
  w.string(8, t.name); // name
  w.bytes(9, rawData(t.type, t.values)); // raw_data, little-endian
  return w;
}

function valueInfo(v: OnnxValueInfo): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number')
      dim.varint(1, d); // dim_value
    else dim.string(2, d); // dim_param
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter().varint(1, OnnxDataType[v.type]).message(2, shape); // elem_type, shape
  const typeProto = new ProtoWriter().message(1, tensorType); // tensor_type
  return new ProtoWriter().string(1, v.name).message(2, typeProto); // name, type
}

function nodeProto(n: OnnxNode, i: number): ProtoWriter {
  const w = new ProtoWriter();
  for (const s of n.inputs) w.string(1, s);
  for (const s of n.outputs) w.string(2, s);
  w.string(3, n.name ?? `${n.opType}_${i}`);
  w.string(4, n.opType);
  // AttributeProto: name = 1, i = 3, type = 20 (AttributeType INT = 2).
  for (const a of n.attributes ?? []) w.message(5, new ProtoWriter().string(1, a.name).varint(3, a.i).varint(20, 2));
  return w;
}

/** Encodes a complete ModelProto. */
export function encodeOnnxModel(spec: OnnxGraphSpec): Uint8Array {
  const graph = new ProtoWriter();
  spec.nodes.forEach((n, i) => graph.message(1, nodeProto(n, i)));
  graph.string(2, spec.name ?? 'test_policy');
  for (const t of spec.initializers) graph.message(5, tensorProto(t));
  for (const v of spec.inputs) graph.message(11, valueInfo(v));
  for (const v of spec.outputs) graph.message(12, valueInfo(v));

  const model = new ProtoWriter();
  model.varint(1, spec.irVersion ?? 8); // ir_version
  model.string(2, 'motionbench-test'); // producer_name
  model.message(7, graph); // graph
  model.message(8, new ProtoWriter().string(1, '').varint(2, spec.opset ?? 13)); // opset_import
  // metadata_props: StringStringEntryProto { key = 1, value = 2 }
  for (const [k, v] of Object.entries(spec.metadata ?? {}))
    model.message(14, new ProtoWriter().string(1, k).string(2, v));
  return model.finish();
}

export interface BakedPolicySpec {
  /** metadata_props, e.g. a released export's, verbatim. */
  metadata?: Record<string, string>;
  /** Observation width D: input `obs` float32 [1, D]. */
  obsDim: number;
  /**
   * The baked reference: output name → a float32 table [F, ...]. Each becomes an initializer
   * `<name>_table` and an output `<name>` = Gather(table, frame) of shape [1, ...], where frame is
   * the input `time_step` (float32 [1, 1]) cast to int64 and reshaped to [1].
   */
  baked: Record<string, { dims: number[]; data: ArrayLike<number> }>;
  /** Nodes that compute the output `actions` ([1, actionDim]) from `obs`, and their initializers. */
  actionNodes: OnnxNode[];
  actionInitializers: OnnxInitializer[];
  /** Default 29. */
  actionDim?: number;
}

/**
 * A policy shaped as the BeyondMimic / whole_body_tracking exporter writes it: inputs obs and
 * time_step, outputs actions and the baked motion (each a constant gathered by the frame index).
 */
export function encodeBakedPolicy(spec: BakedPolicySpec): Uint8Array {
  const nodes: OnnxNode[] = [
    {
      opType: 'Cast',
      inputs: ['time_step'],
      outputs: ['time_step_i64'],
      attributes: [{ name: 'to', i: OnnxDataType.int64 }],
    },
    { opType: 'Reshape', inputs: ['time_step_i64', 'frame_index_shape'], outputs: ['frame_index'] },
    ...spec.actionNodes,
  ];
  const initializers: OnnxInitializer[] = [
    { name: 'frame_index_shape', dims: [1], type: 'int64', values: [1] },
    ...spec.actionInitializers,
  ];
  const outputs: OnnxValueInfo[] = [{ name: 'actions', type: 'float32', dims: [1, spec.actionDim ?? 29] }];
  for (const [name, t] of Object.entries(spec.baked)) {
    initializers.push({ name: `${name}_table`, dims: t.dims, type: 'float32', values: t.data });
    nodes.push({
      opType: 'Gather',
      inputs: [`${name}_table`, 'frame_index'],
      outputs: [name],
      attributes: [{ name: 'axis', i: 0 }],
    });
    outputs.push({ name, type: 'float32', dims: [1, ...t.dims.slice(1)] });
  }
  return encodeOnnxModel({
    nodes,
    initializers,
    inputs: [
      { name: 'obs', type: 'float32', dims: [1, spec.obsDim] },
      { name: 'time_step', type: 'float32', dims: [1, 1] },
    ],
    outputs,
    ...(spec.metadata ? { metadata: spec.metadata } : {}),
  });
}

export interface LinearPolicySpec {
  /** Observation size D and action size A. */
  inDim: number;
  outDim: number;
  /** Row-major A×D: action = W·obs + b. Zeros when omitted. */
  weights?: ArrayLike<number>;
  /** A values; zeros when omitted. */
  bias?: ArrayLike<number>;
  inputName?: string;
  outputName?: string;
  /** Input dims; default [1, D]. Use e.g. ['batch', D] or [D]. */
  inputDims?: (number | string)[];
  /** Output dims; default [1, A] (or [A] when the input is rank 1). */
  outputDims?: (number | string)[];
  /** Apply tanh to the affine output. */
  tanh?: boolean;
  /** Element type of the whole graph; default float32. */
  elemType?: OnnxElemType;
}

/**
 * A linear policy: `action = W·obs + b` (optionally tanh), as MatMul(obs, Wᵀ) + Add(b).
 * The MatMul weight initializer is stored D×A (Wᵀ), so obs [1, D] · Wᵀ [D, A] = [1, A].
 */
export function encodeLinearPolicy(spec: LinearPolicySpec): Uint8Array {
  const { inDim: D, outDim: A } = spec;
  const type = spec.elemType ?? 'float32';
  const W = spec.weights ?? new Float64Array(A * D);
  if (W.length !== A * D) throw new Error(`weights: need ${A}×${D} values, got ${W.length}`);
  const b = spec.bias ?? new Float64Array(A);
  if (b.length !== A) throw new Error(`bias: need ${A} values, got ${b.length}`);
  const wt = new Float64Array(D * A);
  for (let a = 0; a < A; a++) for (let d = 0; d < D; d++) wt[d * A + a] = W[a * D + d];

  const inputName = spec.inputName ?? 'obs';
  const outputName = spec.outputName ?? 'actions';
  const inputDims = spec.inputDims ?? [1, D];
  const outputDims = spec.outputDims ?? (inputDims.length === 1 ? [A] : [inputDims[0], A]);
  const nodes: OnnxNode[] = [
    { opType: 'MatMul', inputs: [inputName, 'W_t'], outputs: ['matmul_out'] },
    { opType: 'Add', inputs: ['matmul_out', 'b'], outputs: [spec.tanh ? 'affine_out' : outputName] },
  ];
  if (spec.tanh) nodes.push({ opType: 'Tanh', inputs: ['affine_out'], outputs: [outputName] });
  return encodeOnnxModel({
    nodes,
    initializers: [
      { name: 'W_t', dims: [D, A], type, values: wt },
      { name: 'b', dims: [A], type, values: b },
    ],
    inputs: [{ name: inputName, type, dims: inputDims }],
    outputs: [{ name: outputName, type, dims: outputDims }],
  });
}

// ---------------------------------------------------------------------------------------------
// Fixtures shared by the ONNX tests: a declared interface, control observations, binding files.

export const J = 29;

/** A typical tracking-policy interface: 29 + 29 + 3 + 3 + frames·29 + 29 values. */
export function standardInterface(over: Partial<PolicyInterface> = {}, frames = 2): PolicyInterface {
  return {
    inputName: 'obs',
    outputName: 'actions',
    observation: [
      { term: 'joint_pos_rel_default', scale: 1 },
      { term: 'joint_vel', scale: 0.05 },
      { term: 'base_ang_vel', scale: 0.25 },
      { term: 'projected_gravity', scale: 1 },
      { term: 'reference_joint_pos', frames, scale: 1 },
      { term: 'last_action', scale: 1 },
    ],
    actionScale: 0.25,
    actionOffset: 0,
    gains: { kp: 100, kd: 2 },
    ...over,
  };
}

/** Deterministic pseudo-random numbers in [-1, 1). */
export function seededRandom(seed: number): () => number {
  const u = seededUniform(seed);
  return () => u() * 2 - 1;
}

/** A reference of `frames` frames whose joint j at frame k is 0.01·k + 0.001·j (rad). */
export function rampReference(frames: number, rateHz = 50): ControlReference {
  const jointPosRad = new Float64Array(frames * J);
  for (let k = 0; k < frames; k++) for (let j = 0; j < J; j++) jointPosRad[k * J + j] = 0.01 * k + 0.001 * j;
  const rootQuatWxyz = new Float64Array(frames * 4);
  for (let k = 0; k < frames; k++) rootQuatWxyz[k * 4] = 1;
  return { rateHz, frameCount: frames, rootPosM: new Float64Array(frames * 3), rootQuatWxyz, jointPosRad };
}

/** A control observation with a randomised state (seeded), at step k tracking frame k. */
export function makeObservation(
  reference: ControlReference,
  defaultPose: ArrayLike<number>,
  seed = 1,
  step = 0,
): ControlObservation {
  const r = seededRandom(seed);
  const state = createStateFrame();
  for (let j = 0; j < J; j++) {
    state.jointPosRad[j] = defaultPose[j] + 0.2 * r();
    state.jointVelRadS[j] = 2 * r();
  }
  state.imu.gyroRadS.set([r(), r(), r()]);
  const q = [1, 0.1 * r(), 0.1 * r(), 0.1 * r()];
  const n = Math.hypot(...q);
  state.imu.quatWxyz.set(q.map((v) => v / n));
  state.rootQuatWxyz!.set(state.imu.quatWxyz);
  return {
    step,
    timeS: step / reference.rateHz,
    state,
    reference,
    referenceFrame: Math.min(step, reference.frameCount - 1),
    defaultJointPosRad: Float64Array.from(defaultPose),
    rootLinVelMps: null,
  };
}

/** Writes `policy.onnx` and `binding.json` into dir; returns the json path. */
export function writeBindingFiles(
  dir: string,
  model: Uint8Array,
  iface: PolicyInterface,
  extra: Record<string, unknown> = {},
  modelName = 'policy.onnx',
): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, modelName), model);
  const json = {
    kind: 'onnx',
    id: 'test-policy',
    version: '1',
    controlRateHz: 50,
    modelFile: modelName,
    interface: iface,
    ...extra,
  };
  const file = path.join(dir, 'binding.json');
  fs.writeFileSync(file, JSON.stringify(json, null, 2));
  return file;
}

/** An in-memory OnnxBinding (modelFile is only a display name when bytes are passed directly). */
export function inlineBinding(iface: PolicyInterface, modelFile = 'policy.onnx', checkpointHash = ''): OnnxBinding {
  return {
    kind: 'onnx',
    id: 'test-policy',
    version: '1',
    label: 'test',
    controlRateHz: 50,
    modelFile,
    checkpointHash,
    interface: iface,
  };
}

/**
 * The linear "tracker" policy: action = (reference of frame referenceFrame + lead − default)/actionScale,
 * i.e. W picks that frame out of the reference_joint_pos term, b = −default/actionScale. With
 * that action (and actionOffset 0) the targets are exactly the reference angles of that frame;
 * lead 1 is what the builtin tracker commands (BUILTIN_TARGET_LEAD_FRAMES).
 */
export function trackerWeights(
  iface: PolicyInterface,
  defaultPose: ArrayLike<number>,
  lead = 1,
): { W: Float64Array; b: Float64Array; D: number } {
  let D = 0;
  let refOffset = -1;
  for (const t of iface.observation) {
    if (t.term === 'reference_joint_pos' && refOffset < 0) refOffset = D;
    D +=
      t.term === 'reference_joint_pos'
        ? t.frames * J
        : t.term === 'base_ang_vel' || t.term === 'projected_gravity'
          ? 3
          : J;
  }
  if (refOffset < 0) throw new Error('trackerWeights: the interface has no reference_joint_pos term');
  const scale = iface.actionScale as number;
  const refTerm = iface.observation.find((t) => t.term === 'reference_joint_pos')!;
  if (refTerm.term !== 'reference_joint_pos') throw new Error('unreachable');
  const slot = lead - (refTerm.offset ?? 1);
  if (slot < 0 || slot >= refTerm.frames)
    throw new Error(`trackerWeights: frame +${lead} is not among the reference term's frames`);
  const W = new Float64Array(J * D);
  const b = new Float64Array(J);
  for (let j = 0; j < J; j++) {
    W[j * D + refOffset + slot * J + j] = 1 / (scale * refTerm.scale);
    b[j] = -defaultPose[j] / scale;
  }
  return { W, b, D };
}
