import { describe, expect, it } from 'vitest';
import {
  hodgesLehmann,
  hodgesLehmannPaired,
  pairedDifferences,
  pairedMedianDifferenceCI,
  walshAverages,
  type HodgesLehmannResult,
} from '../../src/domain/stats/paired';
import { signedRankCdf, signedRankLowerQuantile } from '../../src/domain/stats/signedRank';
import type { BootstrapCI } from '../../src/domain/stats/bootstrap';
import { StatsError, type Unavailable } from '../../src/domain/stats/result';

function ok<T extends HodgesLehmannResult | BootstrapCI>(r: T | Unavailable): T {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r;
}

// Hollander & Wolfe (1973, p. 29f; 1999 2nd ed. Example 3.1): Hamilton depression scale factor,
// 9 patients, first (x) and second (y) visit. Also the example of R's wilcox.test.
const HW_X = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
const HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];

/** T+ of d − μ computed directly: rank |d_i − μ| (no ties assumed) and sum the ranks of the positive ones. */
function tPlus(d: number[], mu: number): number {
  const z = d.map((v) => v - mu);
  const order = z.map((_, i) => i).sort((a, b) => Math.abs(z[a]) - Math.abs(z[b]));
  let t = 0;
  order.forEach((i, r) => {
    if (z[i] > 0) t += r + 1;
  });
  return t;
}

describe('exact signed-rank null distribution', () => {
  it('equals brute-force enumeration of all 2^n sign patterns for n = 1..12', () => {
    for (let n = 1; n <= 12; n++) {
      const M = (n * (n + 1)) / 2;
      const counts = new Array(M + 1).fill(0);
      for (let mask = 0; mask < 1 << n; mask++) {
        let t = 0;
        for (let r = 1; r <= n; r++) if (mask & (1 << (r - 1))) t += r;
        counts[t]++;
      }
      const cdf = signedRankCdf(n);
      let acc = 0;
      for (let t = 0; t <= M; t++) {
        acc += counts[t];
        expect(cdf[t]).toBe(acc / 2 ** n); // exact: dyadic rationals
      }
    }
  });

  it('reproduces the published two-sided 5% critical values (reject if T ≤ T_crit)', () => {
    // Standard table of the Wilcoxon signed-rank test, two-sided α = 0.05:
    // n = 6 → 0, 7 → 2, 8 → 3, 9 → 5, 10 → 8, 15 → 25, 20 → 52, 25 → 89, 30 → 137.
    const table: [number, number][] = [
      [6, 0],
      [7, 2],
      [8, 3],
      [9, 5],
      [10, 8],
      [15, 25],
      [20, 52],
      [25, 89],
      [30, 137],
    ];
    for (const [n, tCrit] of table) {
      const cdf = signedRankCdf(n);
      expect(cdf[tCrit]).toBeLessThanOrEqual(0.025);
      expect(cdf[tCrit + 1]).toBeGreaterThan(0.025);
      expect(signedRankLowerQuantile(cdf, 0.025)).toBe(tCrit + 1);
    }
    // n = 10: P(T+ ≤ 8) = 25/1024, P(T+ ≤ 9) = 33/1024.
    expect(signedRankCdf(10)[8]).toBe(25 / 1024);
    expect(signedRankCdf(10)[9]).toBe(33 / 1024);
  });

  it('is symmetric and sums to 1 for large n', () => {
    const n = 200;
    const cdf = signedRankCdf(n);
    const M = (n * (n + 1)) / 2;
    expect(cdf[M]).toBeCloseTo(1, 12);
    for (const t of [0, 500, 5000, 9000]) expect(cdf[t]).toBeCloseTo(1 - cdf[M - t - 1], 12);
  });
});

