import { describe, expect, it } from 'vitest';
import { averageRanks, spearman, spearmanCI, type SpearmanResult } from '../../src/domain/stats/spearman';
import type { BootstrapCI } from '../../src/domain/stats/bootstrap';
import { StatsError, type Unavailable } from '../../src/domain/stats/result';

function rho(r: SpearmanResult | Unavailable): number {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r.rho;
}
function ok(r: BootstrapCI | Unavailable): BootstrapCI {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r;
}

// Wikipedia, "Spearman's rank correlation coefficient", example: IQ vs hours of TV per week.
const IQ = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110];
const TV = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17];

describe('average ranks', () => {
  it('ties share the mean of their positions (scipy.stats.rankdata "average")', () => {
    expect(Array.from(averageRanks([1, 2, 2, 3, 3, 3, 4, 5, 5, 6]))).toEqual([1, 2.5, 2.5, 5, 5, 5, 7, 8.5, 8.5, 10]);
    expect(Array.from(averageRanks([2, 1, 3, 3, 5, 4, 4, 6, 6, 5]))).toEqual([
      2, 1, 3.5, 3.5, 7.5, 5.5, 5.5, 9.5, 9.5, 7.5,
    ]);
    expect(Array.from(averageRanks([30, 10, 20]))).toEqual([3, 1, 2]);
    expect(() => averageRanks([1, NaN])).toThrow(StatsError);
  });
});

describe('Spearman ρ', () => {
  it('Wikipedia IQ vs TV example: ρ = −29/165 = −0.175757…', () => {
    // No ties: Σd² = 194, ρ = 1 − 6·194 / (10·99) = −29/165.
    expect(rho(spearman(IQ, TV))).toBeCloseTo(-29 / 165, 14);
    expect(rho(spearman(IQ, TV))).toBeCloseTo(-0.17575757575757575, 14); // scipy.stats.spearmanr
  });

  it('tie case by hand: x = [1,2,3,4], y = [1,3,3,5] → ρ = 3/√10', () => {
    // Ranks x: 1,2,3,4; y: 1, 2.5, 2.5, 4 (the two 3s share positions 2 and 3). Both means 2.5.
    // dx = −1.5, −0.5, 0.5, 1.5;  dy = −1.5, 0, 0, 1.5.
    // Σdx·dy = 2.25 + 0 + 0 + 2.25 = 4.5;  Σdx² = 5;  Σdy² = 4.5.
    // ρ = 4.5 / √(5·4.5) = 4.5/√22.5 = 3/√10 = 0.948683…  (the no-ties shortcut 1 − 6Σd²/(n(n²−1))
    // would give 1 − 6·0.5/60 = 0.95, which is wrong with ties).
    expect(rho(spearman([1, 2, 3, 4], [1, 3, 3, 5]))).toBeCloseTo(3 / Math.sqrt(10), 14);
  });

  it('second tie case by hand (ties in both variables, negative): ρ = −4.25/√85.5', () => {
    // x = [10,20,20,30,40] → ranks 1, 2.5, 2.5, 4, 5;  y = [5,5,1,2,2] → ranks 4.5, 4.5, 1, 2.5, 2.5.
    // Means 3, 3. dx = −2, −0.5, −0.5, 1, 2;  dy = 1.5, 1.5, −2, −0.5, −0.5.
    // Σdx·dy = −3 − 0.75 + 1 − 0.5 − 1 = −4.25;  Σdx² = 9.5;  Σdy² = 9.  ρ = −4.25/√85.5.
    expect(rho(spearman([10, 20, 20, 30, 40], [5, 5, 1, 2, 2]))).toBeCloseTo(-4.25 / Math.sqrt(85.5), 14);
    expect(rho(spearman([10, 20, 20, 30, 40], [5, 5, 1, 2, 2]))).toBeCloseTo(-0.4596273598704939, 14); // scipy
  });

  it('heavily tied data agrees with scipy.stats.spearmanr', () => {
    expect(rho(spearman([1, 2, 2, 3, 3, 3, 4, 5, 5, 6], [2, 1, 3, 3, 5, 4, 4, 6, 6, 5]))).toBeCloseTo(
      0.8531416630858343,
      14,
    );
  });

  it('monotone transforms: ρ = ±1, invariant to monotone rescaling', () => {
    const x = [0.1, 0.5, 0.2, 3, 2.2];
    expect(
      rho(
        spearman(
          x,
          x.map((v) => Math.exp(v)),
        ),
      ),
    ).toBe(1);
    expect(
      rho(
        spearman(
          x,
          x.map((v) => -(v ** 3)),
        ),
      ),
    ).toBe(-1);
    expect(rho(spearman(IQ, TV))).toBe(
      rho(
        spearman(
          IQ.map((v) => v * 1000 - 7),
          TV.map(Math.log),
        ),
      ),
    );
  });

  it('undefined cases are unavailable, never NaN: all-equal x or y, n < 2, empty', () => {
    expect(spearman([1, 2, 3], [4, 4, 4])).toMatchObject({ available: false, code: 'zero-variance' });
    expect(spearman([5, 5, 5], [1, 2, 3])).toMatchObject({ available: false, code: 'zero-variance' });
    expect(spearman([1], [2])).toMatchObject({ available: false, code: 'too-few' });
    expect(spearman([], [])).toMatchObject({ available: false, code: 'empty' });
    expect(rho(spearman([1, 2], [3, 1]))).toBe(-1);
  });

  it('NaN input and length mismatch throw', () => {
    expect(() => spearman([1, NaN, 3], [1, 2, 3])).toThrow(StatsError);
    expect(() => spearman([1, 2, 3], [1, 2])).toThrow(/x has 3 values, y has 2/);
  });
});

