// Reads a SONIC reference motion folder (gear_sonic_deploy/reference/<motion>/) from disk and
// decodes it with the pure reader (src/domain/motion/sonicReferenceFolder.ts, which states the
// layout and its sources). Only the files the reader uses are opened, each through
// boundedRead.ts (regular files only); the folder itself is not listed, so nothing else in it is
// touched. joint_vel.csv is optional; the other four are needed. The files share one budget,
// MAX_INPUT_BYTES for all of them together: each is read only if its size (from its descriptor)
// fits what the files before it left, so a folder of five large files costs at most that budget.

import path from 'node:path';
import { MAX_INPUT_BYTES, type JointLimitsRad } from '../../domain/motion/clipCommon';
import type { MotionClip } from '../../domain/motion/motionClip';
import {
  decodeSonicReferenceFolder,
  SONIC_FOLDER_FILES,
  type SonicFolderFiles,
} from '../../domain/motion/sonicReferenceFolder';
import { InputError } from '../../domain/problems';
import { describeOpenError, readBoundedFile, type FileLimit } from '../files/boundedRead';

export interface SonicFolderOptions {
  fps?: number;
  jointLimitsRad?: JointLimitsRad;
}

const REQUIRED = [
  SONIC_FOLDER_FILES.jointPos,
  SONIC_FOLDER_FILES.bodyPos,
  SONIC_FOLDER_FILES.bodyQuat,
  SONIC_FOLDER_FILES.metadata,
];

/** One file of the folder, or null when it does not exist (other open errors are InputErrors naming it). */
function readMember(folder: string, name: string, limit: FileLimit): Uint8Array | null {
  const file = path.join(folder, name);
  try {
    return readBoundedFile(file, limit);
  } catch (err) {
    if (err instanceof InputError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InputError({ file }, `cannot read the file: ${describeOpenError(err)}`);
  }
}

/** Reads and decodes the SONIC reference folder `folder`. */
export function loadSonicReferenceFolder(folder: string, options: SonicFolderOptions = {}): MotionClip {
  const got = new Map<string, Uint8Array>();
  let left = MAX_INPUT_BYTES;
  for (const name of [...REQUIRED, SONIC_FOLDER_FILES.jointVel]) {
    const what = `what the folder's files before ${name} left of the ${MAX_INPUT_BYTES / 1048576} MiB for a SONIC folder's files together`;
    const bytes = readMember(folder, name, { bytes: left, what });
    if (bytes) {
      got.set(name, bytes);
      left -= bytes.length;
    }
  }
  const missing = REQUIRED.filter((n) => !got.has(n));
  if (missing.length === REQUIRED.length)
    throw new InputError(
      { file: folder },
      `is a folder, not a motion file, and not a SONIC reference motion folder (it has none of ${REQUIRED.join(', ')})`,
    );
  if (missing.length > 0)
    throw new InputError(
      { file: path.join(folder, missing[0]) },
      `is missing: a SONIC reference motion folder holds ${REQUIRED.join(', ')} (missing: ${missing.join(', ')})`,
    );
  const files: SonicFolderFiles = {
    folder,
    jointPos: got.get(SONIC_FOLDER_FILES.jointPos)!,
    bodyPos: got.get(SONIC_FOLDER_FILES.bodyPos)!,
    bodyQuat: got.get(SONIC_FOLDER_FILES.bodyQuat)!,
    metadata: got.get(SONIC_FOLDER_FILES.metadata)!,
    ...(got.has(SONIC_FOLDER_FILES.jointVel) ? { jointVel: got.get(SONIC_FOLDER_FILES.jointVel)! } : {}),
  };
  return decodeSonicReferenceFolder(files, {
    file: folder,
    ...(options.fps !== undefined ? { fps: options.fps } : {}),
    ...(options.jointLimitsRad ? { jointLimitsRad: options.jointLimitsRad } : {}),
  });
}
