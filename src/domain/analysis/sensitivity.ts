// Start-state sensitivity geometry: which start-pose errors matter, and whether
// the simulator and the robot agree on it.
//
// A run from the calibrated start perturbed by h·u (u a unit direction in the normalised
// perturbation space: each axis one joint offset or root roll/pitch, in units of that quantity's
// stillness noise σ measured at calibration) yields a response vector y(h·u) — e.g. the per-frame
// MPJPE-l over the first seconds. With Δy(h·u) = y(h·u) − y(0) ≈ h·J·u for small h, the response
// magnitude r(u) = ‖Δy(h·u)‖/h ≈ √(uᵀGu) with the Gram G = JᵀJ. J's columns are estimated by central
// differences along the d axes, Jᵢ = (y(h·eᵢ) − y(−h·eᵢ))/(2h) (exact for a linear response, and
// blind to every even-order term), at each scale h; how G changes across scales shows how far the
// response is from linear.
//
// Read-outs: the dominant direction (the top eigenvector, named by axis) and its share of the trace,
// the condition number λmax/λmin; held-out directions (random unit u, not axes) compare the
// predicted r̂(u) = √(uᵀGu) with the measured r(u): WAPE = Σ|r̂ − r| / Σ r, beside the WAPE of the
// isotropic reference with the same trace, r̂_iso = √(tr G / d) for every u (a Gram that predicts no
// better than that carries no geometry). Between two Grams (simulator vs robot): the trace-normalised
// discrepancy D_G = ‖G/tr G − G′/tr G′‖_F and the angle between their dominant directions.

import { Xoshiro128StarStar } from '../stats/prng';
import { StatsError } from '../stats/result';
import { cholesky, choleskySolve, fromRows, matrix, symmetricEigen, type Matrix } from './linearAlgebra';

export interface GramEstimate {
  readonly d: number;
  readonly scale: number;
  readonly gram: Matrix;
  readonly trace: number;
}

/** G = JᵀJ and its trace, J's columns given (one per axis, each a response's length). */
function gramOfJacobian(j: readonly Float64Array[]): { gram: Matrix; trace: number } {
  const d = j.length;
  const m = j[0]?.length ?? 0;
  const g = matrix(d, d);
  let trace = 0;
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      let s = 0;
      for (let t = 0; t < m; t++) s += j[a][t] * j[b][t];
      g.data[a * d + b] = s;
      g.data[b * d + a] = s;
      if (a === b) trace += s;
    }
  return { gram: g, trace };
}

/** G = JᵀJ from the responses at +h·eᵢ and −h·eᵢ (each the same length). */
export function finiteDifferenceGram(
  plus: readonly ArrayLike<number>[],
  minus: readonly ArrayLike<number>[],
  scale: number,
): GramEstimate {
  const d = plus.length;
  if (minus.length !== d) throw new StatsError('length-mismatch', `${d} + responses but ${minus.length} − responses`);
  if (!(scale > 0)) throw new StatsError('invalid-argument', `the perturbation scale must be > 0, got ${scale}`);
  const m = plus[0]?.length ?? 0;
  const j: Float64Array[] = plus.map((p, i) => {
    if (p.length !== m || minus[i].length !== m)
      throw new StatsError(
        'length-mismatch',
        `direction ${i}: responses of ${p.length} and ${minus[i].length} values, expected ${m}`,
      );
    return Float64Array.from(p, (v, t) => (v - minus[i][t]) / (2 * scale));
  });
  return { d, scale, ...gramOfJacobian(j) };
}

export interface LeastSquaresGram extends GramEstimate {
  /** Runs the fit used. */
  readonly runs: number;
  /** 1 − R² of the linear model over every response value: how much of the runs' spread it leaves. */
  readonly residualShare: number;
}

