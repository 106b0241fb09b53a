// Small dense linear algebra for the analysis (matrices of a few dozen rows at most): row-major
// Float64Array storage, Cholesky factorisation of symmetric positive-definite systems, and the
// symmetric eigen-decomposition (cyclic Jacobi) used by the sensitivity Gram matrices.
// Pure, no allocation beyond the results.

import { StatsError } from '../stats/result';

/** A dense matrix, row-major: element (i, j) at data[i * cols + j]. */
export interface Matrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

export function matrix(rows: number, cols: number, data?: ArrayLike<number>): Matrix {
  const d = new Float64Array(rows * cols);
  if (data !== undefined) {
    if (data.length !== rows * cols)
      throw new StatsError('length-mismatch', `matrix ${rows}×${cols} needs ${rows * cols} values, got ${data.length}`);
    d.set(data);
  }
  return { rows, cols, data: d };
}

export function fromRows(rows: readonly ArrayLike<number>[]): Matrix {
  const r = rows.length;
  const c = r === 0 ? 0 : rows[0].length;
  const m = matrix(r, c);
  rows.forEach((row, i) => {
    if (row.length !== c) throw new StatsError('ragged', `row ${i} has ${row.length} columns, row 0 has ${c}`);
    m.data.set(row, i * c);
  });
  return m;
}

export const at = (m: Matrix, i: number, j: number): number => m.data[i * m.cols + j];

/** AᵀA (cols × cols). */
export function gramOfColumns(a: Matrix): Matrix {
  const out = matrix(a.cols, a.cols);
  for (let i = 0; i < a.cols; i++)
    for (let j = i; j < a.cols; j++) {
      let s = 0;
      for (let r = 0; r < a.rows; r++) s += a.data[r * a.cols + i] * a.data[r * a.cols + j];
      out.data[i * a.cols + j] = s;
      out.data[j * a.cols + i] = s;
    }
  return out;
}

/**
 * Lower-triangular L with A = LLᵀ for a symmetric positive-definite A (only its lower triangle is
 * read). Throws StatsError('degenerate'-like invalid-argument) when A is not positive definite.
 */
export function cholesky(a: Matrix): Matrix {
  if (a.rows !== a.cols) throw new StatsError('invalid-argument', `cholesky: ${a.rows}×${a.cols} is not square`);
  const n = a.rows;
  const l = matrix(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a.data[i * n + j];
      for (let k = 0; k < j; k++) s -= l.data[i * n + k] * l.data[j * n + k];
      if (i === j) {
        if (!(s > 0))
          throw new StatsError('invalid-argument', `cholesky: the matrix is not positive definite (pivot ${i})`);
        l.data[i * n + i] = Math.sqrt(s);
      } else {
        l.data[i * n + j] = s / l.data[j * n + j];
      }
    }
  }
  return l;
}

/** Solves (LLᵀ) x = b for x, given the Cholesky factor L. */
export function choleskySolve(l: Matrix, b: ArrayLike<number>): Float64Array {
  const n = l.rows;
  if (b.length !== n) throw new StatsError('length-mismatch', `choleskySolve: ${n} rows but b has ${b.length}`);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= l.data[i * n + k] * y[k];
    y[i] = s / l.data[i * n + i];
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i];
    for (let k = i + 1; k < n; k++) s -= l.data[k * n + i] * x[k];
    x[i] = s / l.data[i * n + i];
  }
  return x;
}

export interface SymmetricEigen {
  /** Eigenvalues, largest first. */
  readonly values: Float64Array;
  /** Unit eigenvectors as columns, in the order of `values` (vectors.data[i * n + k] = component i of vector k). */
  readonly vectors: Matrix;
}

/**
 * Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations (exact to rounding for the
 * small Gram matrices here; converges quadratically). Each eigenvector's sign is fixed so that its
 * largest-magnitude component is positive, so that results are reproducible and comparable.
 */
export function symmetricEigen(a: Matrix, maxSweeps = 100): SymmetricEigen {
  if (a.rows !== a.cols) throw new StatsError('invalid-argument', `symmetricEigen: ${a.rows}×${a.cols} is not square`);
  const n = a.rows;
  const m = Float64Array.from(a.data);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += m[p * n + q] ** 2;
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q];
        if (apq === 0) continue;
        const theta = (m[q * n + q] - m[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = m[k * n + p];
          const akq = m[k * n + q];
          m[k * n + p] = c * akp - s * akq;
          m[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = m[p * n + k];
          const aqk = m[q * n + k];
          m[p * n + k] = c * apk - s * aqk;
          m[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => m[j * n + j] - m[i * n + i]);
  const values = Float64Array.from(order, (i) => m[i * n + i]);
  const vectors = matrix(n, n);
  order.forEach((src, k) => {
    let big = 0;
    for (let i = 0; i < n; i++) if (Math.abs(v[i * n + src]) > Math.abs(v[big * n + src])) big = i;
    const sign = v[big * n + src] < 0 ? -1 : 1;
    for (let i = 0; i < n; i++) vectors.data[i * n + k] = sign * v[i * n + src];
  });
  return { values, vectors };
}
