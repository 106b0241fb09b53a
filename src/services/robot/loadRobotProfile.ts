import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMjcf } from '../../domain/robot/mjcfReader';
import type { RobotProfile } from '../../domain/robot/robotProfile';

/** Our own G1 model (assets/g1/g1.xml), the default wherever a model is optional. */
export const DEFAULT_MODEL_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../assets/g1/g1.xml');

/** Reads an MJCF file (with its includes) from disk into a RobotProfile. Throws InputError. */
export function loadRobotProfile(file: string = DEFAULT_MODEL_FILE): RobotProfile {
  return readMjcf({ file: toPosix(file), readText: (p) => fs.readFileSync(p, 'utf8') });
}

const toPosix = (p: string): string => p.split(path.sep).join('/');
