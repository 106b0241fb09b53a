// Bounds of the motion codecs, checked from declared sizes before work or allocation: torch tensors
// addressing each stored element once (no stride 0, no overlap), the restricted unpickler's caps,
// and the .npy header's depth, keys and rank. Each refusal is timed and its memory measured in
// process (growth of the process's peak RSS, and of its ArrayBuffers, across the codec call).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_FRAMES } from '../../src/domain/motion/clipCommon';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { MAX_NPY_DIMS, MAX_NPY_HEADER_DEPTH } from '../../src/domain/motion/npyArray';
import { stridedOverlapProblem } from '../../src/domain/motion/stridedArray';
import {
  MAX_PICKLE_MARK_DEPTH,
  MAX_PICKLE_MEMO_ENTRIES,
  MAX_PICKLE_VALUES,
  MAX_TENSOR_DIMS,
  restrictedUnpickle,
} from '../../src/domain/motion/torchArchive';
import { InputError } from '../../src/domain/problems';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { decodeSonicReferenceFolder, MAX_SONIC_METADATA_BYTES } from '../../src/domain/motion/sonicReferenceFolder';
import { MAX_ZIP_ENTRIES } from '../../src/domain/motion/zipArchive';
import {
  commaLinesCsv,
  deepListPickleMotion,
  deepNpyHeaderNpz,
  duplicateMemberNpz,
  emptyArraysJson,
  emptyDictPickleMotion,
  longAppendsPickleMotion,
  manyMembersZip,
  npzWithJointPosHeader,
  overlappingStrideMotion,
  protoKeyNpyHeaderNpz,
  shortLinesCsv,
  sonicShortLinesJointPos,
  zeroStrideMotion,
} from '../helpers/hostileMotionFiles';
import { sharedData } from '../helpers/sharedData';
import { expectInputError } from './motionTestHelpers';
import { pickleDict } from './peerMotionTestHelpers';

const MiB = 1024 * 1024;

interface Cost {
  ms: number;
  /** Growth of the process's peak RSS during the call, MiB (0 when it stayed under the earlier peak). */
  peakGrowthMiB: number;
  /** Growth of process.memoryUsage().arrayBuffers across the call, MiB. */
  arrayBuffersMiB: number;
}

/** Runs `fn`, returning what it threw (or undefined) and its time and memory. */
function measured(label: string, fn: () => unknown): { error: unknown; cost: Cost } {
  const peak0 = process.resourceUsage().maxRSS;
  const ab0 = process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - t0;
  const cost = {
    ms,
    peakGrowthMiB: (process.resourceUsage().maxRSS - peak0) / 1024,
    arrayBuffersMiB: (process.memoryUsage().arrayBuffers - ab0) / MiB,
  };
  console.log(
    `[bounds] ${label}: ${ms.toFixed(0)} ms, peak RSS +${cost.peakGrowthMiB.toFixed(1)} MiB, arrayBuffers ${cost.arrayBuffersMiB >= 0 ? '+' : ''}${cost.arrayBuffersMiB.toFixed(1)} MiB`,
  );
  return { error, cost };
}

/** The refusal is a located, one-line InputError, within `ms` and `mib`. */
function expectBoundedRefusal(
  label: string,
  fn: () => unknown,
  loc: { file: string; key?: string; line?: number; column?: number },
  message: RegExp,
  limits = { ms: 2000, mib: 64 },
): void {
  const { error, cost } = measured(label, fn);
  expect(error, `${label}: expected an InputError, got ${String(error)}`).toBeInstanceOf(InputError);
  const e = error as InputError;
  expect(e.location).toMatchObject(loc);
  expect(e.message).toMatch(message);
  expect(e.message).not.toContain('\n');
  expect(cost.ms).toBeLessThan(limits.ms);
  expect(cost.peakGrowthMiB).toBeLessThan(limits.mib);
  expect(cost.arrayBuffersMiB).toBeLessThan(limits.mib);
}

