// Hostile released-policy files, generated on demand (never committed): the attacks on
// policies.open and `motionbench policy info` — a 300 MB ONNX whose joint_names metadata is the
// whole file, a 16 MiB deploy.yaml of 8 M scalars, a small ONNX whose baked tables claim 1.5 M
// frames with no data — and the smaller bad inputs beside them (NaN/Inf or thin baked tables, a
// YAML alias bomb, NaN and absurd gains, a NUL in an external-data location, a SONIC folder of
// oversized models). Each writer builds from the released files in ../shared/data/policies
// (read only) into a folder the caller owns; a STOP-latency harness can reuse them.
//
// The synthetic BeyondMimic exports are the real Jump_wose export's metadata and baked tables,
// with an action path of zeros (actions = obs · 0), as in policyNanAction.test.ts.

import fs from 'node:fs';
import path from 'node:path';
import type { OnnxModelInfo } from '../../src/domain/wbc/onnxModelInfo';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { encodeBakedPolicy, ProtoWriter } from './onnxBuilder';
import { sharedData } from './sharedData';
import { writeSonicFolder } from './sonicFixture';

export const MiB = 1024 * 1024;

export const JUMP_WOSE = sharedData('policies/beyondmimic/Jump_wose.onnx');
export const MJLAB_DEPLOY = sharedData('policies/unitree_rl_mjlab_mimic_dance1_subject2');
const A = 29;

let jump: OnnxModelInfo | undefined;
const jumpInfo = (): OnnxModelInfo => (jump ??= readOnnxFile(JUMP_WOSE).info);

/** Width of Jump_wose's `obs` input. */
const obsDim = (info: OnnxModelInfo): number => Number(info.inputs.find((i) => i.name === 'obs')!.shape[1]);

export type BakedTables = Record<string, { dims: number[]; data: ArrayLike<number> }>;

/** A BeyondMimic export: Jump_wose's metadata (edited by `metadata`) and baked tables (edited by `tables`). */
export function bakedPolicyBytes(
  opts: {
    metadata?: (m: Record<string, string>) => Record<string, string>;
    tables?: (t: BakedTables) => BakedTables;
  } = {},
): Uint8Array {
  const info = jumpInfo();
  const D = obsDim(info);
  const tables: BakedTables = Object.fromEntries(
    Object.entries(info.timeIndexed).map(([k, c]) => [k, { dims: [...c.dims], data: Float32Array.from(c.data) }]),
  );
  return encodeBakedPolicy({
    metadata: opts.metadata ? opts.metadata({ ...info.metadata }) : info.metadata,
    obsDim: D,
    baked: opts.tables ? opts.tables(tables) : tables,
    actionNodes: [{ opType: 'MatMul', inputs: ['obs', 'W'], outputs: ['actions'] }],
    actionInitializers: [{ name: 'W', dims: [D, A], type: 'float32', values: new Float32Array(D * A) }],
  });
}

/** The finite synthetic export (the positive control of the variants below). */
export function writeBakedPolicy(file: string, opts: Parameters<typeof bakedPolicyBytes>[0] = {}): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bakedPolicyBytes(opts));
  return file;
}

/**
 * C3: an export of `totalBytes` whose joint_names metadata value is almost all of it
 * ("left_hip_pitch_joint," repeated). Written in 1 MiB chunks: the ModelProto of the export
 * without joint_names, then one more metadata_props entry (protobuf fields may follow in any order).
 */
export function writeHugeJointNamesOnnx(file: string, totalBytes = 300 * MiB): string {
  const head = bakedPolicyBytes({
    metadata: (m) => {
      delete m.joint_names;
      return m;
    },
  });
  const valueLen = totalBytes - head.length - 64;
  const keyBytes = new ProtoWriter().string(1, 'joint_names').finish();
  // StringStringEntryProto { key = 1, value = 2 (length valueLen) }, as field 14 of ModelProto.
  const valueHeader = [0x12, ...varint(valueLen)];
  const entryLen = keyBytes.length + valueHeader.length + valueLen;
  const entryHeader = [14 * 8 + 2, ...varint(entryLen)];
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, head);
    fs.writeSync(fd, Uint8Array.from(entryHeader));
    fs.writeSync(fd, keyBytes);
    fs.writeSync(fd, Uint8Array.from(valueHeader));
    const chunk = Buffer.alloc(MiB, 'left_hip_pitch_joint,');
    for (let left = valueLen; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(left, chunk.length));
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/**
 * A valid export followed by a second `graph` field of `count` empty graph inputs (ValueInfoProto):
 * millions of objects for a protobuf decoder from 2 bytes each.
 */
export function writeManyElementsOnnx(file: string, count = 2_100_000): string {
  const head = bakedPolicyBytes();
  const graph = Buffer.alloc(2 * count);
  for (let i = 0; i < count; i++) graph[2 * i] = 11 * 8 + 2; // GraphProto.input, length 0
  fs.writeFileSync(file, Buffer.concat([head, Uint8Array.from([7 * 8 + 2, ...varint(graph.length)]), graph]));
  return file;
}

