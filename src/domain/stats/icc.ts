// Intraclass correlation from the two-way ANOVA of an n × k table (n targets in rows, k raters /
// conditions in columns, complete: no missing cells). Primary: ICC(A,1), two-way random effects,
// absolute agreement, single measure (McGraw & Wong 1996, "ICC(A,1)", case 2A) — identical to
// Shrout & Fleiss (1979) ICC(2,1). ICC(1,1) and ICC(C,1) = ICC(3,1) come from the same mean
// squares and are returned as cross-checks.
//
// Mean squares (x̄ grand mean, x̄_i. row means, x̄_.j column means):
//   MSR (S&F BMS) = k Σ_i (x̄_i. − x̄)² / (n − 1)                    rows (targets)
//   MSC (S&F JMS) = n Σ_j (x̄_.j − x̄)² / (k − 1)                    columns (raters)
//   MSE (S&F EMS) = Σ_ij (x_ij − x̄_i. − x̄_.j + x̄)² / ((n−1)(k−1))  residual
//   MSW (S&F WMS) = Σ_ij (x_ij − x̄_i.)² / (n (k − 1))               within rows
// Estimates:
//   ICC(A,1) = (MSR − MSE) / (MSR + (k−1) MSE + k (MSC − MSE) / n)
//   ICC(C,1) = (MSR − MSE) / (MSR + (k−1) MSE)
//   ICC(1,1) = (MSR − MSW) / (MSR + (k−1) MSW)
// F tests of H0: ρ = 0 (one-sided, upper tail; McGraw & Wong Table 8 with ρ0 = 0):
//   ICC(A,1), ICC(C,1): F = MSR / MSE,  df (n − 1, (n − 1)(k − 1));  ICC(1,1): F = MSR / MSW, df (n − 1, n(k − 1)).
// Confidence intervals at level 1 − α (McGraw & Wong 1996 Table 7 with the 1999 erratum; the same
// as Shrout & Fleiss 1979 eqs. for ICC(2,1)), F_q(d1, d2) the q-quantile of F:
//   ICC(A,1): with ρ̂ = ICC(A,1),
//     a = kρ̂ / (n(1 − ρ̂)),  b = 1 + kρ̂(n − 1) / (n(1 − ρ̂)),
//     v = (a MSC + b MSE)² / ((a MSC)² / (k − 1) + (b MSE)² / ((n − 1)(k − 1)))   (Satterthwaite df)
//     F* = F_{1−α/2}(n − 1, v),  F_* = F_{1−α/2}(v, n − 1)
//     lower = n (MSR − F* MSE) / (F* (k MSC + (kn − k − n) MSE) + n MSR)
//     upper = n (F_* MSR − MSE) / (k MSC + (kn − k − n) MSE + n F_* MSR)
//   ICC(C,1): F_L = (MSR/MSE) / F_{1−α/2}(n−1, (n−1)(k−1)),  F_U = (MSR/MSE) · F_{1−α/2}((n−1)(k−1), n−1),
//             interval ((F_L − 1)/(F_L + k − 1), (F_U − 1)/(F_U + k − 1))
//   ICC(1,1): the same with MSW and df n(k − 1).
// The F quantiles come from fDistribution.ts (regularized incomplete beta).
// Unavailable: fewer than 2 rows or 2 columns ('too-few'); all cells equal ('zero-variance'); one
// estimate alone when its denominator is zero (e.g. ICC(C,1) when MSR = MSE = 0).
// The CI alone is `null` (with a reason) when its formula breaks down: MSE = 0 (perfect
// agreement, F infinite) or ρ̂ = 1, or a non-finite Satterthwaite v.

import { compensatedSum } from './descriptive';
import { fQuantile, fSurvival } from './fDistribution';
import {
  assertAllFinite,
  assertLevel,
  DEFAULT_CONFIDENCE_LEVEL,
  StatsError,
  unavailable,
  type Unavailable,
} from './result';

export interface IccMeanSquares {
  /** Rows (targets): S&F BMS, McGraw & Wong MSR. */
  readonly msr: number;
  /** Columns (raters): S&F JMS, McGraw & Wong MSC. */
  readonly msc: number;
  /** Residual: S&F EMS, McGraw & Wong MSE. */
  readonly mse: number;
  /** Within rows: S&F WMS, McGraw & Wong MSW. */
  readonly msw: number;
}

