// Bradley–Terry ranking of bindings with clips as judges.
//
// Each clip compares every two bindings that both have a score on it: the better score wins (lower
// for error readings, higher for success/progress); equal scores are a tie and count half a win to
// each. The model P(i beats j) = pᵢ/(pᵢ + pⱼ) is fitted by maximum likelihood with Hunter's (2004)
// MM iteration pᵢ ← Wᵢ / Σⱼ nᵢⱼ/(pᵢ + pⱼ) (Wᵢ wins of i, nᵢⱼ comparisons of i and j), normalised
// so that the log-strengths θᵢ = ln pᵢ sum to 0. The MLE exists only when the wins graph is strongly
// connected (Ford 1957: every binding both beats and is beaten by some chain of others); where it is
// not, one virtual tie is added between every two bindings (a stated pseudo-count that pulls all
// strengths toward each other), in the fit and in every bootstrap replicate alike.
//
// CIs: percentile bootstrap over judges (clips resampled with replacement, seeded); a replicate
// whose own wins graph is not strongly connected has no MLE and is left out and counted.

import { percentileInterval, resolveBootstrapOptions, type BootstrapOptions } from '../stats/bootstrap';
import { bootstrapReplicates } from '../stats/resampling';
import { StatsError, unavailable, type Unavailable } from '../stats/result';

export type Better = 'lower' | 'higher';

export interface PairwiseTable {
  readonly players: readonly string[];
  /** wins[i][j]: wins of i over j (ties add 0.5 to both). */
  readonly wins: readonly Float64Array[];
  /** comparisons[i][j] = comparisons[j][i]. */
  readonly comparisons: readonly Float64Array[];
}

export interface BradleyTerryFit {
  readonly available: true;
  readonly players: readonly string[];
  /** θᵢ = ln pᵢ, Σθ = 0. */
  readonly theta: Float64Array;
  readonly iterations: number;
  /** Virtual ties added per pair of players (0 when the MLE exists as it is). */
  readonly virtualTies: number;
}

/** Wins of each pair on one judge's scores (NaN = no score from this judge). */
export function judgeTable(scores: ArrayLike<number>, better: Better): { wins: Float64Array[]; n: Float64Array[] } {
  const k = scores.length;
  const wins = Array.from({ length: k }, () => new Float64Array(k));
  const n = Array.from({ length: k }, () => new Float64Array(k));
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k; j++) {
      const a = scores[i];
      const b = scores[j];
      if (Number.isNaN(a) || Number.isNaN(b)) continue;
      n[i][j] += 1;
      n[j][i] += 1;
      if (a === b) {
        wins[i][j] += 0.5;
        wins[j][i] += 0.5;
      } else if ((better === 'lower') === a < b) wins[i][j] += 1;
      else wins[j][i] += 1;
    }
  }
  return { wins, n };
}

/** Every player reaches every other along "beat (or tied)" edges, and back. */
export function stronglyConnected(wins: readonly ArrayLike<number>[]): boolean {
  const k = wins.length;
  if (k <= 1) return true;
  const reach = (forward: boolean): boolean => {
    const seen = new Uint8Array(k);
    const stack = [0];
    seen[0] = 1;
    while (stack.length) {
      const i = stack.pop()!;
      for (let j = 0; j < k; j++) {
        if (seen[j]) continue;
        if ((forward ? wins[i][j] : wins[j][i]) > 0) {
          seen[j] = 1;
          stack.push(j);
        }
      }
    }
    return seen.every((s) => s === 1);
  };
  return reach(true) && reach(false);
}

/** MM fit of θ from win and comparison counts; null when the MLE does not exist (not strongly connected). */
export function fitTheta(
  wins: readonly ArrayLike<number>[],
  comparisons: readonly ArrayLike<number>[],
  maxIterations = 10_000,
  tolerance = 1e-12,
): { theta: Float64Array; iterations: number } | null {
  const k = wins.length;
  if (!stronglyConnected(wins)) return null;
  const W = Float64Array.from({ length: k }, (_, i) => {
    let s = 0;
    for (let j = 0; j < k; j++) s += wins[i][j];
    return s;
  });
  let p = new Float64Array(k).fill(1);
  let it = 0;
  for (; it < maxIterations; it++) {
    const next = new Float64Array(k);
    for (let i = 0; i < k; i++) {
      let d = 0;
      for (let j = 0; j < k; j++) if (j !== i && comparisons[i][j] > 0) d += comparisons[i][j] / (p[i] + p[j]);
      next[i] = W[i] / d;
    }
    // Geometric mean 1.
    let logSum = 0;
    for (let i = 0; i < k; i++) logSum += Math.log(next[i]);
    const scale = Math.exp(logSum / k);
    let change = 0;
    for (let i = 0; i < k; i++) {
      next[i] /= scale;
      change = Math.max(change, Math.abs(Math.log(next[i]) - Math.log(p[i])));
    }
    p = next;
    if (change < tolerance) break;
  }
  return { theta: Float64Array.from(p, (v) => Math.log(v)), iterations: it + 1 };
}

