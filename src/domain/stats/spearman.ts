// Spearman's rank correlation ρ with a bootstrap confidence interval.
//
// ρ = Pearson correlation of the ranks, ties given their average rank (1-based, as
// scipy.stats.rankdata(method='average')):
//   ρ = Σ (R_i − R̄)(S_i − S̄) / sqrt(Σ (R_i − R̄)² · Σ (S_i − S̄)²)
// With no ties this equals 1 − 6 Σ d_i² / (n(n² − 1)); with ties only the Pearson form is right.
// ρ is undefined (Unavailable 'zero-variance') when either variable is constant (all values
// tied), and needs n ≥ 2 pairs ('too-few'). The result is clamped to [−1, 1] against rounding.
//
// CI: percentile bootstrap (see bootstrap.ts) over pairs, or over clusters of pairs when
// `clusterKeys` is given (one key per pair; all pairs of a drawn cluster go in together).
// Ranks are recomputed on every replicate. A replicate on which ρ is undefined (all drawn x or all
// drawn y equal — likely with few pairs) is left out and counted in `degenerateReplicates`;
// the interval is taken over the remaining replicates.

import { percentileInterval, resolveBootstrapOptions, type BootstrapCI, type BootstrapOptions } from './bootstrap';
import { bootstrapReplicates, clusterIndexLists } from './resampling';
import { assertAllFinite, assertSameLength, StatsError, unavailable, type Unavailable } from './result';

export interface SpearmanResult {
  readonly available: true;
  readonly rho: number;
  readonly n: number;
}

/** Average ranks, 1-based: ties share the mean of the positions they occupy. */
export function averageRanks(values: ArrayLike<number>): Float64Array {
  assertAllFinite(values, 'values');
  return averageRanksUnchecked(values, values.length);
}

function averageRanksUnchecked(values: ArrayLike<number>, n: number): Float64Array {
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => values[a] - values[b] || a - b);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && values[order[j + 1]] === values[order[i]]) j++;
    // Positions i..j (0-based) → ranks i+1..j+1, average (i + j + 2) / 2.
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

/** Pearson correlation of x and y (two-pass); NaN if either has zero variance. Caller validates. */
function pearsonUnchecked(x: ArrayLike<number>, y: ArrayLike<number>, n: number): number {
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return NaN;
  const r = sxy / Math.sqrt(sxx * syy);
  return Math.max(-1, Math.min(1, r));
}

function allEqual(v: ArrayLike<number>): boolean {
  for (let i = 1; i < v.length; i++) if (v[i] !== v[0]) return false;
  return true;
}

/** Spearman's ρ (average ranks for ties, Pearson on ranks). */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): SpearmanResult | Unavailable {
  assertSameLength(x, y, 'spearman');
  assertAllFinite(x, 'x');
  assertAllFinite(y, 'y');
  const n = x.length;
  if (n === 0) return unavailable('empty', 'Spearman ρ: no pairs');
  if (n < 2) return unavailable('too-few', 'Spearman ρ needs at least 2 pairs');
  if (allEqual(x))
    return unavailable('zero-variance', 'Spearman ρ is undefined: all x values are equal (constant ranking)');
  if (allEqual(y))
    return unavailable('zero-variance', 'Spearman ρ is undefined: all y values are equal (constant ranking)');
  const rho = pearsonUnchecked(averageRanksUnchecked(x, n), averageRanksUnchecked(y, n), n);
  return { available: true, rho, n };
}

export interface SpearmanCIOptions extends BootstrapOptions {
  /** One key per pair: resample clusters of pairs (e.g. all pairs of one clip) instead of single pairs. */
  clusterKeys?: ArrayLike<unknown>;
}

/** Spearman's ρ with a percentile-bootstrap CI over pairs (or clusters of pairs). */
export function spearmanCI(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  options: SpearmanCIOptions,
): BootstrapCI | Unavailable {
  const opts = resolveBootstrapOptions(options);
  const point = spearman(x, y);
  if (!point.available) return point;
  const n = point.n;
  let units: number[][];
  if (options.clusterKeys !== undefined) {
    if (options.clusterKeys.length !== n) {
      throw new StatsError('length-mismatch', `spearmanCI: ${n} pairs but ${options.clusterKeys.length} cluster keys`);
    }
    units = clusterIndexLists(options.clusterKeys);
    if (units.length < 2)
      return unavailable('too-few', 'Spearman ρ CI: a cluster bootstrap needs at least 2 clusters; got 1');
  } else {
    units = Array.from({ length: n }, (_, i) => [i]);
  }
  const m = units.length;
  const maxSize = units.reduce((a, u) => Math.max(a, u.length), 0);
  const bx = new Float64Array(m * maxSize);
  const by = new Float64Array(m * maxSize);
  const reps = bootstrapReplicates(m, opts.B, opts.seed, (idx) => {
    let len = 0;
    for (let j = 0; j < m; j++) {
      for (const i of units[idx[j]]) {
        bx[len] = x[i];
        by[len] = y[i];
        len++;
      }
    }
    if (len < 2) return NaN;
    const xs = bx.subarray(0, len);
    const ys = by.subarray(0, len);
    if (allEqual(xs) || allEqual(ys)) return NaN;
    return pearsonUnchecked(averageRanksUnchecked(xs, len), averageRanksUnchecked(ys, len), len);
  });
  const ci = percentileInterval(reps, opts.level);
  if (ci === null)
    return unavailable('degenerate', 'Spearman ρ CI: ρ was undefined on every bootstrap replicate (constant ranking)');
  return {
    available: true,
    estimate: point.rho,
    lo: ci.lo,
    hi: ci.hi,
    level: opts.level,
    B: opts.B,
    seed: opts.seed,
    method: 'bootstrap-percentile',
    resampled: options.clusterKeys !== undefined ? 'clusters' : 'pairs',
    statistic: 'Spearman rho',
    clusters: m,
    n,
    degenerateReplicates: ci.degenerate,
  };
}
