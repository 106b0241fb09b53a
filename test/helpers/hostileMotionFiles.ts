// Hostile motion files for the clip codecs (src/domain/motion), as bytes, for the hostile-input
// suites and the STOP-latency harness: each is small on disk and claims far more work than it
// holds: zero-stride tensors claiming 2 M frames, a pickle of 16 MiB
// of EMPTY_DICT, and smaller ones (a long pickle APPENDS, a deeply nested or `__proto__` .npy
// header); then what the audit of the other codecs found (CSV files of many short lines, a JSON
// clip of many empty arrays, ZIPs of 65,535 members or a member listed twice).
// `writeHostileMotionFiles` writes them all to a folder, named by what they are (a SONIC folder is
// not among them: sonicShortLinesJointPos is one of its files).

import fs from 'node:fs';
import path from 'node:path';
import { MAX_FRAMES } from '../../src/domain/motion/clipCommon';
import { MAX_NPY_HEADER_BYTES } from '../../src/domain/motion/npyArray';
import { MAX_PICKLE_BYTES } from '../../src/domain/motion/torchArchive';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { npyBytes, npzBytes, npzMembersFor, syntheticClip, zipBytes, zipEntries } from '../unit/motionTestHelpers';
import { PickleWriter, pickleDict, torchZipBytes, type TensorSpec } from '../unit/peerMotionTestHelpers';

/** ProtoMotions' G1 asset: 33 bodies (protoMotionsMotion.ts). */
const PROTO_BODIES = 33;

/**
 * M2: a ProtoMotions .motion (under 1 kB) whose four tensors claim `frames` frames (MAX_FRAMES by
 * default: 18.5 h at 30 fps) with stride 0 on every axis but a quaternion's last, over storages of
 * one element (zeros) and one unit quaternion (0, 0, 0, 1). Expanded, it is 5 GB of float64.
 */
export function zeroStrideMotion(frames = MAX_FRAMES): Uint8Array {
  const B = PROTO_BODIES;
  const zero = { key: '0', storage: [0] };
  const quat = { key: '1', storage: [0, 0, 0, 1] };
  const tensors: Record<string, TensorSpec> = {
    dof_pos: { ...zero, shape: [frames, G1_NUM_JOINTS], stride: [0, 0] },
    dof_vel: { ...zero, shape: [frames, G1_NUM_JOINTS], stride: [0, 0] },
    rigid_body_pos: { ...zero, shape: [frames, B, 3], stride: [0, 0, 0] },
    rigid_body_rot: { ...quat, shape: [frames, B, 4], stride: [0, 0, 1] },
  };
  return torchZipBytes('m2', pickleDict({ fps: 30, ...tensors }), Object.values(tensors));
}

/**
 * A ProtoMotions .motion whose dof_pos has `frames` frames but overlapping strides (1, 1): frame k
 * is frame k−1 shifted by one element, so 29 + frames − 1 stored values claim 29 × frames.
 * `genuine`: the success control, dof_pos as columns 7..35 of a 36-wide storage, stride (36, 1),
 * as ProtoMotions saves it.
 */
export function overlappingStrideMotion(frames = 1000, opts: { genuine?: boolean } = {}): Uint8Array {
  const B = PROTO_BODIES;
  const dofStorage = new Array<number>(opts.genuine ? frames * 36 : frames + G1_NUM_JOINTS - 1).fill(0);
  const pos = new Array<number>(frames * B * 3).fill(0);
  const rot: number[] = [];
  for (let i = 0; i < frames * B; i++) rot.push(0, 0, 0, 1);
  const tensors: Record<string, TensorSpec> = {
    dof_pos: opts.genuine
      ? { key: '0', storage: dofStorage, offset: 7, shape: [frames, G1_NUM_JOINTS], stride: [36, 1] }
      : { key: '0', storage: dofStorage, shape: [frames, G1_NUM_JOINTS], stride: [1, 1] },
    rigid_body_pos: { key: '1', storage: pos, shape: [frames, B, 3], stride: [B * 3, 3, 1] },
    rigid_body_rot: { key: '2', storage: rot, shape: [frames, B, 4], stride: [B * 4, 4, 1] },
  };
  return torchZipBytes('overlap', pickleDict({ fps: 30, ...tensors }), Object.values(tensors));
}

