import { describe, expect, it } from 'vitest';
import { fCdf, fQuantile, fSurvival } from '../../src/domain/stats/fDistribution';
import { incompleteBetaPair, logGamma, regularizedIncompleteBeta } from '../../src/domain/stats/incompleteBeta';
import { StatsError } from '../../src/domain/stats/result';

const rel = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

describe('log-gamma (Lanczos)', () => {
  it('closed forms: lnΓ(1) = lnΓ(2) = 0, lnΓ(1/2) = ln√π, lnΓ(n) = ln((n−1)!)', () => {
    expect(Math.abs(logGamma(1))).toBeLessThan(1e-14);
    expect(Math.abs(logGamma(2))).toBeLessThan(1e-14);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 14);
    let fact = 2; // (3 − 1)!
    for (let n = 3; n <= 20; n++) {
      expect(rel(logGamma(n), Math.log(fact))).toBeLessThan(1e-14);
      fact *= n;
    }
  });

  it('matches scipy.special.gammaln', () => {
    const cases: [number, number][] = [
      [0.1, 2.252712651734206],
      [1.5, -0.12078223763524526],
      [3.3, 0.9870985778947343],
      [10, 12.801827480081469],
      [100.5, 361.43554046777757],
      [1000, 5905.220423209181],
    ];
    for (const [x, want] of cases)
      expect(Math.abs(logGamma(x) - want)).toBeLessThan(1e-13 * Math.max(1, Math.abs(want)));
  });

  it('rejects x ≤ 0 and non-finite x', () => {
    for (const x of [0, -1, NaN, Infinity]) expect(() => logGamma(x)).toThrow(StatsError);
  });
});

describe('regularized incomplete beta I_x(a, b)', () => {
  it('closed forms: I_x(a,1) = x^a, I_x(1,b) = 1 − (1−x)^b, I_½(a,a) = ½, I_x(2,3) polynomial', () => {
    for (const x of [0.01, 0.3, 0.77, 0.999]) {
      for (const a of [0.5, 2, 7.25]) {
        expect(rel(regularizedIncompleteBeta(x, a, 1), x ** a)).toBeLessThan(1e-13);
        expect(rel(regularizedIncompleteBeta(x, 1, a), 1 - (1 - x) ** a)).toBeLessThan(1e-13);
      }
    }
    for (const a of [0.5, 3, 40]) expect(regularizedIncompleteBeta(0.5, a, a)).toBeCloseTo(0.5, 13);
    // I_x(2,3) = 6x² − 8x³ + 3x⁴ (integrate 12 t (1−t)² from 0 to x): at x = 0.3 → 0.3483.
    expect(regularizedIncompleteBeta(0.3, 2, 3)).toBeCloseTo(0.3483, 14);
  });

  it('binomial identity: I_p(k, n − k + 1) = P(Bin(n, p) ≥ k), summed independently', () => {
    const binomTail = (n: number, p: number, k: number): number => {
      let s = 0;
      let c = 1; // C(n, 0)
      for (let j = 0; j <= n; j++) {
        if (j > 0) c = (c * (n - j + 1)) / j;
        if (j >= k) s += c * p ** j * (1 - p) ** (n - j);
      }
      return s;
    };
    for (const [n, p, k] of [
      [10, 0.3, 4],
      [20, 0.5, 15],
      [30, 0.05, 1],
      [50, 0.9, 40],
    ]) {
      expect(rel(regularizedIncompleteBeta(p, k, n - k + 1), binomTail(n, p, k))).toBeLessThan(1e-12);
    }
  });

  it('matches scipy.special.betainc (including large and non-integer parameters)', () => {
    const cases: [number, number, number, number][] = [
      [0.9, 0.5, 0.5, 0.7951672353008665],
      [0.999, 1000, 10, 0.9999998834050918],
      [0.5, 500, 500, 0.5],
      [1e-5, 0.1, 50, 0.4910718931461262],
      [0.7, 30.5, 12.25, 0.405229364110485],
      [0.2, 2.5, 0.75, 0.011642034961271258],
      [0.95, 40, 3, 0.6489863906537717],
    ];
    for (const [x, a, b, want] of cases) expect(rel(regularizedIncompleteBeta(x, a, b), want)).toBeLessThan(1e-11);
  });

  it('end points, complement without cancellation, bad arguments', () => {
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
    const { lower, upper } = incompleteBetaPair(1 - 1e-10, 1e-10, 3, 2);
    expect(lower + upper).toBeCloseTo(1, 15);
    // 1 − I_x(3,2) = I_{1−x}(2,3) ≈ 6y² for tiny y = 1 − x.
    expect(rel(upper, 6e-20)).toBeLessThan(1e-6);
    expect(() => regularizedIncompleteBeta(1.5, 1, 1)).toThrow(StatsError);
    expect(() => regularizedIncompleteBeta(0.5, 0, 1)).toThrow(StatsError);
    expect(() => regularizedIncompleteBeta(NaN, 1, 1)).toThrow(StatsError);
  });
});

