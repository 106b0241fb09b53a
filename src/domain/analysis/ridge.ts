// Leave-one-out ridge R²: how well one variable is predicted by others it was not fitted on.
//
// The redundancy measure of the benchmark-audit method: a reading (or a clip) whose scores are
// predicted by the others out of sample is a substitute for them. Predictors and response are
// standardised on all n observations (z-scores; the intercept is then 0), the ridge solution is
// β = (XᵀX + λI)⁻¹Xᵀy, and the leave-one-out residuals come exactly from the hat matrix
// H = X(XᵀX + λI)⁻¹Xᵀ: e₍ᵢ₎ = (yᵢ − ŷᵢ)/(1 − Hᵢᵢ) (the PRESS identity, exact for ridge with a
// fixed λ). R²_LOO = 1 − Σe₍ᵢ₎² / Σ(yᵢ − ȳ)². It can be negative (worse than the mean); callers
// that need a share clamp it to [0, 1] and say so.
//
// Standardising on all n (rather than refitting the scaling per fold) is the usual convention of
// the method and keeps the identity exact; it is stated with the result.

import { compensatedSum } from '../stats/descriptive';
import { unavailable, StatsError, type Unavailable } from '../stats/result';
import { cholesky, choleskySolve, matrix, gramOfColumns } from './linearAlgebra';

/** Default ridge penalty on standardised predictors. */
export const DEFAULT_RIDGE_LAMBDA = 1;

export interface LooR2 {
  readonly available: true;
  /** 1 − PRESS / SS_tot; may be negative. */
  readonly r2: number;
  readonly n: number;
  readonly predictors: number;
  readonly lambda: number;
}

function zscores(v: ArrayLike<number>): Float64Array | null {
  const n = v.length;
  const m = compensatedSum(v) / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (v[i] - m) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  if (!(sd > 0)) return null;
  return Float64Array.from(v, (x) => (x - m) / sd);
}

/**
 * LOO ridge R² of `y` from the columns `predictors` (each the same length as y). Predictors that
 * are constant carry no information and are dropped. Unavailable when y is constant or n < 3.
 */
export function looRidgeR2(
  y: ArrayLike<number>,
  predictors: readonly ArrayLike<number>[],
  lambda = DEFAULT_RIDGE_LAMBDA,
): LooR2 | Unavailable {
  const n = y.length;
  if (!(lambda > 0)) throw new StatsError('invalid-argument', `ridge lambda must be > 0, got ${lambda}`);
  for (const p of predictors)
    if (p.length !== n) throw new StatsError('length-mismatch', `predictor has ${p.length} values, y has ${n}`);
  if (n < 3) return unavailable('too-few', `leave-one-out R² needs at least 3 observations; got ${n}`);
  const zy = zscores(y);
  if (zy === null) return unavailable('zero-variance', 'the response is constant: R² is undefined');
  const cols = predictors.map(zscores).filter((c): c is Float64Array => c !== null);
  const p = cols.length;
  const x = matrix(n, p);
  for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) x.data[i * p + j] = cols[j][i];
  const a = gramOfColumns(x);
  for (let j = 0; j < p; j++) a.data[j * p + j] += lambda;
  const l = p > 0 ? cholesky(a) : null;
  let press = 0;
  let sst = 0;
  // The model has an unpenalised intercept; with centred predictors its hat matrix is
  // 11ᵀ/n + X(XᵀX + λI)⁻¹Xᵀ and its in-sample fit of the z-scored y is Xβ (the mean is 0). With no
  // usable predictor this is the mean of the other n − 1 values: residual yᵢ·n/(n − 1).
  const xty = new Float64Array(p);
  for (let j = 0; j < p; j++) for (let i = 0; i < n; i++) xty[j] += x.data[i * p + j] * zy[i];
  const beta = l ? choleskySolve(l, xty) : new Float64Array(0);
  for (let i = 0; i < n; i++) {
    let fit = 0;
    let h = 1 / n;
    if (l) {
      const xi = x.data.subarray(i * p, i * p + p);
      const s = choleskySolve(l, xi);
      for (let j = 0; j < p; j++) {
        fit += xi[j] * beta[j];
        h += xi[j] * s[j];
      }
    }
    const e = (zy[i] - fit) / (1 - h);
    press += e * e;
    sst += zy[i] * zy[i];
  }
  return { available: true, r2: 1 - press / sst, n, predictors: p, lambda };
}
