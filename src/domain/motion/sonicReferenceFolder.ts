// SONIC reference motion folders (NVlabs/GR00T-WholeBodyControl @ 1983e88, gear_sonic_deploy):
// one folder per motion, written by gear_sonic_deploy/reference/convert_motions.py and read by
// MotionDataReader (src/g1/g1_deploy_onnx_ref/include/motion_data_reader.hpp:672-958):
//   joint_pos.csv     header joint_0 … joint_28, one row per frame, rad        (convert_motions.py:94-96)
//   joint_vel.csv     header joint_vel_0 … joint_vel_28, rad/s (optional here)  (:98-100)
//   body_pos.csv      header body_<b>_x, _y, _z per body, m, world             (:102-106)
//   body_quat.csv     header body_<b>_w, _x, _y, _z per body, world            (:108-112)
//   metadata.txt      "Body part indexes:" then a line "[ 0  4 10 …]", "Total timesteps: N" (:157-177)
//   body_lin_vel.csv, body_ang_vel.csv, info.txt: not read
// Values are written with 6 decimals (convert_motions.py:154); the first line of every CSV is a
// header (the C++ reader skips it, motion_data_reader.hpp:969-972).
// Orders, and where they come from:
//   - joints: the CSV names only indices. The deploy code reads column isaaclab_to_mujoco[m] as
//     MuJoCo joint m (output_interface.hpp:192; table at policy_parameters.hpp:100-101), i.e. the
//     columns are in Isaac Lab order (peerJointOrders.ts SONIC_REFERENCE_JOINT_NAMES), mapped here
//     to canonical by name;
//   - quaternions: read BY NAME from the body_quat.csv header (body_0_w, body_0_x, body_0_y,
//     body_0_z); convert_motions.py writes wxyz (:111), as MotionSequence stores it
//     (motion_data_reader.hpp:272);
//   - root: body 0 of the CSVs. The deploy code takes BodyPositions(frame)[0] as the base
//     (output_interface.hpp:198); metadata.txt says which body that is, as an Isaac Lab body index,
//     and body 0 is the pelvis only when that index is 0 (motion_data_reader.hpp:151-157 treats
//     index 0 as the root). A folder whose metadata does not say so is refused;
//   - fps: not in the folder. The deploy code advances one reference frame per control tick
//     (g1_deploy_onnx_ref.cpp:3144) at control_dt_ = 0.02 s (:2165), so 50 fps; used as an
//     inferred rate with an 'fps_inferred' warning unless the user gives --fps.
// The clip's fileSha256 is the SHA-256 over the files read, in the order of SONIC_FOLDER_FILES,
// each as its name, a NUL, its length (8 bytes, little-endian) and its bytes.

import { Sha256 } from '../hash/sha256';
import { InputError, type Warning } from '../problems';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  boundProblem,
  checkFps,
  checkFrameCount,
  checkNotUtf16,
  finalizeClip,
  lineCount,
  MAX_FRAMES,
  MAX_INPUT_BYTES,
  textContentEnd,
  quatNormProblem,
  type DecodeOptions,
} from './clipCommon';
import type { FpsSource, MotionClip } from './motionClip';
import { reorderNamedColumns, SONIC_REFERENCE_JOINT_NAMES } from './peerJointOrders';

/** The deploy code's reference-motion rate, Hz (see the header). */
export const SONIC_REFERENCE_FPS = 50;

export const SONIC_JOINT_ORDER =
  'isaaclab, mapped by name to canonical (the CSV names no joints: SONIC isaaclab_to_mujoco, gear_sonic_deploy/src/g1/g1_deploy_onnx_ref/include/policy_parameters.hpp:100, applied to reference joints at output_interface/output_interface.hpp:192)';

/** The files of a reference folder the reader uses, in hashing order. */
export const SONIC_FOLDER_FILES = {
  jointPos: 'joint_pos.csv',
  jointVel: 'joint_vel.csv',
  bodyPos: 'body_pos.csv',
  bodyQuat: 'body_quat.csv',
  metadata: 'metadata.txt',
} as const;

export interface SonicFolderFiles {
  /** The folder as the user named it. */
  folder: string;
  jointPos: Uint8Array;
  jointVel?: Uint8Array;
  bodyPos: Uint8Array;
  bodyQuat: Uint8Array;
  metadata: Uint8Array;
}

const NUMBER_RE = /^[ \t]*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[ \t]*$/;

