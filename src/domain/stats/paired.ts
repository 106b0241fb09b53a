// Paired differences: the median difference with a bootstrap CI, and the Hodges–Lehmann
// estimate with its distribution-free CI from the Walsh averages.
//
// Convention (as R's wilcox.test(x, y, paired = TRUE)): d_i = x_i − y_i. For a sim-to-real
// comparison pass x = real, y = sim to get "real − sim".
//
// pairedMedianDifferenceCI: estimate = median(d) (the median of the differences, not the
//   difference of the medians); percentile-bootstrap CI over pairs, or over clusters of pairs when
//   `clusterKeys` is given (see bootstrap.ts).
// hodgesLehmann / hodgesLehmannPaired (Hollander & Wolfe, Nonparametric Statistical Methods,
//   §3.2; the construction of R's wilcox.test(conf.int = TRUE, exact = TRUE)):
//   Walsh averages W_1 ≤ … ≤ W_M, M = n(n+1)/2, the sorted (d_i + d_j)/2 for i ≤ j;
//   estimate = median of the W (the pseudo-median);
//   CI at level 1 − α: q = the smallest t with P(T+ ≤ t) ≥ α/2 under the exact signed-rank null
//   distribution of n (signedRank.ts), q := 1 if q = 0; interval [W_q, W_{M+1−q}] (1-based).
//   Because T+ is discrete, the achieved level 1 − 2·P(T+ ≤ q − 1) is ≥ the requested one, except
//   when n is too small to reach it at all (e.g. n ≤ 5 at 95 %), where the interval is [W_1, W_M]
//   and `levelAchieved` is false. Both are reported.
//   The interval is distribution-free for continuous, symmetric differences; with ties or zero
//   differences its coverage is approximate (the order statistics are still used as they are).
//   The exact distribution is computed for n ≤ 2,000 (O(n³)); larger n is refused — use the
//   bootstrap interval there.

import {
  bootstrapCI,
  clusterBootstrapCI,
  resolveBootstrapOptions,
  type BootstrapCI,
  type BootstrapOptions,
} from './bootstrap';
import { medianOfSorted } from './descriptive';
import { groupByKey } from './resampling';
import {
  assertAllFinite,
  assertLevel,
  assertSameLength,
  DEFAULT_CONFIDENCE_LEVEL,
  StatsError,
  unavailable,
  type Unavailable,
} from './result';
import { SIGNED_RANK_MAX_N, signedRankCdf, signedRankLowerQuantile } from './signedRank';

/** d_i = x_i − y_i. Throws on different lengths or non-finite input. */
export function pairedDifferences(x: ArrayLike<number>, y: ArrayLike<number>): Float64Array {
  assertSameLength(x, y, 'paired differences');
  assertAllFinite(x, 'x');
  assertAllFinite(y, 'y');
  return Float64Array.from({ length: x.length }, (_, i) => x[i] - y[i]);
}

export interface PairedCIOptions extends BootstrapOptions {
  /** One key per pair: resample clusters of pairs (e.g. all pairs of one clip) instead of single pairs. */
  clusterKeys?: ArrayLike<unknown>;
}

/** Median of d = x − y with a percentile-bootstrap CI over pairs (or clusters of pairs). */
export function pairedMedianDifferenceCI(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  options: PairedCIOptions,
): BootstrapCI | Unavailable {
  resolveBootstrapOptions(options);
  const d = pairedDifferences(x, y);
  const { clusterKeys, ...bootOpts } = options;
  let ci: BootstrapCI | Unavailable;
  if (clusterKeys !== undefined) {
    if (clusterKeys.length !== d.length)
      throw new StatsError(
        'length-mismatch',
        `paired median difference: ${d.length} pairs but ${clusterKeys.length} cluster keys`,
      );
    ci = clusterBootstrapCI(groupByKey(d, clusterKeys), 'median', { ...bootOpts, withinCluster: 'pool' });
  } else {
    ci = bootstrapCI(d, 'median', bootOpts);
  }
  if (!ci.available) return ci;
  return {
    ...ci,
    resampled: clusterKeys !== undefined ? 'clusters' : 'pairs',
    statistic: 'median of paired differences (x − y)',
  };
}

export interface HodgesLehmannResult {
  readonly available: true;
  /** Median of the Walsh averages. */
  readonly estimate: number;
  readonly lo: number;
  readonly hi: number;
  /** The requested level. */
  readonly level: number;
  /** The exact level of [lo, hi] under the signed-rank null distribution: 1 − 2·P(T+ ≤ q − 1). */
  readonly achievedLevel: number;
  /** False when n is too small for the requested level (then [lo, hi] = [min W, max W]). */
  readonly levelAchieved: boolean;
  readonly n: number;
  /** Number of Walsh averages, n(n+1)/2. */
  readonly walshCount: number;
  /** 1-based ranks of lo and hi among the sorted Walsh averages. */
  readonly lowerRank: number;
  readonly upperRank: number;
  readonly method: 'hodges-lehmann-walsh-exact';
}

export interface HodgesLehmannOptions {
  /** Confidence level in (0, 1), default 0.95. */
  level?: number;
}

/** Sorted Walsh averages (d_i + d_j)/2, i ≤ j. */
export function walshAverages(d: ArrayLike<number>): Float64Array {
  assertAllFinite(d, 'differences');
  const n = d.length;
  const w = new Float64Array((n * (n + 1)) / 2);
  let k = 0;
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) w[k++] = (d[i] + d[j]) / 2;
  w.sort();
  return w;
}

/** Hodges–Lehmann one-sample estimate of the differences `d` with its exact Walsh-average CI. */
export function hodgesLehmann(
  d: ArrayLike<number>,
  options: HodgesLehmannOptions = {},
): HodgesLehmannResult | Unavailable {
  const level = options.level ?? DEFAULT_CONFIDENCE_LEVEL;
  assertLevel(level);
  assertAllFinite(d, 'differences');
  const n = d.length;
  if (n === 0) return unavailable('empty', 'Hodges–Lehmann: no differences');
  if (n < 2) return unavailable('too-few', 'Hodges–Lehmann CI needs at least 2 differences');
  if (n > SIGNED_RANK_MAX_N) {
    return unavailable(
      'too-few',
      `Hodges–Lehmann exact CI is computed for n ≤ ${SIGNED_RANK_MAX_N} (got ${n}); use the bootstrap CI`,
    );
  }
  const w = walshAverages(d);
  const M = w.length;
  const cdf = signedRankCdf(n);
  const alpha = 1 - level;
  let q = signedRankLowerQuantile(cdf, alpha / 2);
  if (q === 0) q = 1;
  const achievedLevel = 1 - 2 * cdf[q - 1];
  return {
    available: true,
    estimate: medianOfSorted(w),
    lo: w[q - 1],
    hi: w[M - q],
    level,
    achievedLevel,
    levelAchieved: achievedLevel >= level - 1e-12,
    n,
    walshCount: M,
    lowerRank: q,
    upperRank: M - q + 1,
    method: 'hodges-lehmann-walsh-exact',
  };
}

/** Hodges–Lehmann estimate of the paired shift x − y with its exact Walsh-average CI. */
export function hodgesLehmannPaired(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  options: HodgesLehmannOptions = {},
): HodgesLehmannResult | Unavailable {
  return hodgesLehmann(pairedDifferences(x, y), options);
}