describe('M2: a torch tensor addresses each stored element once', () => {
  it(`an 1 kB .motion whose tensors claim ${MAX_FRAMES} frames with stride 0 is refused at dof_pos, from declared sizes`, () => {
    const bytes = zeroStrideMotion();
    expect(bytes.length).toBeLessThan(2048);
    const file = 'm2-zero-stride.motion';
    expectBoundedRefusal(
      'M2 zero strides, 2 M frames',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'dof_pos' },
      /^m2-zero-stride\.motion \[dof_pos\]: the tensor \(size \(2000000, 29\), stride \(0, 0\)\) repeats stored values: dimension 0 \(size 2000000\) has stride 0/,
    );
  });

  it('overlapping strides (1, 1) over 1028 stored values for 1000 × 29 entries are refused', () => {
    const file = 'overlap.motion';
    const bytes = overlappingStrideMotion();
    expectBoundedRefusal(
      'overlapping strides',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'dof_pos' },
      /dimension 1 \(size 29, stride 1\) overlaps dimension 0, which reaches element offset 999/,
    );
  });

  it('control: the same clip with one stored frame per frame decodes', () => {
    const frames = 40;
    // a genuine (frames, 29) view: columns 7..35 of a 36-wide storage, stride (36, 1)
    const clip = decodeMotionFile(overlappingStrideMotion(frames, { genuine: true }), { file: 'genuine.motion' });
    expect(clip.frameCount).toBe(frames);
  });

  it('stridedOverlapProblem: the views torch makes pass, stride 0 and interleaved strides fail', () => {
    expect(stridedOverlapProblem([97, 29], [36, 1])).toBeNull(); // columns of a wider storage
    expect(stridedOverlapProblem([97, 33, 4], [1, 97, 97 * 33])).toBeNull(); // permuted
    expect(stridedOverlapProblem([4, 2], [6, 4])).toBeNull(); // x[:, ::4] of a (4, 6)
    expect(stridedOverlapProblem([1, 29], [0, 1])).toBeNull(); // size-1 axes never repeat
    expect(stridedOverlapProblem([5, 29], [0, 1])).toMatch(/dimension 0 \(size 5\) has stride 0/);
    expect(stridedOverlapProblem([3, 3], [2, 1])).toMatch(/dimension 0 \(size 3, stride 2\) overlaps dimension 1/);
  });

  it('stridedOverlapProblem never passes a layout that addresses one element twice (exhaustive, small shapes)', () => {
    let passed = 0;
    for (const shape of [
      [2, 3],
      [3, 2],
      [2, 2, 2],
      [3, 1, 2],
    ])
      for (let code = 0; code < 7 ** shape.length; code++) {
        const strides = shape.map((_, k) => Math.floor(code / 7 ** k) % 7);
        if (stridedOverlapProblem(shape, strides) !== null) continue;
        passed++;
        const seen = new Set<number>();
        const count = shape.reduce((a, d) => a * d, 1);
        for (let c = 0; c < count; c++) {
          let off = 0;
          let rest = c;
          for (let k = shape.length - 1; k >= 0; k--) {
            off += (rest % shape[k]) * strides[k];
            rest = Math.floor(rest / shape[k]);
          }
          expect(seen.has(off), `shape ${shape} strides ${strides}`).toBe(false);
          seen.add(off);
        }
      }
    expect(passed).toBeGreaterThan(100);
  });
});

