import { describe, expect, it } from 'vitest';
import {
  bootstrapCI,
  clusterBootstrapCI,
  clusterMeanCI,
  clusterMedianCI,
  percentileInterval,
  type BootstrapCI,
} from '../../src/domain/stats/bootstrap';
import { Xoshiro128StarStar } from '../../src/domain/stats/prng';
import { fCdf } from '../../src/domain/stats/fDistribution';
import { StatsError, type Unavailable } from '../../src/domain/stats/result';

function ok(r: BootstrapCI | Unavailable): BootstrapCI {
  if (!r.available) throw new Error(`unexpected unavailable: ${r.reason}`);
  return r;
}

/** Standard normal by Box–Muller from the seeded generator (test data only). */
function normal(g: Xoshiro128StarStar): number {
  const u1 = g.nextFloat();
  const u2 = g.nextFloat();
  return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
}

const CLUSTERS = [[1.0, 1.2, 0.9], [3.5, 3.1], [2.2, 2.0, 2.4, 2.1], [0.4], [5.0, 4.6, 4.9], [2.8, 3.0]];

describe('cluster bootstrap: agreement with an independent implementation', () => {
  // Expected values from a separate Python implementation (xoshiro128** + SplitMix64 seeding +
  // rejection sampling written from the C reference, statistics with numpy.mean/numpy.median,
  // interval with numpy.percentile(replicates, [100α, 100(1 − α)]), α = (1 − level)/2), B = 2000.
  // (The implementation takes the percentiles at (100 ∓ 100·level)/2, equal up to 1 ulp of p.)
  // Agreement to 1e-12: the two sum in different orders, nothing else differs.
  it.each([
    ['mean', 'pool', 12345, 0.95, [2.6066666666666665, 1.5499999999999998, 3.8428571428571425]],
    ['mean', 'mean', 12345, 0.95, [2.4402777777777778, 1.323611111111111, 3.6113888888888868]],
    ['median', 'pool', 12345, 0.95, [2.4, 1.1, 4.6]],
    ['median', 'mean', 12345, 0.95, [2.5374999999999996, 0.7166666666666668, 4.066666666666666]],
    ['mean', 'pool', 99, 0.9, [2.6066666666666665, 1.6333333333333335, 3.661538461538461]],
  ] as const)('%s, withinCluster=%s, seed %d, level %d', (statistic, within, seed, level, [estimate, lo, hi]) => {
    const r = ok(clusterBootstrapCI(CLUSTERS, statistic, { seed, B: 2000, level, withinCluster: within }));
    expect(r.estimate).toBeCloseTo(estimate, 12);
    expect(r.lo).toBeCloseTo(lo, 12);
    expect(r.hi).toBeCloseTo(hi, 12);
    expect(r).toMatchObject({
      level,
      B: 2000,
      seed,
      method: 'bootstrap-percentile',
      resampled: 'clusters',
      clusters: 6,
      n: 15,
      degenerateReplicates: 0,
    });
  });
});

describe('cluster bootstrap: reproducibility and options', () => {
  it('same seed → identical result; different seed → different interval; default B = 10,000, level 0.95', () => {
    const a = ok(clusterMeanCI(CLUSTERS, { seed: 5 }));
    const b = ok(clusterMeanCI(CLUSTERS, { seed: 5 }));
    const c = ok(clusterMeanCI(CLUSTERS, { seed: 6 }));
    expect(b).toEqual(a);
    expect(a.B).toBe(10_000);
    expect(a.level).toBe(0.95);
    expect(a.seed).toBe(5);
    expect(c.estimate).toBe(a.estimate);
    expect([c.lo, c.hi]).not.toEqual([a.lo, a.hi]);
    expect(a.lo).toBeLessThan(a.estimate);
    expect(a.hi).toBeGreaterThan(a.estimate);
  });

  it('a higher level gives a wider interval from the same replicates', () => {
    const r90 = ok(clusterMedianCI(CLUSTERS, { seed: 3, level: 0.9 }));
    const r99 = ok(clusterMedianCI(CLUSTERS, { seed: 3, level: 0.99 }));
    expect(r99.lo).toBeLessThanOrEqual(r90.lo);
    expect(r99.hi).toBeGreaterThanOrEqual(r90.hi);
  });

  it('percentileInterval: numpy-linear percentiles of the replicates, non-finite replicates left out', () => {
    const reps = Float64Array.from({ length: 101 }, (_, i) => 100 - i); // 0..100 shuffled order
    // h = 100·0.025 = 2.5 → 2.5; h = 100·0.975 = 97.5 → 97.5.
    expect(percentileInterval(reps, 0.95)).toMatchObject({ lo: 2.5, hi: 97.5, valid: 101, degenerate: 0 });
    const withNaN = Float64Array.of(NaN, 1, 2, 3, NaN);
    expect(percentileInterval(withNaN, 0.5)).toMatchObject({ lo: 1.5, hi: 2.5, valid: 3, degenerate: 2 });
    expect(percentileInterval(Float64Array.of(NaN), 0.95)).toBeNull();
  });
});

