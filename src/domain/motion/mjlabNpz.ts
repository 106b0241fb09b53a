// BeyondMimic / mjlab "motion npz": a numpy .npz (ZIP of .npy members) with
//   fps          () or (1,)   frames per second
//   joint_pos    (N, 29)      rad, canonical joint order
//   joint_vel    (N, 29)      rad/s (optional here)
//   body_pos_w   (N, B, 3)    world body positions, m; body 0 = pelvis (root)
//   body_quat_w  (N, B, 4)    world body orientations, wxyz; body 0 = pelvis (root)
// Other members (body_lin_vel_w, body_ang_vel_w, ...) are ignored. Arrays must be C-order
// float32 or float64 of either byte order.

import { InputError } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  checkFrameCount,
  checkInputSize,
  clipNameFromFile,
  finalizeClip,
  quatNormProblem,
  resolveStatedFps,
  type DecodeOptions,
} from './clipCommon';
import type { MotionClip } from './motionClip';
import { readNpyFloatArray, readNpyScalar, type NpyFloatArray } from './npyArray';
import { readZipDirectory, readZipEntry, type ZipEntry } from './zipArchive';

const REQUIRED_KEYS = 'fps, joint_pos, joint_vel, body_pos_w, body_quat_w';

/** Members of an NPZ by key (member name without `.npy`). */
export function listNpzMembers(bytes: Uint8Array, file: string): Map<string, ZipEntry> {
  const members = new Map<string, ZipEntry>();
  for (const e of readZipDirectory(bytes, file)) {
    if (e.name.endsWith('.npy')) members.set(e.name.slice(0, -4), e);
  }
  return members;
}

/** The fps stored in an NPZ, or undefined when it has no `fps` member. Throws on a bad file. */
export function readNpzFps(bytes: Uint8Array, file: string): number | undefined {
  const e = listNpzMembers(bytes, file).get('fps');
  return e ? readNpyScalar(readZipEntry(bytes, e, file, 'fps'), file, 'fps') : undefined;
}

const shapeText = (s: number[]) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;

function checkFinite(a: NpyFloatArray, file: string, key: string, describe: (flat: number) => string, limit = a.data.length): void {
  const d = a.data;
  for (let i = 0; i < limit; i++) {
    const v = d[i];
    if (v - v !== 0) throw new InputError({ file, key }, `${describe(i)} is ${v} (NaN and Inf are not allowed)`);
  }
}

export function decodeMjlabNpz(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  const { file } = options;
  checkInputSize(bytes, file);
  const members = listNpzMembers(bytes, file);
  if (members.size === 0) throw new InputError({ file }, `NPZ archive has no .npy members (expected ${REQUIRED_KEYS})`);
  const read = (key: string, required: boolean): NpyFloatArray | undefined => {
    const e = members.get(key);
    if (!e) {
      if (required) {
        throw new InputError({ file, key }, `key ${key} is missing; an mjlab motion NPZ has ${REQUIRED_KEYS} (found: ${[...members.keys()].join(', ')})`);
      }
      return undefined;
    }
    return readNpyFloatArray(readZipEntry(bytes, e, file, key), file, key);
  };

  const fpsEntry = members.get('fps');
  const fileFps = fpsEntry ? readNpyScalar(readZipEntry(bytes, fpsEntry, file, 'fps'), file, 'fps') : undefined;
  const { fps, fpsSource } = resolveStatedFps(fileFps, options, { file, key: 'fps' });

  const J = G1_NUM_JOINTS;
  const jointPos = read('joint_pos', true)!;
  if (jointPos.shape.length !== 2 || jointPos.shape[1] !== J) {
    throw new InputError({ file, key: 'joint_pos' }, `shape ${shapeText(jointPos.shape)} is wrong; expected (N, ${J})`);
  }
  const N = jointPos.shape[0];
  checkFrameCount(N, { file, key: 'joint_pos' });
  const sameN = (a: NpyFloatArray, key: string) => {
    if (a.shape[0] !== N) {
      throw new InputError({ file, key }, `has ${a.shape[0]} frames but joint_pos has ${N}; all arrays must have the same first dimension`);
    }
  };

  const jointVel = read('joint_vel', false);
  if (jointVel) {
    if (jointVel.shape.length !== 2 || jointVel.shape[1] !== J) {
      throw new InputError({ file, key: 'joint_vel' }, `shape ${shapeText(jointVel.shape)} is wrong; expected (N, ${J})`);
    }
    sameN(jointVel, 'joint_vel');
  }
  const bodyPos = read('body_pos_w', true)!;
  if (bodyPos.shape.length !== 3 || bodyPos.shape[2] !== 3 || bodyPos.shape[1] < 1) {
    throw new InputError({ file, key: 'body_pos_w' }, `shape ${shapeText(bodyPos.shape)} is wrong; expected (N, B, 3) with B ≥ 1 bodies`);
  }
  sameN(bodyPos, 'body_pos_w');
  const B = bodyPos.shape[1];
  const bodyQuat = read('body_quat_w', true)!;
  if (bodyQuat.shape.length !== 3 || bodyQuat.shape[2] !== 4 || bodyQuat.shape[1] < 1) {
    throw new InputError({ file, key: 'body_quat_w' }, `shape ${shapeText(bodyQuat.shape)} is wrong; expected (N, B, 4) with B ≥ 1 bodies`);
  }
  sameN(bodyQuat, 'body_quat_w');
  if (bodyQuat.shape[1] !== B) {
    throw new InputError({ file, key: 'body_quat_w' }, `has ${bodyQuat.shape[1]} bodies but body_pos_w has ${B}`);
  }

  const jointAt = (i: number) => `joint_pos[${Math.floor(i / J)}, ${i % J}] (${G1_JOINT_NAMES[i % J]})`;
  checkFinite(jointPos, file, 'joint_pos', jointAt);
  if (jointVel) checkFinite(jointVel, file, 'joint_vel', (i) => `joint_vel[${Math.floor(i / J)}, ${i % J}] (${G1_JOINT_NAMES[i % J]})`);
  checkFinite(bodyPos, file, 'body_pos_w', (i) => `body_pos_w[${Math.floor(i / (3 * B))}, ${Math.floor(i / 3) % B}, ${i % 3}]`);

  const rootPosM = new Float64Array(N * 3);
  const rootQuatWxyz = new Float64Array(N * 4);
  const q = bodyQuat.data;
  for (let k = 0; k < N; k++) {
    const src = k * B * 4;
    for (let c = 0; c < 4; c++) {
      const v = q[src + c];
      if (v - v !== 0) throw new InputError({ file, key: 'body_quat_w' }, `body_quat_w[${k}, 0, ${c}] is ${v} (NaN and Inf are not allowed)`);
    }
    const problem = quatNormProblem(q, src);
    if (problem) throw new InputError({ file, key: 'body_quat_w' }, `frame ${k}, body 0 (root): ${problem}`);
    rootQuatWxyz.set(q.subarray(src, src + 4), k * 4);
    const p = k * B * 3;
    rootPosM.set(bodyPos.data.subarray(p, p + 3), k * 3);
  }

  return finalizeClip(
    {
      name: clipNameFromFile(file),
      format: 'mjlab-npz',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM,
      rootQuatWxyz,
      jointPosRad: jointPos.data,
      ...(jointVel ? { jointVelRadS: jointVel.data } : {}),
      bodyPosW: { bodyCount: B, data: bodyPos.data },
    },
    bytes,
    options,
  );
}