/** `folder/name` for messages (the folder as named, without a trailing separator). */
export const sonicFilePath = (folder: string, name: string): string => `${folder.replace(/[\\/]+$/, '')}/${name}`;

interface HeaderedCsv {
  header: string[];
  rows: number;
  values: Float64Array;
}

/** A CSV with one header line and numeric rows of the header's width. Errors carry line and column. */
function readHeaderedCsv(bytes: Uint8Array, file: string): HeaderedCsv {
  checkNotUtf16(bytes, file);
  let text = new TextDecoder('utf-8').decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // Lines are counted before the text is split, and the values array holds only the rows the
  // text can back (a row of W non-empty fields takes at least 2W − 1 characters and a newline):
  // a file of blank or short lines is refused at its first short row, never allocated for.
  const content = textContentEnd(text);
  if (lineCount(text, content, MAX_FRAMES + 2) > MAX_FRAMES + 1)
    throw new InputError(
      { file },
      `the file has more than ${MAX_FRAMES} rows after its header, more than the limit of ${MAX_FRAMES} frames`,
    );
  const lines = text.slice(0, content).split('\n');
  let n = lines.length;
  while (n > 0 && lines[n - 1].trim() === '') n--;
  if (n === 0) throw new InputError({ file, line: 1, column: 1 }, 'the file is empty; expected a header line and rows');
  const header = lines[0]
    .replace(/\r$/, '')
    .split(',')
    .map((h) => h.trim());
  const W = header.length;
  const rows = n - 1;
  const rowsBacked = Math.min(rows, Math.floor((content + 1) / (2 * W)));
  const values = new Float64Array(rowsBacked * W);
  for (let k = 1; k < n; k++) {
    const fields = lines[k].replace(/\r$/, '').split(',');
    if (fields.length !== W)
      throw new InputError(
        { file, line: k + 1, column: Math.min(fields.length, W) + 1 },
        `expected ${W} fields (as the header names), found ${fields.length}`,
      );
    for (let c = 0; c < W; c++) {
      const f = fields[c];
      const v = Number(f);
      if (!NUMBER_RE.test(f) || !Number.isFinite(v))
        throw new InputError(
          { file, line: k + 1, column: c + 1 },
          f.trim() === '' ? 'empty field, expected a number' : `'${f.trim().slice(0, 40)}' is not a finite number`,
        );
      values[(k - 1) * W + c] = v;
    }
    if (k > rowsBacked)
      throw new Error(`SONIC CSV reader: row ${k} is valid beyond the ${rowsBacked} rows the text can hold`);
  }
  return { header, rows, values };
}

/** Column of each header name. */
const columnsByName = (header: readonly string[]) => new Map(header.map((h, i) => [h, i]));

/** Largest metadata.txt read: convert_motions.py writes a few hundred bytes. */
export const MAX_SONIC_METADATA_BYTES = 1024 * 1024;

/** The body indexes line and total timesteps of metadata.txt, as MotionDataReader::ReadMetadata parses them. */
function readMetadata(bytes: Uint8Array, file: string): { bodyIndexes: number[]; totalTimesteps?: number } {
  if (bytes.length > MAX_SONIC_METADATA_BYTES)
    throw new InputError(
      { file },
      `is ${bytes.length} bytes, more than the ${MAX_SONIC_METADATA_BYTES} read (convert_motions.py writes a few hundred)`,
    );
  checkNotUtf16(bytes, file);
  const lines = new TextDecoder('utf-8').decode(bytes).split('\n');
  let bodyIndexes: number[] | undefined;
  let totalTimesteps: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].includes('Body part indexes:')) {
      const next = lines[i + 1] ?? '';
      bodyIndexes = (next.match(/\d+/g) ?? []).map(Number);
      if (bodyIndexes.length === 0)
        throw new InputError({ file, line: i + 2, column: 1 }, 'the line after "Body part indexes:" holds no indexes');
    } else {
      const m = /Total timesteps:\s*(\d+)/.exec(lines[i]);
      if (m) totalTimesteps = Number(m[1]);
    }
  }
  if (!bodyIndexes)
    throw new InputError(
      { file },
      'has no "Body part indexes:" line: which body the CSVs store first (the root) is not stated',
    );
  return { bodyIndexes, ...(totalTimesteps !== undefined ? { totalTimesteps } : {}) };
}