export interface IccEstimate {
  readonly available: true;
  readonly estimate: number;
  /**
   * F statistic of H0: ρ = 0 with its degrees of freedom and upper-tail p-value. F is null when
   * its denominator mean square is zero (F infinite; then p = 0).
   */
  readonly F: number | null;
  readonly df1: number;
  readonly df2: number;
  readonly p: number;
  /** Confidence interval at `level`, or null with `ciUnavailableReason`. */
  readonly lo: number | null;
  readonly hi: number | null;
  readonly ciUnavailableReason?: string;
}

export interface IccResult {
  readonly available: true;
  /** Rows (targets). */
  readonly n: number;
  /** Columns (raters / conditions). */
  readonly k: number;
  readonly level: number;
  readonly meanSquares: IccMeanSquares;
  /** ICC(A,1) = Shrout & Fleiss ICC(2,1): two-way random, absolute agreement, single measure. */
  readonly iccA1: (IccEstimate & { readonly satterthwaiteDf: number | null }) | Unavailable;
  /** ICC(C,1) = Shrout & Fleiss ICC(3,1): two-way, consistency, single measure. */
  readonly iccC1: IccEstimate | Unavailable;
  /** ICC(1,1): one-way random, single measure. */
  readonly icc11: IccEstimate | Unavailable;
}

export interface IccOptions {
  /** Confidence level in (0, 1), default 0.95. */
  level?: number;
}

/** Two-way ANOVA mean squares of a complete n × k table (rows = targets). Caller validates. */
export function anovaMeanSquares(rows: readonly ArrayLike<number>[]): IccMeanSquares {
  const n = rows.length;
  const k = rows[0].length;
  const all = new Float64Array(n * k);
  rows.forEach((r, i) => {
    for (let j = 0; j < k; j++) all[i * k + j] = r[j];
  });
  const grand = compensatedSum(all) / (n * k);
  const rowMean = rows.map((r) => compensatedSum(r) / k);
  const colMean = Array.from({ length: k }, (_, j) => compensatedSum(rows.map((r) => r[j])) / n);
  const ssr = k * compensatedSum(rowMean.map((m) => (m - grand) ** 2));
  const ssc = n * compensatedSum(colMean.map((m) => (m - grand) ** 2));
  const resid = new Float64Array(n * k);
  const within = new Float64Array(n * k);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < k; j++) {
      const x = rows[i][j];
      resid[i * k + j] = (x - rowMean[i] - colMean[j] + grand) ** 2;
      within[i * k + j] = (x - rowMean[i]) ** 2;
    }
  }
  const sse = compensatedSum(resid);
  const ssw = compensatedSum(within);
  return {
    msr: ssr / (n - 1),
    msc: ssc / (k - 1),
    mse: sse / ((n - 1) * (k - 1)),
    msw: ssw / (n * (k - 1)),
  };
}

/** CI of a ratio-based ICC (ICC(C,1) or ICC(1,1)): F0 = MSR / MS_denominator with df (df1, df2). */
function ratioEstimate(
  msr: number,
  msDen: number,
  estimate: number,
  df1: number,
  df2: number,
  k: number,
  alpha: number,
): IccEstimate {
  if (msDen === 0) {
    return {
      available: true,
      estimate,
      F: null,
      df1,
      df2,
      p: 0,
      lo: null,
      hi: null,
      ciUnavailableReason: 'zero error mean square (F infinite): no interval',
    };
  }
  const F0 = msr / msDen;
  const fl = F0 / fQuantile(1 - alpha / 2, df1, df2);
  const fu = F0 * fQuantile(1 - alpha / 2, df2, df1);
  return {
    available: true,
    estimate,
    F: F0,
    df1,
    df2,
    p: fSurvival(F0, df1, df2),
    lo: (fl - 1) / (fl + k - 1),
    hi: (fu - 1) / (fu + k - 1),
  };
}

