import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clipInfo } from '../../src/cli/commands/clipInfoCommand';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { PROTOMOTIONS_G1_BODY_NAMES, PROTOMOTIONS_G1_DOF_NAMES } from '../../src/domain/motion/peerJointOrders';
import { decodeProtoMotionsMotion } from '../../src/domain/motion/protoMotionsMotion';
import { openTorchArchive, PickleDict, TorchTensor } from '../../src/domain/motion/torchArchive';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { MENAGERIE_G1, sharedData } from '../helpers/sharedData';
import { expectInputError, J } from './motionTestHelpers';
import { contiguousTensor, pickleDict, torchZipBytes, type TensorSpec } from './peerMotionTestHelpers';

// The real ProtoMotions example (NVlabs/ProtoMotions examples/data/g1_crouch_to_run.motion,
// Apache-2.0; SOURCES.md): a torch.save archive whose pickle holds fps = 30 and tensors that are
// views (dof_pos is columns 7..35 of a 36-wide qpos storage, rigid_body_vel has strides
// (1, 97, 3201)). The decoded clip is checked against the file's own rigid_body_pos through
// forward kinematics of MuJoCo Menagerie's G1: right only if the quaternion order (xyzw), the root
// body (0) and the joint order are right.

const REAL = sharedData('motions/protomotions/g1_crouch_to_run.motion');
const realBytes = new Uint8Array(readFileSync(REAL));
const clip = decodeProtoMotionsMotion(realBytes, { file: REAL });

const profile = loadRobotProfile(MENAGERIE_G1);
const fk = new ForwardKinematics(profile);

/** The file's rigid_body_pos, (97, 33, 3) in C order, read through the archive reader. */
function fileBodyPositions(): Float64Array {
  const a = openTorchArchive(realBytes, REAL);
  const t = (a.root as PickleDict).entries.get('rigid_body_pos') as TorchTensor;
  return a.readFloatTensor(t, 'rigid_body_pos');
}

/**
 * Largest distance over frames and the G1's 30 MJCF bodies between FK of (root pose, joints) and
 * the file's bodies of the same name. `quat(k)` and `joints(k)` give the pose read some way.
 */
function fkResidualM(
  quat: (k: number) => number[],
  joints: (k: number) => Float64Array,
  bodies: (name: string) => boolean = () => true,
): number {
  const stored = fileBodyPositions();
  const pos = new Float64Array(3 * fk.bodyCount);
  const q = new Float64Array(4 * fk.bodyCount);
  let worst = 0;
  for (let k = 0; k < clip.frameCount; k++) {
    fk.compute(clip.rootPosM.subarray(3 * k, 3 * k + 3), quat(k), joints(k), pos, q);
    for (let b = 0; b < fk.bodyCount; b++) {
      const name = profile.bodies[b].name;
      if (!bodies(name)) continue;
      const s = PROTOMOTIONS_G1_BODY_NAMES.indexOf(name);
      expect(s, name).toBeGreaterThanOrEqual(0);
      const o = (k * 33 + s) * 3;
      worst = Math.max(
        worst,
        Math.hypot(pos[3 * b] - stored[o], pos[3 * b + 1] - stored[o + 1], pos[3 * b + 2] - stored[o + 2]),
      );
    }
  }
  return worst;
}

const rootQuat = (c: MotionClip) => (k: number) => Array.from(c.rootQuatWxyz.subarray(4 * k, 4 * k + 4));
const canonicalJoints = (c: MotionClip) => (k: number) => c.jointPosRad.subarray(J * k, J * k + J);

