// Start-state sensitivity geometry (issue 14 item 6): which start-pose errors matter, and whether
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
import { matrix, symmetricEigen, type Matrix } from './linearAlgebra';

export interface GramEstimate {
  readonly d: number;
  readonly scale: number;
  readonly gram: Matrix;
  readonly trace: number;
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
  return { d, scale, gram: g, trace };
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
