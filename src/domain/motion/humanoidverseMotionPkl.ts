// HumanoidVerse / PBHC motion files (`.pkl`): `joblib.dump({name: motion}, path)` of a dict of
// numpy arrays per motion, read with the restricted unpickler (joblibPickle.ts: no pickle code
// runs). The fields, as PBHC writes them (TeleHuman/PBHC @ 452b05ab, motion_source/
// convert_lafan_pkl.py:25-32; smpl_retarget/mink_retarget/convert_fit_motion.py:401-404) and
// its motion library reads them (humanoidverse/utils/motion_lib/motion_lib_base.py:389-402):
//   root_trans_offset  (N, 3)  root position, m
//   root_rot           (N, 4)  root orientation, **x, y, z, w** (scipy's as_quat, from_quat in
//                              convert_lafan_pkl.py:16, 49; "need xyzw", motion_lib_base.py:410)
//   dof                (N, D)  joint angles, rad: D = 23 in PBHC's g1_23dof_lock_wrist order
//                              (peerJointOrders.ts PBHC_G1_23DOF_NAMES), D = 29 in the G1 order
//   fps                number  frames per second (motion_lib_base.py:402 dt = 1/fps)
//   pose_aa, smpl_joints, contact_mask, action: not read (pose_aa is the root rotation vector and
//                              dof × joint axis, the same motion again)
// The file names no joints: the dof order comes from PBHC's converter, and a width other than 23
// or 29 is refused. Joints the 23-dof robot does not have (the six wrist joints, locked in its
// model) are 0 rad in the clip: the pose PBHC's asset fixes them at. A file holding more than one
// motion is refused with their names (a clip is one motion).

import { InputError } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  checkFiniteValues,
  checkFrameCount,
  checkInputSize,
  clipNameFromFile,
  type DecodeOptions,
  finalizeClip,
  listNames,
  quatNormProblem,
  resolveStatedFps,
} from './clipCommon';
import { NumpyArray, readJoblibPickle } from './joblibPickle';
import type { MotionClip } from './motionClip';
import { PBHC_G1_23DOF_NAMES } from './peerJointOrders';
import { PickleDict } from './torchArchive';

export const HUMANOIDVERSE_PKL_JOINT_ORDER_23 =
  "canonical, mapped by name from PBHC's g1_23dof_lock_wrist dof order (the file names no joints: TeleHuman/PBHC motion_source/convert_lafan_pkl.py:15 drops the wrist columns of the G1 order); wrist joints 0 rad (locked in that robot)";
export const HUMANOIDVERSE_PKL_JOINT_ORDER_29 =
  "canonical: a 29-wide dof is the G1 order PBHC's converter reads (motion_source/convert_lafan_pkl.py:13; the file names no joints)";
export const HUMANOIDVERSE_PKL_QUATERNION_ORDER =
  'xyzw (PBHC motion_source/convert_lafan_pkl.py:16 scipy from_quat; humanoidverse/utils/motion_lib/motion_lib_base.py:410 "need xyzw")';

/** The one motion of a HumanoidVerse .pkl (its name and fields), refused with the names when there are several. */
export function humanoidverseMotionEntry(root: unknown, file: string): { name: string; fields: PickleDict } {
  if (!(root instanceof PickleDict))
    throw new InputError(
      { file },
      'the pickle holds no dict; a HumanoidVerse motion file is {motion name: {root_trans_offset, root_rot, dof, fps, …}}',
    );
  const names = [...root.entries.keys()].map(String);
  if (names.length !== 1)
    throw new InputError(
      { file },
      names.length === 0
        ? 'the pickle holds no motion'
        : `the pickle holds ${names.length} motions (${listNames(names)}); a clip is one motion`,
    );
  const fields = root.entries.get(names[0]);
  if (!(fields instanceof PickleDict))
    throw new InputError({ file, key: names[0] }, 'is not a dict of arrays (root_trans_offset, root_rot, dof, fps)');
  return { name: names[0], fields };
}