describe('ProtoMotions .motion (real file)', () => {
  it('reads fps, frames, the root pose (body 0, xyzw → wxyz) and the strided dof_pos view', () => {
    expect(clip.frameCount).toBe(97);
    expect(clip.fps).toBe(30);
    expect(clip.provenance).toMatchObject({ file: REAL, format: 'protomotions-motion', fpsSource: 'file' });
    expect(clip.name).toBe('g1_crouch_to_run');
    // frame 0 as stored (python: rigid_body_rot[0, 0] = [-0.44573107, 0.29086545, 0.78393805, 0.31962824] xyzw)
    expect(Array.from(clip.rootQuatWxyz.subarray(0, 4))).toEqual(
      [0.31962824, -0.44573107, 0.29086545, 0.78393805].map((v) => expect.closeTo(v, 6)),
    );
    expect(Array.from(clip.rootPosM.subarray(0, 3))).toEqual(
      [1.9241747, -1.9474605, 0.45246986].map((v) => expect.closeTo(v, 6)),
    );
    // dof_pos[0, 0] is storage element 7 (offset 7), dof_pos[1, 0] is element 43 (stride 36)
    expect(clip.jointPosRad[0]).toBeCloseTo(-2.1677485, 6);
    expect(clip.jointVelRadS?.length).toBe(97 * J);
  });

  it('agrees with the file\u2019s own body positions through FK of the G1', () => {
    // Pelvis, both legs and waist_yaw_link: exact (float32). Above the waist the file was made
    // with a G1 whose waist_roll_link sits 0.035 m above waist_yaw and torso_link 0.019 m above
    // that (ProtoMotions protomotions/data/assets/urdf/for_retargeting/g1.urdf:521, :550), where
    // Menagerie's rev 1.0 has 0.044 m and 0 (g1.xml:170): a fixed 9-10 mm, not an order error.
    const belowWaist = (n: string) =>
      n === 'pelvis' || n === 'waist_yaw_link' || /^(left|right)_(hip|knee|ankle)/.test(n);
    expect(fkResidualM(rootQuat(clip), canonicalJoints(clip), belowWaist)).toBeLessThan(1e-4);
    expect(fkResidualM(rootQuat(clip), canonicalJoints(clip))).toBeLessThan(0.012);
  });

  it('negative controls: the root quaternion read as wxyz, or the joints read in Isaac Lab order, miss by decimetres', () => {
    // the stored 4 numbers [x, y, z, w] taken as [w, x, y, z]
    const asIfWxyz = (k: number) => {
      const [w, x, y, z] = rootQuat(clip)(k);
      return [x, y, z, w];
    };
    expect(fkResidualM(asIfWxyz, canonicalJoints(clip))).toBeGreaterThan(0.2);
    const isaac = Int32Array.from(G1_ISAACLAB_JOINT_NAMES, (n) => G1_JOINT_NAMES.indexOf(n));
    // file column c taken as the joint Isaac Lab lists at c
    const asIfIsaacLab = (k: number) => {
      const out = new Float64Array(J);
      isaac.forEach((canon, c) => (out[canon] = clip.jointPosRad[J * k + c]));
      return out;
    };
    expect(fkResidualM(rootQuat(clip), asIfIsaacLab)).toBeGreaterThan(0.05);
  });

  it('states the joint and quaternion order it read, with their sources, in provenance and in clip info', () => {
    expect(clip.provenance.jointOrder).toMatch(
      /ProtoMotions G1 dof order.*g1_holo_compat\.xml.*robot_configs\/g1\.py:91/,
    );
    expect(clip.provenance.quaternionOrder).toMatch(/^xyzw .*simulator_state\.py:283/);
    const info = clipInfo(clip);
    expect(info.joint_order).toBe(clip.provenance.jointOrder);
    expect(info.quaternion_order).toBe(clip.provenance.quaternionOrder);
    expect(PROTOMOTIONS_G1_DOF_NAMES).toEqual([...G1_JOINT_NAMES]);
  });

  it('decodeMotionFile recognises the torch archive by content; a .npz name gets an extension warning', () => {
    expect(decodeMotionFile(realBytes, { file: REAL }).id).toBe(clip.id);
    const renamed = decodeMotionFile(realBytes, { file: 'crouch.npz' });
    expect(renamed.provenance.format).toBe('protomotions-motion');
    expect(renamed.warnings[0]).toMatchObject({ code: 'extension_mismatch' });
  });
});

// Synthetic archives, written byte by byte like torch.save writes them.
const N = 4;
const file = 'synthetic.motion';

