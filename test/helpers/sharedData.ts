import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Third-party data lives beside the repo in ../shared/data (never copied in). In CI the
// checkout is a fresh clone with shared/ next to it, so the path is always relative to the repo.
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_DATA = path.resolve(REPO_ROOT, '../shared/data');
export const MENAGERIE_G1 = path.join(SHARED_DATA, 'models/unitree_g1_mjcf/g1.xml');
export const MENAGERIE_SCENE = path.join(SHARED_DATA, 'models/unitree_g1_mjcf/scene.xml');
export const OUR_G1 = path.join(REPO_ROOT, 'assets/g1/g1.xml');
export const sharedData = (...parts: string[]): string => path.join(SHARED_DATA, ...parts);

if (!fs.existsSync(SHARED_DATA)) {
  throw new Error(
    `The shared test data folder ${SHARED_DATA} is missing: tests read third-party G1 models and clips from ../shared/data beside the repo.`,
  );
}