function resolveSonicFps(options: DecodeOptions): { fps: number; fpsSource: FpsSource; warnings: Warning[] } {
  if (options.fps !== undefined)
    return { fps: checkFps(options.fps, { file: options.file, key: 'fps' }, '--fps'), fpsSource: 'user', warnings: [] };
  return {
    fps: SONIC_REFERENCE_FPS,
    fpsSource: 'inferred',
    warnings: [
      {
        code: 'fps_inferred',
        message: `the folder does not state its frame rate; using ${SONIC_REFERENCE_FPS} fps, the rate SONIC's deploy code plays reference motions at (one frame per 0.02 s control tick: gear_sonic_deploy g1_deploy_onnx_ref.cpp:2165, :3144); pass --fps to override`,
      },
    ],
  };
}

function fileHash(files: SonicFolderFiles): string {
  const h = new Sha256();
  const enc = new TextEncoder();
  const entries: [string, Uint8Array | undefined][] = [
    [SONIC_FOLDER_FILES.jointPos, files.jointPos],
    [SONIC_FOLDER_FILES.jointVel, files.jointVel],
    [SONIC_FOLDER_FILES.bodyPos, files.bodyPos],
    [SONIC_FOLDER_FILES.bodyQuat, files.bodyQuat],
    [SONIC_FOLDER_FILES.metadata, files.metadata],
  ];
  for (const [name, bytes] of entries) {
    if (!bytes) continue;
    const len = new Uint8Array(8);
    new DataView(len.buffer).setBigUint64(0, BigInt(bytes.length), true);
    h.update(enc.encode(name));
    h.update(new Uint8Array([0]));
    h.update(len);
    h.update(bytes);
  }
  return h.digestHex();
}

/**
 * Decodes a SONIC reference folder's files into a MotionClip. `options.file` is the folder as
 * the user named it; errors name the file inside it (`<folder>/joint_pos.csv:12:3`).
 */