function motionTensors(
  opts: { dofs?: number; bodies?: number; rotStrided?: boolean } = {},
): Record<string, TensorSpec> {
  const D = opts.dofs ?? 29;
  const B = opts.bodies ?? 33;
  const dof = Array.from({ length: N * D }, (_, i) => 0.001 * i);
  const pos = Array.from({ length: N * B * 3 }, (_, i) => (i % 3 === 2 ? 0.8 : 0.01 * (i % 7)));
  // root yaw of 0.1·k rad, xyzw; the other bodies identity
  const rotC: number[] = [];
  for (let k = 0; k < N; k++)
    for (let b = 0; b < B; b++) rotC.push(...(b === 0 ? [0, 0, Math.sin(0.05 * k), Math.cos(0.05 * k)] : [0, 0, 0, 1]));
  let rot = contiguousTensor('3', [N, B, 4], rotC);
  if (opts.rotStrided) {
    // the same values stored with strides (1, N, N·B): element [k, b, c] at k + N b + N B c
    const storage = new Array<number>(rotC.length);
    for (let k = 0; k < N; k++)
      for (let b = 0; b < B; b++)
        for (let c = 0; c < 4; c++) storage[k + N * b + N * B * c] = rotC[(k * B + b) * 4 + c];
    rot = { key: '3', storage, shape: [N, B, 4], stride: [1, N, N * B] };
  }
  return {
    dof_pos: contiguousTensor('0', [N, D], dof),
    rigid_body_pos: contiguousTensor('2', [N, B, 3], pos),
    rigid_body_rot: rot,
  };
}

function motionArchive(
  t: Record<string, TensorSpec>,
  fps: number | null = 30,
  inject?: Parameters<typeof pickleDict>[1],
): Uint8Array {
  const entries: Record<string, number | TensorSpec> = fps === null ? { ...t } : { fps, ...t };
  return torchZipBytes('synthetic', pickleDict(entries, inject), Object.values(t));
}

describe('ProtoMotions .motion (synthetic)', () => {
  it('reads a rotation tensor stored with permuted strides the same as a contiguous one', () => {
    const a = decodeProtoMotionsMotion(motionArchive(motionTensors()), { file });
    const b = decodeProtoMotionsMotion(motionArchive(motionTensors({ rotStrided: true })), { file });
    expect(a.frameCount).toBe(N);
    expect(a.rootQuatWxyz[3 * 4 + 3]).toBeCloseTo(Math.sin(0.15), 6);
    expect(a.rootQuatWxyz[3 * 4]).toBeCloseTo(Math.cos(0.15), 6);
    expect(Array.from(b.rootQuatWxyz)).toEqual(Array.from(a.rootQuatWxyz));
  });

  it('refuses another robot: 30 dofs, or 30 bodies (not ProtoMotions\u2019 33-body G1 asset)', () => {
    expectInputError(
      () => decodeProtoMotionsMotion(motionArchive(motionTensors({ dofs: 30 })), { file }),
      { file, key: 'dof_pos' },
      /has 30 dofs; only ProtoMotions' G1/,
    );
    expectInputError(
      () => decodeProtoMotionsMotion(motionArchive(motionTensors({ bodies: 30 })), { file }),
      { file, key: 'rigid_body_pos' },
      /has 30 bodies, but ProtoMotions' G1 asset .* has 33/,
    );
  });

  it('a file without fps needs --fps; a missing tensor is named', () => {
    expectInputError(
      () => decodeProtoMotionsMotion(motionArchive(motionTensors(), null), { file }),
      { file, key: 'fps' },
      /fps is missing/,
    );
    expect(decodeProtoMotionsMotion(motionArchive(motionTensors(), null), { file, fps: 30 }).provenance.fpsSource).toBe(
      'user',
    );
    const { rigid_body_rot: _drop, ...noRot } = motionTensors();
    expectInputError(
      () => decodeProtoMotionsMotion(motionArchive(noRot), { file }),
      { file, key: 'rigid_body_rot' },
      /key rigid_body_rot is missing/,
    );
  });

  it('refuses a tensor that reaches past its storage', () => {
    const t = motionTensors();
    t.dof_pos = { ...t.dof_pos, offset: 1 };
    expectInputError(
      () => decodeProtoMotionsMotion(motionArchive(t), { file }),
      { file, key: 'synthetic/data.pkl' },
      /reaches element 116 of a 116-element storage/,
    );
  });

  it('refuses a storage member of the wrong size', () => {
    const t = motionTensors();
    const bytes = torchZipBytes(
      'synthetic',
      pickleDict({ fps: 30, ...t, dof_pos: { ...t.dof_pos, storage: new Array(117).fill(0) } }),
      Object.values(t),
    );
    expectInputError(
      () => decodeProtoMotionsMotion(bytes, { file }),
      { file, key: 'dof_pos' },
      /storage synthetic\/data\/0 holds 464 bytes, but 117 float32 elements need 468/,
    );
  });
});
