import { describe, expect, it } from 'vitest';
import { bradleyTerry, fitTheta, judgeTable, stronglyConnected } from '../../src/domain/analysis/bradleyTerry';
import { selectClips, selectionPath } from '../../src/domain/analysis/clipSelection';
import { denseScores, type ScoreCell } from '../../src/domain/analysis/scoreMatrix';
import { seededUniform } from '../../src/domain/stats/prng';

// The minimal clip set on a constructed matrix whose answer is known, and Bradley–Terry against
// closed forms and an independent Newton fit.

const bindings = ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'];
function cells(columns: Record<string, number[]>): ScoreCell[] {
  return Object.entries(columns).flatMap(([clip, v]) => v.map((value, i) => ({ binding: bindings[i], clip, value })));
}

describe('minimal hardware clip set (greedy U = g·(1 − R²))', () => {
  // walk: widest spread (largest Gini). run: an exact linear copy of walk (redundant given walk).
  // jump: unrelated to walk, moderate spread. idle: every binding alike (Gini 0).
  const walk = [10, 40, 20, 80, 30, 60];
  const run = walk.map((v) => 2 * v + 5);
  const jump = [30, 25, 45, 28, 50, 22];
  const idle = [5, 5, 5, 5, 5, 5];

  it('takes the widest clip first, then the one it does not predict; the copy and the flat clip add ~nothing', () => {
    const d = denseScores(cells({ walk, run, jump, idle }));
    const path = selectionPath(d, { lambda: 1e-3 });
    expect(path.available).toBe(true);
    if (!path.available) return;
    expect(path.steps.map((s) => s.clip).slice(0, 2)).toEqual(['walk', 'jump']);
    const runStep = path.steps.find((s) => s.clip === 'run')!;
    expect(runStep.r2).toBeGreaterThan(0.99);
    expect(path.steps.find((s) => s.clip === 'idle')!.marginalUtility).toBe(0);
    expect(path.steps.at(-1)!.cumulativeShare).toBeCloseTo(1, 12);
    const sel = selectClips(d, { lambda: 1e-3, share: 0.8 });
    expect(sel.available && sel.minimalSet).toEqual(['walk', 'jump']);
  });

  it('control: when run is made independent of walk, it joins the set', () => {
    const runIndependent = [90, 15, 70, 35, 20, 55];
    const sel = selectClips(denseScores(cells({ walk, run: runIndependent, jump, idle })), {
      lambda: 1e-3,
      share: 0.95,
    });
    expect(sel.available && sel.minimalSet).toContain('run');
  });

  it('the share is the cumulative utility over the whole path; robustness forces each chosen clip first', () => {
    const d = denseScores(cells({ walk, run, jump, idle }));
    const sel = selectClips(d, { lambda: 1e-3 });
    if (!sel.available) throw new Error(sel.reason);
    const total = sel.path.reduce((s, x) => s + x.marginalUtility, 0);
    let cum = 0;
    for (const s of sel.path) {
      cum += s.marginalUtility;
      expect(s.cumulativeShare).toBeCloseTo(cum / total, 12);
      expect(s.marginalUtility).toBeCloseTo(s.gini * (1 - s.r2), 12);
    }
    expect(sel.robustness.map((r) => r.forcedFirst)).toEqual(sel.minimalSet);
    // Forcing jump first still yields {walk, jump}: the set survives.
    expect(sel.robustness.every((r) => r.survives)).toBe(true);
  });

  it('refuses what it cannot judge: fewer than 3 bindings; a binding missing a clip drops that clip, stated', () => {
    const two = denseScores([
      { binding: 'a', clip: 'x', value: 1 },
      { binding: 'b', clip: 'x', value: 2 },
    ]);
    expect(selectClips(two).available).toBe(false);
    const holes = denseScores([
      ...cells({ walk, jump }),
      ...bindings.slice(1).map((b, i) => ({ binding: b, clip: 'run', value: i })),
    ]);
    expect(holes.droppedClips).toEqual(['run']);
    expect(() => denseScores([...cells({ walk }), { binding: 'b1', clip: 'walk', value: 3 }])).toThrow(/appears twice/);
  });
});

/** Newton–Raphson on the BT log-likelihood with θ₀ fixed at 0 (independent of the MM path). */
function newtonTheta(wins: number[][]): number[] {
  const k = wins.length;
  const th = new Array(k).fill(0);
  for (let it = 0; it < 100; it++) {
    const g = new Array(k).fill(0);
    const H = Array.from({ length: k }, () => new Array(k).fill(0));
    for (let i = 0; i < k; i++)
      for (let j = 0; j < k; j++) {
        if (i === j) continue;
        const n = wins[i][j] + wins[j][i];
        const p = 1 / (1 + Math.exp(th[j] - th[i]));
        g[i] += wins[i][j] - n * p;
        H[i][i] -= n * p * (1 - p);
        H[i][j] += n * p * (1 - p);
      }
    // Solve on players 1..k−1 (θ₀ = 0).
    const m = k - 1;
    const A = Array.from({ length: m }, (_, r) => [...H[r + 1].slice(1), -g[r + 1]]);
    for (let c = 0; c < m; c++) {
      for (let r = 0; r < m; r++) {
        if (r === c) continue;
        const f = A[r][c] / A[c][c];
        for (let q = c; q <= m; q++) A[r][q] -= f * A[c][q];
      }
    }
    for (let r = 0; r < m; r++) th[r + 1] += A[r][m] / A[r][r];
  }
  const mean = th.reduce((a, b) => a + b, 0) / k;
  return th.map((t) => t - mean);
}