describe('cluster bootstrap resamples whole clusters', () => {
  it('two clusters {0,0,0,0} and {10}: replicates can only be 0, 2 or 10 → CI [0, 10]; per-value bootstrap gives [0, 6]', () => {
    // Cluster draws (c1,c1) → mean 0, (c1,c2)/(c2,c1) → 10/5 = 2, (c2,c2) → 10, with probabilities
    // 1/4, 1/2, 1/4: the 2.5th and 97.5th percentiles of 10,000 replicates are 0 and 10.
    // Per value (5 values, one is 10): mean = 10·K/5, K ~ Bin(5, 0.2); P(K ≤ 2) = 0.942,
    // P(K ≤ 3) = 0.993, so the 97.5th percentile is K = 3 → 6.
    const clustered = ok(clusterMeanCI([[0, 0, 0, 0], [10]], { seed: 1 }));
    expect(clustered).toMatchObject({ estimate: 2, lo: 0, hi: 10 });
    const naive = ok(bootstrapCI([0, 0, 0, 0, 10], 'mean', { seed: 1 }));
    expect(naive).toMatchObject({ estimate: 2, lo: 0, hi: 6, resampled: 'values', clusters: 5 });
    // Averaging within cluster first: cluster means 0 and 10 weigh the same → estimate 5, replicates {0, 5, 10}.
    expect(ok(clusterMeanCI([[0, 0, 0, 0], [10]], { seed: 1, withinCluster: 'mean' }))).toMatchObject({
      estimate: 5,
      lo: 0,
      hi: 10,
    });
  });

  it('strongly different clusters: the cluster CI is much wider than the naive per-value CI', () => {
    // 10 clusters of 20 episodes; cluster centres 0, 10, …, 90, small within-cluster noise.
    const g = new Xoshiro128StarStar(77);
    const clusters = Array.from({ length: 10 }, (_, c) => Array.from({ length: 20 }, () => 10 * c + 0.5 * normal(g)));
    for (const stat of ['mean', 'median'] as const) {
      const clustered = ok(clusterBootstrapCI(clusters, stat, { seed: 11 }));
      const naive = ok(bootstrapCI(clusters.flat(), stat, { seed: 11 }));
      expect(clustered.estimate).toBe(naive.estimate);
      // Between-cluster sd ≈ 30 with 10 clusters vs 200 "independent" values: ≈ √20 ≈ 4.5× wider.
      expect(clustered.hi - clustered.lo).toBeGreaterThan(3 * (naive.hi - naive.lo));
    }
  });
});

