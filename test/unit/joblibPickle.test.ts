import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeHumanoidverseMotionPkl } from '../../src/domain/motion/humanoidverseMotionPkl';
import { NumpyArray, readJoblibPickle } from '../../src/domain/motion/joblibPickle';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { PickleDict, restrictedUnpickle } from '../../src/domain/motion/torchArchive';
import { sharedData } from '../helpers/sharedData';

// The restricted reader of joblib/numpy pickles (HumanoidVerse motion .pkl files): arrays in
// joblib's NumpyArrayWrapper layout and numpy's own reduce come out; any other global is refused
// at its opcode with the byte offset, before anything could run; an array whose declared size
// exceeds the bytes left is refused before it is read.

// ---------------------------------------------------------------- a tiny pickle writer
const enc = new TextEncoder();
const str = (s: string) => {
  const b = enc.encode(s);
  return [0x8c, b.length, ...b];
};
const int4 = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n, true);
  return [0x4a, ...b];
};
const glob = (mod: string, name: string) => [...str(mod), ...str(name), 0x93];
const MARK = 0x28;
const dtype = (code: string, order = '<') => [
  ...glob('numpy', 'dtype'),
  ...str(code),
  0x89,
  0x88,
  0x87,
  0x52, // REDUCE numpy.dtype(code, False, True)
  MARK,
  ...int4(3),
  ...str(order),
  0x4e,
  0x4e,
  0x4e,
  ...int4(-1),
  ...int4(-1),
  ...int4(0),
  0x74,
  0x62, // BUILD with the dtype state
];
const shapeTuple = (shape: number[]) => [MARK, ...shape.flatMap(int4), 0x74];
/** joblib's NumpyArrayWrapper followed by the padding byte, the padding and the raw data. */
const wrapper = (shape: number[], code: string, data: Uint8Array, order: 'C' | 'F' = 'C', codeOrder = '<') => [
  ...glob('joblib.numpy_pickle', 'NumpyArrayWrapper'),
  0x29,
  0x81, // NEWOBJ
  0x7d,
  MARK,
  ...str('subclass'),
  ...glob('numpy', 'ndarray'),
  ...str('shape'),
  ...shapeTuple(shape),
  ...str('order'),
  ...str(order),
  ...str('dtype'),
  ...dtype(code, codeOrder),
  ...str('allow_mmap'),
  0x88,
  ...str('numpy_array_alignment_bytes'),
  0x4b,
  16,
  0x75, // SETITEMS
  0x62, // BUILD → the array's bytes follow
  3,
  0xff,
  0xff,
  0xff,
  ...data,
];
const f4 = (v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
const pickle = (...body: number[][]) => Uint8Array.from([0x80, 4, ...body.flat(), 0x2e]);
/** {name: {key: value, …}} */
const motionDict = (name: string, entries: [string, number[]][]) => [
  0x7d,
  ...str(name),
  0x7d,
  MARK,
  ...entries.flatMap(([k, v]) => [...str(k), ...v]),
  0x75,
  0x73,
];

const N = 2;
const dof = Array.from({ length: N * 23 }, (_, i) => (i % 23) / 100 + Math.floor(i / 23));
const synthetic = () =>
  pickle(
    motionDict('clip', [
      ['root_trans_offset', wrapper([N, 3], 'f4', f4([0, 0, 0.8, 0.1, 0, 0.8]))],
      ['root_rot', wrapper([N, 4], 'f4', f4([0, 0, 0, 1, 0, 0, Math.SQRT1_2, Math.SQRT1_2]))],
      ['dof', wrapper([N, 23], 'f4', f4(dof))],
      ['fps', [0x4b, 30]],
    ]),
  );

describe('joblib/numpy pickle reader', () => {
  it('reads a joblib motion: 23-dof columns mapped by name, wrists 0, root quaternion xyzw → wxyz', () => {
    const clip = decodeHumanoidverseMotionPkl(synthetic(), { file: 'm.pkl' });
    expect(clip.provenance.format).toBe('humanoidverse-pkl');
    expect(clip.frameCount).toBe(2);
    expect(clip.fps).toBe(30);
    const at = (n: string) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
    // column 19 of PBHC's 23-dof order is right_shoulder_pitch_joint (canonical 22)
    expect(clip.jointPosRad[29 + at('right_shoulder_pitch_joint')]).toBeCloseTo(1.19, 6);
    expect(clip.jointPosRad[29 + at('left_elbow_joint')]).toBeCloseTo(1.18, 6);
    for (const n of G1_JOINT_NAMES.filter((j) => j.includes('wrist'))) expect(clip.jointPosRad[29 + at(n)]).toBe(0);
    expect(Array.from(clip.rootQuatWxyz.slice(4, 8)).map((v) => +v.toFixed(6))).toEqual([
      +Math.SQRT1_2.toFixed(6),
      0,
      0,
      +Math.SQRT1_2.toFixed(6),
    ]);
    // found by content whatever the name says
    expect(decodeMotionFile(synthetic(), { file: 'm.bin' }).provenance.format).toBe('humanoidverse-pkl');
  });

  it('reads a 29-wide dof in the G1 order and refuses other widths', () => {
    const d29 = Array.from({ length: N * 29 }, (_, i) => (i % 29) / 100);
    const body = (width: number, values: number[]) =>
      pickle(
        motionDict('clip', [
          ['root_trans_offset', wrapper([N, 3], 'f4', f4([0, 0, 0.8, 0, 0, 0.8]))],
          ['root_rot', wrapper([N, 4], 'f4', f4([0, 0, 0, 1, 0, 0, 0, 1]))],
          ['dof', wrapper([N, width], 'f4', f4(values))],
          ['fps', [0x4b, 50]],
        ]),
      );
    const clip = decodeHumanoidverseMotionPkl(body(29, d29), { file: 'w.pkl' });
    expect(clip.jointPosRad[29 + 20]).toBeCloseTo(0.2, 6); // left_wrist_pitch_joint, column 20
    expect(clip.provenance.jointOrder).toMatch(/^canonical: a 29-wide dof/);
    expect(() => decodeHumanoidverseMotionPkl(body(22, d29.slice(0, N * 22)), { file: 'w22.pkl' })).toThrow(
      /^w22\.pkl \[clip\.dof\]: has 22 joints; only PBHC's 23-dof G1/,
    );
  });

  it('reads PBHC’s released Horse-stance_pose.pkl', () => {
    const file = sharedData('policies', 'pbhc_horse_stance_pose', 'Horse-stance_pose.pkl');
    const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(file)), { file });
    expect([clip.frameCount, clip.fps, clip.fps && clip.provenance.fpsSource]).toEqual([210, 30, 'file']);
    // frame 0 is the training default pose: knees 0.3, hip pitch −0.1, elbows 0.9 (config.yaml)
    const at = (n: string) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
    expect(clip.jointPosRad[at('left_knee_joint')]).toBeCloseTo(0.3, 2);
    expect(clip.jointPosRad[at('right_elbow_joint')]).toBeCloseTo(0.9, 1);
    expect(clip.rootPosM[2]).toBeCloseTo(0.8, 3);
  });

  it('reads numpy’s own reduce layout and Fortran order', () => {
    const raw = f4([1, 2, 3, 4, 5, 6]);
    const reconstruct = pickle([
      ...glob('numpy.core.multiarray', '_reconstruct'),
      ...glob('numpy', 'ndarray'),
      ...shapeTuple([0]),
      0x43,
      1,
      0x62, // SHORT_BINBYTES b'b'
      0x87,
      0x52,
      MARK,
      ...int4(1),
      ...shapeTuple([2, 3]),
      ...dtype('f4'),
      0x89,
      0x43,
      raw.length,
      ...raw,
      0x74,
      0x62,
    ]);
    const a = readJoblibPickle(reconstruct, 'r.pkl') as NumpyArray;
    expect([a.shape, Array.from(a.toFloat64())]).toEqual([
      [2, 3],
      [1, 2, 3, 4, 5, 6],
    ]);
    // order 'F': the bytes hold the transpose (column-major); read back in C order
    const fortran = readJoblibPickle(pickle(wrapper([2, 3], 'f4', raw, 'F')), 'f.pkl') as NumpyArray;
    expect(Array.from(fortran.toFloat64())).toEqual([1, 3, 5, 2, 4, 6]);
  });

  it('refuses os.system and builtins.eval at the opcode that names them, without running anything', () => {
    const viaGlobal = Uint8Array.from([
      0x80,
      2,
      ...enc.encode('cos\nsystem\n'),
      ...str('touch /tmp/x'),
      0x85,
      0x52,
      0x2e,
    ]);
    expect(() => readJoblibPickle(viaGlobal, 'g.pkl')).toThrow(
      /^g\.pkl \[pickle\]: the pickle names the global os\.system, which is not allowed: only numpy arrays and plain containers are read .*\(at byte 2 of the pickle\)$/,
    );
    const viaStack = pickle([...glob('builtins', 'eval'), ...str('1+1'), 0x85, 0x52]);
    expect(() => readJoblibPickle(viaStack, 'e.pkl')).toThrow(
      /names the global builtins\.eval.*\(at byte 18 of the pickle\)$/,
    );
    // the same names are refused inside a motion dict, with the file's key path in the error
    const nested = pickle(motionDict('clip', [['dof', [...glob('posix', 'system'), ...str('id'), 0x85, 0x52]]]));
    expect(() => decodeHumanoidverseMotionPkl(nested, { file: 'n.pkl' })).toThrow(/names the global posix\.system/);
  });

  it('refuses an array whose declared size exceeds the file before reading it', () => {
    const huge = pickle(wrapper([100_000, 100_000], 'f8', f4([1, 2])));
    expect(() => readJoblibPickle(huge, 'h.pkl')).toThrow(
      /an array of shape \(100000, 100000\) and dtype f8 declares 80000000000 bytes, but the file has \d+ left; refused before reading \(at byte \d+ of the pickle\)/,
    );
    const overflow = pickle(wrapper([2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1], 'f8', f4([1])));
    expect(() => readJoblibPickle(overflow, 'o.pkl')).toThrow(/declares more elements than can be addressed/);
  });

  it('refuses object and big-endian arrays, truncated data and several motions', () => {
    expect(() => readJoblibPickle(pickle(wrapper([1], 'O', new Uint8Array(8))), 'o.pkl')).toThrow(
      /numpy\.dtype\(O\): only the numeric and bool dtypes/,
    );
    expect(() => readJoblibPickle(pickle(wrapper([1], 'f4', f4([1]), 'C', '>')), 'b.pkl')).toThrow(
      /byte order '>': only little-endian/,
    );
    const full = synthetic();
    expect(() => decodeHumanoidverseMotionPkl(full.subarray(0, full.length - 40), { file: 't.pkl' })).toThrow(
      /^t\.pkl \[pickle\]: /,
    );
    const two = pickle([0x7d, MARK, ...str('a'), 0x7d, ...str('b'), 0x7d, 0x75]);
    expect(() => decodeHumanoidverseMotionPkl(two, { file: 'two.pkl' })).toThrow(
      /holds 2 motions \(a, b\); a clip is one motion/,
    );
    // the torch .motion reader keeps its own, narrower profile: joblib's wrapper is not allowed there
    expect(() => restrictedUnpickle(synthetic(), 'x', 'data.pkl')).toThrow(
      /names the global joblib\.numpy_pickle\.NumpyArrayWrapper, which is not allowed: only tensors/,
    );
    expect(readJoblibPickle(synthetic(), 's.pkl')).toBeInstanceOf(PickleDict);
  });
});