/**
 * G = JᵀJ from runs whose perturbations are measured rather than set (a robot placed at a start
 * reaches one near, not at, the one asked for): per response value t, the ordinary least-squares
 * fit y_r(t) ≈ c(t) + Σᵢ Jᵢ(t)·u_{r,i} over the runs r (an intercept and the d slopes). For runs at
 * exactly ±h·eᵢ the design's columns are orthogonal and the fit is the central difference
 * (finiteDifferenceGram) to rounding; the intercept absorbs the even-order terms as the central
 * difference cancels them. `scale` is the nominal scale the runs were asked for (it labels the
 * estimate). Throws, naming the axis, when the offsets do not span an axis (a joint that never moved).
 */
export function leastSquaresGram(
  offsets: readonly ArrayLike<number>[],
  responses: readonly ArrayLike<number>[],
  scale: number,
  axes?: readonly string[],
): LeastSquaresGram {
  const n = offsets.length;
  if (responses.length !== n) throw new StatsError('length-mismatch', `${n} offsets but ${responses.length} responses`);
  const d = offsets[0]?.length ?? 0;
  const m = responses[0]?.length ?? 0;
  if (n < d + 2)
    throw new StatsError(
      'invalid-argument',
      `a least-squares Gram of ${d} axes needs at least ${d + 2} runs, got ${n}`,
    );
  const p = d + 1;
  const xtx = matrix(p, p);
  const row = new Float64Array(p);
  for (let r = 0; r < n; r++) {
    if (offsets[r].length !== d || responses[r].length !== m)
      throw new StatsError(
        'length-mismatch',
        `run ${r}: ${offsets[r].length} offsets and ${responses[r].length} values`,
      );
    row[0] = 1;
    for (let i = 0; i < d; i++) row[i + 1] = offsets[r][i];
    for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) xtx.data[a * p + b] += row[a] * row[b];
  }
  let l: Matrix;
  try {
    l = cholesky(xtx);
  } catch (err) {
    const pivot = /pivot (\d+)/.exec((err as Error).message);
    const k = pivot ? Number(pivot[1]) - 1 : -1;
    const name = k >= 0 ? (axes?.[k] ?? `axis ${k}`) : 'the intercept';
    throw new StatsError(
      'invalid-argument',
      `the runs' offsets do not span ${name}: it moved too little, or with another axis, to tell its effect apart`,
    );
  }
  const j = Array.from({ length: d }, () => new Float64Array(m));
  const rhs = new Float64Array(p);
  let rss = 0;
  let tss = 0;
  for (let t = 0; t < m; t++) {
    rhs.fill(0);
    let mean = 0;
    for (let r = 0; r < n; r++) {
      const y = responses[r][t];
      mean += y;
      rhs[0] += y;
      for (let i = 0; i < d; i++) rhs[i + 1] += offsets[r][i] * y;
    }
    mean /= n;
    const beta = choleskySolve(l, rhs);
    for (let i = 0; i < d; i++) j[i][t] = beta[i + 1];
    for (let r = 0; r < n; r++) {
      let fit = beta[0];
      for (let i = 0; i < d; i++) fit += beta[i + 1] * offsets[r][i];
      rss += (responses[r][t] - fit) ** 2;
      tss += (responses[r][t] - mean) ** 2;
    }
  }
  return { d, scale, ...gramOfJacobian(j), runs: n, residualShare: tss > 0 ? rss / tss : 0 };
}

export interface GramGeometry {
  /** Eigenvalues, largest first. */
  readonly eigenvalues: Float64Array;
  /** The top eigenvector, sign fixed (largest component positive). */
  readonly dominant: Float64Array;
  /** λ₁ / tr G. */
  readonly dominantShare: number;
  /** λmax / λmin; null when λmin ≤ 0 (a direction with no measurable response). */
  readonly condition: number | null;
  /** The dominant direction's axes, largest |weight| first. */
  readonly dominantAxes: readonly { readonly axis: string; readonly weight: number }[];
}

