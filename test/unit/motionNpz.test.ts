import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeMjlabNpz, readNpzFps } from '../../src/domain/motion/mjlabNpz';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { readNpyFloatArray } from '../../src/domain/motion/npyArray';
import {
  csvText,
  enc,
  expectInputError,
  J,
  npyBytes,
  npzBytes,
  npzMembersFor,
  syntheticClip,
  zip64Bytes,
  zipBytes,
} from './motionTestHelpers';
import { toFortranOrder } from './peerMotionTestHelpers';

const file = 'motions/test.npz';
const c = syntheticClip(6);
const base = npzMembersFor(c);

describe('mjlab NPZ decoder', () => {
  it('reads fps, joint_pos, joint_vel and the root pose from body 0 (wxyz)', () => {
    const clip = decodeMjlabNpz(npzBytes(base), { file });
    expect(clip.frameCount).toBe(6);
    expect(clip.fps).toBe(50);
    expect(clip.provenance).toMatchObject({ file, format: 'mjlab-npz', fpsSource: 'file' });
    expect(clip.name).toBe('test');
    for (let k = 0; k < 6; k++) {
      const [x, y, z, w] = c.rootQuatXyzw[k];
      expect(Array.from(clip.rootQuatWxyz.subarray(k * 4, k * 4 + 4))).toEqual(
        [w, x, y, z].map((v) => expect.closeTo(v, 14)),
      );
      expect(Array.from(clip.rootPosM.subarray(k * 3, k * 3 + 3))).toEqual(c.rootPos[k]);
      expect(Array.from(clip.jointPosRad.subarray(k * J, k * J + J))).toEqual(c.joints[k]);
    }
    expect(clip.jointVelRadS?.[7]).toBe(0.25);
    expect(clip.bodyPosW?.bodyCount).toBe(2);
    expect(clip.bodyPosW?.data.length).toBe(6 * 2 * 3);
  });

  it('gives the same id as the same motion in CSV at the same fps', () => {
    // CSV stores 6 decimals: build the NPZ from the values the CSV holds
    const csvClip = decodeLafan1Csv(enc(csvText(c)), { file: 'x.csv', fps: 50 });
    const rounded = {
      N: c.N,
      rootPos: c.rootPos.map((p) => p.map((v) => Number(v.toFixed(6)))),
      rootQuatXyzw: c.rootQuatXyzw.map((p) => p.map((v) => Number(v.toFixed(6)))),
      joints: c.joints.map((p) => p.map((v) => Number(v.toFixed(6)))),
    };
    const npzClip = decodeMjlabNpz(npzBytes(npzMembersFor(rounded)), { file });
    expect(npzClip.id).toBe(csvClip.id);
    expect(npzClip.provenance.fileSha256).not.toBe(csvClip.provenance.fileSha256);
  });

  it('accepts <f4, >f4 and >f8 (big-endian converted) and DEFLATE members', () => {
    const f8 = decodeMjlabNpz(npzBytes(base), { file });
    for (const descr of ['<f4', '>f4', '>f8']) {
      const clip = decodeMjlabNpz(npzBytes(npzMembersFor(c, descr)), { file });
      expect(clip.frameCount).toBe(6);
      const tol = descr.endsWith('4') ? 1e-6 : 0;
      for (let i = 0; i < clip.jointPosRad.length; i++)
        expect(Math.abs(clip.jointPosRad[i] - f8.jointPosRad[i])).toBeLessThanOrEqual(tol);
      for (let i = 0; i < clip.rootPosM.length; i++)
        expect(Math.abs(clip.rootPosM[i] - f8.rootPosM[i])).toBeLessThanOrEqual(tol);
    }
    expect(decodeMjlabNpz(npzBytes(base, {}, 8), { file }).id).toBe(f8.id);
  });

  it('reads a numpy.savez_compressed file (DEFLATE, ZIP64 extras, int64 fps) and ignores extra keys', () => {
    const p = path.resolve(import.meta.dirname, '../fixtures/clips/synthetic_compressed.npz');
    const bytes = new Uint8Array(readFileSync(p));
    const clip = decodeMjlabNpz(bytes, { file: p });
    expect(clip.fps).toBe(50);
    expect(clip.frameCount).toBe(5);
    expect(clip.jointPosRad[4 * J + 28]).toBeCloseTo(0.05 * 14, 6);
    expect(clip.rootPosM[3 * 3]).toBeCloseTo(0.3, 12);
    expect(clip.rootQuatWxyz[4 * 4 + 3]).toBeCloseTo(Math.sin(0.2), 12);
    expect(readNpzFps(bytes, p)).toBe(50);
  });

  it('reads a ZIP64 archive (ZIP64 end record and central-directory extra fields)', () => {
    const z = zip64Bytes(Object.entries(base).map(([k, v]) => ({ name: `${k}.npy`, data: v })));
    expect(decodeMjlabNpz(z, { file }).id).toBe(decodeMjlabNpz(npzBytes(base), { file }).id);
    // locator missing → a clear error
    const broken = z.slice();
    new DataView(broken.buffer).setUint32(broken.length - 22 - 20, 0, true);
    expectInputError(
      () => decodeMjlabNpz(broken, { file }),
      { file },
      /ZIP64 end-of-central-directory locator missing/,
    );
  });

  it('ignores keys it does not use and tolerates a missing joint_vel', () => {
    const clip = decodeMjlabNpz(
      npzBytes(base, { joint_vel: null, body_lin_vel_w: npyBytes([2], [1, 2], { descr: '<i8' }) }),
      { file },
    );
    expect(clip.jointVelRadS).toBeUndefined();
  });

  describe('fps', () => {
    it('accepts a 0-d fps and an equal --fps', () => {
      const clip = decodeMjlabNpz(npzBytes(base, { fps: npyBytes([], [50]) }), { file, fps: 50 });
      expect(clip.fps).toBe(50);
      expect(clip.provenance.fpsSource).toBe('file');
    });
    it('rejects a --fps that disagrees with the file', () => {
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base), { file, fps: 30 }),
        { file, key: 'fps' },
        /states fps 50 but --fps 30/,
      );
    });
    it('uses --fps when the file has none, else asks for it', () => {
      expect(decodeMjlabNpz(npzBytes(base, { fps: null }), { file, fps: 25 }).provenance.fpsSource).toBe('user');
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { fps: null }), { file }),
        { file, key: 'fps' },
        /missing.*--fps/,
      );
    });
    it.each([0, -1, NaN, 2000])('rejects fps %s in the file', (v) => {
      expectInputError(() => decodeMjlabNpz(npzBytes(base, { fps: npyBytes([1], [v]) }), { file }), {
        file,
        key: 'fps',
      });
    });
    it('rejects an fps array that is not a scalar', () => {
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { fps: npyBytes([2], [50, 50]) }), { file }),
        { file, key: 'fps' },
        /not a scalar/,
      );
    });
  });

  describe('bad input names the file and key', () => {
    it.each(['joint_pos', 'body_pos_w', 'body_quat_w'])('missing %s', (key) => {
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { [key]: null }), { file }),
        { file, key },
        new RegExp(`${key} is missing`),
      );
    });
    it.each([
      ['joint_pos', [6, 28], /expected \(N, 29\)/],
      ['joint_pos', [6 * 29], /expected \(N, 29\)/],
      ['joint_vel', [6, 30], /expected \(N, 29\)/],
      ['body_pos_w', [6, 2, 4], /expected \(N, B, 3\)/],
      ['body_quat_w', [6, 2, 3], /expected \(N, B, 4\)/],
      ['body_quat_w', [6, 3, 4], /3 bodies but body_pos_w has 2/],
    ] as const)('wrong shape of %s %j', (key, shape, msg) => {
      const n = shape.reduce((a, b) => a * b, 1);
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { [key]: npyBytes([...shape], new Array(n).fill(0.5)) }), { file }),
        { file, key },
        msg,
      );
    });
    it.each(['joint_vel', 'body_pos_w', 'body_quat_w'])('mismatched N in %s', (key) => {
      const other = npzMembersFor(syntheticClip(5));
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { [key]: other[key] }), { file }),
        { file, key },
        /has 5 frames but joint_pos has 6/,
      );
    });
    it.each(['<i8', '<f2', '|u1', '<c16', 'O'])('dtype %s', (descr) => {
      expectInputError(
        () =>
          decodeMjlabNpz(npzBytes(base, { joint_pos: npyBytes([6, J], new Array(6 * J).fill(0), { descr }) }), {
            file,
          }),
        { file, key: 'joint_pos' },
        /dtype .* is not supported/,
      );
    });
    it('a structured dtype', () => {
      const header = "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (6, 29), }";
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { joint_pos: npyBytes([6, J], [], { header }) }), { file }),
        { file, key: 'joint_pos' },
        /structured/,
      );
    });
    it('fortran_order True is no longer refused: the member is transposed into C order (test/unit/npyFortranOrder.test.ts)', () => {
      const cOrder = decodeMjlabNpz(npzBytes(base), { file });
      const bodyPos = Array.from(cOrder.bodyPosW!.data);
      const fortran = decodeMjlabNpz(
        npzBytes(base, { body_pos_w: npyBytes([6, 2, 3], toFortranOrder([6, 2, 3], bodyPos), { fortran: true }) }),
        { file },
      );
      expect(Array.from(fortran.bodyPosW!.data)).toEqual(bodyPos);
      expect(fortran.id).toBe(cOrder.id);
      // the same bytes declared C-order are another array: the root positions then differ
      const misread = decodeMjlabNpz(
        npzBytes(base, { body_pos_w: npyBytes([6, 2, 3], toFortranOrder([6, 2, 3], bodyPos)) }),
        { file },
      );
      expect(misread.id).not.toBe(cOrder.id);
    });
    it('a NaN in joint_pos, with its frame and joint', () => {
      const v = c.joints.flat();
      v[3 * J + 5] = NaN;
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { joint_pos: npyBytes([6, J], v) }), { file }),
        { file, key: 'joint_pos' },
        /joint_pos\[3, 5\] \(left_ankle_roll_joint\) is NaN/,
      );
    });
    it('an Inf in body_pos_w', () => {
      const v = new Array(36).fill(0);
      v[7] = Infinity;
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { body_pos_w: npyBytes([6, 2, 3], v) }), { file }),
        { file, key: 'body_pos_w' },
        /body_pos_w\[1, 0, 1\] is Infinity/,
      );
    });
    it('a non-unit root quaternion, with its norm', () => {
      const q = new Array(6 * 2 * 4).fill(0);
      for (let k = 0; k < 6; k++) q[k * 8] = q[k * 8 + 4] = 1;
      q[2 * 8] = 0.5;
      expectInputError(
        () => decodeMjlabNpz(npzBytes(base, { body_quat_w: npyBytes([6, 2, 4], q) }), { file }),
        { file, key: 'body_quat_w' },
        /frame 2, body 0.*norm is 0\.5\b/,
      );
    });
    it('fewer than 2 frames', () => {
      const one = npzMembersFor(syntheticClip(1));
      expectInputError(() => decodeMjlabNpz(npzBytes(one), { file }), { file, key: 'joint_pos' }, /at least 2/);
    });
    it('bad npy magic', () => {
      expectInputError(
        () =>
          decodeMjlabNpz(
            npzBytes(base, { joint_pos: npyBytes([6, J], new Array(6 * J).fill(0), { magic: enc('NOTNPY') }) }),
            { file },
          ),
        { file, key: 'joint_pos' },
        /bad magic/,
      );
    });
    it('a bad npy header', () => {
      expectInputError(
        () =>
          decodeMjlabNpz(
            npzBytes(base, { joint_pos: npyBytes([6, J], [], { header: "{'descr': '<f8', 'shape': (6, 29" }) }),
            { file },
          ),
        { file, key: 'joint_pos' },
        /bad \.npy header/,
      );
      expectInputError(
        () =>
          decodeMjlabNpz(
            npzBytes(base, { joint_pos: npyBytes([6, J], [], { header: "{'descr': '<f8', 'fortran_order': False}" }) }),
            { file },
          ),
        { file, key: 'joint_pos' },
        /shape missing/,
      );
    });
    it('truncated npy data', () => {
      expectInputError(
        () =>
          decodeMjlabNpz(npzBytes(base, { joint_pos: npyBytes([6, J], c.joints.flat(), { truncate: 8 }) }), { file }),
        { file, key: 'joint_pos' },
        /truncated/,
      );
    });
    it('npy format version 2.0 is read', () => {
      const clip = decodeMjlabNpz(npzBytes(base, { joint_pos: npyBytes([6, J], c.joints.flat(), { version: 2 }) }), {
        file,
      });
      expect(clip.jointPosRad[J + 1]).toBe(c.joints[1][1]);
      const arr = readNpyFloatArray(npyBytes([2, 3], [1, 2, 3, 4, 5, 6], { version: 2, descr: '>f4' }), file, 'k');
      expect(arr.shape).toEqual([2, 3]);
      expect(Array.from(arr.data)).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('unreadable ZIP', () => {
    const good = npzBytes(base);
    it('a truncated file', () => {
      expectInputError(() => decodeMjlabNpz(good.subarray(0, good.length - 100), { file }), { file }, /truncated/);
      expectInputError(() => decodeMjlabNpz(good.subarray(0, 2000), { file }), { file }, /truncated/);
      expectInputError(() => decodeMjlabNpz(good.subarray(0, 10), { file }), { file }, /truncated/);
    });
    it('bad magic', () => {
      const bad = good.slice();
      bad[0] = 0x51;
      expectInputError(() => decodeMjlabNpz(bad, { file }), { file }, /bad magic/);
    });
    it('a damaged member (CRC mismatch)', () => {
      const members = Object.entries(base).map(([k, v]) => ({ name: `${k}.npy`, data: v, badCrc: k === 'body_pos_w' }));
      expectInputError(
        () => decodeMjlabNpz(zipBytes(members), { file }),
        { file, key: 'body_pos_w' },
        /CRC-32 mismatch/,
      );
    });
    it('corrupt DEFLATE data', () => {
      const z = npzBytes(base, {}, 8);
      const bad = z.slice();
      // scribble over the first member's compressed data (after its 30 + 7 byte local header)
      for (let i = 37; i < 60; i++) bad[i] = 0xff;
      expectInputError(() => decodeMjlabNpz(bad, { file }), { file, key: 'fps' }, /DEFLATE data is corrupt|CRC-32/);
    });
    it('an unsupported compression method', () => {
      const z = npzBytes(base).slice();
      const dv = new DataView(z.buffer);
      // patch the method of every central directory entry to 12 (bzip2)
      for (let i = 0; i + 4 <= z.length; i++) if (dv.getUint32(i, true) === 0x02014b50) dv.setUint16(i + 10, 12, true);
      expectInputError(() => decodeMjlabNpz(z, { file }), { file }, /compression method 12/);
    });
    it('an archive without .npy members', () => {
      expectInputError(
        () => decodeMjlabNpz(zipBytes([{ name: 'readme.txt', data: enc('hi') }]), { file }),
        { file },
        /no \.npy members/,
      );
    });
  });
});