/** ICC(A,1) with its F test and McGraw & Wong interval (formulas in the file header). */
function iccA1Estimate(
  ms: IccMeanSquares,
  n: number,
  k: number,
  alpha: number,
): (IccEstimate & { satterthwaiteDf: number | null }) | Unavailable {
  const { msr, msc, mse } = ms;
  const den = msr + (k - 1) * mse + (k * (msc - mse)) / n;
  if (!(den > 0))
    return unavailable('degenerate', 'ICC(A,1) is undefined: its denominator MSR + (k−1)MSE + k(MSC−MSE)/n is zero');
  if (msr === 0 && mse === 0)
    return unavailable(
      'zero-variance',
      'ICC(A,1) is undefined: no between-target and no residual variation (targets differ in nothing)',
    );
  const rho = (msr - mse) / den;
  const df1 = n - 1;
  const df2 = (n - 1) * (k - 1);
  if (mse === 0) {
    return {
      available: true,
      estimate: rho,
      F: null,
      df1,
      df2,
      p: 0,
      lo: null,
      hi: null,
      satterthwaiteDf: null,
      ciUnavailableReason: 'zero residual mean square (F infinite): the McGraw & Wong interval is undefined',
    };
  }
  const F = msr / mse;
  const p = fSurvival(F, df1, df2);
  const a = (k * rho) / (n * (1 - rho));
  const b = 1 + (k * rho * (n - 1)) / (n * (1 - rho));
  const v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / df2);
  if (!(Number.isFinite(v) && v > 0)) {
    return {
      available: true,
      estimate: rho,
      F,
      df1,
      df2,
      p,
      lo: null,
      hi: null,
      satterthwaiteDf: null,
      ciUnavailableReason: `Satterthwaite degrees of freedom v = ${v} is not a positive finite number`,
    };
  }
  const fStar = fQuantile(1 - alpha / 2, n - 1, v);
  const fStarU = fQuantile(1 - alpha / 2, v, n - 1);
  const c = k * msc + (k * n - k - n) * mse;
  const lo = (n * (msr - fStar * mse)) / (fStar * c + n * msr);
  const hi = (n * (fStarU * msr - mse)) / (c + n * fStarU * msr);
  return { available: true, estimate: rho, F, df1, df2, p, lo, hi, satterthwaiteDf: v };
}

/**
 * ICC(A,1) (and ICC(C,1), ICC(1,1)) of an n × k table: rows = targets (e.g. WBC–motion pairs),
 * columns = raters / conditions (e.g. repeated sessions). See the file header for formulas.
 */
export function icc(table: readonly ArrayLike<number>[], options: IccOptions = {}): IccResult | Unavailable {
  const level = options.level ?? DEFAULT_CONFIDENCE_LEVEL;
  assertLevel(level);
  const n = table.length;
  if (n === 0) return unavailable('empty', 'ICC: no rows (targets)');
  const k = table[0].length;
  table.forEach((r, i) => {
    if (r.length !== k)
      throw new StatsError(
        'ragged',
        `ICC: row ${i} has ${r.length} columns, row 0 has ${k}: the table must be complete`,
      );
    assertAllFinite(r, `table[${i}]`);
  });
  if (n < 2) return unavailable('too-few', 'ICC needs at least 2 targets (rows)');
  if (k < 2) return unavailable('too-few', 'ICC needs at least 2 raters (columns)');
  const first = table[0][0];
  if (table.every((r) => Array.prototype.every.call(r, (v: number) => v === first))) {
    return unavailable('zero-variance', 'ICC is undefined: every cell has the same value');
  }
  const ms = anovaMeanSquares(table);
  const { msr, mse, msw } = ms;
  const alpha = 1 - level;
  const denC = msr + (k - 1) * mse;
  const den1 = msr + (k - 1) * msw;
  return {
    available: true,
    n,
    k,
    level,
    meanSquares: ms,
    iccA1: iccA1Estimate(ms, n, k, alpha),
    iccC1:
      denC > 0
        ? ratioEstimate(msr, mse, (msr - mse) / denC, n - 1, (n - 1) * (k - 1), k, alpha)
        : unavailable('zero-variance', 'ICC(C,1) is undefined: no between-target and no residual variation'),
    icc11:
      den1 > 0
        ? ratioEstimate(msr, msw, (msr - msw) / den1, n - 1, n * (k - 1), k, alpha)
        : unavailable('zero-variance', 'ICC(1,1) is undefined: no between-target and no within-target variation'),
  };
}
