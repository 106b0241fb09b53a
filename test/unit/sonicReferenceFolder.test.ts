import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { SONIC_ISAACLAB_TO_MUJOCO, SONIC_REFERENCE_JOINT_NAMES } from '../../src/domain/motion/peerJointOrders';
import { decodeSonicReferenceFolder, type SonicFolderFiles } from '../../src/domain/motion/sonicReferenceFolder';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { sharedData } from '../helpers/sharedData';
import { enc, expectInputError, J } from './motionTestHelpers';

// A SONIC reference folder (gear_sonic_deploy/reference/<motion>/) written here as
// convert_motions.py writes one — header lines, 6 decimals, joints in Isaac Lab order, body
// quaternions w x y z — from a real clip (G1 Moves B_HandsUp.csv, canonical joints, 60 fps).
// The 6-decimal values round-trip exactly, so the decoded clip must be the source clip.

const REAL = sharedData('motions/g1_moves/csv/B_HandsUp.csv');
const realText = readFileSync(REAL, 'utf8');
const source: MotionClip = decodeLafan1Csv(enc(realText), { file: REAL, fps: 60 });
const N = source.frameCount;
/** The source's fields as written (6 decimals): x y z | qx qy qz qw | 29 joints, canonical. */
const fields = realText
  .trim()
  .split('\n')
  .map((l) => l.trim().split(','));
const folder = 'reference/B_HandsUp';
const fmt = (v: number) => v.toFixed(6);

/** policy_parameters.hpp:100-101 (gear_sonic_deploy), copied by hand from the peer's file. */
const ISAACLAB_TO_MUJOCO_FROM_SONIC = [
  0, 3, 6, 9, 13, 17, 1, 4, 7, 10, 14, 18, 2, 5, 8, 11, 15, 19, 21, 23, 25, 27, 12, 16, 20, 22, 24, 26, 28,
];

interface Build {
  jointOrder?: readonly string[];
  quatColumns?: readonly ('w' | 'x' | 'y' | 'z')[];
  firstBodyIndex?: number;
  jointHeader?: string;
  dropRows?: 'body_pos';
}

function folderFiles(opts: Build = {}): SonicFolderFiles {
  const order = opts.jointOrder ?? G1_ISAACLAB_JOINT_NAMES;
  const cols = order.map((n) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]));
  const jp = [opts.jointHeader ?? Array.from({ length: J }, (_, i) => `joint_${i}`).join(',')];
  const jv = [Array.from({ length: J }, (_, i) => `joint_vel_${i}`).join(',')];
  const qc = opts.quatColumns ?? ['w', 'x', 'y', 'z'];
  const bp = [[0, 1].flatMap((b) => ['x', 'y', 'z'].map((a) => `body_${b}_${a}`)).join(',')];
  const bq = [[0, 1].flatMap((b) => qc.map((a) => `body_${b}_${a}`)).join(',')];
  const comp = { x: 3, y: 4, z: 5, w: 6 }; // source CSV columns of the root quaternion
  const rows = opts.dropRows === 'body_pos' ? N - 1 : N;
  for (let k = 0; k < N; k++) {
    const f = fields[k];
    jp.push(cols.map((c) => f[7 + c]).join(','));
    jv.push(cols.map(() => fmt(0)).join(','));
    const p = f.slice(0, 3);
    if (k < rows) bp.push([...p, ...[Number(p[0]), Number(p[1]), Number(p[2]) + 0.3].map(fmt)].join(','));
    bq.push([...qc.map((a) => f[comp[a]]), ...qc.map((a) => fmt(a === 'w' ? 1 : 0))].join(','));
  }
  const metadata = `Metadata for: B_HandsUp\n==============================\n\nBody part indexes:\n[${opts.firstBodyIndex ?? 0} 9]\n\nTotal timesteps: ${N}\n\nData arrays summary:\n  joint_pos: (${N}, 29) (float32)\n`;
  return {
    folder,
    jointPos: enc(jp.join('\n') + '\n'),
    jointVel: enc(jv.join('\n') + '\n'),
    bodyPos: enc(bp.join('\n') + '\n'),
    bodyQuat: enc(bq.join('\n') + '\n'),
    metadata: enc(metadata),
  };
}

