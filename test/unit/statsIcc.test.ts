import { describe, expect, it } from 'vitest';
import { icc, type IccEstimate, type IccResult } from '../../src/domain/stats/icc';
import { StatsError, type Unavailable } from '../../src/domain/stats/result';

function ok(r: IccResult | Unavailable): IccResult {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r;
}
function est<T extends IccEstimate>(r: T | Unavailable): T {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r;
}

// Shrout & Fleiss (1979), Table 2: 6 targets (rows) × 4 judges (columns).
const SF = [
  [9, 2, 5, 8],
  [6, 1, 3, 2],
  [8, 4, 6, 8],
  [7, 1, 2, 6],
  [10, 5, 6, 9],
  [6, 2, 4, 7],
];

// McGraw & Wong (1996), Table 6: 10 targets × 2 measurements.
const MW = [
  [103, 119],
  [82, 65],
  [116, 106],
  [102, 102],
  [99, 105],
  [98, 100],
  [104, 107],
  [62, 85],
  [97, 101],
  [107, 110],
];

describe('ICC — Shrout & Fleiss (1979) worked example', () => {
  const r = ok(icc(SF));

  it('mean squares: published BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02 (exact 1349/120, 451/72, 2339/72, 367/360)', () => {
    // Exact values by rational arithmetic (Python fractions) of the ANOVA formulas in icc.ts.
    expect(r.meanSquares.msr).toBeCloseTo(11.24, 2);
    expect(r.meanSquares.msw).toBeCloseTo(6.26, 2);
    expect(r.meanSquares.msc).toBeCloseTo(32.49, 2);
    expect(r.meanSquares.mse).toBeCloseTo(1.02, 2);
    expect(r.meanSquares.msr).toBeCloseTo(1349 / 120, 13);
    expect(r.meanSquares.msw).toBeCloseTo(451 / 72, 13);
    expect(r.meanSquares.msc).toBeCloseTo(2339 / 72, 13);
    expect(r.meanSquares.mse).toBeCloseTo(367 / 360, 13);
    expect([r.n, r.k, r.level]).toEqual([6, 4, 0.95]);
  });

  it('ICC(A,1) = ICC(2,1) = 0.29 (exact 184/635); ICC(1,1) = 0.17 (448/2703); ICC(3,1) = ICC(C,1) = 0.71 (920/1287)', () => {
    expect(est(r.iccA1).estimate).toBeCloseTo(0.29, 2);
    expect(est(r.icc11).estimate).toBeCloseTo(0.17, 2);
    expect(est(r.iccC1).estimate).toBeCloseTo(0.71, 2);
    expect(est(r.iccA1).estimate).toBeCloseTo(184 / 635, 14);
    expect(est(r.icc11).estimate).toBeCloseTo(448 / 2703, 14);
    expect(est(r.iccC1).estimate).toBeCloseTo(920 / 1287, 14);
  });

  it('F tests and 95% CIs match the published psych::ICC output for this table', () => {
    // psych::ICC(ratings) on the S&F data prints (2-3 decimals):
    //   ICC1 0.17  F 1.8  df 5 18  p 0.16477  CI −0.133 … 0.72
    //   ICC2 0.29  F 11.0 df 5 15  p 0.00013  CI  0.019 … 0.76
    //   ICC3 0.71  F 11.0 df 5 15  p 0.00013  CI  0.342 … 0.95
    const a = est(r.iccA1);
    expect([a.df1, a.df2]).toEqual([5, 15]);
    expect(a.F).toBeCloseTo(11.0, 1);
    expect(a.p).toBeCloseTo(0.00013, 5);
    expect(a.lo).toBeCloseTo(0.019, 3);
    expect(a.hi).toBeCloseTo(0.76, 2);
    const one = est(r.icc11);
    expect([one.df1, one.df2]).toEqual([5, 18]);
    expect(one.F).toBeCloseTo(1.8, 1);
    expect(one.p).toBeCloseTo(0.16477, 5);
    expect(one.lo).toBeCloseTo(-0.133, 3);
    expect(one.hi).toBeCloseTo(0.72, 2);
    const c = est(r.iccC1);
    expect(c.F).toBeCloseTo(11.0, 1);
    expect(c.lo).toBeCloseTo(0.342, 3);
    expect(c.hi).toBeCloseTo(0.95, 2);
  });

  it('F statistics and p-values to full precision (scipy.stats.f.sf of the exact F ratios)', () => {
    // F = MSR/MSE = (1349/120)/(367/360) = 4047/367; MSR/MSW = (1349/120)/(451/72) = 4047/2255.
    expect(est(r.iccA1).F).toBeCloseTo(4047 / 367, 12);
    expect(est(r.icc11).F).toBeCloseTo(4047 / 2255, 12);
    expect(Math.abs(est(r.iccA1).p - 0.00013456651648433688) / 0.00013456651648433688).toBeLessThan(1e-10);
  });

  it('ICC(A,1) interval: Satterthwaite df and the McGraw & Wong formulas recomputed by hand', () => {
    // v = (a·MSC + b·MSE)² / ((a·MSC)²/(k−1) + (b·MSE)²/((n−1)(k−1))), a = kρ/(n(1−ρ)), b = 1 + kρ(n−1)/(n(1−ρ)).
    const rho = 184 / 635;
    const [n, k, msc, mse] = [6, 4, 2339 / 72, 367 / 360];
    const a = (k * rho) / (n * (1 - rho));
    const b = 1 + (k * rho * (n - 1)) / (n * (1 - rho));
    const v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)));
    expect(est(r.iccA1).satterthwaiteDf).toBeCloseTo(v, 12);
    expect(v).toBeCloseTo(4.785, 3);
  });
});

