// Descriptive statistics: mean, median, sample standard deviation and percentiles.
//
// percentile(values, p) reproduces numpy.percentile(values, p) with its default method
// ("linear", Hyndman & Fan type 7) bit for bit, including numpy's rounding choices:
//   sort ascending: x[0] ≤ … ≤ x[n−1];  q = p / 100;  h = (n − 1) · q
//   if h ≥ n − 1: x[n−1];  otherwise i = floor(h), t = h − i, a = x[i], b = x[i+1] and
//   the result is  a + (b − a)·t  when t < 0.5,  b − (b − a)·(1 − t)  when t ≥ 0.5
//   (numpy's _lerp, which evaluates from the nearer end so the result is monotone in p).
// median follows numpy.median: the middle order statistic, or (a + b) / 2 of the two middle ones.
// mean is a compensated (Neumaier) sum divided by n; sampleStd uses n − 1 and two passes.
// All of them throw StatsError on empty or non-finite input (see result.ts).

import { assertAllFinite, StatsError } from './result';

function assertNonEmpty(values: ArrayLike<number>, what: string): void {
  if (values.length === 0) throw new StatsError('empty', `${what} of no values is undefined`);
}

/** Σ values with Neumaier's compensated summation (error independent of n, to first order). */
export function compensatedSum(values: ArrayLike<number>): number {
  let sum = 0;
  let c = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const t = sum + v;
    if (Math.abs(sum) >= Math.abs(v)) c += sum - t + v;
    else c += v - t + sum;
    sum = t;
  }
  return sum + c;
}

/** Arithmetic mean. Throws on empty or non-finite input. */
export function mean(values: ArrayLike<number>): number {
  assertNonEmpty(values, 'mean');
  assertAllFinite(values, 'values');
  return compensatedSum(values) / values.length;
}

/** Sample standard deviation (denominator n − 1, as numpy.std(ddof=1)). Needs n ≥ 2. */
export function sampleStd(values: ArrayLike<number>): number {
  return Math.sqrt(sampleVariance(values));
}

/** Sample variance (denominator n − 1), two-pass: Σ (x − mean)² / (n − 1). Needs n ≥ 2. */
export function sampleVariance(values: ArrayLike<number>): number {
  assertNonEmpty(values, 'sample variance');
  assertAllFinite(values, 'values');
  const n = values.length;
  if (n < 2) throw new StatsError('too-few', 'sample variance/std needs at least 2 values (denominator n − 1)');
  const m = compensatedSum(values) / n;
  const sq = new Float64Array(n);
  for (let i = 0; i < n; i++) sq[i] = (values[i] - m) ** 2;
  return compensatedSum(sq) / (n - 1);
}

/** An ascending sorted copy as a Float64Array. */
export function sortedCopy(values: ArrayLike<number>): Float64Array {
  const a = Float64Array.from(values);
  a.sort();
  return a;
}

/** Median of already-sorted values (numpy.median convention). Caller guarantees n ≥ 1, finite, sorted. */
export function medianOfSorted(sorted: ArrayLike<number>, n: number = sorted.length): number {
  const mid = n >> 1;
  if (n % 2 === 1) return sorted[mid];
  return (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median (numpy.median convention). Throws on empty or non-finite input. */
export function median(values: ArrayLike<number>): number {
  assertNonEmpty(values, 'median');
  assertAllFinite(values, 'values');
  return medianOfSorted(sortedCopy(values));
}

function assertPercentile(p: number): void {
  if (!(typeof p === 'number' && p >= 0 && p <= 100)) {
    throw new StatsError('invalid-argument', `percentile p must be in [0, 100], got ${String(p)}`);
  }
}

/**
 * numpy-linear percentile of already-sorted finite values (n ≥ 1). `p` in [0, 100].
 * See the file header for the exact formula.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number, n: number = sorted.length): number {
  assertPercentile(p);
  const q = p / 100;
  const h = (n - 1) * q;
  if (h >= n - 1) return sorted[n - 1];
  const i = Math.floor(h);
  const t = h - i;
  const a = sorted[i];
  const b = sorted[i + 1];
  const d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

/** numpy.percentile(values, p) with the default "linear" method. Throws on empty/non-finite input or p ∉ [0, 100]. */
export function percentile(values: ArrayLike<number>, p: number): number {
  assertPercentile(p);
  assertNonEmpty(values, 'percentile');
  assertAllFinite(values, 'values');
  return percentileOfSorted(sortedCopy(values), p);
}

/** Several percentiles of the same values (one sort). */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  ps.forEach(assertPercentile);
  assertNonEmpty(values, 'percentile');
  assertAllFinite(values, 'values');
  const s = sortedCopy(values);
  return ps.map((p) => percentileOfSorted(s, p));
}
