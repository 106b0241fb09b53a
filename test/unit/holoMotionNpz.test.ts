import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { decodeHoloMotionNpz } from '../../src/domain/motion/holoMotionNpz';
import { decodeMjlabNpz } from '../../src/domain/motion/mjlabNpz';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { sharedData } from '../helpers/sharedData';
import { expectInputError, J, zipBytes, type ZipMember } from './motionTestHelpers';
import { f4, npyUnicodeScalarBytes, readRealNpzArrays } from './peerMotionTestHelpers';

// A HoloMotion NPZ built here, byte by byte, from a real clip: G1 Moves' B_HandsUp.npz (mjlab
// layout, 30 bodies in MJCF order, wxyz, canonical joints, 60 fps; SOURCES.md §4b). HoloMotion
// stores the same things under its own names, with quaternions in xyzw
// (docs/holomotion_motion_file_spec.md), so decoding it must give back the source clip exactly.

const REAL = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
const file = 'clips/B_HandsUp_holo.npz';
const arrays = readRealNpzArrays(REAL);
const source: MotionClip = decodeMjlabNpz(new Uint8Array(readFileSync(REAL)), { file: REAL });
const N = 441;
const B = 30;

/** wxyz → xyzw for every body of every frame. */
function toXyzw(wxyz: Float64Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < wxyz.length; i += 4) out.push(wxyz[i + 1], wxyz[i + 2], wxyz[i + 3], wxyz[i]);
  return out;
}

interface Build {
  keys?: 'ref' | 'legacy';
  quat?: 'xyzw' | 'wxyz-misfiled';
  metadata?: Record<string, unknown> | null;
  extra?: ZipMember[];
}

function holoNpz(opts: Build = {}): Uint8Array {
  const pre = opts.keys === 'legacy' ? '' : 'ref_';
  const q = arrays.get('body_quat_w')!.data;
  const meta =
    opts.metadata === undefined
      ? { motion_key: 'B_HandsUp', motion_fps: 60.0, num_frames: N, num_dofs: J, num_bodies: B, valid_prefix_len: N }
      : opts.metadata;
  const members: ZipMember[] = [
    ...(meta ? [{ name: 'metadata.npy', data: npyUnicodeScalarBytes(JSON.stringify(meta)) }] : []),
    { name: `${pre}dof_pos.npy`, data: f4([N, J], arrays.get('joint_pos')!.data) },
    { name: `${pre === '' ? 'dof_vels' : 'ref_dof_vel'}.npy`, data: f4([N, J], arrays.get('joint_vel')!.data) },
    { name: `${pre}global_translation.npy`, data: f4([N, B, 3], arrays.get('body_pos_w')!.data) },
    { name: `${pre}global_rotation_quat.npy`, data: f4([N, B, 4], opts.quat === 'wxyz-misfiled' ? q : toXyzw(q)) },
    ...(opts.extra ?? []),
  ];
  return zipBytes(members);
}

/** Largest rotation angle (rad) between the root quaternions of two clips. */
function maxRootAngle(a: MotionClip, b: MotionClip): number {
  let worst = 0;
  for (let k = 0; k < a.frameCount; k++) {
    let dot = 0;
    for (let c = 0; c < 4; c++) dot += a.rootQuatWxyz[4 * k + c] * b.rootQuatWxyz[4 * k + c];
    worst = Math.max(worst, 2 * Math.acos(Math.min(1, Math.abs(dot))));
  }
  return worst;
}