describe('Hodges–Lehmann estimate with the Walsh-average CI', () => {
  it('Hollander & Wolfe Example 3.1: estimate −0.46, 95% CI (−0.786, −0.010) (as R wilcox.test(y, x, paired, conf.int))', () => {
    // Published values (Hollander & Wolfe 1999, pp. 40 and 53; R's regression test PR#1150).
    const r = ok(hodgesLehmannPaired(HW_Y, HW_X));
    expect(r.estimate).toBeCloseTo(-0.46, 3);
    expect(r.lo).toBeCloseTo(-0.786, 3);
    expect(r.hi).toBeCloseTo(-0.01, 3);
    // n = 9, M = 45: P(T+ ≤ 5) = 10/512 ≤ 0.025 < P(T+ ≤ 6) = 14/512, so q = 6: [W_(6), W_(40)],
    // achieved level 1 − 2·10/512 = 0.9609375.
    expect(r).toMatchObject({
      n: 9,
      walshCount: 45,
      lowerRank: 6,
      upperRank: 40,
      level: 0.95,
      levelAchieved: true,
      method: 'hodges-lehmann-walsh-exact',
    });
    expect(r.achievedLevel).toBeCloseTo(1 - 20 / 512, 15);
    // Swapping x and y mirrors everything.
    const s = ok(hodgesLehmannPaired(HW_X, HW_Y));
    expect(s.estimate).toBeCloseTo(0.46, 12);
    expect(s.lo).toBeCloseTo(0.01, 12);
    expect(s.hi).toBeCloseTo(0.786, 12);
  });

  it('small example by hand: d = [1, 2, 3, 10]', () => {
    // Walsh averages (i ≤ j): 1, 1.5, 2, 5.5, 2, 2.5, 6, 3, 6.5, 10 → sorted
    // 1, 1.5, 2, 2, 2.5, 3, 5.5, 6, 6.5, 10; median of 10 values = (2.5 + 3)/2 = 2.75.
    // n = 4: P(T+ ≤ 0) = 1/16 > 0.025, so q = 0 → 1: CI = [min, max] = [1, 10], achieved 1 − 2/16 = 0.875.
    expect(Array.from(walshAverages([1, 2, 3, 10]))).toEqual([1, 1.5, 2, 2, 2.5, 3, 5.5, 6, 6.5, 10]);
    const r = ok(hodgesLehmann([1, 2, 3, 10]));
    expect(r).toMatchObject({
      estimate: 2.75,
      lo: 1,
      hi: 10,
      lowerRank: 1,
      upperRank: 10,
      achievedLevel: 0.875,
      levelAchieved: false,
    });
    // Level 0.8: q = smallest t with P(T+ ≤ t) ≥ 0.1 = 1 (P(T+ ≤ 0) = 1/16 < 0.1 ≤ P(T+ ≤ 1) = 2/16):
    // still [W_1, W_10], now achieving 0.875 ≥ 0.8.
    expect(ok(hodgesLehmann([1, 2, 3, 10], { level: 0.8 }))).toMatchObject({
      lo: 1,
      hi: 10,
      lowerRank: 1,
      achievedLevel: 0.875,
      levelAchieved: true,
    });
    // Level 0.7: P(T+ ≤ 1) = 2/16 < 0.15 ≤ P(T+ ≤ 2) = 3/16 → q = 2: [W_2, W_9] = [1.5, 6.5],
    // achieved 1 − 2·2/16 = 0.75.
    const r70 = ok(hodgesLehmann([1, 2, 3, 10], { level: 0.7 }));
    expect(r70).toMatchObject({
      lo: 1.5,
      hi: 6.5,
      lowerRank: 2,
      upperRank: 9,
      achievedLevel: 0.75,
      levelAchieved: true,
    });
  });

  it('the interval is exactly the set of shifts the exact signed-rank test does not reject (test inversion)', () => {
    // 12 untied differences; for a grid of shifts μ (avoiding Walsh averages), the μ inside (lo, hi)
    // are those with q ≤ T+(d − μ) ≤ M − q, T+ computed by ranking |d − μ| directly.
    const d = [0.31, -1.2, 2.05, 0.77, 1.41, -0.36, 0.92, 3.3, 0.05, 1.88, -0.71, 1.12];
    const r = ok(hodgesLehmann(d));
    const M = 78;
    const q = r.lowerRank;
    expect(r.upperRank).toBe(M + 1 - q);
    const w = walshAverages(d);
    for (let mu = -1.5; mu <= 3.5; mu += 0.00731) {
      if (w.some((v) => Math.abs(v - mu) < 1e-9)) continue;
      const t = tPlus(d, mu);
      const accepted = t >= q && t <= M - q;
      expect(accepted).toBe(mu > r.lo && mu < r.hi);
    }
    // And the estimate is the median of the Walsh averages.
    expect(r.estimate).toBe((w[38] + w[39]) / 2);
  });

  it('edge cases: n < 2 and empty unavailable; NaN throws; all-zero differences give [0, 0]', () => {
    expect(hodgesLehmann([])).toMatchObject({ available: false, code: 'empty' });
    expect(hodgesLehmann([1.5])).toMatchObject({ available: false, code: 'too-few' });
    expect(() => hodgesLehmann([1, NaN, 2])).toThrow(StatsError);
    expect(() => hodgesLehmannPaired([1, 2], [1])).toThrow(StatsError);
    expect(ok(hodgesLehmann(new Array(20).fill(0)))).toMatchObject({ estimate: 0, lo: 0, hi: 0 });
    expect(() => hodgesLehmann([1, 2], { level: 0 })).toThrow(StatsError);
  });
});

