import { describe, expect, it } from 'vitest';
import {
  mean,
  median,
  percentile,
  percentiles,
  sampleStd,
  sampleVariance,
  compensatedSum,
} from '../../src/domain/stats/descriptive';
import { StatsError } from '../../src/domain/stats/result';

function expectStatsError(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StatsError);
    expect((e as StatsError).code).toBe(code);
    return;
  }
  throw new Error(`expected a StatsError(${code})`);
}

describe('percentile (numpy "linear", the default of numpy.percentile)', () => {
  it('np.percentile([1,2,3,4], 95) = 3.85 — bit for bit, including numpy rounding', () => {
    // Hand derivation: sorted x = [1,2,3,4], n = 4; q = 95/100; h = (n − 1)·q = 3·0.95 = 2.85;
    // i = floor(h) = 2, t = 0.85 → between x[2] = 3 and x[3] = 4: 3 + 0.85·(4 − 3) = 3.85.
    // In doubles 3·0.95 = 2.8499999999999996 and numpy's lerp for t ≥ 0.5 evaluates
    // b − (b − a)(1 − t) = 4 − 0.15000000000000036, so numpy prints 3.8499999999999996.
    expect(percentile([1, 2, 3, 4], 95)).toBeCloseTo(3.85, 12);
    expect(percentile([1, 2, 3, 4], 95)).toBe(3.8499999999999996);
    // p = 5: h = 0.15 → 1 + 0.15 = 1.15; p = 30: h = 0.9 → 1 + 0.9 = 1.9 (numpy: 1.15, 1.9).
    expect(percentile([4, 3, 2, 1], 5)).toBe(1.15);
    expect(percentile([1, 2, 3, 4], 30)).toBe(1.9);
  });

  it('[10,7,4,3,2,1] at 50 → 3.5 (unsorted input)', () => {
    // sorted [1,2,3,4,7,10], n = 6, h = 5·0.5 = 2.5, i = 2, t = 0.5: between x[2] = 3 and x[3] = 4 → 3.5.
    expect(percentile([10, 7, 4, 3, 2, 1], 50)).toBe(3.5);
  });

  it('end points and a single value', () => {
    expect(percentile([5, -1, 3], 0)).toBe(-1);
    expect(percentile([5, -1, 3], 100)).toBe(5);
    expect(percentile([42], 0)).toBe(42);
    expect(percentile([42], 37.5)).toBe(42);
    expect(percentile([42], 100)).toBe(42);
  });

  it('matches numpy 2.4.6 np.percentile exactly on 23 values with a tie, 18 percentiles', () => {
    // Values and expectations produced by numpy (np.random.default_rng(2024), rounded to 3 dp,
    // v[5] = v[9] to force a tie); expectations are numpy's printed doubles.
    const v = [
      5.058, 6.284, 5.293, 1.054, 0.214, 4.502, 4.723, 4.018, 6.621, 4.502, 4.28, 1.537, 0.785, 5.969, 3.098, 4.623,
      0.247, 2.127, 0.418, 1.449, 4.806, 0.039, 1.932,
    ];
    const ps = [0, 0.5, 1, 2.5, 5, 10, 12.5, 25, 33.3, 50, 62.5, 75, 90, 95, 97.5, 99, 99.9, 100];
    const numpy = [
      0.039, 0.058249999999999996, 0.0775, 0.13525, 0.2173, 0.2812, 0.37525, 1.2515, 1.6657699999999993, 4.018, 4.502,
      4.7645, 5.833800000000001, 6.2524999999999995, 6.43565, 6.546860000000001, 6.613586000000001, 6.621,
    ];
    expect(percentiles(v, ps)).toEqual(numpy);
    ps.forEach((p, i) => expect(percentile(v, p)).toBe(numpy[i]));
    expect(median(v)).toBe(4.018); // np.median
    expect(mean(v)).toBeCloseTo(3.1990869565217395, 14); // np.mean
    expect(sampleStd(v)).toBeCloseTo(2.1665913301993207, 14); // np.std(ddof=1)
  });

  it('is monotone in p', () => {
    const v = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
    let prev = -Infinity;
    for (let p = 0; p <= 100; p += 0.25) {
      const q = percentile(v, p);
      expect(q).toBeGreaterThanOrEqual(prev);
      prev = q;
    }
  });

  it('rejects p outside [0, 100], empty and non-finite input', () => {
    expectStatsError(() => percentile([1, 2], -1), 'invalid-argument');
    expectStatsError(() => percentile([1, 2], 100.5), 'invalid-argument');
    expectStatsError(() => percentile([1, 2], NaN), 'invalid-argument');
    expectStatsError(() => percentile([], 50), 'empty');
    expectStatsError(() => percentile([1, NaN, 3], 50), 'non-finite');
    expectStatsError(() => percentile([1, Infinity], 50), 'non-finite');
  });
});

describe('median, mean, sample std', () => {
  it('median: middle value, or the mean of the two middle values (numpy.median)', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([0.1, 0.2, 0.3, 0.4])).toBe(0.25); // np.median → 0.25
    expect(median([7])).toBe(7);
  });

  it('mean and sample std of a textbook set: [2,4,4,4,5,5,7,9] → mean 5, s = sqrt(32/7)', () => {
    // Σ(x − 5)² = 9+1+1+1+0+0+4+16 = 32; s² = 32/7.
    expect(mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5);
    expect(sampleVariance([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(32 / 7, 14);
    expect(sampleStd([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138089935299395, 14); // np.std(ddof=1)
  });

  it('compensated summation keeps digits plain summation loses', () => {
    // 1 + 1e-16 × 10 − 1 : plain left-to-right summation gives 0.
    const v = [1, ...new Array(10).fill(1e-16), -1];
    expect(compensatedSum(v)).toBeCloseTo(1e-15, 28);
    expect(mean([1e16, 1, -1e16])).toBeCloseTo(1 / 3, 15);
  });

  it('all-equal values: std 0, mean and median the value', () => {
    expect(mean([2.5, 2.5, 2.5])).toBe(2.5);
    expect(median([2.5, 2.5, 2.5])).toBe(2.5);
    expect(sampleStd([2.5, 2.5, 2.5])).toBe(0);
  });

  it('errors: empty, n = 1 for std, NaN', () => {
    expectStatsError(() => mean([]), 'empty');
    expectStatsError(() => median([]), 'empty');
    expectStatsError(() => sampleStd([]), 'empty');
    expectStatsError(() => sampleStd([1]), 'too-few');
    expectStatsError(() => mean([1, NaN]), 'non-finite');
    expectStatsError(() => median([NaN]), 'non-finite');
    expectStatsError(() => sampleStd([1, 2, -Infinity]), 'non-finite');
  });
});
