// HoloMotion NPZ (HorizonRobotics/HoloMotion @ 71ab7e9, docs/holomotion_motion_file_spec.md):
// a numpy .npz written by np.savez_compressed(out, metadata=json.dumps(meta), **arrays)
// (holomotion/src/motion_retargeting/holomotion_preprocess.py:751-754, holomotion/src/algo/
// ppo.py:1711-1729). Members read (spec line numbers):
//   metadata                  () '<U n'        JSON: motion_fps, num_frames, num_dofs, num_bodies, … (:12-24)
//   ref_dof_pos               (T, num_dofs)    rad, "URDF joint order" (:26-29)
//   ref_dof_vel               (T, num_dofs)    rad/s (:31-34; optional here)
//   ref_global_translation    (T, num_bodies, 3)  m, world frame (:36-39)
//   ref_global_rotation_quat  (T, num_bodies, 4)  **XYZW**, world frame (:41-44)
// The deprecated unprefixed keys (dof_pos, dof_vels/dof_vel, global_translation,
// global_rotation_quat) are read when the ref_ key is absent, as the deploy code's converter
// does (deployment/unitree_g1_ros2_29dof/src/humanoid_policy/offline_motion_conversion.py:14-27).
// Filtered (ft_ref_*) and executed (robot_*) arrays are not read: the clip is the reference.
// Orders, none of which the file names:
//   - joints: HoloMotion's G1 29-DoF robot.dof_names (peerJointOrders.ts HOLOMOTION_G1_DOF_NAMES),
//     mapped by name; a file whose dof count is not 29 is refused (its joint names are unknown);
//   - bodies: the G1 config's 30 body_names, pelvis first; the root is body 0 (the deploy code's
//     root_body_idx = 0, offline_motion_reference.py:86); other body counts are refused;
//   - quaternions: xyzw (spec :44; the deploy code converts the root with q[3], q[0], q[1], q[2]
//     into wxyz, offline_motion_reference.py:358-365). Converted to wxyz here.
// fps: metadata.motion_fps. Without it the user's --fps is needed (the converter's silent 50 is
// not assumed). Members are checked from their .npy headers before inflation, as mjlabNpz.ts does.

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
import { listNpzMembers, NPZ_INFLATE_BUDGET_BYTES, peekNpyHeader } from './mjlabNpz';
import {
  checkNpyDataSize,
  checkNpyFloatHeader,
  readNpyFloatArray,
  readNpyUnicodeScalar,
  type NpyHeader,
} from './npyArray';
import { HOLOMOTION_G1_BODY_COUNT, HOLOMOTION_G1_DOF_NAMES, reorderNamedColumns } from './peerJointOrders';
import { readZipEntry, type ZipEntry } from './zipArchive';

export const HOLOMOTION_JOINT_ORDER =
  'canonical, mapped by name from HoloMotion G1 dof_names (the file names no joints: holomotion/config/robot/unitree/G1/29dof/29dof_training_isaaclab.yaml:36-65, "URDF joint order" in docs/holomotion_motion_file_spec.md:29)';
export const HOLOMOTION_QUATERNION_ORDER =
  'xyzw (docs/holomotion_motion_file_spec.md:44; root = body 0, deployment offline_motion_reference.py:86)';

/** Member aliases, preferred first (offline_motion_conversion.py:14-27). */
export const HOLOMOTION_KEYS = {
  dofPos: ['ref_dof_pos', 'dof_pos'],
  dofVel: ['ref_dof_vel', 'dof_vel', 'dof_vels'],
  translation: ['ref_global_translation', 'global_translation'],
  rotation: ['ref_global_rotation_quat', 'global_rotation_quat'],
} as const;

/** Largest metadata member read (a few hundred bytes in practice). */
const MAX_METADATA_BYTES = 1024 * 1024;

const shapeText = (s: readonly number[]) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;

interface HoloMetadata {
  motion_fps?: number;
  num_frames?: number;
  num_dofs?: number;
  num_bodies?: number;
}