describe('paired median difference with bootstrap CI', () => {
  it('d = x − y; median(d) with a pairs bootstrap, matching an independent implementation', () => {
    // Expected values: separate Python implementation (same stream; numpy.median, numpy.percentile), B = 2000, seed 17.
    expect(Array.from(pairedDifferences([3, 5], [1, 7]))).toEqual([2, -2]);
    const r = ok(pairedMedianDifferenceCI(HW_X, HW_Y, { seed: 17, B: 2000 }));
    expect(r.estimate).toBeCloseTo(0.49, 14);
    expect(r.lo).toBeCloseTo(-0.08000000000000007, 14);
    expect(r.hi).toBeCloseTo(0.9520000000000001, 14);
    expect(r).toMatchObject({
      B: 2000,
      seed: 17,
      level: 0.95,
      resampled: 'pairs',
      n: 9,
      clusters: 9,
      method: 'bootstrap-percentile',
    });
    expect(r.statistic).toMatch(/median of paired differences/);
  });

  it('clusters of pairs (clusterKeys) are resampled whole', () => {
    const keys = ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'd', 'e'];
    const r = ok(pairedMedianDifferenceCI(HW_X, HW_Y, { seed: 17, B: 2000, clusterKeys: keys }));
    expect(r.estimate).toBeCloseTo(0.49, 14);
    expect(r.lo).toBeCloseTo(0.010000000000000009, 14);
    expect(r.hi).toBeCloseTo(0.6049999999999999, 14);
    expect(r).toMatchObject({ resampled: 'clusters', clusters: 5, n: 9 });
  });

  it('reproducible; unavailable for < 2 pairs; NaN and mismatched lengths throw', () => {
    const a = ok(pairedMedianDifferenceCI(HW_X, HW_Y, { seed: 3 }));
    expect(ok(pairedMedianDifferenceCI(HW_X, HW_Y, { seed: 3 }))).toEqual(a);
    expect(a.B).toBe(10_000);
    expect(pairedMedianDifferenceCI([1], [2], { seed: 1 })).toMatchObject({ available: false, code: 'too-few' });
    expect(pairedMedianDifferenceCI([], [], { seed: 1 })).toMatchObject({ available: false, code: 'empty' });
    expect(() => pairedMedianDifferenceCI([1, NaN], [1, 2], { seed: 1 })).toThrow(StatsError);
    expect(() => pairedMedianDifferenceCI([1, 2], [1], { seed: 1 })).toThrow(StatsError);
    expect(() => pairedMedianDifferenceCI([1, 2], [1, 2], { seed: 1, clusterKeys: ['a'] })).toThrow(StatsError);
  });
});
