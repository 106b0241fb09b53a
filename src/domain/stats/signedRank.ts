// Exact null distribution of the Wilcoxon signed-rank statistic T+ (sum of the ranks of the
// positive differences among n untied, non-zero differences): under H0 each rank 1..n enters
// T+ independently with probability 1/2, so T+ has support 0..M, M = n(n+1)/2, and
//   P(T+ = t) = c_n(t) / 2^n,  c_n(t) = number of subsets of {1..n} summing to t,
// computed by the recursion c_i(t) = c_{i−1}(t) + c_{i−1}(t − i), here directly in probabilities
// (each step halves), which is exact while the counts fit in 53 bits (n ≤ 50) and accurate to
// rounding beyond. Cost O(n · M) = O(n³): n = 1,000 takes ≈ 0.3 s, n = 2,000 (the cap) ≈ 2 s.

import { assertPositiveInteger } from './result';

export const SIGNED_RANK_MAX_N = 2000;

/** P(T+ ≤ t) for t = 0..n(n+1)/2, n ≥ 1. */
export function signedRankCdf(n: number): Float64Array {
  assertPositiveInteger(n, 'signed-rank n', SIGNED_RANK_MAX_N);
  const M = (n * (n + 1)) / 2;
  let p = new Float64Array(M + 1);
  let next = new Float64Array(M + 1);
  p[0] = 1;
  let top = 0; // current support is 0..top
  for (let i = 1; i <= n; i++) {
    const newTop = top + i;
    for (let t = 0; t <= newTop; t++) {
      const keep = t <= top ? p[t] : 0;
      const add = t >= i && t - i <= top ? p[t - i] : 0;
      next[t] = (keep + add) / 2;
    }
    [p, next] = [next, p];
    top = newTop;
  }
  const cdf = new Float64Array(M + 1);
  let acc = 0;
  for (let t = 0; t <= M; t++) {
    acc += p[t];
    cdf[t] = Math.min(1, acc);
  }
  return cdf;
}

/**
 * R's qsignrank(prob, n): the smallest q with P(T+ ≤ q) ≥ prob (prob ≤ 0.5), with R's fuzz of
 * 10·DBL_EPSILON so an exact dyadic probability is not missed by rounding.
 */
export function signedRankLowerQuantile(cdf: Float64Array, prob: number): number {
  const target = prob - 10 * Number.EPSILON;
  for (let q = 0; q < cdf.length; q++) if (cdf[q] >= target) return q;
  return cdf.length - 1;
}
