import { describe, expect, it } from 'vitest';
import { fromRows, type Matrix } from '../../src/domain/analysis/linearAlgebra';
import {
  directionAngleDeg,
  finiteDifferenceGram,
  gramDiscrepancy,
  gramGeometry,
  heldOutDirections,
  heldOutWape,
  leastSquaresGram,
  sensitivityEllipses,
  predictedResponse,
} from '../../src/domain/analysis/sensitivity';
import {
  ATTITUDE_SIGMA_RAD,
  perturbedInitialState,
  reachedPerturbation,
  responseMagnitude,
  responseVectors,
  sensitivityAxes,
  SIGMA_FLOOR_RAD,
  timedFramesOnTimeline,
} from '../../src/domain/analysis/sensitivityPlan';
import { quatFromAxisAngle, quatMul } from '../../src/domain/math/quat';
import { Xoshiro128StarStar } from '../../src/domain/stats/prng';
import { icc } from '../../src/domain/stats/icc';

// Gram, geometry and WAPE on analytic systems where G is known exactly: y(u) = A·u (+ even terms).

const A = [
  [3, 0.5, 0],
  [0.2, 1, 0.1],
  [0, 0.3, 0.2],
  [1, 0, 0.05],
]; // 4 outputs × 3 axes
const apply = (a: number[][], u: ArrayLike<number>, quad = 0) =>
  Float64Array.from(a, (row) => row.reduce((s, v, i) => s + v * u[i], 0) + quad * (u[0] * u[0] + u[1] * u[2]));
const AtA = (a: number[][]): Matrix => {
  const d = a[0].length;
  return fromRows(
    Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => a.reduce((s, r) => s + r[i] * r[j], 0))),
  );
};
const axis = (d: number, i: number, h: number) => Float64Array.from({ length: d }, (_, k) => (k === i ? h : 0));

function gramOf(a: number[][], h: number, quad = 0) {
  const d = a[0].length;
  const plus = Array.from({ length: d }, (_, i) => apply(a, axis(d, i, h), quad));
  const minus = Array.from({ length: d }, (_, i) => apply(a, axis(d, i, -h), quad));
  return finiteDifferenceGram(plus, minus, h);
}

describe('finite-difference Gram', () => {
  it('is AᵀA exactly for a linear response at every scale, and stays so with even-order terms (central differences)', () => {
    const exact = AtA(A);
    for (const h of [0.01, 1, 10]) {
      for (const quad of [0, 5]) {
        const g = gramOf(A, h, quad).gram;
        g.data.forEach((v, i) => expect(v).toBeCloseTo(exact.data[i], 9));
      }
    }
  });

  it('held-out directions: WAPE 0 for a linear response; the isotropic reference with the same trace errs', () => {
    const g = gramOf(A, 1).gram;
    const dirs = heldOutDirections(3, 50, 7);
    dirs.forEach((u) => expect(Math.hypot(...u)).toBeCloseTo(1, 12));
    const r = dirs.map((u) => Math.hypot(...apply(A, u)));
    const w = heldOutWape(g, dirs, r);
    expect(w.wape).toBeLessThan(1e-12);
    expect(w.wapeIsotropic).toBeGreaterThan(0.1);
    // Control: an isotropic system (A = 2·I) — the isotropic reference is exact too.
    const I2 = [
      [2, 0, 0],
      [0, 2, 0],
      [0, 0, 2],
    ];
    const gi = gramOf(I2, 1).gram;
    const wi = heldOutWape(
      gi,
      dirs,
      dirs.map((u) => Math.hypot(...apply(I2, u))),
    );
    expect(wi.wapeIsotropic).toBeLessThan(1e-12);
  });

  it('with a quadratic response the held-out error grows with the scale: the geometry is only local', () => {
    const dirs = heldOutDirections(3, 40, 3);
    const wapeAt = (h: number) => {
      const g = gramOf(A, h, 5).gram;
      const r = dirs.map((u) => {
        const plus = apply(
          A,
          u.map((v) => v * h),
          5,
        );
        return Math.hypot(...plus) / h;
      });
      return heldOutWape(g, dirs, r).wape;
    };
    const w = [0.001, 0.3, 3].map(wapeAt);
    expect(w[0]).toBeLessThan(0.01);
    expect(w[1]).toBeGreaterThan(w[0]);
    expect(w[2]).toBeGreaterThan(w[1]);
  });
});

