import { describe, expect, it } from 'vitest';
import { decodeMotionFile, detectClipFormat } from '../../src/domain/motion/decodeMotionFile';
import { encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import { computeClipId } from '../../src/domain/motion/clipCommon';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { csvText, enc, expectInputError, npzBytes, npzMembersFor, syntheticClip } from './motionTestHelpers';

const c = syntheticClip(5);
const csv = enc(csvText(c));
const npz = npzBytes(npzMembersFor(c));

describe('decodeMotionFile', () => {
  it('chooses the codec by content', () => {
    expect(decodeMotionFile(csv, { file: 'a.csv', fps: 30 }).provenance.format).toBe('lafan1-csv');
    expect(decodeMotionFile(csv, { file: 'a.txt', fps: 30 }).provenance.format).toBe('lafan1-csv');
    expect(decodeMotionFile(npz, { file: 'a.npz' }).provenance.format).toBe('mjlab-npz');
    const clip = decodeMotionFile(csv, { file: 'a.csv', fps: 30 });
    expect(decodeMotionFile(enc(encodeClipJson(clip)), { file: 'a.json' }).provenance.format).toBe('motionbench-json');
    expect(detectClipFormat(enc('\ufeff  \n{"x": 1}'), 'x.dat')).toEqual({
      format: 'motionbench-json',
      byContent: true,
    });
  });

  it('warns when content and extension disagree, and the content wins', () => {
    const clip = decodeMotionFile(npz, { file: 'renamed.csv' });
    expect(clip.provenance.format).toBe('mjlab-npz');
    expect(clip.warnings[0]).toMatchObject({ code: 'extension_mismatch' });
    expect(clip.warnings[0].message).toContain('.csv');
    const json = encodeClipJson(decodeMotionFile(csv, { file: 'a.csv', fps: 30 }));
    expect(decodeMotionFile(enc(json), { file: 'b.csv' }).warnings.map((w) => w.code)).toEqual(['extension_mismatch']);
  });

  it('uses the extension when the content is not recognisably ZIP or JSON', () => {
    expectInputError(() => decodeMotionFile(csv, { file: 'a.npz' }), { file: 'a.npz' }, /bad magic/);
    expectInputError(() => decodeMotionFile(csv, { file: 'a.json' }), { file: 'a.json', line: 1 }, /invalid JSON/);
  });

  it('the same motion gets the same id from CSV and JSON; file hashes differ', () => {
    const fromCsv = decodeMotionFile(csv, { file: 'a.csv', fps: 30 });
    const json = enc(encodeClipJson(fromCsv));
    const fromJson = decodeMotionFile(json, { file: 'a.json' });
    expect(fromJson.id).toBe(fromCsv.id);
    expect(fromJson.provenance.fileSha256).not.toBe(fromCsv.provenance.fileSha256);
    expect(fromCsv.id).toBe(computeClipId(30, 5, fromCsv.rootPosM, fromCsv.rootQuatWxyz, fromCsv.jointPosRad));
  });

  it('keeps the sign of frame 0 as stored (only later frames are flipped for continuity)', () => {
    const negated = { ...c, rootQuatXyzw: c.rootQuatXyzw.map((q) => q.map((v) => -v)) };
    const a = decodeMotionFile(csv, { file: 'a.csv', fps: 30 });
    const b = decodeMotionFile(enc(csvText(negated)), { file: 'b.csv', fps: 30 });
    expect(Array.from(b.rootQuatWxyz)).toEqual(Array.from(a.rootQuatWxyz).map((v) => -v + 0));
  });

  it('−0 and +0 give the same id', () => {
    const zeroPos = csvText({ ...c, rootPos: c.rootPos.map(() => [0, 0, 0.79]) });
    const negZeroPos = zeroPos.replace(/^0\.000000,0\.000000/gm, '-0.000000,-0.000000');
    expect(negZeroPos).toContain('-0.000000');
    const a = decodeMotionFile(enc(negZeroPos), { file: 'n.csv', fps: 30 });
    expect(Object.is(a.rootPosM[0], -0)).toBe(true);
    expect(a.id).toBe(decodeMotionFile(enc(zeroPos), { file: 'z.csv', fps: 30 }).id);
  });

  it('passes joint limits to every codec', () => {
    const limits = G1_JOINT_NAMES.map(() => [-0.001, 0.001] as const);
    for (const [bytes, file] of [
      [csv, 'a.csv'],
      [npz, 'a.npz'],
    ] as const) {
      const clip = decodeMotionFile(bytes, { file, fps: bytes === csv ? 30 : 50, jointLimitsRad: limits });
      expect(
        clip.warnings.some((w) => w.code === 'joint_limit'),
        file,
      ).toBe(true);
    }
  });

  it('rejects an empty file', () => {
    expectInputError(() => decodeMotionFile(new Uint8Array(0), { file: 'e.csv', fps: 30 }), { file: 'e.csv' }, /empty/);
  });
});
