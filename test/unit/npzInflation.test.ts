// The NPZ reader decides from the .npy headers before inflating. The members
// below carry a valid header followed by DEFLATE data that cannot inflate (headerOnlyMember): an
// error other than "DEFLATE data is corrupt" proves the decision was made without inflating the
// data, and costs nothing whatever size the ZIP declares.

import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeMjlabNpz, NPZ_INFLATE_BUDGET_BYTES, readNpzFps } from '../../src/domain/motion/mjlabNpz';
import { readZipDirectory, readZipEntry } from '../../src/domain/motion/zipArchive';
import { G1_NUM_JOINTS as J } from '../../src/domain/robot/g1Joints';
import { headerOnlyMember, npyHeader, zipOf, type DeflatedMember } from '../helpers/hostileFiles';
import { expectInputError } from './motionTestHelpers';

const file = 'hostile.npz';

/** A real member: header and `values` (float64), deflated. */
function realMember(name: string, shape: number[], values: number[]): DeflatedMember {
  const header = npyHeader(shape);
  const raw = new Uint8Array(header.length + values.length * 8);
  raw.set(header);
  const dv = new DataView(raw.buffer, header.length);
  values.forEach((v, i) => dv.setFloat64(i * 8, v, true));
  return { name, compressed: new Uint8Array(zlib.deflateRawSync(raw)), crc: zlib.crc32(raw), size: raw.length };
}

const fps = () => realMember('fps.npy', [1], [50]);

describe('NPZ: headers first, then a budget, then inflation', () => {
  it('a shape mismatch between members is refused from the headers: no member data is inflated', () => {
    const N = 1000;
    const npz = zipOf([
      fps(),
      headerOnlyMember('joint_pos.npy', [N, J]),
      headerOnlyMember('joint_vel.npy', [N, J]),
      headerOnlyMember('body_pos_w.npy', [N, 5, 3]),
      headerOnlyMember('body_quat_w.npy', [N, 6, 4]),
    ]);
    expectInputError(
      () => decodeMjlabNpz(npz, { file }),
      { file, key: 'body_quat_w' },
      /has 6 bodies but body_pos_w has 5/,
    );
    const shortVel = zipOf([
      fps(),
      headerOnlyMember('joint_pos.npy', [N, J]),
      headerOnlyMember('joint_vel.npy', [N - 1, J]),
      headerOnlyMember('body_pos_w.npy', [N, 5, 3]),
      headerOnlyMember('body_quat_w.npy', [N, 5, 4]),
    ]);
    expectInputError(
      () => decodeMjlabNpz(shortVel, { file }),
      { file, key: 'joint_vel' },
      /has 999 frames but joint_pos has 1000/,
    );
    expectInputError(
      () => decodeMjlabNpz(zipOf([fps(), headerOnlyMember('joint_pos.npy', [N, 30])]), { file }),
      { file, key: 'joint_pos' },
      /expected \(N, 29\)/,
    );
  });

  it(`members whose declared sizes exceed NPZ_INFLATE_BUDGET_BYTES (${NPZ_INFLATE_BUDGET_BYTES / 1048576} MiB) in all are refused without inflating any`, () => {
    // Each under the per-member limit, consistent shapes, 410 MB together.
    const N = 400_000;
    const npz = zipOf([
      fps(),
      headerOnlyMember('joint_pos.npy', [N, J]),
      headerOnlyMember('joint_vel.npy', [N, J]),
      headerOnlyMember('body_pos_w.npy', [N, 10, 3]),
      headerOnlyMember('body_quat_w.npy', [N, 10, 4]),
    ]);
    expectInputError(
      () => decodeMjlabNpz(npz, { file }),
      { file },
      /the arrays would inflate to 390\.6 MiB .* more than the 256 MiB budget for one NPZ/,
    );
  });

  it('a ZIP entry whose declared size disagrees with its npy header is refused before inflating it', () => {
    const N = 100;
    const members = (declaredJointPos: number) => [
      fps(),
      headerOnlyMember('joint_pos.npy', [N, J], declaredJointPos),
      headerOnlyMember('joint_vel.npy', [N, J]),
      headerOnlyMember('body_pos_w.npy', [N, 2, 3]),
      headerOnlyMember('body_quat_w.npy', [N, 2, 4]),
    ];
    // A header that states 100 frames over a member declaring 200 MB: the declared bytes are what would be inflated.
    expectInputError(
      () => decodeMjlabNpz(zipOf(members(200_000_000)), { file }),
      { file, key: 'joint_pos' },
      /unexpected trailing bytes for shape \(100, 29\)/,
    );
    expectInputError(
      () => decodeMjlabNpz(zipOf(members(N * J * 8 - 8)), { file }),
      { file, key: 'joint_pos' },
      /array data is truncated: shape \(100, 29\) needs 23200 bytes, the member has 23192/,
    );
  });

  it('the fps member is checked from its header too (readNpzFps, used to infer a CSV neighbour’s rate)', () => {
    const npz = zipOf([headerOnlyMember('fps.npy', [1], 100_000_000)]);
    expectInputError(() => readNpzFps(npz, file), { file, key: 'fps' }, /unexpected trailing bytes/);
    expect(readNpzFps(zipOf([fps()]), file)).toBe(50);
  });

  it('a member that inflates past the size its ZIP entry declares is stopped there, not inflated to the end', () => {
    // A header for 2 frames, then 64 MiB of zeros in the stream: declared 2 frames' worth.
    const header = npyHeader([2, J]);
    const raw = new Uint8Array(header.length + 64 * 1048576);
    raw.set(header);
    const member: DeflatedMember = {
      name: 'joint_pos.npy',
      compressed: new Uint8Array(zlib.deflateRawSync(raw)),
      crc: 0,
      size: header.length + 2 * J * 8,
    };
    const zip = zipOf([member]);
    const [entry] = readZipDirectory(zip, file);
    expectInputError(
      () => readZipEntry(zip, entry, file),
      { file, key: 'joint_pos.npy' },
      /inflates to more than the 592 bytes its ZIP entry declares/,
    );
  });

  it('honest DEFLATE members still decode', () => {
    const N = 3;
    const clip = decodeMjlabNpz(
      zipOf([
        fps(),
        realMember('joint_pos.npy', [N, J], new Array(N * J).fill(0.1)),
        realMember('body_pos_w.npy', [N, 1, 3], [0, 0, 0.8, 0.1, 0, 0.8, 0.2, 0, 0.8]),
        realMember('body_quat_w.npy', [N, 1, 4], [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
      ]),
      { file },
    );
    expect(clip.frameCount).toBe(3);
    expect(clip.fps).toBe(50);
    expect(clip.rootPosM[3]).toBeCloseTo(0.1, 12);
    expect(clip.jointPosRad[J + 1]).toBeCloseTo(0.1, 12);
  });
});
