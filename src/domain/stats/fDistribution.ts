// The F distribution with (d1, d2) degrees of freedom (real, > 0: the McGraw & Wong ICC
// intervals use a Satterthwaite df that is not an integer).
//
//   CDF:      P(F ≤ f) = I_x(d1/2, d2/2),  x = d1·f / (d1·f + d2)
//   survival: P(F > f) = I_y(d2/2, d1/2),  y = 1 − x = d2 / (d1·f + d2)   (no cancellation)
//   quantile: the f with CDF(f) = p, found by bisection on ln f after bracketing (doubling /
//             halving from f = 1). For p ≤ 0.5 the CDF is matched, for p > 0.5 the survival
//             function is matched against 1 − p, so upper quantiles keep their precision.
//             Bisection stops when the bracket is 4 ulp wide in relative terms (or after 2,000
//             steps): the result is the f whose CDF is p to the precision of I_x itself.

import { incompleteBetaPair } from './incompleteBeta';
import { StatsError } from './result';

function assertDf(d1: number, d2: number): void {
  if (!(d1 > 0 && d2 > 0 && Number.isFinite(d1) && Number.isFinite(d2))) {
    throw new StatsError(
      'invalid-argument',
      `F distribution needs finite degrees of freedom > 0, got (${String(d1)}, ${String(d2)})`,
    );
  }
}

function cdfPair(f: number, d1: number, d2: number): { lower: number; upper: number } {
  if (f <= 0) return { lower: 0, upper: 1 };
  if (f === Infinity) return { lower: 1, upper: 0 };
  const den = d1 * f + d2;
  return incompleteBetaPair((d1 * f) / den, d2 / den, d1 / 2, d2 / 2);
}

/** P(F ≤ f) for F ~ F(d1, d2). */
export function fCdf(f: number, d1: number, d2: number): number {
  assertDf(d1, d2);
  if (Number.isNaN(f)) throw new StatsError('non-finite', 'fCdf: f is NaN');
  return cdfPair(f, d1, d2).lower;
}

/** P(F > f) for F ~ F(d1, d2) (upper tail; the p-value of an observed F). */
export function fSurvival(f: number, d1: number, d2: number): number {
  assertDf(d1, d2);
  if (Number.isNaN(f)) throw new StatsError('non-finite', 'fSurvival: f is NaN');
  return cdfPair(f, d1, d2).upper;
}

/** The p-quantile of F(d1, d2), 0 < p < 1: the f with P(F ≤ f) = p. */
export function fQuantile(p: number, d1: number, d2: number): number {
  assertDf(d1, d2);
  if (!(p > 0 && p < 1)) throw new StatsError('invalid-argument', `fQuantile needs 0 < p < 1, got ${String(p)}`);
  const useUpper = p > 0.5;
  const target = useUpper ? 1 - p : p;
  // g(f) increases with f: CDF(f) − p, or (1 − p) − survival(f).
  const g = (f: number): number => {
    const c = cdfPair(f, d1, d2);
    return useUpper ? target - c.upper : c.lower - target;
  };
  let lo = 1;
  let hi = 1;
  if (g(1) < 0) {
    while (g(hi) < 0) {
      lo = hi;
      hi *= 2;
      if (hi > 1e300) throw new StatsError('invalid-argument', `fQuantile(${p}; ${d1}, ${d2}) is beyond 1e300`);
    }
  } else {
    while (g(lo) >= 0) {
      hi = lo;
      lo /= 2;
      if (lo < 1e-300) return 0;
    }
  }
  // Invariant: g(lo) < 0 ≤ g(hi).
  for (let i = 0; i < 2000 && hi - lo > 4 * Number.EPSILON * hi; i++) {
    const mid = Math.sqrt(lo * hi);
    const m = mid > lo && mid < hi ? mid : (lo + hi) / 2;
    if (m <= lo || m >= hi) break;
    if (g(m) < 0) lo = m;
    else hi = m;
  }
  return (lo + hi) / 2;
}
