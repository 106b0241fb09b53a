// Hostile motion files for the clip codecs (src/domain/motion), as bytes, for the hostile-input
// suites and the STOP-latency harness: each is small on disk and claims far more work than it
// holds. Findings of issue 26: M2 (zero-stride tensors claiming 2 M frames), M3 (a pickle of 16 MiB
// of EMPTY_DICT), and the minor ones (a long pickle APPENDS, a deeply nested or `__proto__` .npy
// header). `writeHostileMotionFiles` writes them all to a folder, named by what they are.

import fs from 'node:fs';
import path from 'node:path';
import { MAX_FRAMES } from '../../src/domain/motion/clipCommon';
import { MAX_NPY_HEADER_BYTES } from '../../src/domain/motion/npyArray';
import { MAX_PICKLE_BYTES } from '../../src/domain/motion/torchArchive';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { npyBytes, npzBytes, npzMembersFor, syntheticClip, zipBytes } from '../unit/motionTestHelpers';
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

/** Every generator above, by the file name it is written under. */
export const HOSTILE_MOTION_FILES: Record<string, () => Uint8Array> = {
  'm2-zero-stride.motion': () => zeroStrideMotion(),
  'overlapping-stride.motion': () => overlappingStrideMotion(),
  'm3-empty-dict-pickle.motion': () => emptyDictPickleMotion(),
  'long-appends-pickle.motion': () => longAppendsPickleMotion(),
  'deep-list-pickle.motion': () => deepListPickleMotion(),
  'deep-npy-header.npz': () => deepNpyHeaderNpz(),
  'proto-npy-header.npz': () => protoKeyNpyHeaderNpz(),
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