describe('F distribution', () => {
  it('quantiles match printed F tables (3–4 significant digits)', () => {
    // Standard upper-percentage-point tables of F(d1, d2).
    expect(fQuantile(0.95, 5, 15)).toBeCloseTo(2.901, 3);
    expect(fQuantile(0.975, 3, 10)).toBeCloseTo(4.826, 3);
    expect(fQuantile(0.99, 2, 10)).toBeCloseTo(7.559, 3);
    expect(fQuantile(0.95, 1, 1)).toBeCloseTo(161.4, 1);
    expect(fQuantile(0.95, 10, 20)).toBeCloseTo(2.348, 3);
    expect(fQuantile(0.99, 4, 30)).toBeCloseTo(4.018, 3);
  });

  it('quantiles match scipy.stats.f.ppf to ~1e-12, including non-integer df and extreme tails', () => {
    const cases: [number, number, number, number][] = [
      [0.95, 5, 15, 2.9012945362361573],
      [0.975, 3, 10, 4.825621493405406],
      [0.975, 5, 1, 921.8479032997083],
      [0.025, 5, 18, 0.15718616136624453],
      [0.999, 2.5, 1926.3, 6.055765746432601],
      [0.001, 100, 3.7, 0.19134086207615988],
      [0.975, 5, 2.91, 15.780165586338997],
      [0.975, 2.91, 5, 7.807982248157016],
      [0.99999, 1, 1, 4052847345.063733],
      [0.95, 3, 1000, 2.61380358069362],
      [0.05, 7, 9, 0.2719848999119875],
      [1 - 1e-12, 5, 15, 173.87668489769132],
      [1e-10, 4, 8, 6.3245953206371775e-6],
    ];
    for (const [p, d1, d2, want] of cases) expect(rel(fQuantile(p, d1, d2), want)).toBeLessThan(1e-11);
  });

  it('closed forms: F(1,1) CDF = (2/π)·atan(√f), F(2,2) CDF = f/(1+f)', () => {
    for (const p of [0.025, 0.5, 0.95, 0.975]) {
      expect(rel(fQuantile(p, 1, 1), Math.tan((Math.PI * p) / 2) ** 2)).toBeLessThan(1e-12);
      expect(rel(fQuantile(p, 2, 2), p / (1 - p))).toBeLessThan(1e-12);
    }
    for (const f of [0.01, 0.3, 1, 7, 300]) {
      expect(fCdf(f, 1, 1)).toBeCloseTo((2 / Math.PI) * Math.atan(Math.sqrt(f)), 14);
      expect(fCdf(f, 2, 2)).toBeCloseTo(f / (1 + f), 14);
    }
  });

  it('CDF and survival match scipy, survival keeps tiny tails', () => {
    expect(fCdf(2.9, 5, 15)).toBeCloseTo(0.9499309341234367, 13);
    expect(rel(fSurvival(2.9, 5, 15), 0.050069065876563276)).toBeLessThan(1e-11);
    expect(fCdf(1.0, 4.785143862212763, 5)).toBeCloseTo(0.5026996068255707, 13);
    expect(rel(fSurvival(50, 3, 7.5), 2.5867048627423965e-5)).toBeLessThan(1e-10);
    expect(rel(fSurvival(1e4, 5, 15), 7.348399180062341e-26)).toBeLessThan(1e-10);
    expect(rel(fSurvival(200, 30, 60), 7.453415792725408e-50)).toBeLessThan(1e-9);
    expect(fCdf(0, 3, 4)).toBe(0);
    expect(fSurvival(0, 3, 4)).toBe(1);
    expect(fSurvival(Infinity, 3, 4)).toBe(0);
  });

  it('quantile inverts the CDF', () => {
    for (const [d1, d2] of [
      [1, 1],
      [3, 17],
      [4.785, 5],
      [40, 2.5],
    ]) {
      for (const p of [0.001, 0.05, 0.5, 0.9, 0.999]) expect(fCdf(fQuantile(p, d1, d2), d1, d2)).toBeCloseTo(p, 12);
    }
  });

  it('rejects bad p, df and NaN', () => {
    expect(() => fQuantile(0, 1, 1)).toThrow(StatsError);
    expect(() => fQuantile(1, 1, 1)).toThrow(StatsError);
    expect(() => fQuantile(0.5, 0, 1)).toThrow(StatsError);
    expect(() => fQuantile(0.5, 1, Infinity)).toThrow(StatsError);
    expect(() => fCdf(NaN, 1, 1)).toThrow(StatsError);
    expect(() => fSurvival(NaN, 1, 1)).toThrow(StatsError);
  });
});
