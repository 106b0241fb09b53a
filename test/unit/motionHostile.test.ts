// Hostile motion files: UTF-16 text, and values no motion capture produces —
// 1e308 m root positions, 100 rad joint angles, fps 1e-300 or 1e300, NaN. Each codec refuses them
// with the file and where (line/column for CSV, key for NPZ and JSON), under the named bounds of
// clipCommon.ts; real clips at the bounds still load.
import { describe, expect, it } from 'vitest';
import { checkFps, MAX_FPS, MAX_JOINT_ANGLE_RAD, MAX_ROOT_POS_M, MIN_FPS } from '../../src/domain/motion/clipCommon';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { decodeMjlabNpz } from '../../src/domain/motion/mjlabNpz';
import { decodeMotionbenchJson } from '../../src/domain/motion/motionbenchJson';
import { clipJsonWith, csvWithField, realCsvText, utf16Bytes } from '../helpers/hostileInputs';
import { expectInputError, J, npyBytes, npzBytes, npzMembersFor, syntheticClip } from './motionTestHelpers';

const csv = realCsvText(31);
const file = 'lab/walk.csv';

describe('UTF-16 text is refused as such, naming the file', () => {
  for (const form of ['le-bom', 'be-bom'] as const) {
    it(`CSV with a ${form === 'le-bom' ? 'FF FE' : 'FE FF'} byte-order mark`, () => {
      expectInputError(
        () => decodeLafan1Csv(utf16Bytes(csv, form), { file, fps: 30 }),
        { file, line: 1, column: 1 },
        /UTF-16 encoded \(byte-order mark (FF FE|FE FF)\); save as UTF-8/,
      );
    });
  }
  it('CSV without a byte-order mark (NUL bytes), located at the first NUL', () => {
    expectInputError(
      () => decodeLafan1Csv(utf16Bytes(csv, 'le-no-bom'), { file, fps: 30 }),
      { file, line: 1, column: 2 },
      /NUL bytes: it looks UTF-16 encoded \(or binary\); save as UTF-8/,
    );
  });
  it('before the fps question: a UTF-16 CSV without --fps is still reported as UTF-16', () => {
    expectInputError(() => decodeLafan1Csv(utf16Bytes(csv, 'le-bom'), { file }), { file }, /UTF-16 encoded/);
  });
  it('JSON clip saved as UTF-16 (chosen by its extension)', () => {
    const json = clipJsonWith(decodeLafan1Csv(csv, { file, fps: 30 }), () => {});
    expectInputError(
      () => decodeMotionFile(utf16Bytes(json, 'le-bom'), { file: 'lab/walk.json' }),
      { file: 'lab/walk.json' },
      /UTF-16 encoded.*save as UTF-8/,
    );
  });
});

describe('absurd values: CSV (line and column)', () => {
  it('a root position of 1e308 m', () => {
    expectInputError(
      () => decodeLafan1Csv(csvWithField(csv, 3, 1, '1e308'), { file, fps: 30 }),
      { file, line: 3, column: 1 },
      /position 1e\+308 m is beyond ±1000 m \(MAX_ROOT_POS_M\)/,
    );
  });
  it('a root height of -2000 m', () => {
    expectInputError(
      () => decodeLafan1Csv(csvWithField(csv, 7, 3, '-2000'), { file, fps: 30 }),
      { file, line: 7, column: 3 },
      /beyond ±1000 m/,
    );
  });
  it('a joint angle of 100 rad', () => {
    expectInputError(
      () => decodeLafan1Csv(csvWithField(csv, 4, 11, '100'), { file, fps: 30 }),
      { file, line: 4, column: 11 },
      /joint angle 100 rad is beyond ±4π rad \(MAX_JOINT_ANGLE_RAD\)/,
    );
  });
  it('values at the bounds still load (1000 m, 4π rad)', () => {
    const at = csvWithField(csvWithField(csv, 2, 2, String(MAX_ROOT_POS_M)), 2, 8, String(MAX_JOINT_ANGLE_RAD));
    const clip = decodeLafan1Csv(at, { file, fps: 30 });
    expect(clip.rootPosM[4]).toBe(1000);
    expect(clip.jointPosRad[J]).toBe(MAX_JOINT_ANGLE_RAD);
  });
  it('--fps 1e-300, 0.5 and 1e300 are refused; MIN_FPS and MAX_FPS are accepted', () => {
    expectInputError(
      () => decodeLafan1Csv(csv, { file, fps: 1e-300 }),
      { file, key: 'fps' },
      /--fps 1e-300 is invalid: it is below 1 Hz \(frame rates in \[1, 1000\] Hz are accepted\)/,
    );
    expectInputError(() => decodeLafan1Csv(csv, { file, fps: 0.5 }), { file, key: 'fps' }, /below 1 Hz/);
    expectInputError(
      () => decodeLafan1Csv(csv, { file, fps: 1e300 }),
      { file, key: 'fps' },
      /--fps 1e\+300 is invalid: it must be > 0 and ≤ 1000/,
    );
    expect(decodeLafan1Csv(csv, { file, fps: MIN_FPS }).fps).toBe(1);
    expect(decodeLafan1Csv(csv, { file, fps: MAX_FPS }).fps).toBe(1000);
    expect(() => checkFps(NaN, { file }, 'fps')).toThrow(/fps is not a number \(NaN\)/);
  });
});