function withVirtualTies(
  wins: readonly Float64Array[],
  n: readonly Float64Array[],
  ties: number,
): { wins: Float64Array[]; n: Float64Array[] } {
  if (ties === 0) return { wins: [...wins], n: [...n] };
  return {
    wins: wins.map((row, i) => row.map((v, j) => (i === j ? v : v + ties / 2))),
    n: n.map((row, i) => row.map((v, j) => (i === j ? v : v + ties))),
  };
}

export interface BradleyTerryRanking {
  readonly available: true;
  readonly better: Better;
  readonly judges: number;
  readonly virtualTies: number;
  readonly iterations: number;
  /** Players with θ, its CI and rank (1 = strongest), strongest first. */
  readonly strengths: readonly {
    readonly player: string;
    readonly theta: number;
    readonly lo: number | null;
    readonly hi: number | null;
    readonly rank: number;
  }[];
  readonly B: number;
  readonly seed: number;
  readonly level: number;
  readonly degenerateReplicates: number;
}

/**
 * Bradley–Terry strengths of `players` from `judges` (judges[c][i] = player i's score on judge c,
 * NaN where it has none), with a bootstrap over judges.
 */
export function bradleyTerry(
  players: readonly string[],
  judges: readonly ArrayLike<number>[],
  better: Better,
  options: BootstrapOptions,
): BradleyTerryRanking | Unavailable {
  const opts = resolveBootstrapOptions({ B: 1000, ...options });
  const k = players.length;
  if (k < 2) return unavailable('too-few', `a ranking needs at least 2 bindings; got ${k}`);
  if (judges.length === 0) return unavailable('empty', 'no clip compares any two bindings');
  for (const j of judges)
    if (j.length !== k) throw new StatsError('length-mismatch', `a judge scores ${j.length} players, expected ${k}`);
  const tables = judges.map((s) => judgeTable(s, better));
  const sum = (idx: ArrayLike<number>) => {
    const wins = Array.from({ length: k }, () => new Float64Array(k));
    const n = Array.from({ length: k }, () => new Float64Array(k));
    for (let t = 0; t < idx.length; t++) {
      const tb = tables[idx[t]];
      for (let i = 0; i < k; i++)
        for (let j = 0; j < k; j++) {
          wins[i][j] += tb.wins[i][j];
          n[i][j] += tb.n[i][j];
        }
    }
    return { wins, n };
  };
  const all = sum(Array.from({ length: judges.length }, (_, i) => i));
  const virtualTies = stronglyConnected(all.wins) ? 0 : 1;
  const base = withVirtualTies(all.wins, all.n, virtualTies);
  const fit = fitTheta(base.wins, base.n);
  if (fit === null)
    return unavailable('degenerate', 'the comparisons do not connect the bindings (some pair is never compared)');
  // Per player, its θ in every replicate (NaN where the replicate has no MLE).
  const reps: Float64Array[] = Array.from({ length: k }, () => new Float64Array(opts.B));
  let b = 0;
  bootstrapReplicates(judges.length, opts.B, opts.seed, (idx) => {
    const s = sum(idx);
    const v = withVirtualTies(s.wins, s.n, virtualTies);
    const f = fitTheta(v.wins, v.n);
    for (let i = 0; i < k; i++) reps[i][b] = f ? f.theta[i] : NaN;
    b++;
    return 0;
  });
  let degenerate = 0;
  for (let r = 0; r < opts.B; r++) if (Number.isNaN(reps[0][r])) degenerate++;
  const order = Array.from({ length: k }, (_, i) => i).sort((i, j) => fit.theta[j] - fit.theta[i]);
  return {
    available: true,
    better,
    judges: judges.length,
    virtualTies,
    iterations: fit.iterations,
    strengths: order.map((i, r) => {
      const ci = percentileInterval(reps[i], opts.level);
      return { player: players[i], theta: fit.theta[i], lo: ci?.lo ?? null, hi: ci?.hi ?? null, rank: r + 1 };
    }),
    B: opts.B,
    seed: opts.seed,
    level: opts.level,
    degenerateReplicates: degenerate,
  };
}