describe('Bradley–Terry', () => {
  it('two players, 3 wins to 1: p_a/p_b = 3 exactly', () => {
    const f = fitTheta(
      [
        [0, 3],
        [1, 0],
      ],
      [
        [0, 4],
        [4, 0],
      ],
    )!;
    expect(f.theta[0] - f.theta[1]).toBeCloseTo(Math.log(3), 10);
    expect(f.theta[0] + f.theta[1]).toBeCloseTo(0, 12);
  });

  it('agrees with an independent Newton fit on a 4-player table (the score equations hold)', () => {
    const wins = [
      [0, 7, 9, 7],
      [3, 0, 6, 8],
      [1, 4, 0, 5],
      [3, 2, 5, 0],
    ];
    const n = wins.map((r, i) => r.map((v, j) => v + wins[j][i]));
    const mm = fitTheta(wins, n)!;
    const nt = newtonTheta(wins);
    mm.theta.forEach((t, i) => expect(t).toBeCloseTo(nt[i], 8));
    // Score equation: W_i = Σ_j n_ij p_i/(p_i+p_j).
    const p = [...mm.theta].map(Math.exp);
    for (let i = 0; i < 4; i++) {
      const W = wins[i].reduce((a, b) => a + b, 0);
      let e = 0;
      for (let j = 0; j < 4; j++) if (j !== i) e += (n[i][j] * p[i]) / (p[i] + p[j]);
      expect(e).toBeCloseTo(W, 8);
    }
  });

  it('clips as judges: lower error wins, a tie is half a win each; reading the direction backwards reverses the ranking (control)', () => {
    const t = judgeTable([1, 2, 2], 'lower');
    expect(t.wins[0][1]).toBe(1);
    expect(t.wins[1][2]).toBe(0.5);
    expect(t.wins[2][1]).toBe(0.5);
    // Player a is best on most clips, c worst; one clip reverses a and b.
    const judges = [
      [10, 20, 30],
      [11, 19, 35],
      [12, 25, 31],
      [30, 20, 40],
      [9, 22, 21],
    ];
    const r = bradleyTerry(['a', 'b', 'c'], judges, 'lower', { seed: 5, B: 400 });
    if (!r.available) throw new Error(r.reason);
    expect(r.strengths.map((s) => s.player)).toEqual(['a', 'b', 'c']);
    expect(r.virtualTies).toBe(0);
    for (const s of r.strengths) {
      expect(s.lo!).toBeLessThanOrEqual(s.theta + 1e-9);
      expect(s.hi!).toBeGreaterThanOrEqual(s.theta - 1e-9);
    }
    const back = bradleyTerry(['a', 'b', 'c'], judges, 'higher', { seed: 5, B: 50 });
    expect(back.available && back.strengths.map((s) => s.player)).toEqual(['c', 'b', 'a']);
  });

  it('a binding that wins every comparison has no MLE: one virtual tie per pair is added and said', () => {
    const wins = [
      [0, 3],
      [0, 0],
    ];
    expect(stronglyConnected(wins)).toBe(false);
    expect(
      fitTheta(wins, [
        [0, 3],
        [3, 0],
      ]),
    ).toBeNull();
    const r = bradleyTerry(
      ['a', 'b'],
      [
        [1, 2],
        [1, 3],
        [0, 5],
      ],
      'lower',
      { seed: 1, B: 100 },
    );
    expect(r.available && r.virtualTies).toBe(1);
    // With the tie: a has 3.5 of 4 comparisons, so p_a/p_b = 7.
    expect(r.available && r.strengths[0].theta - r.strengths[1].theta).toBeCloseTo(Math.log(7), 8);
  });

  it('is reproducible for a seed and bootstraps over clips', () => {
    const rand = seededUniform(9);
    const judges = Array.from({ length: 12 }, () => [rand(), rand() + 0.2, rand() + 0.4, rand() + 0.6]);
    const a = bradleyTerry(['w', 'x', 'y', 'z'], judges, 'lower', { seed: 3, B: 300 });
    const b = bradleyTerry(['w', 'x', 'y', 'z'], judges, 'lower', { seed: 3, B: 300 });
    expect(a).toEqual(b);
    expect(a.available && a.judges).toBe(12);
  });
});