describe('absurd values: motionbench JSON (key path)', () => {
  const clip = decodeLafan1Csv(csv, { file, fps: 30 });
  const jf = 'lab/walk.json';
  it('a root position of 1e308 m', () => {
    const text = clipJsonWith(clip, (d) => (d.frames.root_pos_m[5][0] = 1e308));
    expectInputError(
      () => decodeMotionbenchJson(text, { file: jf }),
      { file: jf, key: 'frames.root_pos_m[5][0]' },
      /position 1e\+308 m is beyond ±1000 m/,
    );
  });
  it('a joint angle of -50 rad', () => {
    const text = clipJsonWith(clip, (d) => (d.frames.joint_pos_rad[2][7] = -50));
    expectInputError(
      () => decodeMotionbenchJson(text, { file: jf }),
      { file: jf, key: 'frames.joint_pos_rad[2][7]' },
      /joint angle -50 rad is beyond ±4π rad/,
    );
  });
  it('fps 1e-300 and fps 1e300', () => {
    expectInputError(
      () =>
        decodeMotionbenchJson(
          clipJsonWith(clip, (d) => (d.fps = 1e-300)),
          { file: jf },
        ),
      { file: jf, key: 'fps' },
      /fps 1e-300 is invalid: it is below 1 Hz/,
    );
    expectInputError(
      () =>
        decodeMotionbenchJson(
          clipJsonWith(clip, (d) => (d.fps = 1e300)),
          { file: jf },
        ),
      { file: jf, key: 'fps' },
      /fps 1e\+300 is invalid/,
    );
  });
  it('NaN written into the document', () => {
    const text = clipJsonWith(clip, () => {}).replace('"fps":30', '"fps":NaN');
    expectInputError(() => decodeMotionbenchJson(text, { file: jf }), { file: jf, line: 1 }, /NaN is not valid JSON/);
  });
});

describe('absurd values: mjlab NPZ (key and index)', () => {
  const c = syntheticClip(6);
  const base = npzMembersFor(c);
  const nf = 'lab/walk.npz';
  it('a body position of 1e308 m in body_pos_w', () => {
    const pos: number[] = [];
    for (let k = 0; k < c.N; k++) pos.push(...c.rootPos[k], 0, 0, k === 4 ? 1e308 : 0.5);
    const bytes = npzBytes(base, { body_pos_w: npyBytes([c.N, 2, 3], pos) });
    expectInputError(
      () => decodeMjlabNpz(bytes, { file: nf }),
      { file: nf, key: 'body_pos_w' },
      /body_pos_w\[4, 1, 2\]: position 1e\+308 m is beyond ±1000 m/,
    );
  });
  it('a joint angle of 1e6 rad in joint_pos', () => {
    const q = c.joints.flat();
    q[3 * J + 5] = 1e6;
    const bytes = npzBytes(base, { joint_pos: npyBytes([c.N, J], q) });
    expectInputError(
      () => decodeMjlabNpz(bytes, { file: nf }),
      { file: nf, key: 'joint_pos' },
      /joint_pos\[3, 5\] \(.*\): joint angle 1000000 rad is beyond ±4π rad/,
    );
  });
  it('fps 1e-300, fps 1e300 and fps NaN', () => {
    for (const [fps, re] of [
      [1e-300, /fps 1e-300 is invalid: it is below 1 Hz/],
      [1e300, /fps 1e\+300 is invalid: it must be > 0 and ≤ 1000/],
      [NaN, /fps is not a number \(NaN\)/],
    ] as const) {
      const bytes = npzBytes(base, { fps: npyBytes([1], [fps], { descr: '<f8' }) });
      expectInputError(() => decodeMjlabNpz(bytes, { file: nf }), { file: nf, key: 'fps' }, re);
    }
  });
  it('the same NPZ with plausible values loads', () => {
    expect(decodeMjlabNpz(npzBytes(base), { file: nf }).frameCount).toBe(6);
  });
});
