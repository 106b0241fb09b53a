// Minimal hardware clip set: greedy forward selection under the benchmark-audit utility
//   U(c | S) = g(c) · (1 − R²(c ~ S)),
// g(c) the Gini coefficient of clip c's scores across bindings (how well it separates them) and
// R²(c ~ S) the leave-one-out ridge R² of those scores from the clips already chosen (how much of
// it S already says), clamped to [0, 1] (a negative LOO R² — worse than the mean — counts as 0,
// i.e. S says nothing about c). R²(c ~ ∅) = 0.
//
// The path adds, at each step, the clip of largest utility given the clips before it (ties: the
// earlier clip in the matrix's order), until every clip is in. Its cumulative share at step k is
// Σ_{i≤k} U_i / Σ_all U_i: the share of the full set's utility (the sum over the whole path) that
// the first k clips carry. The minimal set is the shortest prefix whose share reaches the target.
//
// Robustness, as in the method: the path is re-run with each chosen clip forced first; the set
// "survives" when the minimal set found then is the same set of clips.

import { StatsError, type Unavailable, unavailable } from '../stats/result';
import { gini } from './gini';
import { DEFAULT_RIDGE_LAMBDA, looRidgeR2 } from './ridge';
import { clipColumn, type DenseScores } from './scoreMatrix';

export const DEFAULT_SHARE = 0.8;

export interface SelectionStep {
  readonly clip: string;
  readonly gini: number;
  /** R²(c ~ S) as used (clamped to [0, 1]). */
  readonly r2: number;
  readonly marginalUtility: number;
  readonly cumulativeShare: number;
}

export interface SelectionPath {
  readonly available: true;
  readonly steps: readonly SelectionStep[];
  readonly totalUtility: number;
}

export interface RobustnessCheck {
  readonly forcedFirst: string;
  readonly minimalSet: readonly string[];
  /** The same clips as the unforced minimal set. */
  readonly survives: boolean;
  /** Clips shared with the unforced minimal set. */
  readonly overlap: number;
}

export interface ClipSelection {
  readonly available: true;
  readonly share: number;
  readonly lambda: number;
  readonly bindings: number;
  readonly path: readonly SelectionStep[];
  readonly minimalSet: readonly string[];
  readonly minimalShare: number;
  readonly robustness: readonly RobustnessCheck[];
}

/** The greedy path over all clips of `scores`, optionally with `forcedFirst` (a clip index) first. */
export function selectionPath(
  scores: DenseScores,
  options: { lambda?: number; forcedFirst?: number } = {},
): SelectionPath | Unavailable {
  const lambda = options.lambda ?? DEFAULT_RIDGE_LAMBDA;
  const nb = scores.bindings.length;
  const nc = scores.clips.length;
  if (nc === 0) return unavailable('empty', 'no clip has a score for every binding');
  if (nb < 3)
    return unavailable(
      'too-few',
      `the selection needs at least 3 bindings to judge a clip by the others (leave-one-out R² across bindings); got ${nb}`,
    );
  const cols = Array.from({ length: nc }, (_, c) => clipColumn(scores, c));
  const g = cols.map((x) => gini(x));
  const chosen: number[] = [];
  const steps: { clip: number; gini: number; r2: number; u: number }[] = [];
  const r2Given = (c: number): number => {
    if (chosen.length === 0) return 0;
    const r = looRidgeR2(
      cols[c],
      chosen.map((s) => cols[s]),
      lambda,
    );
    // A constant column (g = 0) has utility 0 whatever R² would be.
    return r.available ? Math.min(1, Math.max(0, r.r2)) : 0;
  };
  while (chosen.length < nc) {
    let best = -1;
    let bestU = -Infinity;
    let bestR2 = 0;
    if (chosen.length === 0 && options.forcedFirst !== undefined) {
      if (!(options.forcedFirst >= 0 && options.forcedFirst < nc))
        throw new StatsError('invalid-argument', `forcedFirst ${options.forcedFirst} is not a clip index`);
      best = options.forcedFirst;
      bestU = g[best];
    } else {
      for (let c = 0; c < nc; c++) {
        if (chosen.includes(c)) continue;
        const r2 = r2Given(c);
        const u = g[c] * (1 - r2);
        if (u > bestU) {
          best = c;
          bestU = u;
          bestR2 = r2;
        }
      }
    }
    chosen.push(best);
    steps.push({ clip: best, gini: g[best], r2: bestR2, u: bestU });
  }
  const total = steps.reduce((s, x) => s + x.u, 0);
  if (!(total > 0))
    return unavailable(
      'zero-variance',
      'every clip scores every binding alike (Gini 0): no clip separates the bindings',
    );
  let cum = 0;
  return {
    available: true,
    totalUtility: total,
    steps: steps.map((s) => {
      cum += s.u;
      return { clip: scores.clips[s.clip], gini: s.gini, r2: s.r2, marginalUtility: s.u, cumulativeShare: cum / total };
    }),
  };
}

function minimalPrefix(path: SelectionPath, share: number): { set: string[]; share: number } {
  // A share computed as a sum of doubles may fall a hair short of 1 at the end; the last step counts.
  const k = path.steps.findIndex((s, i) => s.cumulativeShare >= share - 1e-12 || i === path.steps.length - 1);
  return { set: path.steps.slice(0, k + 1).map((s) => s.clip), share: path.steps[k].cumulativeShare };
}

/** The path, the smallest prefix reaching `share` of the full set's utility, and its robustness. */
export function selectClips(
  scores: DenseScores,
  options: { share?: number; lambda?: number } = {},
): ClipSelection | Unavailable {
  const share = options.share ?? DEFAULT_SHARE;
  if (!(share > 0 && share <= 1)) throw new StatsError('invalid-argument', `share must be in (0, 1], got ${share}`);
  const lambda = options.lambda ?? DEFAULT_RIDGE_LAMBDA;
  const path = selectionPath(scores, { lambda });
  if (!path.available) return path;
  const min = minimalPrefix(path, share);
  const robustness = min.set.map((clip) => {
    const forced = selectionPath(scores, { lambda, forcedFirst: scores.clips.indexOf(clip) });
    const set = forced.available ? minimalPrefix(forced, share).set : [];
    const overlap = set.filter((c) => min.set.includes(c)).length;
    return {
      forcedFirst: clip,
      minimalSet: set,
      survives: overlap === min.set.length && set.length === min.set.length,
      overlap,
    };
  });
  return {
    available: true,
    share,
    lambda,
    bindings: scores.bindings.length,
    path: path.steps,
    minimalSet: min.set,
    minimalShare: min.share,
    robustness,
  };
}
