import { describe, expect, it } from 'vitest';
import { gini } from '../../src/domain/analysis/gini';
import { cholesky, choleskySolve, fromRows, symmetricEigen } from '../../src/domain/analysis/linearAlgebra';
import { redundancyAudit } from '../../src/domain/analysis/redundancy';
import { looRidgeR2 } from '../../src/domain/analysis/ridge';
import { seededUniform } from '../../src/domain/stats/prng';

// Ridge LOO R², Gini and the redundancy audit, each against an independent computation.

const zs = (v: number[]) => {
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  const sd = Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1));
  return v.map((x) => (x - m) / sd);
};

/** Gaussian elimination with partial pivoting (independent of the Cholesky path). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((r, i) => [...r, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((r, i) => r[n] / r[i]);
}

/**
 * LOO by brute force: for each i, refit an unpenalised intercept and ridge slopes on the other n − 1
 * observations (scaling fixed on all n, as the identity assumes) and predict i.
 */
function bruteLooR2(y: number[], xs: number[][], lambda: number): number {
  const zy = zs(y);
  const zx = xs.map(zs);
  const n = y.length;
  const p = xs.length;
  let press = 0;
  for (let i = 0; i < n; i++) {
    const rows = [...Array(n).keys()].filter((r) => r !== i);
    // Design [1, x_1..x_p]; penalty on slopes only.
    const A = Array.from({ length: p + 1 }, () => new Array(p + 1).fill(0));
    const b = new Array(p + 1).fill(0);
    for (const r of rows) {
      const d = [1, ...zx.map((c) => c[r])];
      for (let u = 0; u <= p; u++) {
        b[u] += d[u] * zy[r];
        for (let v = 0; v <= p; v++) A[u][v] += d[u] * d[v];
      }
    }
    for (let u = 1; u <= p; u++) A[u][u] += lambda;
    const beta = solve(A, b);
    const d = [1, ...zx.map((c) => c[i])];
    const pred = d.reduce((s, v, k) => s + v * beta[k], 0);
    press += (zy[i] - pred) ** 2;
  }
  return 1 - press / zy.reduce((s, v) => s + v * v, 0);
}

describe('leave-one-out ridge R²', () => {
  const rand = seededUniform(7);
  const n = 12;
  const x1 = Array.from({ length: n }, () => rand());
  const x2 = Array.from({ length: n }, () => rand());
  const noise = Array.from({ length: n }, () => rand() - 0.5);

  it('equals refitting without each observation (the PRESS identity), for several λ and predictor sets', () => {
    const y = x1.map((v, i) => 2 * v - x2[i] + 0.3 * noise[i]);
    for (const lambda of [0.01, 1, 10]) {
      for (const preds of [[x1], [x1, x2], [x1, x2, noise]]) {
        const r = looRidgeR2(y, preds, lambda);
        expect(r.available).toBe(true);
        if (r.available) expect(r.r2).toBeCloseTo(bruteLooR2(y, preds, lambda), 10);
      }
    }
  });

  it('is near 1 for a variable the others determine, and at most ~0 for an unrelated one (control)', () => {
    const copy = x1.map((v) => 3 * v + 1);
    const r = looRidgeR2(copy, [x1], 1e-6);
    expect(r.available && r.r2).toBeGreaterThan(0.999);
    const u = looRidgeR2(noise, [x1, x2], 1);
    expect(u.available && u.r2).toBeLessThan(0.2);
  });

  it('with no usable predictor is the LOO mean: R² = 1 − (n/(n−1))²', () => {
    const r = looRidgeR2(x1, [new Array(n).fill(4)]);
    expect(r.available && r.r2).toBeCloseTo(1 - (n / (n - 1)) ** 2, 12);
    expect(r.available && r.predictors).toBe(0);
  });

  it('is unavailable for a constant response or fewer than 3 observations', () => {
    expect(looRidgeR2([1, 1, 1, 1], [x1.slice(0, 4)]).available).toBe(false);
    expect(looRidgeR2([1, 2], [[3, 4]]).available).toBe(false);
  });
});

describe('linear algebra', () => {
  it('Cholesky solves an SPD system; Jacobi eigenvalues of a known matrix', () => {
    const a = fromRows([
      [4, 2, 0.4],
      [2, 5, 1],
      [0.4, 1, 3],
    ]);
    const x = choleskySolve(cholesky(a), [1, 2, 3]);
    const back = [0, 1, 2].map((i) => [0, 1, 2].reduce((s, j) => s + a.data[i * 3 + j] * x[j], 0));
    back.forEach((v, i) => expect(v).toBeCloseTo([1, 2, 3][i], 12));
    // [[2,1],[1,2]]: eigenvalues 3 and 1, vectors (1,1)/√2 and (1,−1)/√2 (sign: largest component positive).
    const e = symmetricEigen(
      fromRows([
        [2, 1],
        [1, 2],
      ]),
    );
    expect(e.values[0]).toBeCloseTo(3, 12);
    expect(e.values[1]).toBeCloseTo(1, 12);
    expect(e.vectors.data[0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(e.vectors.data[2]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(() =>
      cholesky(
        fromRows([
          [1, 2],
          [2, 1],
        ]),
      ),
    ).toThrow(/not positive definite/);
  });
});

describe('Gini coefficient', () => {
  const naive = (x: number[]) => {
    let s = 0;
    for (const a of x) for (const b of x) s += Math.abs(a - b);
    const m = x.reduce((p, q) => p + q, 0) / x.length;
    return m === 0 ? 0 : s / (2 * x.length ** 2 * Math.abs(m));
  };
  it('matches the double sum, is scale-free, 0 for equal scores', () => {
    expect(gini([3, 3, 3])).toBe(0);
    expect(gini([0, 0, 1])).toBeCloseTo(2 / 3, 14);
    const rand = seededUniform(3);
    for (let t = 0; t < 20; t++) {
      const x = Array.from({ length: 2 + t }, () => rand() * 10);
      expect(gini(x)).toBeCloseTo(naive(x), 12);
      expect(gini(x.map((v) => v * 7.5))).toBeCloseTo(gini(x), 12);
    }
  });
});

describe('redundancy audit', () => {
  it('finds the substitute: acceleration and jerk that move together have ρ = 1 and a high R²; an unrelated reading does not', () => {
    const rand = seededUniform(11);
    const n = 15;
    const acc = Array.from({ length: n }, () => 1 + rand() * 4);
    const jerk = acc.map((a) => a ** 2 * 30); // monotone in acc: ρ = 1
    const other = Array.from({ length: n }, () => rand());
    const audit = redundancyAudit(['acc', 'jerk', 'other'], [acc, jerk, other], { seed: 1, B: 500 });
    const rho = audit.spearman[0][1];
    expect(rho.available && rho.estimate).toBe(1);
    const r2 = audit.looR2.map((r) => (r.available ? r.r2 : NaN));
    expect(r2[0]).toBeGreaterThan(0.8);
    expect(r2[2]).toBeLessThan(0.2);
    // Each cell's seed is its own: the same pair's CI does not change when another variable is added.
    const again = redundancyAudit(['acc', 'jerk'], [acc, jerk], { seed: 1, B: 500 });
    expect(again.spearman[0][1]).toEqual(audit.spearman[0][1]);
  });
});