describe('HoloMotion NPZ', () => {
  it('decodes to the source clip: root pose in wxyz, joints in canonical order, fps from metadata', () => {
    const clip = decodeHoloMotionNpz(holoNpz(), { file });
    expect(clip.frameCount).toBe(N);
    expect(clip.fps).toBe(60);
    expect(clip.provenance).toMatchObject({ file, format: 'holomotion-npz', fpsSource: 'file' });
    expect(Array.from(clip.rootPosM)).toEqual(Array.from(source.rootPosM));
    expect(Array.from(clip.rootQuatWxyz)).toEqual(Array.from(source.rootQuatWxyz));
    expect(Array.from(clip.jointPosRad)).toEqual(Array.from(source.jointPosRad));
    expect(Array.from(clip.jointVelRadS!)).toEqual(Array.from(source.jointVelRadS!));
    expect(clip.id).toBe(source.id);
    // the first frame faces about −90° yaw (SOURCES.md §4a): w ≈ 0.72, z ≈ −0.69
    expect(clip.rootQuatWxyz[0]).toBeGreaterThan(0.6);
    expect(clip.rootQuatWxyz[3]).toBeLessThan(-0.6);
    expect(clip.provenance.quaternionOrder).toMatch(/^xyzw \(docs\/holomotion_motion_file_spec\.md:44/);
    expect(clip.provenance.jointOrder).toMatch(/HoloMotion G1 dof_names.*29dof_training_isaaclab\.yaml:36-65/);
    expect(clip.bodyPosW?.bodyCount).toBe(B);
  });

  it('negative control: quaternions filed in wxyz under the xyzw key decode to another motion, far off', () => {
    const wrong = decodeHoloMotionNpz(holoNpz({ quat: 'wxyz-misfiled' }), { file });
    expect(wrong.id).not.toBe(source.id);
    expect(maxRootAngle(wrong, source)).toBeGreaterThan(1.0);
    expect(maxRootAngle(decodeHoloMotionNpz(holoNpz(), { file }), source)).toBeLessThan(1e-6);
  });

  it('reads the deprecated unprefixed keys (dof_pos, dof_vels, global_*) to the same clip', () => {
    expect(decodeHoloMotionNpz(holoNpz({ keys: 'legacy' }), { file }).id).toBe(source.id);
  });

  it('decodeMotionFile tells it from an mjlab NPZ by its member names, without an extension warning', () => {
    const clip = decodeMotionFile(holoNpz(), { file });
    expect(clip.provenance.format).toBe('holomotion-npz');
    expect(clip.warnings.map((w) => w.code)).not.toContain('extension_mismatch');
    expect(decodeMotionFile(new Uint8Array(readFileSync(REAL)), { file: REAL }).provenance.format).toBe('mjlab-npz');
  });

  it('refuses an archive holding both HoloMotion and mjlab members, naming both', () => {
    const both = holoNpz({ extra: [{ name: 'joint_pos.npy', data: f4([N, J], arrays.get('joint_pos')!.data) }] });
    expectInputError(
      () => decodeMotionFile(both, { file }),
      { file },
      /more than one motion format.*holomotion-npz: ref_dof_pos.*mjlab-npz: joint_pos/,
    );
  });

  describe('fps', () => {
    it('without metadata the fps must be given, and then it is the user\u2019s', () => {
      expectInputError(
        () => decodeHoloMotionNpz(holoNpz({ metadata: null }), { file }),
        { file, key: 'metadata' },
        /fps is missing.*--fps/,
      );
      const clip = decodeHoloMotionNpz(holoNpz({ metadata: null }), { file, fps: 60 });
      expect(clip.provenance.fpsSource).toBe('user');
      expect(clip.id).toBe(source.id);
    });
    it('a --fps that disagrees with metadata.motion_fps is refused', () => {
      expectInputError(
        () => decodeHoloMotionNpz(holoNpz(), { file, fps: 50 }),
        { file, key: 'metadata.motion_fps' },
        /states fps 60 but --fps 50/,
      );
    });
  });

  describe('bad input names the file and key', () => {
    it('metadata that disagrees with the arrays', () => {
      expectInputError(
        () => decodeHoloMotionNpz(holoNpz({ metadata: { motion_fps: 60, num_frames: 440 } }), { file }),
        { file, key: 'metadata.num_frames' },
        /is 440, but the arrays have 441/,
      );
    });
    it('metadata that is not JSON', () => {
      const members: ZipMember[] = [{ name: 'metadata.npy', data: npyUnicodeScalarBytes('{motion_fps: 60') }];
      expectInputError(
        () => decodeHoloMotionNpz(zipBytes(members), { file }),
        { file, key: 'metadata' },
        /is not JSON/,
      );
    });
    it('a body count other than the G1 config\u2019s 30 (the body order is then unknown)', () => {
      const arraysOf14 = zipBytes([
        { name: 'metadata.npy', data: npyUnicodeScalarBytes(JSON.stringify({ motion_fps: 60 })) },
        { name: 'ref_dof_pos.npy', data: f4([2, J], new Array(2 * J).fill(0)) },
        { name: 'ref_global_translation.npy', data: f4([2, 14, 3], new Array(2 * 14 * 3).fill(0)) },
        { name: 'ref_global_rotation_quat.npy', data: f4([2, 14, 4], new Array(2 * 14 * 4).fill(0.5)) },
      ]);
      expectInputError(
        () => decodeHoloMotionNpz(arraysOf14, { file }),
        { file, key: 'ref_global_translation' },
        /shape \(2, 14, 3\) is wrong; expected \(2, 30, 3\): HoloMotion's G1 config has 30 bodies/,
      );
    });
    it('a dof count other than 29', () => {
      const m = zipBytes([
        { name: 'ref_dof_pos.npy', data: f4([2, 23], new Array(2 * 23).fill(0)) },
        { name: 'ref_global_translation.npy', data: f4([2, B, 3], new Array(2 * B * 3).fill(0)) },
        { name: 'ref_global_rotation_quat.npy', data: f4([2, B, 4], new Array(2 * B * 4).fill(0.5)) },
      ]);
      expectInputError(
        () => decodeHoloMotionNpz(m, { file, fps: 50 }),
        { file, key: 'ref_dof_pos' },
        /has 23 dofs; only HoloMotion's G1 29-DoF order is known/,
      );
    });
    it('a root quaternion that is not unit', () => {
      const q = toXyzw(arrays.get('body_quat_w')!.data);
      q.splice(7 * B * 4, 4, 0.1, 0.1, 0.1, 0.1);
      const members: ZipMember[] = [
        { name: 'metadata.npy', data: npyUnicodeScalarBytes(JSON.stringify({ motion_fps: 60 })) },
        { name: 'ref_dof_pos.npy', data: f4([N, J], arrays.get('joint_pos')!.data) },
        { name: 'ref_global_translation.npy', data: f4([N, B, 3], arrays.get('body_pos_w')!.data) },
        { name: 'ref_global_rotation_quat.npy', data: f4([N, B, 4], q) },
      ];
      expectInputError(
        () => decodeHoloMotionNpz(zipBytes(members), { file }),
        { file, key: 'ref_global_rotation_quat' },
        /frame 7, body 0 \(root\): quaternion norm is 0\.2/,
      );
    });
  });
});