/** C3 / M4: every baked table declared [frames, 0]: no data at all, `frames` claimed. */
export function writePhantomFramesOnnx(file: string, frames = 1_500_000): string {
  return writeBakedPolicy(file, {
    tables: (t) => Object.fromEntries(Object.keys(t).map((k) => [k, { dims: [frames, 0], data: [] }])),
  });
}

/** M4: one value of a baked table replaced (NaN or ±Infinity), at `frame`, element `index` of the frame. */
export function writeNonFiniteBakedOnnx(file: string, table: string, value: number, frame = 10, index = 1): string {
  return writeBakedPolicy(file, {
    tables: (t) => {
      const c = t[table];
      const width = c.dims.slice(1).reduce((a, b) => a * b, 1);
      const data = Float32Array.from(c.data);
      data[frame * width + index] = value;
      return { ...t, [table]: { dims: c.dims, data } };
    },
  });
}

/** M4: body_pos_w declared [F, bodies, 1] (one coordinate per body instead of three). */
export function writeThinBodiesOnnx(file: string): string {
  return writeBakedPolicy(file, {
    tables: (t) => {
      const c = t.body_pos_w;
      const [F, nb] = c.dims;
      const data = new Float32Array(F * nb);
      for (let i = 0; i < F * nb; i++) data[i] = c.data[3 * i];
      return { ...t, body_pos_w: { dims: [F, nb, 1], data } };
    },
  });
}

/** Copies the unitree_rl_mjlab deploy folder (model, weights, deploy.yaml) into `dir`. */
export function copyMjlabDeployFolder(dir: string): string {
  for (const f of ['exported/policy.onnx', 'exported/policy.onnx.data', 'params/deploy.yaml']) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(MJLAB_DEPLOY, f), path.join(dir, f));
  }
  return dir;
}

export const deployYamlOf = (dir: string): string => path.join(dir, 'params', 'deploy.yaml');

/** The mjlab deploy folder with its deploy.yaml edited by `edit`. */
export function writeDeployFolderWith(dir: string, edit: (yaml: string) => string): string {
  copyMjlabDeployFolder(dir);
  const f = deployYamlOf(dir);
  fs.writeFileSync(f, edit(fs.readFileSync(f, 'utf8')));
  return dir;
}

/** C3: deploy.yaml of `bytes` (16 MiB by default, the old JSON limit): one flow list of 0 scalars, 8 M of them. */
export function writeScalarFloodDeployFolder(dir: string, bytes = 16 * MiB - 64): string {
  copyMjlabDeployFolder(dir);
  const n = Math.floor((bytes - 16) / 2);
  const fd = fs.openSync(deployYamlOf(dir), 'w');
  try {
    fs.writeSync(fd, 'flood: [');
    const chunk = Buffer.alloc(MiB, '0,');
    for (let left = 2 * n; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(left, chunk.length));
    fs.writeSync(fd, '0]\n');
  } finally {
    fs.closeSync(fd);
  }
  return dir;
}

/** Minor: deploy.yaml led by a billion-laughs alias bomb (each level 10 aliases of the one before). */
export function writeAliasBombDeployFolder(dir: string, levels = 9): string {
  const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let i = 1; i <= levels; i++)
    lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  return writeDeployFolderWith(dir, (y) => `${lines.join('\n')}\n${y}`);
}

/** Minor: one value of a deploy.yaml list (`key: [v0, …`) replaced by `text` (e.g. ".nan", "1e300"). */
export function replaceFirstListValue(yaml: string, key: string, text: string): string {
  const re = new RegExp(`^(\\s*${key}:\\s*\\[)([^,\\]]+)`, 'm');
  if (!re.test(yaml)) throw new Error(`deploy.yaml has no list ${key}`);
  return yaml.replace(re, `$1${text}`);
}

/** Minor: the mjlab deploy folder whose model names its weights "policy.onnx\0data" (same length, so the protobuf stays valid). */
export function writeNulLocationFolder(dir: string): string {
  copyMjlabDeployFolder(dir);
  const onnx = path.join(dir, 'exported', 'policy.onnx');
  const latin = fs.readFileSync(onnx).toString('latin1').split('policy.onnx.data').join('policy.onnx\u0000data');
  fs.writeFileSync(onnx, Buffer.from(latin, 'latin1'));
  return dir;
}

/**
 * Minor: a SONIC deploy folder whose two models are `bytesEach` long (sparse: the probe graphs
 * followed by zeros, so no disk is used), together over the policy total.
 */
export function writeOversizedSonicFolder(dir: string, bytesEach = 300 * MiB): string {
  writeSonicFolder(
    dir,
    'release',
    Array.from({ length: 64 }, () => 0),
    Array.from({ length: 29 }, () => 0),
  );
  for (const f of ['model_encoder.onnx', 'model_decoder.onnx']) fs.truncateSync(path.join(dir, f), bytesEach);
  return dir;
}