function readMetadata(bytes: Uint8Array, entry: ZipEntry, file: string): HoloMetadata {
  const key = 'metadata';
  if (entry.uncompressedSize > MAX_METADATA_BYTES)
    throw new InputError({ file, key }, `is ${entry.uncompressedSize} bytes, more than the ${MAX_METADATA_BYTES} read`);
  const text = readNpyUnicodeScalar(readZipEntry(bytes, entry, file, key), file, key);
  if (text === null)
    throw new InputError(
      { file, key },
      'is not a 0-d unicode array (np.savez of a JSON string, as HoloMotion writes it)',
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new InputError({ file, key }, `is not JSON (${(e as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new InputError({ file, key }, 'is not a JSON object');
  const m = doc as Record<string, unknown>;
  const out: HoloMetadata = {};
  for (const k of ['motion_fps', 'num_frames', 'num_dofs', 'num_bodies'] as const) {
    if (m[k] === undefined) continue;
    if (typeof m[k] !== 'number' || !Number.isFinite(m[k]))
      throw new InputError({ file, key: `metadata.${k}` }, `is ${JSON.stringify(m[k])}, not a number`);
    out[k] = m[k] as number;
  }
  return out;
}

export function decodeHoloMotionNpz(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  const { file } = options;
  checkInputSize(bytes, file);
  const members = listNpzMembers(bytes, file);

  interface Planned {
    key: string;
    entry: ZipEntry;
    header: NpyHeader;
    shape: number[];
  }
  const plan = (aliases: readonly string[], required: boolean): Planned | undefined => {
    const key = aliases.find((k) => members.has(k));
    if (!key) {
      if (!required) return undefined;
      throw new InputError(
        { file, key: aliases[0] },
        `key ${aliases[0]} is missing (nor ${aliases.slice(1).join(' or ')}); a HoloMotion NPZ has ref_dof_pos, ref_global_translation, ref_global_rotation_quat and metadata (found: ${listNames([...members.keys()])})`,
      );
    }
    const entry = members.get(key)!;
    const header = peekNpyHeader(bytes, entry, file, key);
    const { itemSize } = checkNpyFloatHeader(header, file, key);
    checkNpyDataSize(header, itemSize, entry.uncompressedSize - header.dataOffset, file, key);
    return { key, entry, header, shape: header.shape };
  };

  const metaEntry = members.get('metadata');
  const meta = metaEntry ? readMetadata(bytes, metaEntry, file) : {};
  const { fps, fpsSource } = resolveStatedFps(meta.motion_fps, options, {
    file,
    key: metaEntry ? 'metadata.motion_fps' : 'metadata',
  });

  const J = G1_NUM_JOINTS;
  const dp = plan(HOLOMOTION_KEYS.dofPos, true)!;
  if (dp.shape.length !== 2)
    throw new InputError({ file, key: dp.key }, `shape ${shapeText(dp.shape)} is wrong; expected (T, num_dofs)`);
  const N = dp.shape[0];
  checkFrameCount(N, { file, key: dp.key });
  if (dp.shape[1] !== J)
    throw new InputError(
      { file, key: dp.key },
      `has ${dp.shape[1]} dofs; only HoloMotion's G1 29-DoF order is known (the file names no joints)`,
    );
  const dv = plan(HOLOMOTION_KEYS.dofVel, false);
  const tr = plan(HOLOMOTION_KEYS.translation, true)!;
  const rt = plan(HOLOMOTION_KEYS.rotation, true)!;
  const B = tr.shape[1];
  const expect: [Planned | undefined, number[]][] = [
    [dv, [N, J]],
    [tr, [N, HOLOMOTION_G1_BODY_COUNT, 3]],
    [rt, [N, HOLOMOTION_G1_BODY_COUNT, 4]],
  ];
  for (const [p, want] of expect) {
    if (!p) continue;
    if (p.shape.length !== want.length || p.shape.some((d, i) => d !== want[i])) {
      const why =
        p.shape.length === want.length && p.shape[0] !== N
          ? `: it has ${p.shape[0]} frames, ${dp.key} has ${N}`
          : want.length === 3 && p.shape.length === 3 && p.shape[1] !== HOLOMOTION_G1_BODY_COUNT
            ? `: HoloMotion's G1 config has ${HOLOMOTION_G1_BODY_COUNT} bodies (root = body 0); with ${p.shape[1]} the body order is not known`
            : '';
      throw new InputError(
        { file, key: p.key },
        `shape ${shapeText(p.shape)} is wrong; expected ${shapeText(want)}${why}`,
      );
    }
  }
  // metadata, where present, must agree with the arrays
  const agree = (k: 'num_frames' | 'num_dofs' | 'num_bodies', actual: number) => {
    if (meta[k] !== undefined && meta[k] !== actual)
      throw new InputError({ file, key: `metadata.${k}` }, `is ${meta[k]}, but the arrays have ${actual}`);
  };
  agree('num_frames', N);
  agree('num_dofs', J);
  agree('num_bodies', B);

  const used = [dp, dv, tr, rt].filter((p): p is Planned => p !== undefined);
  const total = used.reduce((a, p) => a + p.entry.uncompressedSize, 0);
  if (total > NPZ_INFLATE_BUDGET_BYTES)
    throw new InputError(
      { file },
      `the arrays would inflate to ${(total / 1048576).toFixed(1)} MiB, more than the ${NPZ_INFLATE_BUDGET_BYTES / 1048576} MiB budget for one NPZ`,
    );
  const read = (p: Planned) => readNpyFloatArray(readZipEntry(bytes, p.entry, file, p.key), file, p.key).data;

  const dofs = read(dp);
  checkFiniteValues(
    dofs,
    { file, key: dp.key },
    (i) => `${dp.key}[${Math.floor(i / J)}, ${i % J}] (${HOLOMOTION_G1_DOF_NAMES[i % J]})`,
    'joint_pos',
  );
  const jointPosRad = reorderNamedColumns(dofs, N, HOLOMOTION_G1_DOF_NAMES, file, dp.key);
  let jointVelRadS: Float64Array | undefined;
  if (dv) {
    const v = read(dv);
    checkFiniteValues(v, { file, key: dv.key }, (i) => `${dv.key}[${Math.floor(i / J)}, ${i % J}]`);
    jointVelRadS = reorderNamedColumns(v, N, HOLOMOTION_G1_DOF_NAMES, file, dv.key);
  }
  const pos = read(tr);
  checkFiniteValues(
    pos,
    { file, key: tr.key },
    (i) => `${tr.key}[${Math.floor(i / (3 * B))}, ${Math.floor(i / 3) % B}, ${i % 3}]`,
    'root_pos',
  );
  const rot = read(rt);
  const { rootPosM, rootQuatWxyz } = rootPoseFromBodyArraysXyzw(pos, rot, N, B, {
    file,
    posKey: tr.key,
    rotKey: rt.key,
  });

  const clip = finalizeClip(
    {
      name: clipNameFromFile(file),
      format: 'holomotion-npz',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM,
      rootQuatWxyz,
      jointPosRad,
      ...(jointVelRadS ? { jointVelRadS } : {}),
      bodyPosW: { bodyCount: B, data: pos },
    },
    bytes,
    options,
  );
  clip.provenance.jointOrder = HOLOMOTION_JOINT_ORDER;
  clip.provenance.quaternionOrder = HOLOMOTION_QUATERNION_ORDER;
  return clip;
}
