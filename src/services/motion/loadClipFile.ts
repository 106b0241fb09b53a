// Decodes a motion file read from disk (the CLI, clips.load) or uploaded as bytes with its name
// (the browser console's clips.decode): both go through decodeClipBytes, so a clip gets the same
// fps and content id whichever way it was opened. For CSV files, which do not state their frame
// rate, an fps is inferred when the user gave none, in this order:
//   (a) a sidecar `<stem>.json` beside the file holding {"fps": N};
//   (b) an NPZ of the same stem beside the file, or in the sibling `npz/` folder when the CSV
//       sits in a `csv/` folder (the G1 Moves layout): its `fps` member;
//   (c) the LAFAN1 retargeted-dataset naming convention `<action><n>_subject<m>.csv` → 30 fps.
// (a) and (b) read the file's neighbours, so they apply to files on disk only; an upload has a
// name and no folder, and gets (c).
// An inferred fps is marked fpsSource 'inferred' with an 'fps_inferred' warning saying how.
// Nothing is written anywhere. Files are read through src/services/files/boundedRead.ts: regular
// files only, at most FILE_LIMITS.clip bytes (a sidecar JSON: FILE_LIMITS.json).
// A folder is read as a SONIC reference motion folder (readSonicReferenceFolder.ts): it is the
// only clip format that is a folder.

import fs from 'node:fs';
import path from 'node:path';
import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { InputError } from '../../domain/problems';
import { checkFps, type FpsHint, type JointLimitsRad } from '../../domain/motion/clipCommon';
import { decodeMotionFile, detectClipFormat } from '../../domain/motion/decodeMotionFile';
import type { MotionClip } from '../../domain/motion/motionClip';
import { parseJsonText } from '../../domain/motion/motionbenchJson';
import { readNpzFps } from '../../domain/motion/mjlabNpz';
import { describeOpenError, readBoundedFile, type FileKind } from '../files/boundedRead';
import { loadSonicReferenceFolder } from './readSonicReferenceFolder';

export interface LoadClipOptions {
  /** The user's fps (--fps). */
  fps?: number;
  /** Limits per canonical joint (e.g. from RobotProfile.joints[i].rangeRad). */
  jointLimitsRad?: JointLimitsRad;
  /** The kinematics an NPZ's joint order is checked against (default: our G1's). */
  kinematics?: ForwardKinematics;
}

let defaultKinematics: ForwardKinematics | undefined;
/** Our G1's kinematics (assets/g1/g1.xml), read once: the NPZ joint-order check's default. */
export function g1Kinematics(): ForwardKinematics {
  defaultKinematics ??= new ForwardKinematics(loadRobotProfile());
  return defaultKinematics;
}

/** The LAFAN1 retargeted-dataset file name convention, e.g. `walk1_subject1.csv`. */
export const LAFAN1_NAME_RE = /^[A-Za-z]+\d+_subject\d+\.csv$/i;
export const LAFAN1_FPS = 30;

function readBytes(file: string): Uint8Array {
  try {
    return readBoundedFile(file, 'clip');
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError({ file }, `cannot read the file: ${describeOpenError(err)}`);
  }
}

/** A neighbour (sidecar JSON, same-stem NPZ) when it is a readable regular file within `kind`'s limit, else null. */
function tryRead(file: string, kind: FileKind): Uint8Array | null {
  try {
    return readBoundedFile(file, kind);
  } catch {
    return null;
  }
}

/**
 * The fps hint for a CSV file, or undefined when none can be inferred. A sidecar JSON that
 * exists but is malformed, or states an invalid fps, is an error naming the sidecar; an
 * unreadable neighbouring NPZ is skipped.
 */
export function inferCsvFpsHint(file: string): FpsHint | undefined {
  const dir = path.dirname(file);
  const base = path.basename(file);
  const ext = path.extname(base);
  const stem = ext ? base.slice(0, -ext.length) : base;

  // (a) sidecar <stem>.json
  const sidecar = path.join(dir, `${stem}.json`);
  if (sidecar !== file) {
    const bytes = tryRead(sidecar, 'json');
    if (bytes) {
      const doc = parseJsonText(new TextDecoder('utf-8').decode(bytes), sidecar);
      if (typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'fps' in doc) {
        const fps = checkFps((doc as { fps: unknown }).fps, { file: sidecar, key: 'fps' }, 'fps');
        return { fps, source: `the sidecar file ${sidecar}` };
      }
    }
  }

  // (b) an NPZ of the same stem beside it, or in ../npz/ for a csv/ folder
  const candidates = [path.join(dir, `${stem}.npz`)];
  if (path.basename(dir) === 'csv') candidates.push(path.join(path.dirname(dir), 'npz', `${stem}.npz`));
  for (const npz of candidates) {
    const bytes = tryRead(npz, 'clip');
    if (!bytes) continue;
    try {
      const fps = readNpzFps(bytes, npz);
      if (fps !== undefined) {
        checkFps(fps, { file: npz, key: 'fps' }, 'fps');
        return { fps, source: `the NPZ with the same clip name (${npz})` };
      }
    } catch {
      // a broken neighbour is not this file's problem
    }
  }

  return fileNameFpsHint(base);
}

/** (c): the fps a CSV's file name states by the LAFAN1 convention, or undefined. */
export function fileNameFpsHint(fileName: string): FpsHint | undefined {
  if (!LAFAN1_NAME_RE.test(path.basename(fileName))) return undefined;
  return {
    fps: LAFAN1_FPS,
    source: `the LAFAN1 retargeted-dataset file name convention (<action><n>_subject<m>.csv clips are ${LAFAN1_FPS} fps)`,
  };
}

/**
 * Where a clip's bytes came from: a file on disk, whose neighbours may state a CSV's fps, or an
 * upload, whose name alone may.
 */
export type ClipOrigin = 'disk' | 'upload';

/** Decodes a motion file's bytes; `file` is its path on disk or the name it was uploaded under. */
export function decodeClipBytes(
  bytes: Uint8Array,
  file: string,
  origin: ClipOrigin,
  options: LoadClipOptions = {},
): MotionClip {
  let fpsHint: FpsHint | undefined;
  if (options.fps === undefined && bytes.length > 0 && detectClipFormat(bytes, file).format === 'lafan1-csv') {
    fpsHint = origin === 'disk' ? inferCsvFpsHint(file) : fileNameFpsHint(file);
  }
  return decodeMotionFile(bytes, {
    file,
    ...(options.fps !== undefined ? { fps: options.fps } : {}),
    ...(fpsHint ? { fpsHint } : {}),
    ...(options.jointLimitsRad ? { jointLimitsRad: options.jointLimitsRad } : {}),
    kinematics: options.kinematics ?? g1Kinematics(),
  });
}

/** True when `file` names a folder (following links); false when it does not exist or is anything else. */
function isFolder(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false; // the read reports a missing or unreadable path
  }
}

/**
 * Reads and decodes a motion file (LAFAN1-G1 CSV, mjlab NPZ, HoloMotion NPZ, ProtoMotions
 * .motion or motionbench-clip/1 JSON), or a SONIC reference motion folder.
 */
export function loadClipFile(file: string, options: LoadClipOptions = {}): MotionClip {
  if (isFolder(file)) {
    return loadSonicReferenceFolder(file, {
      ...(options.fps !== undefined ? { fps: options.fps } : {}),
      ...(options.jointLimitsRad ? { jointLimitsRad: options.jointLimitsRad } : {}),
    });
  }
  return decodeClipBytes(readBytes(file), file, 'disk', options);
}
