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

function recipeOf(kit: Kit, row: ClipRow): Recipe {
  switch (row.kind) {
    case 'keyframes':
      return keyframesRecipe(kit, row);
    case 'crouch':
      return crouchRecipe(kit, row);
    case 'walk':
      return walkRecipe(kit, row);
    case 'jog':
      return jogRecipe(kit, row);
    case 'kick':
      return kickRecipe(kit, row);
    case 'lunge':
      return lungeRecipe(kit, row);
    case 'custom':
      return row.build(kit, { name: row.name, group: row.group, description: row.description });
  }
}

/** All core-v1 recipes, in catalogue order. */
export function coreV1Recipes(kit: Kit): Recipe[] {
  return CORE_V1_TABLE.map((row) => recipeOf(kit, row));
}