describe('least-squares Gram (measured offsets: a robot reaches a start near the one asked for)', () => {
  const d = A[0].length;
  const rng = new Xoshiro128StarStar(11);
  const jitter = (u: Float64Array, amount: number) => u.map((v) => v + amount * (rng.nextFloat() - 0.5));

  it('equals the central difference for runs at exactly ±h·eᵢ, even-order terms included', () => {
    for (const h of [0.5, 3]) {
      const offsets = [
        ...Array.from({ length: d }, (_, i) => axis(d, i, h)),
        ...Array.from({ length: d }, (_, i) => axis(d, i, -h)),
      ];
      const ls = leastSquaresGram(
        offsets,
        offsets.map((u) => apply(A, u, 5)),
        h,
      );
      const fd = gramOf(A, h, 5).gram;
      ls.gram.data.forEach((v, i) => expect(v).toBeCloseTo(fd.data[i], 9));
      expect(ls.runs).toBe(2 * d);
    }
  });

  it('recovers AᵀA from offsets that missed the axes (plus a constant), where the central difference of the asked-for ones errs', () => {
    const asked = [
      ...Array.from({ length: d }, (_, i) => axis(d, i, 2)),
      ...Array.from({ length: d }, (_, i) => axis(d, i, -2)),
    ];
    const reached = asked.map((u) => jitter(u, 0.8));
    const y = reached.map((u) => apply(A, u).map((v) => v + 0.7));
    const ls = leastSquaresGram(reached, y, 2);
    const exact = AtA(A);
    ls.gram.data.forEach((v, i) => expect(v).toBeCloseTo(exact.data[i], 9));
    expect(ls.residualShare).toBeLessThan(1e-20);
    // Control: treating the reached runs as if they sat on the axes (the central difference) is off.
    const fd = finiteDifferenceGram(y.slice(0, d), y.slice(d), 2).gram;
    expect(gramDiscrepancy(fd, exact)).toBeGreaterThan(0.01);
  });

  it('says which axis the offsets do not span', () => {
    const offsets = Array.from({ length: 6 }, (_, r) => Float64Array.from([r % 2 ? 1 : -1, r, 0]));
    expect(() =>
      leastSquaresGram(
        offsets,
        offsets.map((u) => apply(A, u)),
        1,
        ['hip', 'knee', 'ankle'],
      ),
    ).toThrow(/do not span ankle/);
    expect(() =>
      leastSquaresGram(
        offsets.slice(0, 3),
        offsets.slice(0, 3).map((u) => apply(A, u)),
        1,
      ),
    ).toThrow(/needs at least 5 runs, got 3/);
  });
});