describe('coverage (seeded simulations, < 5 s)', () => {
  it('normal data with known mean: the 95% CI covers it in ≈ 95% of 1,000 repetitions', () => {
    // n = 100 values ~ N(10, 2²), B = 1,000, 1,000 repetitions. The percentile interval of the mean
    // is known to undercover slightly at small n: ≈ P(|t_{n−1}| ≤ 1.96·√((n−1)/n)) = 0.946 here
    // (numpy reproduces ≈ 0.941 with B = 1,000). Binomial SE over 1,000 repetitions ≈ 0.007, so the
    // accepted band is 0.95 ± 0.03 (≥ 3 SE around the expected value on both sides).
    const expected = fCdf(1.959963984540054 ** 2 * (99 / 100), 1, 99); // P(|t99| ≤ c) = P(t² ≤ c²), t² ~ F(1, 99)
    expect(expected).toBeCloseTo(0.9460121857930246, 10); // scipy: 2·t.cdf(c, 99) − 1
    const g = new Xoshiro128StarStar(20250101);
    const R = 1000;
    let covered = 0;
    for (let r = 0; r < R; r++) {
      const v = Array.from({ length: 100 }, () => 10 + 2 * normal(g));
      const ci = ok(bootstrapCI(v, 'mean', { seed: r, B: 1000 }));
      if (ci.lo <= 10 && 10 <= ci.hi) covered++;
    }
    const coverage = covered / R;
    expect(coverage).toBeGreaterThanOrEqual(0.92);
    expect(coverage).toBeLessThanOrEqual(0.98);
  });

  it('clustered data: the cluster bootstrap keeps coverage, the naive per-value bootstrap does not', () => {
    // 30 clusters × 5 episodes, cluster effect sd 2, episode noise sd 0.5 (intra-cluster correlation
    // 4/4.25 = 0.94, design effect 1 + 4·0.94 = 4.8). The naive interval is √4.8 ≈ 2.2× too narrow:
    // expected coverage P(|Z| ≤ 1.96/2.2) ≈ 0.63; the cluster bootstrap ≈ 0.93 (30 clusters).
    // 200 repetitions: SE ≈ 0.02–0.035.
    const g = new Xoshiro128StarStar(20250102);
    const R = 200;
    let clusterCovered = 0;
    let naiveCovered = 0;
    for (let r = 0; r < R; r++) {
      const clusters = Array.from({ length: 30 }, () => {
        const c = 5 + 2 * normal(g);
        return Array.from({ length: 5 }, () => c + 0.5 * normal(g));
      });
      const a = ok(clusterMeanCI(clusters, { seed: r, B: 1000 }));
      const b = ok(bootstrapCI(clusters.flat(), 'mean', { seed: r, B: 1000 }));
      if (a.lo <= 5 && 5 <= a.hi) clusterCovered++;
      if (b.lo <= 5 && 5 <= b.hi) naiveCovered++;
    }
    expect(clusterCovered / R).toBeGreaterThanOrEqual(0.87);
    expect(naiveCovered / R).toBeLessThanOrEqual(0.75);
  });
});

describe('cluster bootstrap: edge cases', () => {
  it('no clusters / no values → unavailable "empty"; one cluster or one value → "too-few"', () => {
    expect(clusterMeanCI([], { seed: 1 })).toMatchObject({ available: false, code: 'empty' });
    expect(clusterMeanCI([[1, 2, 3]], { seed: 1 })).toMatchObject({ available: false, code: 'too-few' });
    expect(bootstrapCI([], 'median', { seed: 1 })).toMatchObject({ available: false, code: 'empty' });
    expect(bootstrapCI([4], 'median', { seed: 1 })).toMatchObject({ available: false, code: 'too-few' });
  });

  it('all-equal values: a zero-width interval at the value (no NaN)', () => {
    expect(ok(clusterMedianCI([[3, 3], [3], [3, 3, 3]], { seed: 2 }))).toMatchObject({ estimate: 3, lo: 3, hi: 3 });
    expect(ok(bootstrapCI([7, 7, 7], 'mean', { seed: 2 }))).toMatchObject({ estimate: 7, lo: 7, hi: 7 });
  });

  it('NaN / Infinity input, an empty cluster and bad options throw StatsError', () => {
    expect(() => clusterMeanCI([[1, NaN], [2]], { seed: 1 })).toThrow(StatsError);
    expect(() => bootstrapCI([1, Infinity], 'mean', { seed: 1 })).toThrow(StatsError);
    expect(() => clusterMeanCI([[1], []], { seed: 1 })).toThrow(/cluster 1 has no values/);
    expect(() => clusterMeanCI(CLUSTERS, { seed: -1 })).toThrow(StatsError);
    expect(() => clusterMeanCI(CLUSTERS, { seed: 1, B: 0 })).toThrow(StatsError);
    expect(() => clusterMeanCI(CLUSTERS, { seed: 1, B: 10.5 })).toThrow(StatsError);
    expect(() => clusterMeanCI(CLUSTERS, { seed: 1, level: 1 })).toThrow(StatsError);
    expect(() => clusterMeanCI(CLUSTERS, { seed: 1, level: 0 })).toThrow(StatsError);
    expect(() => clusterBootstrapCI(CLUSTERS, 'mode' as 'mean', { seed: 1 })).toThrow(StatsError);
  });
});
