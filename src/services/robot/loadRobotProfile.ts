import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMjcf, readMjcfFileReferences, type MjcfFileReference } from '../../domain/robot/mjcfReader';
import { InputError } from '../../domain/problems';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { describeOpenError, readBoundedText } from '../files/boundedRead';

/** Our own G1 model (assets/g1/g1.xml), the default wherever a model is optional. */
export const DEFAULT_MODEL_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../assets/g1/g1.xml',
);

/**
 * Reads an MJCF file (with its includes) from disk into a RobotProfile. Throws InputError. Each
 * file is a regular file of at most FILE_LIMITS.mjcf bytes (src/services/files/boundedRead.ts).
 */
export function loadRobotProfile(file: string = DEFAULT_MODEL_FILE): RobotProfile {
  return readMjcf({ file: toPosixPath(file), readText: readModelText });
}

/**
 * The files an MJCF model reads besides itself (includes, meshes, textures, …), read from disk as
 * loadRobotProfile reads them (bounded, regular files only). Throws InputError.
 */
export function modelFileReferences(modelFile: string): MjcfFileReference[] {
  return readMjcfFileReferences({ file: toPosixPath(modelFile), readText: readModelText });
}

/** The reader's readText: its errors become "cannot read the file (<reason>)" located at the file. */
function readModelText(p: string): string {
  try {
    return readBoundedText(p, 'mjcf');
  } catch (err) {
    throw new Error(err instanceof InputError ? err.reason : describeOpenError(err));
  }
}

/** A path with `/` separators, as the MJCF reader names files. */
export const toPosixPath = (p: string): string => p.split(path.sep).join('/');