describe('Spearman ρ bootstrap CI', () => {
  // Expected values from a separate Python implementation: the same xoshiro128** stream, pairs
  // (or clusters) drawn as resampling.ts documents, ρ by scipy.stats.spearmanr, degenerate
  // replicates (constant x or y) skipped, numpy.percentile of the rest.
  it('over pairs: IQ vs TV, B = 2000, seed 2024', () => {
    const r = ok(spearmanCI(IQ, TV, { seed: 2024, B: 2000 }));
    expect(r.estimate).toBeCloseTo(-29 / 165, 14);
    expect(r.lo).toBeCloseTo(-0.7922743922743923, 12);
    expect(r.hi).toBeCloseTo(0.6104524507750311, 12);
    expect(r).toMatchObject({
      level: 0.95,
      B: 2000,
      seed: 2024,
      method: 'bootstrap-percentile',
      resampled: 'pairs',
      n: 10,
      clusters: 10,
      degenerateReplicates: 0,
    });
  });

  it('over clusters of pairs (clusterKeys), level 0.9, B = 2000, seed 31', () => {
    const x = [1, 2, 2, 3, 3, 3, 4, 5, 5, 6];
    const y = [2, 1, 3, 3, 5, 4, 4, 6, 6, 5];
    const keys = ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'd', 'e', 'e'];
    const r = ok(spearmanCI(x, y, { seed: 31, B: 2000, level: 0.9, clusterKeys: keys }));
    expect(r.estimate).toBeCloseTo(0.8531416630858343, 14);
    expect(r.lo).toBeCloseTo(0.5, 12);
    expect(r.hi).toBeCloseTo(0.8962264150943396, 12);
    expect(r).toMatchObject({ resampled: 'clusters', clusters: 5, n: 10, degenerateReplicates: 3 });
  });

  it('degenerate replicates (constant ranking) are left out and counted', () => {
    // 3 pairs: a replicate drawing the same pair 3 times (probability 3/27) has no ranking.
    const r = ok(spearmanCI([1, 2, 3], [1, 2, 3], { seed: 4, B: 500 }));
    expect(r).toMatchObject({ estimate: 1, lo: 1, hi: 1, degenerateReplicates: 45 });
  });

  it('reproducible with the same seed, different with another', () => {
    const a = ok(spearmanCI(IQ, TV, { seed: 8 }));
    expect(ok(spearmanCI(IQ, TV, { seed: 8 }))).toEqual(a);
    expect(a.B).toBe(10_000);
    const b = ok(spearmanCI(IQ, TV, { seed: 9 }));
    expect([b.lo, b.hi]).not.toEqual([a.lo, a.hi]);
  });

  it('unavailable when ρ itself is undefined or there is one cluster; bad keys throw', () => {
    expect(spearmanCI([1, 2, 3], [4, 4, 4], { seed: 1 })).toMatchObject({ available: false, code: 'zero-variance' });
    expect(spearmanCI([1, 2, 3], [1, 3, 2], { seed: 1, clusterKeys: ['k', 'k', 'k'] })).toMatchObject({
      available: false,
      code: 'too-few',
    });
    expect(() => spearmanCI([1, 2, 3], [1, 3, 2], { seed: 1, clusterKeys: ['k'] })).toThrow(StatsError);
  });
});