export function gramGeometry(g: Matrix, axes: readonly string[]): GramGeometry {
  if (axes.length !== g.rows)
    throw new StatsError('length-mismatch', `${g.rows} axes in the Gram, ${axes.length} names`);
  const e = symmetricEigen(g);
  const n = g.rows;
  const dominant = Float64Array.from({ length: n }, (_, i) => e.vectors.data[i * n]);
  const trace = e.values.reduce((a, b) => a + b, 0);
  const min = e.values[n - 1];
  // Eigenvalues below rounding of the largest are treated as zero.
  const tiny = Math.abs(e.values[0]) * 1e-12;
  return {
    eigenvalues: e.values,
    dominant,
    dominantShare: trace > 0 ? e.values[0] / trace : 0,
    condition: min > tiny ? e.values[0] / min : null,
    dominantAxes: axes
      .map((axis, i) => ({ axis, weight: dominant[i] }))
      .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight)),
  };
}

/** √(uᵀGu). */
export function predictedResponse(g: Matrix, u: ArrayLike<number>): number {
  const n = g.rows;
  let s = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) s += u[i] * g.data[i * n + j] * u[j];
  return Math.sqrt(Math.max(0, s));
}

/** `count` seeded unit directions in d dimensions, uniform on the sphere (normalised Gaussians). */
export function heldOutDirections(d: number, count: number, seed: number): Float64Array[] {
  const rng = new Xoshiro128StarStar(seed);
  const out: Float64Array[] = [];
  for (let k = 0; k < count; k++) {
    const u = new Float64Array(d);
    let norm = 0;
    for (let i = 0; i < d; i++) {
      // Box–Muller from two uniforms in (0, 1].
      const a = 1 - rng.nextFloat();
      const b = rng.nextFloat();
      u[i] = Math.sqrt(-2 * Math.log(a)) * Math.cos(2 * Math.PI * b);
      norm += u[i] * u[i];
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < d; i++) u[i] /= norm;
    out.push(u);
  }
  return out;
}

export interface HeldOutCheck {
  /** Σ|r̂ − r| / Σ r with r̂ from G. */
  readonly wape: number;
  /** The same for the isotropic reference with G's trace. */
  readonly wapeIsotropic: number;
  readonly directions: number;
}

/** Held-out response error of G against measured responses r(u) of unit directions u. */
export function heldOutWape(
  g: Matrix,
  directions: readonly ArrayLike<number>[],
  measured: ArrayLike<number>,
): HeldOutCheck {
  if (directions.length !== measured.length)
    throw new StatsError('length-mismatch', `${directions.length} directions but ${measured.length} responses`);
  let trace = 0;
  for (let i = 0; i < g.rows; i++) trace += g.data[i * g.rows + i];
  const iso = Math.sqrt(Math.max(0, trace) / g.rows);
  let err = 0;
  let errIso = 0;
  let total = 0;
  directions.forEach((u, k) => {
    const r = measured[k];
    err += Math.abs(predictedResponse(g, u) - r);
    errIso += Math.abs(iso - r);
    total += r;
  });
  if (!(total > 0)) throw new StatsError('invalid-argument', 'every measured response is 0: WAPE is undefined');
  return { wape: err / total, wapeIsotropic: errIso / total, directions: directions.length };
}

/** D_G = ‖G/tr G − G′/tr G′‖_F. */
export function gramDiscrepancy(a: Matrix, b: Matrix): number {
  if (a.rows !== b.rows) throw new StatsError('length-mismatch', `Grams of ${a.rows} and ${b.rows} axes`);
  const tr = (m: Matrix) => {
    let s = 0;
    for (let i = 0; i < m.rows; i++) s += m.data[i * m.rows + i];
    return s;
  };
  const ta = tr(a);
  const tb = tr(b);
  if (!(ta > 0 && tb > 0))
    throw new StatsError('invalid-argument', 'a Gram with zero trace has no geometry to compare');
  let s = 0;
  for (let i = 0; i < a.data.length; i++) s += (a.data[i] / ta - b.data[i] / tb) ** 2;
  return Math.sqrt(s);
}