describe('ICC — McGraw & Wong (1996) Table 6 example', () => {
  it('matches the published R (psych/DescTools) output', () => {
    // Intraclass correlation coefficients (R):
    //   ICC1 0.722 F 6.18 df 9 10 p 0.00437 CI 0.241 … 0.922
    //   ICC2 0.720 F 6.00 df 9  9 p 0.00677 CI 0.228 … 0.922
    //   ICC3 0.714 F 6.00 df 9  9 p 0.00677 CI 0.197 … 0.920
    const r = ok(icc(MW));
    const a = est(r.iccA1);
    expect(a.estimate).toBeCloseTo(7235 / 10043, 13); // exact, by rational arithmetic
    expect(a.estimate).toBeCloseTo(0.72, 3);
    expect(a.F).toBeCloseTo(6.0, 2);
    expect([a.df1, a.df2]).toEqual([9, 9]);
    expect(a.p).toBeCloseTo(0.00677, 5);
    expect(a.lo).toBeCloseTo(0.228, 3);
    expect(a.hi).toBeCloseTo(0.922, 3);
    const one = est(r.icc11);
    expect(one.estimate).toBeCloseTo(0.722, 3);
    expect(one.F).toBeCloseTo(6.18, 2);
    expect([one.df1, one.df2]).toEqual([9, 10]);
    expect(one.p).toBeCloseTo(0.00437, 5);
    expect(one.lo).toBeCloseTo(0.241, 3);
    expect(one.hi).toBeCloseTo(0.922, 3);
    const c = est(r.iccC1);
    expect(c.estimate).toBeCloseTo(0.714, 3);
    expect(c.lo).toBeCloseTo(0.197, 3);
    expect(c.hi).toBeCloseTo(0.92, 3);
  });
});

describe('ICC — properties and edge cases', () => {
  it('a constant offset per rater lowers ICC(A,1) but not ICC(C,1)', () => {
    const base = [1, 4, 2, 8, 5, 7, 3];
    const same = base.map((v, i) => [v, v + 0.1 * ((i % 3) - 1)]);
    const shifted = base.map((v, i) => [v, v + 0.1 * ((i % 3) - 1) + 3]);
    const r0 = ok(icc(same));
    const r1 = ok(icc(shifted));
    expect(est(r1.iccC1).estimate).toBeCloseTo(est(r0.iccC1).estimate, 12);
    expect(est(r1.iccA1).estimate).toBeLessThan(est(r0.iccA1).estimate - 0.1);
  });

  it('a narrower level gives a narrower interval', () => {
    const r90 = est(ok(icc(SF, { level: 0.9 })).iccA1);
    const r95 = est(ok(icc(SF)).iccA1);
    expect(r90.lo as number).toBeGreaterThan(r95.lo as number);
    expect(r90.hi as number).toBeLessThan(r95.hi as number);
  });

  it('perfect agreement: ICC = 1, F and the interval unavailable (not Infinity/NaN)', () => {
    const r = ok(
      icc([
        [1, 1],
        [2, 2],
        [5, 5],
      ]),
    );
    const a = est(r.iccA1);
    expect(a.estimate).toBe(1);
    expect(a.F).toBeNull();
    expect(a.p).toBe(0);
    expect(a.lo).toBeNull();
    expect(a.hi).toBeNull();
    expect(a.ciUnavailableReason).toMatch(/zero residual/);
    expect(JSON.stringify(r)).not.toMatch(/NaN|Infinity/);
  });

  it('unavailable results: all cells equal, fewer than 2 rows or columns, empty; degenerate denominators', () => {
    expect(
      icc([
        [3, 3],
        [3, 3],
      ]),
    ).toMatchObject({ available: false, code: 'zero-variance' });
    expect(icc([[1, 2, 3]])).toMatchObject({ available: false, code: 'too-few' });
    expect(icc([[1], [2]])).toMatchObject({ available: false, code: 'too-few' });
    expect(icc([])).toMatchObject({ available: false, code: 'empty' });
    // 2 × 2 with MSR = MSC = 0 but MSE > 0: the ICC(A,1) denominator is 0.
    const r = ok(
      icc([
        [0, 1],
        [1, 0],
      ]),
    );
    expect(r.iccA1).toMatchObject({ available: false, code: 'degenerate' });
    // Identical targets, raters offset by constants: MSR = MSE = 0 → ICC(A,1) and ICC(C,1) undefined.
    const r2 = ok(
      icc([
        [1, 4],
        [1, 4],
        [1, 4],
      ]),
    );
    expect(r2.iccA1).toMatchObject({ available: false, code: 'zero-variance' });
    expect(r2.iccC1).toMatchObject({ available: false, code: 'zero-variance' });
  });

  it('NaN, a ragged table and a bad level throw', () => {
    expect(() =>
      icc([
        [1, NaN],
        [2, 3],
      ]),
    ).toThrow(StatsError);
    expect(() => icc([[1, 2], [2]])).toThrow(/row 1 has 1 columns/);
    expect(() => icc(SF, { level: 1.2 })).toThrow(StatsError);
  });
});
