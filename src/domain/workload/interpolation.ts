// Smooth time functions for the built-in workload generator. Everything here is plain IEEE-754
// double arithmetic (+, −, ×, /, Math.sin, Math.cos, Math.floor), evaluated in a fixed order, so
// the same inputs give bit-identical outputs in one JavaScript engine version (see
// docs/WORKLOAD.md, "Determinism").
//
// Building blocks:
//   minJerk(s)          5th-order smoothstep 10s³ − 15s⁴ + 6s⁵: zero velocity and acceleration at
//                       both ends (the minimum-jerk point-to-point profile).
//   ramp(t, t0, t1)     minJerk over [t0, t1], 0 before, 1 after.
//   bump(t, t0, t1)     64 s³(1 − s)³: 0 at both ends with zero velocity and acceleration, 1 at the
//                       middle (swing-foot height, jump flight).
//   envelope(...)       ramp up, hold, ramp down: multiplies oscillations so they start and end
//                       at rest.
//   KeyTrack            keyframes → value, min-jerk between consecutive keys (stops at each key)
//                       or a C² quintic Hermite spline through the keys ('smooth').

export const TAU = 2 * Math.PI;

/** Minimum-jerk smoothstep on [0, 1] (clamped outside). */
export function minJerk(s: number): number {
  if (s <= 0) return 0;
  if (s >= 1) return 1;
  return s * s * s * (10 + s * (-15 + 6 * s));
}

/** 0 before t0, 1 after t1, minimum-jerk in between. */
export function ramp(t: number, t0: number, t1: number): number {
  return minJerk((t - t0) / (t1 - t0));
}

/** A smooth bump: 0 outside [t0, t1], peak 1 at the middle, zero velocity and acceleration at the ends. */
export function bump(t: number, t0: number, t1: number): number {
  const s = (t - t0) / (t1 - t0);
  if (s <= 0 || s >= 1) return 0;
  const u = s * (1 - s);
  return 64 * u * u * u;
}

/** Ramps from 0 to 1 over [t0, t0 + rampS], holds, and back to 0 over [t1 − rampS, t1]. */
export function envelope(t: number, t0: number, t1: number, rampS: number): number {
  if (t <= t0 || t >= t1) return 0;
  return ramp(t, t0, t0 + rampS) * (1 - ramp(t, t1 - rampS, t1));
}

/**
 * A sine oscillation of unit amplitude between t0 and t1, faded in and out by `envelope`:
 * env(t) · sin(2π (t − t0) / periodS + phase).
 */
export function oscillation(t: number, t0: number, t1: number, periodS: number, rampS: number, phase = 0): number {
  const e = envelope(t, t0, t1, rampS);
  if (e === 0) return 0;
  return e * Math.sin((TAU * (t - t0)) / periodS + phase);
}

/** Linear interpolation. */
export const lerp = (a: number, b: number, s: number): number => a + (b - a) * s;

export type KeyInterpolation = 'minjerk' | 'smooth';

/**
 * Scalar keyframes. 'minjerk' moves between consecutive keys with the minimum-jerk profile (the
 * motion comes to rest at every key); 'smooth' passes through the keys on a quintic Hermite
 * spline whose velocities are the non-uniform central differences of the keys and whose
 * accelerations are the finite-difference second derivatives (C² everywhere), with zero velocity
 * and acceleration at the first and last key. Before the first key and after the last the value
 * holds.
 */
export class KeyTrack {
  private readonly t: Float64Array;
  private readonly v: Float64Array;
  private readonly d1: Float64Array;
  private readonly d2: Float64Array;

  constructor(
    keys: ReadonlyArray<readonly [number, number]>,
    private readonly mode: KeyInterpolation = 'minjerk',
  ) {
    if (keys.length === 0) throw new Error('KeyTrack needs at least one key');
    const n = keys.length;
    this.t = new Float64Array(n);
    this.v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      this.t[i] = keys[i][0];
      this.v[i] = keys[i][1];
      if (i > 0 && !(this.t[i] > this.t[i - 1]))
        throw new Error(`KeyTrack key times must increase (key ${i} at ${this.t[i]})`);
    }
    this.d1 = new Float64Array(n);
    this.d2 = new Float64Array(n);
    if (mode === 'smooth') hermiteDerivatives(this.t, this.v, this.d1, this.d2);
  }

  at(time: number): number {
    const { t, v } = this;
    const n = t.length;
    if (time <= t[0]) return v[0];
    if (time >= t[n - 1]) return v[n - 1];
    let i = 0;
    while (time >= t[i + 1]) i++;
    const h = t[i + 1] - t[i];
    const s = (time - t[i]) / h;
    if (this.mode === 'minjerk') return v[i] + (v[i + 1] - v[i]) * minJerk(s);
    return quinticHermite(s, h, v[i], this.d1[i], this.d2[i], v[i + 1], this.d1[i + 1], this.d2[i + 1]);
  }
}

/**
 * Velocities and accelerations at the knots of a C² quintic Hermite spline through (t, v):
 * interior velocities by the non-uniform central difference, accelerations by the
 * finite-difference second derivative, both zero at the two ends.
 */
export function hermiteDerivatives(t: Float64Array, v: Float64Array, d1: Float64Array, d2: Float64Array): void {
  const n = t.length;
  d1[0] = 0;
  d2[0] = 0;
  d1[n - 1] = 0;
  d2[n - 1] = 0;
  for (let i = 1; i < n - 1; i++) {
    const h0 = t[i] - t[i - 1];
    const h1 = t[i + 1] - t[i];
    const s0 = (v[i] - v[i - 1]) / h0;
    const s1 = (v[i + 1] - v[i]) / h1;
    d1[i] = (s0 * h1 + s1 * h0) / (h0 + h1);
    d2[i] = (2 * (s1 - s0)) / (h0 + h1);
  }
}

/** Quintic Hermite on one interval of length h at s ∈ [0, 1], given value, velocity, acceleration at both ends. */
export function quinticHermite(
  s: number,
  h: number,
  p0: number,
  v0: number,
  a0: number,
  p1: number,
  v1: number,
  a1: number,
): number {
  const s2 = s * s;
  const s3 = s2 * s;
  const s4 = s3 * s;
  const s5 = s4 * s;
  const h00 = 1 - 10 * s3 + 15 * s4 - 6 * s5;
  const h10 = s - 6 * s3 + 8 * s4 - 3 * s5;
  const h20 = 0.5 * s2 - 1.5 * s3 + 1.5 * s4 - 0.5 * s5;
  const h01 = 10 * s3 - 15 * s4 + 6 * s5;
  const h11 = -4 * s3 + 7 * s4 - 3 * s5;
  const h21 = 0.5 * s3 - s4 + 0.5 * s5;
  return h00 * p0 + h10 * h * v0 + h20 * h * h * a0 + h01 * p1 + h11 * h * v1 + h21 * h * h * a1;
}

/** A smooth scalar spline through knots (t, v) — KeyTrack in 'smooth' mode. */
export const smoothTrack = (keys: ReadonlyArray<readonly [number, number]>): KeyTrack => new KeyTrack(keys, 'smooth');
/** Min-jerk between consecutive keys — KeyTrack in 'minjerk' mode. */
export const restTrack = (keys: ReadonlyArray<readonly [number, number]>): KeyTrack => new KeyTrack(keys, 'minjerk');