/** A torch.save archive around a raw data.pkl (DEFLATE-compressed: a repetitive pickle is tiny on disk). */
export function motionWithPickle(pickle: Uint8Array, prefix = 'hostile'): Uint8Array {
  return zipBytes([
    { name: `${prefix}/data.pkl`, data: pickle, method: 8 },
    { name: `${prefix}/byteorder`, data: new TextEncoder().encode('little') },
  ]);
}

/** M3: a .motion whose data.pkl is MAX_PICKLE_BYTES of PROTO 2 then EMPTY_DICT…, STOP (16 M dicts; ~16 kB on disk). */
export function emptyDictPickleMotion(pickleBytes = MAX_PICKLE_BYTES): Uint8Array {
  const pkl = new Uint8Array(pickleBytes).fill(0x7d);
  pkl.set([0x80, 2]);
  pkl[pkl.length - 1] = 0x2e;
  return motionWithPickle(pkl, 'm3');
}

/** A .motion whose data.pkl appends `items` NONEs to one list with a single APPENDS (the spread that overflowed the call stack). */
export function longAppendsPickleMotion(items = 1_000_000): Uint8Array {
  const pkl = new Uint8Array(items + 6).fill(0x4e);
  pkl.set([0x80, 2, 0x5d, 0x28]); // PROTO 2, EMPTY_LIST, MARK
  pkl[pkl.length - 2] = 0x65; // APPENDS
  pkl[pkl.length - 1] = 0x2e; // STOP
  return motionWithPickle(pkl, 'appends');
}

/** A .motion whose data.pkl nests `depth` lists, each appended to the one before (EMPTY_LIST, then (EMPTY_LIST, APPEND)…). */
export function deepListPickleMotion(depth = 1_000_000): Uint8Array {
  const w = new PickleWriter().op(0x80, 2, 0x5d);
  for (let i = 0; i < depth; i++) w.op(0x5d);
  for (let i = 0; i < depth; i++) w.op(0x61);
  return motionWithPickle(w.op(0x2e).bytes(), 'deep');
}

/** A synthetic mjlab NPZ (4 frames) whose joint_pos member has `header` as its .npy header dict. */
export function npzWithJointPosHeader(header: string, version: 1 | 2 = 2): Uint8Array {
  const clip = syntheticClip(4);
  return npzBytes(npzMembersFor(clip), {
    joint_pos: npyBytes([4, G1_NUM_JOINTS], clip.joints.flat(), { header, version }),
  });
}

/** An NPZ whose joint_pos .npy header nests lists `depth` deep in its descr (the recursive parser overflowed the call stack). */
export function deepNpyHeaderNpz(depth = Math.floor((MAX_NPY_HEADER_BYTES - 200) / 2)): Uint8Array {
  return npzWithJointPosHeader(
    `{'descr': ${'['.repeat(depth)}${']'.repeat(depth)}, 'fortran_order': False, 'shape': (4, ${G1_NUM_JOINTS}), }`,
  );
}

/** An NPZ whose joint_pos .npy header states its keys only under `__proto__` (read through the prototype, it was accepted). */
export function protoKeyNpyHeaderNpz(): Uint8Array {
  return npzWithJointPosHeader(
    `{'__proto__': {'descr': '<f8', 'fortran_order': False, 'shape': (4, ${G1_NUM_JOINTS})}}`,
    1,
  );
}

// ---- the text and ZIP codecs: many cheap lines, brackets or members -----------------------------

const repeated = (unit: string, times: number, head = '', tail = ''): Uint8Array => {
  const u = new TextEncoder().encode(unit);
  const h = new TextEncoder().encode(head);
  const t = new TextEncoder().encode(tail);
  const out = new Uint8Array(h.length + u.length * times + t.length);
  out.set(h);
  for (let i = 0; i < times; i++) out.set(u, h.length + i * u.length);
  out.set(t, h.length + u.length * times);
  return out;
};

/** A LAFAN1 CSV of `lines` one-character lines ("x\n", 4 MB): the reader allocated for every line as a frame (576 MB) before reading line 1. */
export function shortLinesCsv(lines = MAX_FRAMES): Uint8Array {
  return repeated('x\n', lines);
}