describe('the start a robot reached, and its frames on the contract timeline', () => {
  const names = ['left_hip_pitch_joint', 'left_knee_joint', 'waist_roll_joint'];
  const axes = sensitivityAxes(names, { 'jointStdRad.left_knee_joint': 0.004 });
  const yaw = quatFromAxisAngle([0, 0, 1], 1.2);
  const base = {
    rootPosM: [0, 0, 0.8] as const,
    rootQuatWxyz: yaw,
    jointPosRad: [0.1, 0.3, -0.02],
    placeOnFloor: true,
  };

  it('inverts perturbedInitialState (joints by σ, roll then pitch about the body axes), a residual yaw ignored', () => {
    const delta = [3, -2, 1.5, 7, -4];
    const p = perturbedInitialState(base, axes, delta);
    const measured = (q: readonly number[]) => ({ jointPosRad: p.jointPosRad, imuQuatWxyz: q });
    const from = { jointPosRad: base.jointPosRad, imuQuatWxyz: base.rootQuatWxyz };
    const back = reachedPerturbation(from, measured(p.rootQuatWxyz), axes);
    back.forEach((v, i) => expect(v).toBeCloseTo(delta[i], 9));
    const twisted = quatMul(p.rootQuatWxyz, quatFromAxisAngle([0, 0, 1], 0.05));
    const back2 = reachedPerturbation(from, measured(twisted), axes);
    back2.forEach((v, i) => expect(v).toBeCloseTo(delta[i], 9));
    // Control: roll and pitch swapped in the composition are not read back as asked.
    const swapped = quatMul(
      base.rootQuatWxyz,
      quatMul(
        quatFromAxisAngle([0, 1, 0], -4 * ATTITUDE_SIGMA_RAD),
        quatFromAxisAngle([1, 0, 0], 7 * ATTITUDE_SIGMA_RAD),
      ),
    );
    const back3 = reachedPerturbation(from, measured(swapped), axes);
    expect(Math.abs(back3[3] - 7) + Math.abs(back3[4] + 4)).toBeGreaterThan(1e-6);
  });

  it('interpolates uneven samples onto t = k/r, holds the last frame, refuses time going back', () => {
    const timeS = [0, 0.004, 0.006, 0.02, 0.031];
    const J = 2;
    const jointPosRad = Float64Array.from(timeS.flatMap((t) => [t * 100, -t]));
    const q = (a: number) => Array.from(quatFromAxisAngle([1, 0, 0], a));
    const rootQuatWxyz = Float64Array.from(timeS.flatMap((t) => q(t * 10)));
    const e = timedFramesOnTimeline({ timeS, jointPosRad, rootQuatWxyz }, 100, 5);
    expect(e.frameCount).toBe(5);
    // t = 0.01 lies between 0.006 and 0.02: linear in time.
    expect(e.jointPosRad[J * 1]).toBeCloseTo(1, 12);
    expect(e.jointPosRad[J * 2]).toBeCloseTo(2, 12);
    expect(e.jointPosRad[J * 3]).toBeCloseTo(3, 12);
    // Beyond the last sample: held.
    expect(e.jointPosRad[J * 4]).toBeCloseTo(3.1, 12);
    expect(
      Array.from(e.rootQuatWxyz)
        .slice(8, 12)
        .map((v) => +v.toFixed(12)),
    ).toEqual(q(0.2).map((v) => +v.toFixed(12)));
    expect(() =>
      timedFramesOnTimeline(
        { timeS: [0, 0.01, 0.01], jointPosRad: new Float64Array(6), rootQuatWxyz: new Float64Array(12) },
        100,
        2,
      ),
    ).toThrow(/recorded frame 2 at 0.01 s does not follow 0.01 s/);
  });
});

describe('geometry of a Gram', () => {
  it('dominant direction, share and condition number of a diagonal Gram', () => {
    const g = fromRows([
      [9, 0, 0],
      [0, 4, 0],
      [0, 0, 1],
    ]);
    const geo = gramGeometry(g, ['left_knee', 'waist_pitch', 'root_roll']);
    expect(geo.dominantAxes[0]).toEqual({ axis: 'left_knee', weight: 1 });
    expect(geo.dominantShare).toBeCloseTo(9 / 14, 12);
    expect(geo.condition).toBeCloseTo(9, 12);
    const rank1 = fromRows([
      [1, 1],
      [1, 1],
    ]);
    expect(gramGeometry(rank1, ['a', 'b']).condition).toBeNull();
    expect(predictedResponse(g, [0, 1, 0])).toBeCloseTo(2, 12);
  });

  it('D_G is 0 for the same geometry at another gain; rotating the dominant axis by 30° gives a 30° angle', () => {
    const g = AtA(A);
    const g3 = fromRows(
      Array.from({ length: 3 }, (_, i) => Array.from({ length: 3 }, (_, j) => 7 * g.data[i * 3 + j])),
    );
    expect(gramDiscrepancy(g, g3)).toBeLessThan(1e-12);
    const c = Math.cos(Math.PI / 6);
    const s = Math.sin(Math.PI / 6);
    const a = fromRows([
      [4, 0],
      [0, 1],
    ]);
    // R diag(4,1) Rᵀ with R a 30° rotation.
    const b = fromRows([
      [4 * c * c + s * s, (4 - 1) * c * s],
      [(4 - 1) * c * s, 4 * s * s + c * c],
    ]);
    const angle = directionAngleDeg(gramGeometry(a, ['x', 'y']).dominant, gramGeometry(b, ['x', 'y']).dominant);
    expect(angle).toBeCloseTo(30, 9);
    expect(gramDiscrepancy(a, b)).toBeGreaterThan(0.1);
  });

  it('bit-identical repeats have ICC 1 (the replay audit); a repeat that differs does not', () => {
    const runs = [0.12, 0.5, 0.31, 0.9];
    const same = icc(runs.map((v) => [v, v]));
    expect(same.available && same.iccA1.available && same.iccA1.estimate).toBe(1);
    const off = icc(runs.map((v, i) => [v, v + (i % 2 ? 0.05 : -0.05)]));
    expect(off.available && off.iccA1.available && off.iccA1.estimate).toBeLessThan(1);
  });
});