/** Angle in degrees between two dominant directions (sign-free: 0..90°). */
export function directionAngleDeg(u: ArrayLike<number>, v: ArrayLike<number>): number {
  let dot = 0;
  let nu = 0;
  let nv = 0;
  for (let i = 0; i < u.length; i++) {
    dot += u[i] * v[i];
    nu += u[i] * u[i];
    nv += v[i] * v[i];
  }
  const c = Math.min(1, Math.abs(dot) / Math.sqrt(nu * nv));
  return (Math.acos(c) * 180) / Math.PI;
}

/** The response ellipses of several Grams in one plane (sensitivityEllipses). */
export interface SensitivityEllipses {
  /** The plane: the first Gram's top two eigenvectors (unit, in axis order). */
  readonly basis: readonly [Float64Array, Float64Array];
  /** Per Gram: the closed curve M^½·(cos θ, sin θ), M = Bᵀ(G/tr G)B, as x and y (first point repeated last). */
  readonly curves: readonly { readonly x: Float64Array; readonly y: Float64Array }[];
  /** The isotropic reference with the same trace, G/tr G = I/d: a circle of this radius. */
  readonly isotropicRadius: number;
}

/**
 * How each Gram answers a unit perturbation in the plane of the first Gram's two dominant
 * directions: trace-normalised (so that scales compare by shape, as D_G does), projected onto the
 * plane, M = Bᵀ(G/tr G)B, and drawn as the image of the unit circle under M^½ — an ellipse whose
 * semi-axes are the square roots of M's eigenvalues (the response per unit perturbation along
 * them), whose tilt shows the dominant direction turning across scales, beside the isotropic
 * circle of radius 1/√d. `points` vertices per curve.
 */
export function sensitivityEllipses(grams: readonly Matrix[], points = 97): SensitivityEllipses {
  if (grams.length === 0) throw new StatsError('invalid-argument', 'no Gram to draw');
  const d = grams[0].rows;
  if (d < 2) throw new StatsError('invalid-argument', `a plane needs 2 axes, the Gram has ${d}`);
  if (grams.some((g) => g.rows !== d || g.cols !== d))
    throw new StatsError('length-mismatch', 'the Grams must have the same axes');
  const e0 = symmetricEigen(grams[0]);
  const column = (k: number) => Float64Array.from({ length: d }, (_, i) => e0.vectors.data[i * d + k]);
  const basis: [Float64Array, Float64Array] = [column(0), column(1)];
  const quad = (g: Matrix, u: Float64Array, v: Float64Array) => {
    let s = 0;
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) s += u[i] * g.data[i * d + j] * v[j];
    return s;
  };
  const curves = grams.map((g) => {
    let tr = 0;
    for (let i = 0; i < d; i++) tr += g.data[i * d + i];
    if (!(tr > 0)) throw new StatsError('invalid-argument', 'a Gram with zero trace has no geometry to draw');
    const a = quad(g, basis[0], basis[0]) / tr;
    const b = quad(g, basis[0], basis[1]) / tr;
    const c = quad(g, basis[1], basis[1]) / tr;
    const m = symmetricEigen(
      fromRows([
        [a, b],
        [b, c],
      ]),
    );
    const [w00, w10, w01, w11] = [m.vectors.data[0], m.vectors.data[2], m.vectors.data[1], m.vectors.data[3]];
    const s0 = Math.sqrt(Math.max(0, m.values[0]));
    const s1 = Math.sqrt(Math.max(0, m.values[1]));
    const x = new Float64Array(points);
    const y = new Float64Array(points);
    for (let k = 0; k < points; k++) {
      const t = (2 * Math.PI * k) / (points - 1);
      // M^½ (cos t, sin t) = W diag(√μ) Wᵀ (cos t, sin t), W's columns (w00, w10) and (w01, w11).
      const p0 = s0 * (w00 * Math.cos(t) + w10 * Math.sin(t));
      const p1 = s1 * (w01 * Math.cos(t) + w11 * Math.sin(t));
      x[k] = w00 * p0 + w01 * p1;
      y[k] = w10 * p0 + w11 * p1;
    }
    return { x, y };
  });
  return { basis, curves, isotropicRadius: 1 / Math.sqrt(d) };
}