/** A LAFAN1 CSV of `lines` lines holding only a comma (",\n"): more lines than MAX_FRAMES, refused only after splitting them all. */
export function commaLinesCsv(lines = 16 * 1024 * 1024): Uint8Array {
  return repeated(',\n', lines);
}

/** A SONIC joint_pos.csv: its real header, then `lines` one-character lines (it allocated lines × 29 float64 first). */
export function sonicShortLinesJointPos(lines = MAX_FRAMES): Uint8Array {
  const header = Array.from({ length: G1_NUM_JOINTS }, (_, i) => `joint_${i}`).join(',');
  return repeated('x\n', lines, `${header}\n`);
}

/** A motionbench JSON of `arrays` empty arrays (`[],` repeated, 3 bytes each): JSON.parse makes each one. */
export function emptyArraysJson(arrays = 11 * 1024 * 1024): Uint8Array {
  return repeated('[],', arrays, '{"format": "motionbench-clip/1", "pad": [', '[]]}');
}

/** A ZIP whose directory lists `members` empty members (65,534, the most without ZIP64, in a 3.4 MB file). */
export function manyMembersZip(members = 65_534): Uint8Array {
  return zipEntries(
    Array.from({ length: members }, (_, i) => ({
      name: `m${i}.npy`,
      method: 0,
      body: new Uint8Array(0),
      crc: 0,
      size: 0,
    })),
  );
}

/** A valid synthetic mjlab NPZ that lists joint_pos twice, the second copy holding other values. */
export function duplicateMemberNpz(): Uint8Array {
  const clip = syntheticClip(4);
  const members = npzMembersFor(clip);
  const other = npyBytes([4, G1_NUM_JOINTS], new Array<number>(4 * G1_NUM_JOINTS).fill(0.5));
  return zipBytes([
    ...Object.entries(members).map(([k, data]) => ({ name: `${k}.npy`, data })),
    { name: 'joint_pos.npy', data: other },
  ]);
}

/**
 * A SONIC reference folder of five sparse files of `mibEach` MiB each (zeros, no disk used): each
 * within the per-file limit, 1.25 GB together. Returns the folder.
 */
export function sparseSonicFolder(dir: string, mibEach = 250): string {
  const folder = path.join(dir, 'sonic-sparse');
  fs.mkdirSync(folder, { recursive: true });
  for (const name of ['joint_pos.csv', 'body_pos.csv', 'body_quat.csv', 'metadata.txt', 'joint_vel.csv']) {
    const fd = fs.openSync(path.join(folder, name), 'w');
    fs.ftruncateSync(fd, mibEach * 1024 * 1024);
    fs.closeSync(fd);
  }
  return folder;
}

/** Every generator above, by the file name it is written under. */
export const HOSTILE_MOTION_FILES: Record<string, () => Uint8Array> = {
  'm2-zero-stride.motion': () => zeroStrideMotion(),
  'overlapping-stride.motion': () => overlappingStrideMotion(),
  'm3-empty-dict-pickle.motion': () => emptyDictPickleMotion(),
  'long-appends-pickle.motion': () => longAppendsPickleMotion(),
  'deep-list-pickle.motion': () => deepListPickleMotion(),
  'deep-npy-header.npz': () => deepNpyHeaderNpz(),
  'proto-npy-header.npz': () => protoKeyNpyHeaderNpz(),
  'short-lines.csv': () => shortLinesCsv(),
  'comma-lines.csv': () => commaLinesCsv(),
  'empty-arrays.json': () => emptyArraysJson(),
  'many-members.npz': () => manyMembersZip(),
  'duplicate-member.npz': () => duplicateMemberNpz(),
};

/** Writes every hostile motion file into `dir`; returns their paths by name. */
export function writeHostileMotionFiles(dir: string): Record<string, string> {
  fs.mkdirSync(dir, { recursive: true });
  const out: Record<string, string> = {};
  for (const [name, make] of Object.entries(HOSTILE_MOTION_FILES)) {
    out[name] = path.join(dir, name);
    fs.writeFileSync(out[name], make());
  }
  return out;
}