export function decodeSonicReferenceFolder(files: SonicFolderFiles, options: DecodeOptions): MotionClip {
  const { folder } = files;
  const path = (name: string) => sonicFilePath(folder, name);
  const total =
    files.jointPos.length +
    (files.jointVel?.length ?? 0) +
    files.bodyPos.length +
    files.bodyQuat.length +
    files.metadata.length;
  if (total > MAX_INPUT_BYTES)
    throw new InputError(
      { file: folder },
      `the folder's files are ${(total / 1048576).toFixed(1)} MiB, larger than the ${MAX_INPUT_BYTES / 1048576} MiB limit for motion files`,
    );
  const { fps, fpsSource, warnings } = resolveSonicFps(options);
  const J = G1_NUM_JOINTS;

  // metadata: body 0 of the CSVs must be Isaac Lab body 0, the pelvis
  const metaFile = path(SONIC_FOLDER_FILES.metadata);
  const meta = readMetadata(files.metadata, metaFile);
  if (meta.bodyIndexes[0] !== 0)
    throw new InputError(
      { file: metaFile },
      `the first body part index is ${meta.bodyIndexes[0]}, not 0: body 0 of the CSVs is not the pelvis, so the root pose is not in the folder`,
    );

  // joints: header joint_0 … joint_28, Isaac Lab order
  const jpFile = path(SONIC_FOLDER_FILES.jointPos);
  const jp = readHeaderedCsv(files.jointPos, jpFile);
  const wantHeader = (prefix: string) => Array.from({ length: J }, (_, i) => `${prefix}${i}`);
  const checkJointHeader = (csv: HeaderedCsv, file: string, prefix: string) => {
    const want = wantHeader(prefix);
    if (csv.header.length !== J || csv.header.some((h, i) => h !== want[i]))
      throw new InputError(
        { file, line: 1, column: 1 },
        `the header is not ${want[0]} … ${want[J - 1]} (gear_sonic_deploy's 29 G1 joints in Isaac Lab order): ${csv.header.slice(0, 4).join(',')}${csv.header.length > 4 ? ',…' : ''} (${csv.header.length} columns)`,
      );
  };
  checkJointHeader(jp, jpFile, 'joint_');
  const N = jp.rows;
  checkFrameCount(N, { file: jpFile });
  if (meta.totalTimesteps !== undefined && meta.totalTimesteps !== N)
    throw new InputError(
      { file: metaFile },
      `states ${meta.totalTimesteps} timesteps, but ${SONIC_FOLDER_FILES.jointPos} has ${N} rows`,
    );
  for (let i = 0; i < jp.values.length; i++) {
    const absurd = boundProblem('joint_pos', jp.values[i]);
    if (absurd) throw new InputError({ file: jpFile, line: Math.floor(i / J) + 2, column: (i % J) + 1 }, absurd);
  }
  const jointPosRad = reorderNamedColumns(jp.values, N, SONIC_REFERENCE_JOINT_NAMES, jpFile, 'joint_pos');
  const sameRows = (csv: HeaderedCsv, file: string) => {
    if (csv.rows !== N)
      throw new InputError({ file }, `has ${csv.rows} rows, but ${SONIC_FOLDER_FILES.jointPos} has ${N}`);
  };
  let jointVelRadS: Float64Array | undefined;
  if (files.jointVel) {
    const jvFile = path(SONIC_FOLDER_FILES.jointVel);
    const jv = readHeaderedCsv(files.jointVel, jvFile);
    checkJointHeader(jv, jvFile, 'joint_vel_');
    sameRows(jv, jvFile);
    jointVelRadS = reorderNamedColumns(jv.values, N, SONIC_REFERENCE_JOINT_NAMES, jvFile, 'joint_vel');
  }

  // root position: body_0_x, body_0_y, body_0_z by name
  const bpFile = path(SONIC_FOLDER_FILES.bodyPos);
  const bp = readHeaderedCsv(files.bodyPos, bpFile);
  sameRows(bp, bpFile);
  const posCols = columnsByName(bp.header);
  const px = ['x', 'y', 'z'].map((a) => posCols.get(`body_0_${a}`));
  if (px.some((c) => c === undefined))
    throw new InputError(
      { file: bpFile, line: 1, column: 1 },
      'the header has no body_0_x, body_0_y and body_0_z columns',
    );
  const rootPosM = new Float64Array(N * 3);
  for (let k = 0; k < N; k++)
    for (let a = 0; a < 3; a++) {
      const c = px[a]!;
      const v = bp.values[k * bp.header.length + c];
      const absurd = boundProblem('root_pos', v);
      if (absurd) throw new InputError({ file: bpFile, line: k + 2, column: c + 1 }, absurd);
      rootPosM[k * 3 + a] = v;
    }

  // root orientation: body_0_w, _x, _y, _z by name; the stored order is what the header says
  const bqFile = path(SONIC_FOLDER_FILES.bodyQuat);
  const bq = readHeaderedCsv(files.bodyQuat, bqFile);
  sameRows(bq, bqFile);
  const quatCols = columnsByName(bq.header);
  const qc = ['w', 'x', 'y', 'z'].map((a) => quatCols.get(`body_0_${a}`));
  if (qc.some((c) => c === undefined))
    throw new InputError(
      { file: bqFile, line: 1, column: 1 },
      'the header has no body_0_w, body_0_x, body_0_y and body_0_z columns: the quaternion order is not stated',
    );
  const storedOrder = (['w', 'x', 'y', 'z'] as const)
    .map((a, i) => ({ a, c: qc[i]! }))
    .sort((u, v) => u.c - v.c)
    .map((u) => u.a)
    .join('');
  const rootQuatWxyz = new Float64Array(N * 4);
  const W = bq.header.length;
  for (let k = 0; k < N; k++) {
    for (let a = 0; a < 4; a++) rootQuatWxyz[k * 4 + a] = bq.values[k * W + qc[a]!];
    const problem = quatNormProblem(rootQuatWxyz, k * 4);
    if (problem)
      throw new InputError({ file: bqFile, line: k + 2, column: Math.min(...(qc as number[])) + 1 }, `root ${problem}`);
  }

  const folderName =
    folder
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || folder;
  const bytesForId = new Uint8Array(0); // the hash is computed over the files (fileHash), not one buffer
  const clip = finalizeClip(
    {
      name: folderName,
      format: 'sonic-csv-folder',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM,
      rootQuatWxyz,
      jointPosRad,
      ...(jointVelRadS ? { jointVelRadS } : {}),
      warnings,
    },
    bytesForId,
    options,
    fileHash(files),
  );
  clip.provenance.jointOrder = SONIC_JOINT_ORDER;
  clip.provenance.quaternionOrder = `${storedOrder} (named by the ${SONIC_FOLDER_FILES.bodyQuat} header body_0_${storedOrder.split('').join(', body_0_')}; gear_sonic_deploy/reference/convert_motions.py:111 writes wxyz)`;
  return clip;
}