export function decodeHumanoidverseMotionPkl(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  const { file } = options;
  checkInputSize(bytes, file);
  const { name, fields } = humanoidverseMotionEntry(readJoblibPickle(bytes, file), file);
  const keys = [...fields.entries.keys()].map(String);
  const array = (key: string, last: number | null): NumpyArray => {
    const v = fields.entries.get(key);
    if (v === undefined)
      throw new InputError(
        { file, key: `${name}.${key}` },
        `is missing; a HumanoidVerse motion has root_trans_offset, root_rot, dof and fps (found: ${listNames(keys)})`,
      );
    if (!(v instanceof NumpyArray) || v.dtype.code[0] !== 'f')
      throw new InputError({ file, key: `${name}.${key}` }, 'is not a float array');
    if (v.shape.length !== 2 || (last !== null && v.shape[1] !== last))
      throw new InputError(
        { file, key: `${name}.${key}` },
        `has shape (${v.shape.join(', ')}); expected (N, ${last ?? 'D'})`,
      );
    return v;
  };
  const fpsValue = fields.entries.get('fps');
  if (fpsValue !== undefined && typeof fpsValue !== 'number')
    throw new InputError({ file, key: `${name}.fps` }, 'is not a number');
  const { fps, fpsSource } = resolveStatedFps(fpsValue, options, { file, key: `${name}.fps` });

  const trans = array('root_trans_offset', 3);
  const rot = array('root_rot', 4);
  const dof = array('dof', null);
  const N = dof.shape[0];
  checkFrameCount(N, { file, key: `${name}.dof` });
  for (const [key, a] of [
    ['root_trans_offset', trans],
    ['root_rot', rot],
  ] as const)
    if (a.shape[0] !== N)
      throw new InputError(
        { file, key: `${name}.${key}` },
        `has ${a.shape[0]} frames but dof has ${N}; all must have the same first dimension`,
      );
  const D = dof.shape[1];
  if (D !== PBHC_G1_23DOF_NAMES.length && D !== G1_NUM_JOINTS)
    throw new InputError(
      { file, key: `${name}.dof` },
      `has ${D} joints; only PBHC's 23-dof G1 (g1_23dof_lock_wrist) and the 29-joint G1 are read: the file names no joints, and another robot's order is not known`,
    );
  const names = D === G1_NUM_JOINTS ? G1_JOINT_NAMES : PBHC_G1_23DOF_NAMES;
  const dofValues = dof.toFloat64();
  checkFiniteValues(
    dofValues,
    { file, key: `${name}.dof` },
    (i) => `dof[${Math.floor(i / D)}, ${i % D}] (${names[i % D]})`,
    'joint_pos',
  );
  const column = names.map((n) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]));
  const J = G1_NUM_JOINTS;
  const jointPosRad = new Float64Array(N * J);
  for (let f = 0; f < N; f++) for (let c = 0; c < D; c++) jointPosRad[f * J + column[c]] = dofValues[f * D + c];

  const pos = trans.toFloat64();
  checkFiniteValues(
    pos,
    { file, key: `${name}.root_trans_offset` },
    (i) => `root_trans_offset[${Math.floor(i / 3)}, ${i % 3}]`,
    'root_pos',
  );
  const xyzw = rot.toFloat64();
  checkFiniteValues(xyzw, { file, key: `${name}.root_rot` }, (i) => `root_rot[${Math.floor(i / 4)}, ${i % 4}]`);
  const rootQuatWxyz = new Float64Array(N * 4);
  for (let f = 0; f < N; f++) {
    const problem = quatNormProblem(xyzw, 4 * f);
    if (problem) throw new InputError({ file, key: `${name}.root_rot` }, `frame ${f}: ${problem}`);
    rootQuatWxyz[4 * f] = xyzw[4 * f + 3];
    rootQuatWxyz[4 * f + 1] = xyzw[4 * f];
    rootQuatWxyz[4 * f + 2] = xyzw[4 * f + 1];
    rootQuatWxyz[4 * f + 3] = xyzw[4 * f + 2];
  }
  const clip = finalizeClip(
    {
      name: clipNameFromFile(file),
      format: 'humanoidverse-pkl',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM: pos,
      rootQuatWxyz,
      jointPosRad,
    },
    bytes,
    options,
  );
  clip.provenance.jointOrder =
    D === G1_NUM_JOINTS ? HUMANOIDVERSE_PKL_JOINT_ORDER_29 : HUMANOIDVERSE_PKL_JOINT_ORDER_23;
  clip.provenance.quaternionOrder = HUMANOIDVERSE_PKL_QUATERNION_ORDER;
  return clip;
}