describe('M3 and the minors: the restricted unpickler is bounded and never recurses', () => {
  it('M3: a 16 MiB pickle of EMPTY_DICT is refused after MAX_PICKLE_VALUES values, at its byte', () => {
    const file = 'm3.motion';
    const bytes = emptyDictPickleMotion();
    expect(bytes.length).toBeLessThan(64 * 1024);
    expectBoundedRefusal(
      'M3 16 MiB of EMPTY_DICT',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'm3/data.pkl' },
      new RegExp(
        `the pickle makes more than ${MAX_PICKLE_VALUES} values.*\\(at byte ${MAX_PICKLE_VALUES + 2} of the pickle\\)$`,
      ),
      { ms: 2000, mib: 128 }, // the 16 MiB data.pkl is inflated, then 100 k values made, before the refusal
    );
  });

  it('a single APPENDS of a million items is a located refusal, not "Maximum call stack size exceeded"', () => {
    const file = 'appends.motion';
    const bytes = longAppendsPickleMotion();
    expectBoundedRefusal(
      'APPENDS of 1 M items',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'appends/data.pkl' },
      /the pickle makes more than 100000 values/,
    );
  });

  it('a million nested lists are a located refusal', () => {
    const file = 'deep.motion';
    const bytes = deepListPickleMotion();
    expectBoundedRefusal(
      'nested lists, depth 1 M',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'deep/data.pkl' },
      /the pickle makes more than 100000 values/,
    );
  });

  it('control: within the caps, a long APPENDS and a deep nesting read without recursion', () => {
    const n = MAX_PICKLE_VALUES - 10;
    const appends = new Uint8Array(n + 6).fill(0x4e);
    appends.set([0x80, 2, 0x5d, 0x28]);
    appends.set([0x65, 0x2e], n + 4);
    expect((restrictedUnpickle(appends, 'f', 'k') as unknown[]).length).toBe(n);
    const depth = MAX_PICKLE_VALUES - 10;
    const deep = new Uint8Array(2 * depth + 4);
    deep.set([0x80, 2]);
    deep.fill(0x5d, 2, depth + 3);
    deep.fill(0x61, depth + 3, 2 * depth + 3);
    deep[2 * depth + 3] = 0x2e;
    let v = restrictedUnpickle(deep, 'f', 'k') as unknown[];
    let levels = 0;
    while (v.length === 1) {
      v = v[0] as unknown[];
      levels++;
    }
    expect(levels).toBe(depth);
  });

  it('more than MAX_PICKLE_MEMO_ENTRIES memo entries, MAX_TENSOR_DIMS dimensions or MAX_PICKLE_MARK_DEPTH open MARKs are refused', () => {
    const puts = new Uint8Array(3 + 5 * (MAX_PICKLE_MEMO_ENTRIES + 1) + 1);
    puts.set([0x80, 2, 0x4e]);
    const dv = new DataView(puts.buffer);
    for (let i = 0; i <= MAX_PICKLE_MEMO_ENTRIES; i++) {
      puts[3 + 5 * i] = 0x72; // LONG_BINPUT i
      dv.setUint32(4 + 5 * i, i, true);
    }
    puts[puts.length - 1] = 0x2e;
    expectInputError(
      () => restrictedUnpickle(puts, 'f', 'k'),
      { file: 'f', key: 'k' },
      new RegExp(`more than ${MAX_PICKLE_MEMO_ENTRIES} memo entries`),
    );
    const wide = pickleDict({
      x: {
        key: '0',
        storage: [0],
        shape: new Array<number>(MAX_TENSOR_DIMS + 1).fill(1),
        stride: new Array<number>(MAX_TENSOR_DIMS + 1).fill(1),
      },
    });
    const e = expectInputError(
      () => restrictedUnpickle(wide, 'f', 'k'),
      { file: 'f', key: 'k' },
      new RegExp(`the tensor has ${MAX_TENSOR_DIMS + 1} dimensions, more than ${MAX_TENSOR_DIMS}`),
    );
    expect(e.message.length).toBeLessThan(200);
    const marks = new Uint8Array(MAX_PICKLE_MARK_DEPTH + 4).fill(0x28);
    marks.set([0x80, 2]);
    expectInputError(
      () => restrictedUnpickle(marks, 'f', 'k'),
      { file: 'f', key: 'k' },
      new RegExp(`more than ${MAX_PICKLE_MARK_DEPTH} nested MARKs \\(at byte ${MAX_PICKLE_MARK_DEPTH + 2} of`),
    );
  });
});