describe('sensitivity plan', () => {
  const names = [
    'left_hip_pitch_joint',
    'left_knee_joint',
    'left_shoulder_pitch_joint',
    'waist_yaw_joint',
    'right_ankle_roll_joint',
  ];
  it('perturbs legs and waist by name (never arms), σ measured or floored, then root roll and pitch', () => {
    const axes = sensitivityAxes(names, {
      'jointStdRad.left_knee_joint': 0.003,
      'jointStdRad.left_hip_pitch_joint': 1e-9,
    });
    expect(axes.map((a) => [a.name, a.sigma, a.sigmaSource])).toEqual([
      ['left_hip_pitch_joint', SIGMA_FLOOR_RAD, 'floor'],
      ['left_knee_joint', 0.003, 'measured'],
      ['waist_yaw_joint', SIGMA_FLOOR_RAD, 'floor'],
      ['right_ankle_roll_joint', SIGMA_FLOOR_RAD, 'floor'],
      ['root_roll', ATTITUDE_SIGMA_RAD, 'stated'],
      ['root_pitch', ATTITUDE_SIGMA_RAD, 'stated'],
    ]);
    const base = {
      rootPosM: [0, 0, 0.8] as const,
      rootQuatWxyz: [1, 0, 0, 0] as const,
      jointPosRad: [0, 0, 0, 0, 0],
      placeOnFloor: true,
    };
    const p = perturbedInitialState(base, axes, [0, 2, 0, 0, 5, 0]);
    expect(p.jointPosRad).toEqual([0, 0.006, 0, 0, 0]);
    // Roll of 5σ about the body x axis: q = (cos(θ/2), sin(θ/2), 0, 0).
    const th = 5 * ATTITUDE_SIGMA_RAD;
    expect(p.rootQuatWxyz[0]).toBeCloseTo(Math.cos(th / 2), 14);
    expect(p.rootQuatWxyz[1]).toBeCloseTo(Math.sin(th / 2), 14);
    expect(p.rootQuatWxyz[2]).toBeCloseTo(0, 14);
    expect(() => perturbedInitialState(base, axes, [1, 2])).toThrow(/6 axes/);
  });

  it('body responses are in the root’s heading frame: turning the whole run leaves them unchanged', () => {
    // A toy "FK": body b sits at root + R(q)·(b, 0, 0.1·b).
    const B = 3;
    const fk = (
      rp: ArrayLike<number>,
      rq: ArrayLike<number>,
      _q: ArrayLike<number>,
      out: Float64Array,
      _oq: Float64Array,
      ro: number,
      qo: number,
    ) => {
      const yaw = 2 * Math.atan2(rq[qo + 3], rq[qo]);
      for (let b = 0; b < B; b++) {
        out[3 * b] = rp[ro] + Math.cos(yaw) * b;
        out[3 * b + 1] = rp[ro + 1] + Math.sin(yaw) * b;
        out[3 * b + 2] = rp[ro + 2] + 0.1 * b;
      }
    };
    const run = (yaw: number) => ({
      frameCount: 2,
      rootPosM: [1, 2, 0.8, 1.1, 2, 0.8],
      rootQuatWxyz: [Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2), Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)],
      jointPosRad: [0.1, 0.2],
    });
    const a = responseVectors(run(0), 3, B, 1, fk);
    const b = responseVectors(run(1.2), 3, B, 1, fk);
    a.bodyMm.forEach((v, i) => expect(b.bodyMm[i]).toBeCloseTo(v, 9));
    // The third frame holds the run's last frame (it ended after 2).
    expect(a.jointRad[2]).toBeCloseTo(0.2 / Math.sqrt(3), 12);
    expect(responseMagnitude([3, 4], [0, 0], 2)).toBe(2.5);
  });
});

