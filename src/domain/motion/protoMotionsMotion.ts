// ProtoMotions `.motion` files (NVlabs/ProtoMotions @ 607ca7a0): `torch.save(motion.to_dict(),
// path)` of a RobotState (data/scripts/convert_g1_csv_to_proto.py:448), a torch.save ZIP read by
// the restricted unpickler of torchArchive.ts. The pickled object is a dict:
//   fps                   int or float                 frames per second (RobotState.fps)
//   dof_pos               (N, D) float tensor          joint angles, rad, the robot's dof order
//   dof_vel               (N, D) float tensor          rad/s (optional here)
//   rigid_body_pos        (N, B, 3) float tensor       world body positions, m
//   rigid_body_rot        (N, B, 4) float tensor       world body orientations, **xyzw**
//   rigid_body_vel / _ang_vel / _contacts              not read
// Facts, and where they are stated (simulator_state.py = protomotions/simulator/base_simulator/
// simulator_state.py):
//   - quaternions are xyzw: "NOTE: we use xyzw quaternion ordering for the common state shared by
//     all simulators" (simulator_state.py:283); the converter builds rigid_body_rot by FK into a
//     RobotState, "RobotState uses XYZW convention" (protomotions/components/pose_lib.py:1472);
//   - the root is body 0: root_pos = rigid_body_pos[:, 0], root_rot = rigid_body_rot[:, 0]
//     (simulator_state.py:315-324);
//   - the file names neither joints nor bodies. The dof order is the G1 asset's hinge order
//     (peerJointOrders.ts PROTOMOTIONS_G1_DOF_NAMES, from robot_configs/g1.py:91 and the MJCF),
//     and a file is taken as a G1 motion of that asset only when its shapes are that asset's:
//     D = 29 dofs and B = 33 bodies (PROTOMOTIONS_G1_BODY_NAMES). Anything else is refused: its
//     joint order is not known. The returned clip says so in provenance.jointOrder.
//     (Checked on the example examples/data/g1_crouch_to_run.motion: FK of its root pose and dofs
//     read so reproduces its rigid_body_pos of the pelvis and legs exactly; above the waist it was
//     made with a G1 whose waist offsets are those of ProtoMotions' urdf/for_retargeting/g1.urdf
//     (:521, :550), 1 cm from rev 1.0's: the same joints in the same order.)
// Tensors may be views with any strides (the example file's dof_pos is columns 7..35 of a
// 36-wide qpos storage); they are gathered into C order. A view must address each stored element
// at most once (torchArchive.ts checkTensors): a stride 0 on any axis of size > 1, the frame axis
// above all, is refused, so N frames are N stored frames; checked for every tensor read, from the
// pickle and the ZIP directory, before any storage is inflated.

import { InputError } from '../problems';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  checkFiniteValues,
  checkFrameCount,
  checkInputSize,
  clipNameFromFile,
  type DecodeOptions,
  finalizeClip,
  listNames,
  resolveStatedFps,
  rootPoseFromBodyArraysXyzw,
} from './clipCommon';
import type { MotionClip } from './motionClip';
import { PROTOMOTIONS_G1_BODY_NAMES, PROTOMOTIONS_G1_DOF_NAMES, reorderNamedColumns } from './peerJointOrders';
import { openTorchArchive, PickleDict, TorchTensor, type PickleValue } from './torchArchive';

export const PROTOMOTIONS_JOINT_ORDER =
  'canonical, mapped by name from ProtoMotions G1 dof order (the file names no joints: hinges of protomotions/data/assets/mjcf/g1_holo_compat.xml, the G1 config asset at robot_configs/g1.py:91, read by components/pose_lib.py:395)';
export const PROTOMOTIONS_QUATERNION_ORDER =
  'xyzw (ProtoMotions RobotState, protomotions/simulator/base_simulator/simulator_state.py:283; root = rigid_body_rot[:, 0], :321-323)';

const shapeText = (s: readonly number[]) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;