describe('.npy headers: depth, keys and rank', () => {
  it('a header nested ~500,000 lists deep is a located refusal, not "Maximum call stack size exceeded"', () => {
    const file = 'deep-header.npz';
    const bytes = deepNpyHeaderNpz();
    expectBoundedRefusal(
      'NPY header nested 500 k deep',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'joint_pos' },
      new RegExp(`bad \\.npy header: containers nest more than ${MAX_NPY_HEADER_DEPTH} deep at header position 25`),
    );
  });

  it('a header whose keys sit under __proto__ is refused, naming the key', () => {
    const file = 'proto.npz';
    const bytes = protoKeyNpyHeaderNpz();
    expectBoundedRefusal(
      'NPY header with __proto__',
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'joint_pos' },
      /bad \.npy header: unexpected key '__proto__' \(a header has exactly descr, fortran_order, shape\)/,
    );
  });

  it('other keys, a repeated key and more than MAX_NPY_DIMS dimensions are refused', () => {
    const file = 'h.npz';
    const shape = `(4, ${G1_NUM_JOINTS})`;
    for (const [header, why] of [
      [`{'descr': '<f8', 'fortran_order': False, 'shape': ${shape}, 'constructor': 1}`, /unexpected key 'constructor'/],
      [`{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': ${shape}}`, /key 'descr' appears twice/],
      [
        `{'descr': '<f8', 'fortran_order': False, 'shape': (4, ${G1_NUM_JOINTS}${', 1'.repeat(MAX_NPY_DIMS - 1)})}`,
        new RegExp(`shape has ${MAX_NPY_DIMS + 1} dimensions, more than ${MAX_NPY_DIMS}`),
      ],
    ] as const)
      expectInputError(
        () => decodeMotionFile(npzWithJointPosHeader(header), { file }),
        { file, key: 'joint_pos' },
        why,
      );
  });

  it('control: the same NPZ with a plain header decodes', () => {
    const header = `{'descr': '<f8', 'fortran_order': False, 'shape': (4, ${G1_NUM_JOINTS}), }`;
    expect(decodeMotionFile(npzWithJointPosHeader(header), { file: 'plain.npz' }).frameCount).toBe(4);
  });
});