const maxDiff = (a: Float64Array, b: Float64Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
const maxJointDiff = (a: MotionClip, b: MotionClip) => maxDiff(a.jointPosRad, b.jointPosRad);

describe('SONIC reference folder', () => {
  it('SONIC\u2019s isaaclab_to_mujoco table is Isaac Lab\u2019s G1 joint order, name by name', () => {
    expect(SONIC_ISAACLAB_TO_MUJOCO).toEqual(ISAACLAB_TO_MUJOCO_FROM_SONIC);
    ISAACLAB_TO_MUJOCO_FROM_SONIC.forEach((column, m) =>
      expect(G1_ISAACLAB_JOINT_NAMES[column]).toBe(G1_JOINT_NAMES[m]),
    );
    expect(SONIC_REFERENCE_JOINT_NAMES).toEqual([...G1_ISAACLAB_JOINT_NAMES]);
  });

  it('decodes to the source clip: Isaac Lab columns to canonical joints, body 0 wxyz root', () => {
    const clip = decodeSonicReferenceFolder(folderFiles(), { file: folder, fps: 60 });
    expect(clip.frameCount).toBe(N);
    expect(clip.name).toBe('B_HandsUp');
    expect(clip.provenance).toMatchObject({ file: folder, format: 'sonic-csv-folder', fpsSource: 'user' });
    expect(maxDiff(clip.jointPosRad, source.jointPosRad)).toBe(0);
    expect(maxDiff(clip.rootPosM, source.rootPosM)).toBe(0);
    expect(maxDiff(clip.rootQuatWxyz, source.rootQuatWxyz)).toBe(0);
    expect(clip.id).toBe(source.id);
    expect(clip.provenance.jointOrder).toMatch(/^isaaclab, mapped by name.*policy_parameters\.hpp:100/);
    expect(clip.provenance.quaternionOrder).toMatch(
      /^wxyz \(named by the body_quat\.csv header body_0_w, body_0_x, body_0_y, body_0_z/,
    );
    expect(clip.provenance.fileSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('without --fps uses the deploy code\u2019s 50 fps, marked inferred with a warning citing it', () => {
    const clip = decodeSonicReferenceFolder(folderFiles(), { file: folder });
    expect(clip.fps).toBe(50);
    expect(clip.provenance.fpsSource).toBe('inferred');
    expect(clip.warnings[0]).toMatchObject({
      code: 'fps_inferred',
      message: expect.stringMatching(/g1_deploy_onnx_ref\.cpp:2165/),
    });
  });

  it('negative control: joint columns written in canonical order are read as Isaac Lab order and come out wrong', () => {
    const wrong = decodeSonicReferenceFolder(folderFiles({ jointOrder: G1_JOINT_NAMES }), { file: folder, fps: 60 });
    expect(maxJointDiff(wrong, source)).toBeGreaterThan(0.1);
    expect(maxJointDiff(decodeSonicReferenceFolder(folderFiles(), { file: folder, fps: 60 }), source)).toBe(0);
  });

  it('reads the quaternion components by their header names (an x y z w file gives the same root)', () => {
    const xyzw = decodeSonicReferenceFolder(folderFiles({ quatColumns: ['x', 'y', 'z', 'w'] }), {
      file: folder,
      fps: 60,
    });
    expect(maxDiff(xyzw.rootQuatWxyz, source.rootQuatWxyz)).toBe(0);
    expect(xyzw.provenance.quaternionOrder).toMatch(/^xyzw /);
  });

  describe('bad input names the file inside the folder', () => {
    it('a body_quat.csv header without body_0_w', () => {
      const f = folderFiles();
      f.bodyQuat = enc(new TextDecoder().decode(f.bodyQuat).replace('body_0_w', 'body_0_q'));
      expectInputError(
        () => decodeSonicReferenceFolder(f, { file: folder }),
        { file: `${folder}/body_quat.csv`, line: 1 },
        /quaternion order is not stated/,
      );
    });
    it('metadata whose first body is not Isaac Lab body 0 (the pelvis)', () => {
      expectInputError(
        () => decodeSonicReferenceFolder(folderFiles({ firstBodyIndex: 4 }), { file: folder }),
        { file: `${folder}/metadata.txt` },
        /first body part index is 4, not 0/,
      );
    });
    it('a joint_pos.csv whose header is not joint_0 … joint_28', () => {
      expectInputError(
        () =>
          decodeSonicReferenceFolder(folderFiles({ jointHeader: G1_ISAACLAB_JOINT_NAMES.join(',') }), { file: folder }),
        { file: `${folder}/joint_pos.csv`, line: 1, column: 1 },
        /header is not joint_0 … joint_28/,
      );
    });
    it('files of different lengths', () => {
      expectInputError(
        () => decodeSonicReferenceFolder(folderFiles({ dropRows: 'body_pos' }), { file: folder }),
        { file: `${folder}/body_pos.csv` },
        new RegExp(`has ${N - 1} rows, but joint_pos.csv has ${N}`),
      );
    });
    it('a non-numeric field, with line and column', () => {
      const f = folderFiles();
      const lines = new TextDecoder().decode(f.jointPos).split('\n');
      lines[3] = lines[3].replace(/^[^,]+/, 'abc');
      f.jointPos = enc(lines.join('\n'));
      expectInputError(
        () => decodeSonicReferenceFolder(f, { file: folder }),
        { file: `${folder}/joint_pos.csv`, line: 4, column: 1 },
        /'abc' is not a finite number/,
      );
    });
  });

  describe('loadClipFile on a folder on disk', () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'sonic-ref-'));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));
    const write = (dir: string, f: SonicFolderFiles, skip: string[] = []) => {
      mkdirSync(dir);
      const files: [string, Uint8Array | undefined][] = [
        ['joint_pos.csv', f.jointPos],
        ['joint_vel.csv', f.jointVel],
        ['body_pos.csv', f.bodyPos],
        ['body_quat.csv', f.bodyQuat],
        ['metadata.txt', f.metadata],
      ];
      for (const [n, b] of files) if (b && !skip.includes(n)) writeFileSync(path.join(dir, n), b);
      return dir;
    };

    it('reads the folder to the same clip as the bytes', () => {
      const dir = write(path.join(tmp, 'B_HandsUp'), folderFiles());
      const clip = loadClipFile(dir, { fps: 60 });
      expect(clip.id).toBe(source.id);
      expect(clip.provenance.format).toBe('sonic-csv-folder');
      expect(clip.jointVelRadS?.length).toBe(N * J);
    });
    it('names a missing file, and refuses a folder that is not a reference folder', () => {
      const dir = write(path.join(tmp, 'no_meta'), folderFiles(), ['metadata.txt']);
      expectInputError(
        () => loadClipFile(dir),
        { file: path.join(dir, 'metadata.txt') },
        /is missing: a SONIC reference motion folder holds/,
      );
      const empty = path.join(tmp, 'empty');
      mkdirSync(empty);
      expectInputError(
        () => loadClipFile(empty),
        { file: empty },
        /is a folder, not a motion file, and not a SONIC reference motion folder/,
      );
    });
  });
});