export function decodeProtoMotionsMotion(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  const { file } = options;
  checkInputSize(bytes, file);
  const archive = openTorchArchive(bytes, file);
  const root = archive.root;
  if (!(root instanceof PickleDict))
    throw new InputError(
      { file, key: 'data.pkl' },
      'the archive holds no dict; a ProtoMotions .motion file is a dict of tensors (dof_pos, rigid_body_pos, rigid_body_rot, fps)',
    );
  const keys = [...root.entries.keys()].map(String);
  const field = (key: string, required: boolean): PickleValue | undefined => {
    const v = root.entries.get(key);
    if (v === undefined && required)
      throw new InputError(
        { file, key },
        `key ${key} is missing; a ProtoMotions .motion file has fps, dof_pos, rigid_body_pos and rigid_body_rot (found: ${listNames(keys)})`,
      );
    return v;
  };
  const tensor = (key: string, required: boolean, rank: number, last?: number): TorchTensor | undefined => {
    const v = field(key, required);
    if (v === undefined || (v === null && !required)) return undefined;
    if (!(v instanceof TorchTensor)) throw new InputError({ file, key }, 'is not a tensor');
    if (v.shape.length !== rank || (last !== undefined && v.shape[rank - 1] !== last))
      throw new InputError(
        { file, key },
        `shape ${shapeText(v.shape)} is wrong; expected ${rank === 2 ? `(N, ${last ?? 'D'})` : `(N, B, ${last})`}`,
      );
    return v;
  };

  const fpsValue = field('fps', false);
  if (fpsValue !== undefined && fpsValue !== null && typeof fpsValue !== 'number')
    throw new InputError({ file, key: 'fps' }, 'is not a number');
  const { fps, fpsSource } = resolveStatedFps(typeof fpsValue === 'number' ? fpsValue : undefined, options, {
    file,
    key: 'fps',
  });

  const dofPos = tensor('dof_pos', true, 2)!;
  const N = dofPos.shape[0];
  const D = dofPos.shape[1];
  checkFrameCount(N, { file, key: 'dof_pos' });
  if (D !== G1_NUM_JOINTS)
    throw new InputError(
      { file, key: 'dof_pos' },
      `has ${D} dofs; only ProtoMotions' G1 (29 dofs) is read: the file names no joints, and the joint order of another robot is not known`,
    );
  const dofVel = tensor('dof_vel', false, 2, G1_NUM_JOINTS);
  const bodyPos = tensor('rigid_body_pos', true, 3, 3)!;
  const bodyRot = tensor('rigid_body_rot', true, 3, 4)!;
  const B = bodyPos.shape[1];
  if (B !== PROTOMOTIONS_G1_BODY_NAMES.length)
    throw new InputError(
      { file, key: 'rigid_body_pos' },
      `has ${B} bodies, but ProtoMotions' G1 asset (mjcf/g1_holo_compat.xml) has ${PROTOMOTIONS_G1_BODY_NAMES.length}: not a motion of that asset, so its joint order is not known`,
    );
  for (const [key, t] of [
    ['dof_vel', dofVel],
    ['rigid_body_pos', bodyPos],
    ['rigid_body_rot', bodyRot],
  ] as const) {
    if (!t) continue;
    if (t.shape[0] !== N)
      throw new InputError(
        { file, key },
        `has ${t.shape[0]} frames but dof_pos has ${N}; all must have the same first dimension`,
      );
    if (t.shape.length === 3 && t.shape[1] !== B)
      throw new InputError({ file, key }, `has ${t.shape[1]} bodies but rigid_body_pos has ${B}`);
  }

  // Every tensor backed by its own stored elements, from declared sizes, before any is inflated.
  archive.checkTensors([
    ['dof_pos', dofPos],
    ...(dofVel ? [['dof_vel', dofVel] as const] : []),
    ['rigid_body_pos', bodyPos],
    ['rigid_body_rot', bodyRot],
  ]);

  const J = G1_NUM_JOINTS;
  const jointsFile = archive.readFloatTensor(dofPos, 'dof_pos');
  checkFiniteValues(
    jointsFile,
    { file, key: 'dof_pos' },
    (i) => `dof_pos[${Math.floor(i / J)}, ${i % J}] (${PROTOMOTIONS_G1_DOF_NAMES[i % J]})`,
    'joint_pos',
  );
  const jointPosRad = reorderNamedColumns(jointsFile, N, PROTOMOTIONS_G1_DOF_NAMES, file, 'dof_pos');
  let jointVelRadS: Float64Array | undefined;
  if (dofVel) {
    const v = archive.readFloatTensor(dofVel, 'dof_vel');
    checkFiniteValues(v, { file, key: 'dof_vel' }, (i) => `dof_vel[${Math.floor(i / J)}, ${i % J}]`);
    jointVelRadS = reorderNamedColumns(v, N, PROTOMOTIONS_G1_DOF_NAMES, file, 'dof_vel');
  }

  const pos = archive.readFloatTensor(bodyPos, 'rigid_body_pos');
  const rot = archive.readFloatTensor(bodyRot, 'rigid_body_rot');
  const { rootPosM, rootQuatWxyz } = rootPoseFromBodyArraysXyzw(pos, rot, N, B, {
    file,
    posKey: 'rigid_body_pos',
    rotKey: 'rigid_body_rot',
  });

  const clip = finalizeClip(
    {
      name: clipNameFromFile(file),
      format: 'protomotions-motion',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM,
      rootQuatWxyz,
      jointPosRad,
      ...(jointVelRadS ? { jointVelRadS } : {}),
    },
    bytes,
    options,
  );
  clip.provenance.jointOrder = PROTOMOTIONS_JOINT_ORDER;
  clip.provenance.quaternionOrder = PROTOMOTIONS_QUATERNION_ORDER;
  return clip;
}