describe('audit of the other codecs: work bounded by the bytes present', () => {
  it('LAFAN1 CSV: 2 M one-character lines (4 MB) are refused at line 1 without arrays for 2 M frames', () => {
    const file = 'short.csv';
    const bytes = shortLinesCsv();
    expectBoundedRefusal(
      'CSV of 2 M short lines',
      () => decodeMotionFile(bytes, { file, fps: 30 }),
      { file, line: 1, column: 2 },
      /expected 36 fields \(x y z, qx qy qz qw, 29 joint angles\), found 1/,
      { ms: 3000, mib: 96 },
    );
  });

  it('LAFAN1 CSV: 16 M lines are refused from the line count, before the text is split', () => {
    const file = 'commas.csv';
    const bytes = commaLinesCsv();
    expectBoundedRefusal(
      'CSV of 16 M lines',
      () => decodeMotionFile(bytes, { file, fps: 30 }),
      { file },
      new RegExp(`the file has more than ${MAX_FRAMES} lines, more than the limit of ${MAX_FRAMES} frames`),
      { ms: 3000, mib: 96 },
    );
  });

  it('SONIC joint_pos.csv: a header then 2 M one-character lines is refused at line 2 without a 2 M × 29 array', () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const folder = 'ref/short';
    expectBoundedRefusal(
      'SONIC joint_pos.csv of 2 M short lines',
      () =>
        decodeSonicReferenceFolder(
          {
            folder,
            jointPos: sonicShortLinesJointPos(),
            bodyPos: enc('body_0_x,body_0_y,body_0_z\n0,0,0.8\n0,0,0.8\n'),
            bodyQuat: enc('body_0_w,body_0_x,body_0_y,body_0_z\n1,0,0,0\n1,0,0,0\n'),
            metadata: enc('Body part indexes:\n[ 0 ]\n'),
          },
          { file: folder },
        ),
      { file: `${folder}/joint_pos.csv`, line: 2 },
      /expected 29 fields \(as the header names\), found 1/,
      { ms: 3000, mib: 96 },
    );
  });

  it('SONIC metadata.txt: more than MAX_SONIC_METADATA_BYTES (16 MiB of newlines) is refused before it is split into lines', () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const folder = 'ref/meta';
    const metadata = new Uint8Array(16 * MiB).fill(0x0a);
    metadata.set(enc('Body part indexes:\n[ 0 ]\n'));
    expectBoundedRefusal(
      'SONIC metadata.txt of 16 M lines',
      () =>
        decodeSonicReferenceFolder(
          { folder, jointPos: enc('joint_0\n0\n'), bodyPos: enc('x\n'), bodyQuat: enc('x\n'), metadata },
          { file: folder },
        ),
      { file: `${folder}/metadata.txt` },
      new RegExp(`is ${16 * MiB} bytes, more than the ${MAX_SONIC_METADATA_BYTES} read`),
    );
  });

  it('motionbench JSON: 11 M empty arrays (32 MiB) are refused from their count, before JSON.parse', () => {
    const file = 'arrays.json';
    const bytes = emptyArraysJson();
    expectBoundedRefusal(
      'JSON of 11 M empty arrays',
      () => decodeMotionFile(bytes, { file, fps: 30 }),
      { file },
      /^arrays\.json: the document holds 11534339 arrays\/objects and up to \d+ values: parsed, it would take about \d+ MiB, more than the 512 MiB budget/,
      { ms: 3000, mib: 96 },
    );
  });

  it(`ZIP: a directory of 65,534 members is refused (more than ${MAX_ZIP_ENTRIES}), a member listed twice too`, () => {
    const file = 'many.npz';
    const bytes = manyMembersZip();
    expectBoundedRefusal(
      'ZIP of 65,534 members',
      () => decodeMotionFile(bytes, { file }),
      { file },
      new RegExp(`lists 65534 members, more than the ${MAX_ZIP_ENTRIES} read`),
    );
    expectInputError(
      () => decodeMotionFile(duplicateMemberNpz(), { file: 'dup.npz' }),
      { file: 'dup.npz' },
      /lists the member joint_pos\.npy twice/,
    );
  });

  it('messages list at most 20 of the names found', () => {
    const e = expectInputError(
      () => decodeMotionFile(manyMembersZip(MAX_ZIP_ENTRIES), { file: 'm.npz', fps: 30 }),
      { file: 'm.npz', key: 'joint_pos' },
      /\(found: m0, m1, .*, m19, and 9980 more\)$/,
    );
    expect(e.message.length).toBeLessThan(400);
  });
});

describe('controls: the real clips decode within the bounds', () => {
  it.each([
    ['protomotions/g1_crouch_to_run.motion', 97],
    ['g1_moves/npz/B_HandsUp.npz', undefined],
    ['g1_moves/csv/B_HandsUp.csv', undefined],
    ['lafan1_g1_csv/walk1_subject1.csv', undefined],
  ])('%s', (rel, frames) => {
    const file = sharedData('motions', rel);
    const bytes = new Uint8Array(readFileSync(file));
    let clip: ReturnType<typeof decodeMotionFile> | undefined;
    const { error } = measured(
      `control ${rel}`,
      () => (clip = decodeMotionFile(bytes, { file, fps: rel.endsWith('.csv') ? 30 : undefined })),
    );
    expect(error).toBeUndefined();
    if (frames !== undefined) expect(clip!.frameCount).toBe(frames);
    else expect(clip!.frameCount).toBeGreaterThan(2);
  });
});
