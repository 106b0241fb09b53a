// BeyondMimic / mjlab "motion npz": a numpy .npz (ZIP of .npy members) with
//   fps          () or (1,)   frames per second
//   joint_pos    (N, 29)      rad, canonical joint order
//   joint_vel    (N, 29)      rad/s (optional here)
//   body_pos_w   (N, B, 3)    world body positions, m; body 0 = pelvis (root)
//   body_quat_w  (N, B, 4)    world body orientations, wxyz; body 0 = pelvis (root)
// Other members (body_lin_vel_w, body_ang_vel_w, ...) are ignored. Arrays must be float32 or
// float64 of either byte order, in C or Fortran order (npyArray.ts transposes the latter).
//
// Nothing is inflated before it is known to fit: first every member's .npy header is read from the
// head of its ZIP entry; dtypes and shapes are checked against each other and against what the
// decoder needs, the byte size the shape states is compared with the size the ZIP entry declares,
// and the declared sizes of the members read must fit NPZ_INFLATE_BUDGET_BYTES. Only then are the
// members inflated (each one stopped if it would inflate past its declared size: zipArchive.ts).

import { InputError } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  boundProblem,
  checkFrameCount,
  checkInputSize,
  clipNameFromFile,
  type DecodeOptions,
  finalizeClip,
  listNames,
  MAX_INPUT_BYTES,
  quatNormProblem,
  resolveStatedFps,
} from './clipCommon';
import type { MotionClip } from './motionClip';
import {
  checkNpyDataSize,
  checkNpyFloatHeader,
  checkNpyScalarHeader,
  npyHeaderExtent,
  parseNpyHeader,
  readNpyFloatArray,
  readNpyScalar,
  readNpyStringArray,
  type NpyFloatArray,
  type NpyHeader,
} from './npyArray';
import {
  orderFromFkResidual,
  orderFromJointNames,
  reorderToCanonical,
  type NpzJointOrderDecision,
} from './npzJointOrder';
import { readZipDirectory, readZipEntry, readZipEntryHead, type ZipEntry } from './zipArchive';

/**
 * Most bytes the members of one NPZ may inflate to, in all: no more than the largest plain motion
 * file read (MAX_INPUT_BYTES), so a small compressed file cannot cost more memory than a big CSV.
 * Real clips are far below (a 60 s G1 Moves clip inflates to about 1 MB).
 */
export const NPZ_INFLATE_BUDGET_BYTES = MAX_INPUT_BYTES;

const REQUIRED_KEYS = 'fps, joint_pos, joint_vel, body_pos_w, body_quat_w';

/** Members of an NPZ by key (member name without `.npy`). */
export function listNpzMembers(bytes: Uint8Array, file: string): Map<string, ZipEntry> {
  const members = new Map<string, ZipEntry>();
  for (const e of readZipDirectory(bytes, file)) {
    if (e.name.endsWith('.npy')) members.set(e.name.slice(0, -4), e);
  }
  return members;
}

/** A member's .npy header, read from the head of its ZIP entry without inflating the data. */
export function peekNpyHeader(bytes: Uint8Array, entry: ZipEntry, file: string, key: string): NpyHeader {
  let head = readZipEntryHead(bytes, entry, file, 12, key);
  const extent = npyHeaderExtent(head, file, key);
  if (extent > head.length) head = readZipEntryHead(bytes, entry, file, extent, key);
  return parseNpyHeader(head, file, key);
}

/** The fps member, checked from its header (a scalar whose ZIP entry declares a scalar's size) before it is inflated. */
function readFpsMember(bytes: Uint8Array, entry: ZipEntry, file: string): number {
  const h = peekNpyHeader(bytes, entry, file, 'fps');
  const { size } = checkNpyScalarHeader(h, file, 'fps');
  checkNpyDataSize(h, size, entry.uncompressedSize - h.dataOffset, file, 'fps');
  return readNpyScalar(readZipEntry(bytes, entry, file, 'fps'), file, 'fps');
}

/** The fps stored in an NPZ, or undefined when it has no `fps` member. Throws on a bad file. */
export function readNpzFps(bytes: Uint8Array, file: string): number | undefined {
  const e = listNpzMembers(bytes, file).get('fps');
  return e ? readFpsMember(bytes, e, file) : undefined;
}

const shapeText = (s: number[]) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;

