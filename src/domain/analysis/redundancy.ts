// Redundancy audit (the benchmark-audit method, applied twice): which variables are substitutes.
// Given observations × variables (clips × readings, or bindings × clips), it reports the Spearman ρ
// matrix of the variables with bootstrap CIs over observations and each variable's leave-one-out
// ridge R² from all the others (ridge.ts). A high R² means the variable adds little that the
// others do not already say.

import type { BootstrapCI } from '../stats/bootstrap';
import type { Unavailable } from '../stats/result';
import { spearmanCI } from '../stats/spearman';
import { DEFAULT_RIDGE_LAMBDA, looRidgeR2, type LooR2 } from './ridge';

export interface RedundancyOptions {
  seed: number;
  /** Bootstrap replicates of each ρ (default 2,000). */
  B?: number;
  level?: number;
  lambda?: number;
  /** One key per observation: the ρ CIs resample clusters of observations (e.g. all rows of one clip). */
  clusterKeys?: ArrayLike<unknown>;
}

export interface RedundancyAudit {
  readonly available: true;
  readonly variables: readonly string[];
  readonly observations: number;
  /** ρ[i][j] with its CI (the diagonal is 1 with a degenerate CI; null where undefined). */
  readonly spearman: readonly (readonly (BootstrapCI | Unavailable)[])[];
  readonly looR2: readonly (LooR2 | Unavailable)[];
  readonly lambda: number;
}

/** `columns[v]` = variable v's values over the observations (all the same length, finite). */
export function redundancyAudit(
  variables: readonly string[],
  columns: readonly ArrayLike<number>[],
  options: RedundancyOptions,
): RedundancyAudit {
  const B = options.B ?? 2000;
  const lambda = options.lambda ?? DEFAULT_RIDGE_LAMBDA;
  const k = variables.length;
  const rho: (BootstrapCI | Unavailable)[][] = Array.from({ length: k }, () => new Array(k));
  for (let i = 0; i < k; i++) {
    for (let j = i; j < k; j++) {
      // One seed per cell, so that a cell's CI does not depend on which other variables are present.
      const r = spearmanCI(columns[i], columns[j], {
        seed: options.seed + i * 1009 + j,
        B,
        ...(options.level !== undefined ? { level: options.level } : {}),
        ...(options.clusterKeys !== undefined ? { clusterKeys: options.clusterKeys } : {}),
      });
      rho[i][j] = r;
      rho[j][i] = r;
    }
  }
  const looR2 = columns.map((y, i) =>
    looRidgeR2(
      y,
      columns.filter((_, j) => j !== i),
      lambda,
    ),
  );
  return { available: true, variables, observations: columns[0]?.length ?? 0, spearman: rho, looR2, lambda };
}
