// The recipes of the built-in workload core-v1: each row of the clip table (coreV1Table.ts) made
// into a recipe by the builder of its kind (coreV1Kinds.ts) or, for a clip whose motion is its
// own, by the builder the row names (coreV1Custom.ts).

import type { Recipe } from './clipBuilder';
import {
  crouchRecipe,
  jogRecipe,
  keyframesRecipe,
  kickRecipe,
  lungeRecipe,
  walkRecipe,
  type ClipRow,
} from './coreV1Kinds';
import { CORE_V1_TABLE } from './coreV1Table';
import type { Kit } from './recipeKit';

type Builders = { [K in ClipRow['kind']]: (kit: Kit, row: Extract<ClipRow, { kind: K }>) => Recipe };

/** The builder of each kind of row. */
const BUILDERS: Builders = {
  keyframes: keyframesRecipe,
  crouch: crouchRecipe,
  walk: walkRecipe,
  jog: jogRecipe,
  kick: kickRecipe,
  lunge: lungeRecipe,
  custom: (kit, row) => row.build(kit, { name: row.name, group: row.group, description: row.description }),
};

const recipeOf = (kit: Kit, row: ClipRow): Recipe =>
  (BUILDERS[row.kind] as (kit: Kit, row: ClipRow) => Recipe)(kit, row);

/** All core-v1 recipes, in catalogue order. */
export function coreV1Recipes(kit: Kit): Recipe[] {
  return CORE_V1_TABLE.map((row) => recipeOf(kit, row));
}
