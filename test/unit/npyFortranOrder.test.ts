import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeMjlabNpz, listNpzMembers } from '../../src/domain/motion/mjlabNpz';
import { readNpyFloatArray } from '../../src/domain/motion/npyArray';
import { readZipEntry } from '../../src/domain/motion/zipArchive';
import { sharedData } from '../helpers/sharedData';
import { npyBytes, zipBytes, type ZipMember } from './motionTestHelpers';
import { f4, toFortranOrder } from './peerMotionTestHelpers';

// numpy writes an array that is Fortran-contiguous (a transpose, some fancy indexing) with
// fortran_order True: its bytes are column-major. Those files used to be refused; they are read
// and transposed into C order now (src/domain/motion/npyArray.ts).

const file = 'arrays.npy';

/** C-order values whose every element says where it is: v[i, j, k] = 100 i + 10 j + k. */
function indexed(shape: number[]): number[] {
  const out: number[] = [];
  const rec = (prefix: number[]) => {
    if (prefix.length === shape.length) {
      out.push(prefix.reduce((a, d, k) => a + d * 10 ** (shape.length - 1 - k), 0));
      return;
    }
    for (let i = 0; i < shape[prefix.length]; i++) rec([...prefix, i]);
  };
  rec([]);
  return out;
}

describe('NPY fortran_order True', () => {
  it.each([[[3, 4]], [[2, 3, 4]], [[2, 1, 3, 2]]])(
    'reads shape %j as the C-order array of the same values',
    (shape) => {
      const c = indexed(shape);
      const fromC = readNpyFloatArray(npyBytes(shape, c), file, 'a');
      const fromF = readNpyFloatArray(npyBytes(shape, toFortranOrder(shape, c), { fortran: true }), file, 'a');
      expect(fromF.fortranOrder).toBe(true);
      expect(fromC.fortranOrder).toBe(false);
      expect(fromF.shape).toEqual(shape);
      expect(Array.from(fromF.data)).toEqual(c);
      expect(Array.from(fromF.data)).toEqual(Array.from(fromC.data));
    },
  );

  it('element (i, j, k) of a (2, 3, 4) Fortran array is stored at i + 2 j + 6 k (a wrong stride reading fails)', () => {
    // Written by hand, not by toFortranOrder: stored[i + 2j + 6k] = 100 i + 10 j + k.
    const stored = new Array<number>(24);
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) stored[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    const a = readNpyFloatArray(npyBytes([2, 3, 4], stored, { fortran: true }), file, 'a');
    expect(a.data[1 * 12 + 2 * 4 + 3]).toBe(123); // C index of (1, 2, 3)
    expect(a.data[0 * 12 + 1 * 4 + 0]).toBe(10); // (0, 1, 0)
    expect(Array.from(a.data)).toEqual(indexed([2, 3, 4]));
    // negative controls: the same bytes read as C order, or as the transpose (4, 3, 2) in C order, are other arrays
    const asC = readNpyFloatArray(npyBytes([2, 3, 4], stored), file, 'a');
    expect(Array.from(asC.data)).not.toEqual(indexed([2, 3, 4]));
    const asTransposed = readNpyFloatArray(npyBytes([4, 3, 2], stored), file, 'a');
    expect(Array.from(asTransposed.data)).not.toEqual(indexed([2, 3, 4]));
  });

  it('a 1-d and a 0-d array are the same in both orders; float32 and big-endian too', () => {
    expect(Array.from(readNpyFloatArray(npyBytes([5], [1, 2, 3, 4, 5], { fortran: true }), file, 'a').data)).toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(Array.from(readNpyFloatArray(npyBytes([], [7], { fortran: true }), file, 'a').data)).toEqual([7]);
    const shape = [3, 2];
    const c = indexed(shape);
    for (const descr of ['<f4', '>f4', '>f8']) {
      const a = readNpyFloatArray(npyBytes(shape, toFortranOrder(shape, c), { fortran: true, descr }), file, 'a');
      expect(Array.from(a.data)).toEqual(c);
    }
  });

  it('an mjlab NPZ with Fortran-order members (a real G1 Moves clip re-saved so) decodes to the same clip', () => {
    const real = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
    const bytes = new Uint8Array(readFileSync(real));
    const original = decodeMjlabNpz(bytes, { file: real });
    const members: ZipMember[] = [];
    for (const [key, entry] of listNpzMembers(bytes, real)) {
      const data = readZipEntry(bytes, entry, real, key);
      if (key === 'fps') {
        members.push({ name: 'fps.npy', data });
        continue;
      }
      const a = readNpyFloatArray(data, real, key);
      members.push({ name: `${key}.npy`, data: f4(a.shape, a.data, true) });
    }
    const fortranFile = 'B_HandsUp_fortran.npz';
    const reread = decodeMjlabNpz(zipBytes(members), { file: fortranFile });
    expect(reread.frameCount).toBe(441);
    expect(reread.id).toBe(original.id);
    expect(Array.from(reread.jointPosRad)).toEqual(Array.from(original.jointPosRad));
    expect(Array.from(reread.bodyPosW!.data)).toEqual(Array.from(original.bodyPosW!.data));
  });
});
