// The built-in workload core-v1: generates every clip of coreV1Recipes at 50 fps on a robot model
// (our G1, assets/g1/g1.xml) and assembles the snapshot. Pure and deterministic: the same model and
// the same JavaScript engine give bit-identical clips (docs/WORKLOAD.md, "Determinism"); the
// frozen manifest assets/workloads/core-v1.json holds the expected clip ids and snapshot hash.

import { sha256HexOfString } from '../hash/sha256';
import type { MotionClip } from '../motion/motionClip';
import { encodeClipJson } from '../motion/motionbenchJson';
import type { RobotProfile } from '../robot/robotProfile';
import { BodyModel } from './bodyModel';
import { buildClip, type RecipeMeta } from './clipBuilder';
import { coreV1Recipes } from './coreV1Recipes';
import { Kit } from './recipeKit';
import { buildSnapshot, type LoadedWorkload } from './snapshot';

export const CORE_V1_ID = 'core-v1';
export const CORE_V1_VERSION = '1';
export const CORE_V1_FPS = 50;

export interface CoreV1Options {
  /** Generate only the clips with these names (for tests and previews). */
  only?: readonly string[];
  /**
   * Fill provenance.fileSha256 with the sha256 of the clip's motionbench-clip/1 JSON export
   * (encodeClipJson), default true. Costs a JSON encoding per clip.
   */
  withFileSha256?: boolean;
}

export interface GeneratedCoreV1 extends LoadedWorkload {
  /** Recipe metadata (description, flight) per clip, in clip order. */
  recipes: RecipeMeta[];
}

/** Names, groups and descriptions of the core-v1 clips, without generating them. */
export function coreV1Catalogue(profile: RobotProfile): RecipeMeta[] {
  const kit = new Kit(new BodyModel(profile));
  return coreV1Recipes(kit).map(({ name, group, description, durationS, flight }) => ({
    name,
    group,
    description,
    durationS,
    flight,
  }));
}

/**
 * Generates core-v1 on `profile`. Every clip has capabilityGroup set and provenance
 * { file: 'builtin:core-v1/<name>.json', format: 'motionbench-json', fileSha256: sha256 of its
 * JSON export, fpsSource: 'file' }.
 */
export function generateCoreV1(profile: RobotProfile, options: CoreV1Options = {}): GeneratedCoreV1 {
  const model = new BodyModel(profile);
  const kit = new Kit(model);
  let recipes = coreV1Recipes(kit);
  if (options.only) {
    const want = new Set(options.only);
    const unknown = [...want].filter((n) => !recipes.some((r) => r.name === n));
    if (unknown.length > 0) throw new Error(`core-v1 has no clip named ${unknown.join(', ')}`);
    recipes = recipes.filter((r) => want.has(r.name));
  }
  const names = new Set<string>();
  const clips: MotionClip[] = recipes.map((recipe) => {
    if (names.has(recipe.name)) throw new Error(`core-v1 recipe name ${recipe.name} is used twice`);
    names.add(recipe.name);
    const body = buildClip(model, recipe, CORE_V1_FPS);
    const clip: MotionClip = {
      ...body,
      provenance: {
        file: `builtin:${CORE_V1_ID}/${recipe.name}.json`,
        format: 'motionbench-json',
        fileSha256: '',
        fpsSource: 'file',
      },
    };
    if (options.withFileSha256 ?? true) clip.provenance.fileSha256 = sha256HexOfString(encodeClipJson(clip));
    return clip;
  });
  return {
    snapshot: buildSnapshot(CORE_V1_ID, CORE_V1_VERSION, 'builtin', clips),
    clips,
    recipes: recipes.map(({ name, group, description, durationS, flight }) => ({
      name,
      group,
      description,
      durationS,
      flight,
    })),
  };
}