/** Every value finite and, with `bound`, physically plausible (clipCommon.boundProblem). */
function checkFinite(
  a: NpyFloatArray,
  file: string,
  key: string,
  describe: (flat: number) => string,
  bound?: 'root_pos' | 'joint_pos',
): void {
  const d = a.data;
  for (let i = 0; i < d.length; i++) {
    const v = d[i];
    if (v - v !== 0) throw new InputError({ file, key }, `${describe(i)} is ${v} (NaN and Inf are not allowed)`);
    const absurd = bound ? boundProblem(bound, v) : null;
    if (absurd) throw new InputError({ file, key }, `${describe(i)}: ${absurd}`);
  }
}

export function decodeMjlabNpz(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  const { file } = options;
  checkInputSize(bytes, file);
  const members = listNpzMembers(bytes, file);
  if (members.size === 0) throw new InputError({ file }, `NPZ archive has no .npy members (expected ${REQUIRED_KEYS})`);

  // 1. Headers only: dtype, shape and declared size of every member used, before any inflation.
  interface Planned {
    key: string;
    entry: ZipEntry;
    header: NpyHeader;
    shape: number[];
    itemSize: number;
  }
  const plan = (key: string, required: boolean): Planned | undefined => {
    const entry = members.get(key);
    if (!entry) {
      if (required) {
        throw new InputError(
          { file, key },
          `key ${key} is missing; an mjlab motion NPZ has ${REQUIRED_KEYS} (found: ${listNames([...members.keys()])})`,
        );
      }
      return undefined;
    }
    const header = peekNpyHeader(bytes, entry, file, key);
    const { itemSize } = checkNpyFloatHeader(header, file, key);
    return { key, entry, header, shape: header.shape, itemSize };
  };
  /** The ZIP entry declares exactly the bytes the header's shape needs. */
  const declared = (p: Planned) =>
    checkNpyDataSize(p.header, p.itemSize, p.entry.uncompressedSize - p.header.dataOffset, file, p.key);

  const fpsEntry = members.get('fps');
  const fileFps = fpsEntry ? readFpsMember(bytes, fpsEntry, file) : undefined;
  const { fps, fpsSource } = resolveStatedFps(fileFps, options, { file, key: 'fps' });

  const J = G1_NUM_JOINTS;
  const jp = plan('joint_pos', true)!;
  if (jp.shape.length !== 2 || jp.shape[1] !== J) {
    throw new InputError({ file, key: 'joint_pos' }, `shape ${shapeText(jp.shape)} is wrong; expected (N, ${J})`);
  }
  const N = jp.shape[0];
  checkFrameCount(N, { file, key: 'joint_pos' });
  declared(jp);
  const sameN = (p: Planned) => {
    if (p.shape[0] !== N) {
      throw new InputError(
        { file, key: p.key },
        `has ${p.shape[0]} frames but joint_pos has ${N}; all arrays must have the same first dimension`,
      );
    }
  };
  const jv = plan('joint_vel', false);
  if (jv) {
    if (jv.shape.length !== 2 || jv.shape[1] !== J) {
      throw new InputError({ file, key: 'joint_vel' }, `shape ${shapeText(jv.shape)} is wrong; expected (N, ${J})`);
    }
    sameN(jv);
    declared(jv);
  }
  const bp = plan('body_pos_w', true)!;
  if (bp.shape.length !== 3 || bp.shape[2] !== 3 || bp.shape[1] < 1) {
    throw new InputError(
      { file, key: 'body_pos_w' },
      `shape ${shapeText(bp.shape)} is wrong; expected (N, B, 3) with B ≥ 1 bodies`,
    );
  }
  sameN(bp);
  declared(bp);
  const B = bp.shape[1];
  const bq = plan('body_quat_w', true)!;
  if (bq.shape.length !== 3 || bq.shape[2] !== 4 || bq.shape[1] < 1) {
    throw new InputError(
      { file, key: 'body_quat_w' },
      `shape ${shapeText(bq.shape)} is wrong; expected (N, B, 4) with B ≥ 1 bodies`,
    );
  }
  sameN(bq);
  if (bq.shape[1] !== B) {
    throw new InputError({ file, key: 'body_quat_w' }, `has ${bq.shape[1]} bodies but body_pos_w has ${B}`);
  }
  declared(bq);

  // 2. The budget: what the members read will inflate to, in all (their declared sizes, now
  //    known to agree with their headers; each inflation stops at its declared size).
  const used = [jp, jv, bp, bq].filter((p): p is Planned => p !== undefined);
  const total = used.reduce((a, p) => a + p.entry.uncompressedSize, fpsEntry?.uncompressedSize ?? 0);
  if (total > NPZ_INFLATE_BUDGET_BYTES) {
    throw new InputError(
      { file },
      `the arrays would inflate to ${(total / 1048576).toFixed(1)} MiB (${used.map((p) => `${p.key} ${shapeText(p.shape)}`).join(', ')}), more than the ${NPZ_INFLATE_BUDGET_BYTES / 1048576} MiB budget for one NPZ`,
    );
  }

  // 3. Inflate and convert, one member at a time.
  const read = (p: Planned): NpyFloatArray => readNpyFloatArray(readZipEntry(bytes, p.entry, file, p.key), file, p.key);
  const jointPos = read(jp);
  const jointVel = jv ? read(jv) : undefined;
  const bodyPos = read(bp);
  const bodyQuat = read(bq);

  const jointAt = (i: number) => `joint_pos[${Math.floor(i / J)}, ${i % J}] (${G1_JOINT_NAMES[i % J]})`;
  checkFinite(jointPos, file, 'joint_pos', jointAt, 'joint_pos');
  if (jointVel)
    checkFinite(
      jointVel,
      file,
      'joint_vel',
      (i) => `joint_vel[${Math.floor(i / J)}, ${i % J}] (${G1_JOINT_NAMES[i % J]})`,
    );
  checkFinite(
    bodyPos,
    file,
    'body_pos_w',
    (i) => `body_pos_w[${Math.floor(i / (3 * B))}, ${Math.floor(i / 3) % B}, ${i % 3}]`,
    'root_pos',
  );

  const rootPosM = new Float64Array(N * 3);
  const rootQuatWxyz = new Float64Array(N * 4);
  const q = bodyQuat.data;
  const orderDecision = (): NpzJointOrderDecision | null => {
    const namesEntry = members.get('joint_names');
    if (namesEntry && namesEntry.uncompressedSize <= 64 * 1024) {
      const names = readNpyStringArray(readZipEntry(bytes, namesEntry, file, 'joint_names'), file, 'joint_names');
      if (names) return orderFromJointNames(names, file);
    }
    if (!options.kinematics) return null;
    return orderFromFkResidual(file, N, rootPosM, rootQuatWxyz, jointPos.data, bodyPos.data, B, options.kinematics);
  };
  for (let k = 0; k < N; k++) {
    const src = k * B * 4;
    for (let c = 0; c < 4; c++) {
      const v = q[src + c];
      if (v - v !== 0)
        throw new InputError(
          { file, key: 'body_quat_w' },
          `body_quat_w[${k}, 0, ${c}] is ${v} (NaN and Inf are not allowed)`,
        );
    }
    const problem = quatNormProblem(q, src);
    if (problem) throw new InputError({ file, key: 'body_quat_w' }, `frame ${k}, body 0 (root): ${problem}`);
    rootQuatWxyz.set(q.subarray(src, src + 4), k * 4);
    const p = k * B * 3;
    rootPosM.set(bodyPos.data.subarray(p, p + 3), k * 3);
  }

  const order = orderDecision();
  if (order) {
    reorderToCanonical(jointPos.data, N, order.order);
    if (jointVel) reorderToCanonical(jointVel.data, N, order.order);
  }
  const orderText = !order
    ? null
    : order.by === 'joint_names'
      ? `${order.order} (from joint_names)`
      : `${order.order} (from FK against body_pos_w: median body residual ${(order.residualM!.canonical * 1000).toFixed(2)} mm in model order, ${(order.residualM!.isaaclab * 1000).toFixed(2)} mm in Isaac Lab order)`;
  const clip = finalizeClip(
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
      ...(order
        ? {}
        : {
            warnings: [
              {
                code: 'joint_order_unverified',
                message:
                  'joint order not checked (no joint_names, no model to check body_pos_w against): read as the model order',
              },
            ],
          }),
    },
    bytes,
    options,
  );
  if (orderText) clip.provenance.jointOrder = orderText;
  return clip;
}