describe('sensitivityEllipses: the response ellipse in the plane of the dominant directions', () => {
  const diag = (...v: number[]) => fromRows(v.map((x, i) => v.map((_, j) => (i === j ? x : 0))));
  const maxAbs = (a: Float64Array) => Math.max(...Array.from(a, Math.abs));

  it('semi-axes are √(λ/tr G) along the first Gram’s eigenvectors; an isotropic Gram is the reference circle', () => {
    const e = sensitivityEllipses([diag(4, 1, 0), diag(1, 1, 1)], 401);
    expect(Math.abs(e.basis[0][0])).toBeCloseTo(1, 12);
    expect(Math.abs(e.basis[1][1])).toBeCloseTo(1, 12);
    const [g, iso] = e.curves;
    expect(maxAbs(g.x)).toBeCloseTo(Math.sqrt(4 / 5), 9);
    expect(maxAbs(g.y)).toBeCloseTo(Math.sqrt(1 / 5), 4);
    // Closed: the first point repeated last.
    expect(g.x[400]).toBeCloseTo(g.x[0], 12);
    expect(g.y[400]).toBeCloseTo(g.y[0], 12);
    // The control: a Gram proportional to I is the isotropic circle, at every vertex.
    expect(e.isotropicRadius).toBeCloseTo(1 / Math.sqrt(3), 14);
    for (let k = 0; k < 401; k++) expect(Math.hypot(iso.x[k], iso.y[k])).toBeCloseTo(e.isotropicRadius, 12);
  });

  it('a Gram turned in the plane draws an ellipse tilted by the same angle (the geometry changing with scale)', () => {
    const turn = (deg: number) => {
      const c = Math.cos((deg * Math.PI) / 180);
      const s = Math.sin((deg * Math.PI) / 180);
      // R diag(9, 1) Rᵀ in the first two axes, a third axis with a small response.
      return fromRows([
        [9 * c * c + s * s, 8 * c * s, 0],
        [8 * c * s, 9 * s * s + c * c, 0],
        [0, 0, 0.5],
      ]);
    };
    const e = sensitivityEllipses([turn(0), turn(30)], 721);
    const tilted = e.curves[1];
    let best = 0;
    let at = 0;
    tilted.x.forEach((x, k) => {
      const r = Math.hypot(x, tilted.y[k]);
      if (r > best) [best, at] = [r, k];
    });
    const angle = ((Math.atan2(tilted.y[at], tilted.x[at]) * 180) / Math.PI + 360) % 180;
    // The first basis vector is ±x, the second ±y: the major axis sits at ±30° from x.
    expect(Math.min(Math.abs(angle - 30), Math.abs(angle - 150))).toBeLessThan(0.6);
    expect(best).toBeCloseTo(Math.sqrt(9 / 10.5), 4);
    expect(() => sensitivityEllipses([diag(1, 1), diag(1, 1, 1)])).toThrow(/same axes/);
    expect(() => sensitivityEllipses([diag(0, 0)])).toThrow(/zero trace/);
  });
});
