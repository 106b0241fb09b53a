import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inferCsvFpsHint, loadClipFile } from '../../src/services/motion/loadClipFile';
import { encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { csvText, expectInputError, npyBytes, npzBytes, npzMembersFor, syntheticClip } from './motionTestHelpers';

const root = mkdtempSync(path.join(os.tmpdir(), 'mb-clips-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dir = () => {
  const d = path.join(root, `d${n++}`);
  mkdirSync(d, { recursive: true });
  return d;
};
const csv = csvText(syntheticClip(4));
const npz = (fps: number) => npzBytes(npzMembersFor(syntheticClip(3), '<f8', fps));

describe('loadClipFile', () => {
  it('names the path when the file cannot be read', () => {
    const p = path.join(root, 'missing.csv');
    expectInputError(() => loadClipFile(p), { file: p }, /cannot read the file: no such file/);
    const d = dir();
    // a folder is read as a SONIC reference folder (docs/PEER_MOTION_FORMATS.md); an empty one is refused
    expectInputError(
      () => loadClipFile(d),
      { file: d },
      /is a folder, not a motion file, and not a SONIC reference motion folder/,
    );
  });

  it('refuses an oversized file before reading it', () => {
    const p = path.join(dir(), 'huge.csv');
    writeFileSync(p, '');
    truncateSync(p, 257 * 1024 * 1024); // sparse
    expectInputError(() => loadClipFile(p, { fps: 30 }), { file: p }, /257\.0 MiB, larger than the 256 MiB limit/);
  });

  it('without --fps or any hint, fails asking for --fps', () => {
    const p = path.join(dir(), 'mystery.csv');
    writeFileSync(p, csv);
    expect(inferCsvFpsHint(p)).toBeUndefined();
    expectInputError(() => loadClipFile(p), { file: p, key: 'fps' }, /fps is unknown.*--fps/);
  });

  it('uses --fps as given, with no inference', () => {
    const d = dir();
    const p = path.join(d, 'walk1_subject1.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'walk1_subject1.json'), '{"fps": 120}');
    const clip = loadClipFile(p, { fps: 25 });
    expect(clip.fps).toBe(25);
    expect(clip.provenance.fpsSource).toBe('user');
    expect(clip.warnings).toEqual([]);
  });

  it('(a) a sidecar <stem>.json with {"fps": N}, preferred over the other rules', () => {
    const d = dir();
    const p = path.join(d, 'walk1_subject1.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'walk1_subject1.npz'), npz(50));
    const side = path.join(d, 'walk1_subject1.json');
    writeFileSync(side, '{"fps": 120, "note": "mocap at 120"}');
    const clip = loadClipFile(p);
    expect(clip.fps).toBe(120);
    expect(clip.provenance.fpsSource).toBe('inferred');
    expect(clip.warnings).toHaveLength(1);
    expect(clip.warnings[0].code).toBe('fps_inferred');
    expect(clip.warnings[0].message).toContain(side);
  });

  it('a malformed sidecar or an invalid sidecar fps is an error naming the sidecar', () => {
    const d = dir();
    const p = path.join(d, 'clip.csv');
    writeFileSync(p, csv);
    const side = path.join(d, 'clip.json');
    writeFileSync(side, '{\n  "fps": 60,\n}');
    expectInputError(() => loadClipFile(p), { file: side, line: 3, column: 1 }, /invalid JSON/);
    writeFileSync(side, '{"fps": -5}');
    expectInputError(() => loadClipFile(p), { file: side, key: 'fps' }, /-5 is invalid/);
  });

  it('a sidecar without fps is not a hint', () => {
    const d = dir();
    const p = path.join(d, 'jumps1_subject1.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'jumps1_subject1.json'), '{"author": "x"}');
    expect(loadClipFile(p).fps).toBe(30);
  });

  it('(b) an NPZ with the same stem beside the CSV', () => {
    const d = dir();
    const p = path.join(d, 'dance.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'dance.npz'), npz(50));
    const clip = loadClipFile(p);
    expect(clip.fps).toBe(50);
    expect(clip.provenance.fpsSource).toBe('inferred');
    expect(clip.warnings[0].message).toContain(path.join(d, 'dance.npz'));
  });

  it('(b) the G1 Moves layout: csv/<stem>.csv and npz/<stem>.npz', () => {
    const d = dir();
    mkdirSync(path.join(d, 'csv'));
    mkdirSync(path.join(d, 'npz'));
    const p = path.join(d, 'csv', 'B_Thing.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'npz', 'B_Thing.npz'), npz(60));
    const clip = loadClipFile(p);
    expect(clip.fps).toBe(60);
    expect(clip.warnings[0]).toMatchObject({ code: 'fps_inferred' });
    expect(clip.warnings[0].message).toContain(path.join(d, 'npz', 'B_Thing.npz'));
  });

  it('(b) a broken neighbouring NPZ is skipped', () => {
    const d = dir();
    const p = path.join(d, 'dance.csv');
    writeFileSync(p, csv);
    writeFileSync(path.join(d, 'dance.npz'), 'not a zip');
    expectInputError(() => loadClipFile(p), { file: p, key: 'fps' }, /fps is unknown/);
    writeFileSync(path.join(d, 'dance.npz'), npzBytes(npzMembersFor(syntheticClip(3)), { fps: npyBytes([1], [0]) }));
    expectInputError(() => loadClipFile(p), { file: p, key: 'fps' }, /fps is unknown/);
  });

  it('(c) the LAFAN1 naming convention <action><n>_subject<m>.csv → 30 fps', () => {
    const d = dir();
    for (const name of ['walk1_subject1.csv', 'fallAndGetUp3_subject1.csv', 'sprint1_subject2.csv']) {
      const p = path.join(d, name);
      writeFileSync(p, csv);
      const clip = loadClipFile(p);
      expect(clip.fps).toBe(30);
      expect(clip.provenance.fpsSource).toBe('inferred');
      expect(clip.warnings[0].message).toMatch(/LAFAN1/);
    }
    for (const name of ['walk_subject1.csv', 'walk1-subject1.csv', 'walk1_subject.csv'])
      expect(inferCsvFpsHint(path.join(d, name))).toBeUndefined();
  });

  it('loads NPZ and JSON files, where no fps is inferred', () => {
    const d = dir();
    const pz = path.join(d, 'walk1_subject1.npz');
    writeFileSync(pz, npz(50));
    const a = loadClipFile(pz);
    expect(a.fps).toBe(50);
    expect(a.provenance.fpsSource).toBe('file');
    const pj = path.join(d, 'c.json');
    writeFileSync(pj, encodeClipJson(a));
    const b = loadClipFile(pj);
    expect(b.id).toBe(a.id);
    expect(b.warnings).toEqual([]);
  });

  it('passes joint limits through', () => {
    const d = dir();
    const p = path.join(d, 'walk1_subject1.csv');
    writeFileSync(p, csv);
    const clip = loadClipFile(p, { jointLimitsRad: G1_JOINT_NAMES.map(() => [-0.001, 0.001] as const) });
    expect(clip.warnings.filter((w) => w.code === 'joint_limit').length).toBeGreaterThan(0);
  });
});
