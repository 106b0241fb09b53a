import { describe, expect, it } from 'vitest';
import { clipCell, gapUncertainty, reliability, rowCell } from '../../src/domain/analysis/gapUncertainty';
import { gapReport, type MatchedPair } from '../../src/domain/metrics/aggregate';
import { availableReading as ok, NUMERIC_READINGS, type EpisodeMetrics } from '../../src/domain/metrics/readings';
import { hodgesLehmann } from '../../src/domain/stats/paired';
import { seededUniform } from '../../src/domain/stats/prng';

// Uncertainty on Table 11 and reliability across trials: point estimates equal Table 11's own
// aggregation (an independent code path), coverage of the pair-cluster bootstrap by simulation.

function episode(v: number): EpisodeMetrics {
  const m = {
    contract: 'mb-metrics/1',
    K: 100,
    failure: ok(null),
    progressStop: ok(null),
  } as unknown as EpisodeMetrics;
  for (const key of NUMERIC_READINGS) (m as unknown as Record<string, unknown>)[key] = ok(v);
  return m;
}
function pair(
  clipId: string,
  sim: number[],
  real: number[],
  group: 'locomotion' | 'dynamic' = 'locomotion',
): MatchedPair {
  return { wbc: 'w', clipId, group, sim: sim.map(episode), real: real.map(episode) };
}
function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

describe('uncertainty on a Table 11 row', () => {
  const pairs = [
    pair('a', [10], [11.2, 11.0, 11.4]),
    pair('b', [20], [22.5, 21.9, 22.2]),
    pair('c', [15], [16.4, 16.6, 16.1]),
    pair('d', [30], [33.3, 32.7, 33.9]),
    pair('e', [12], [13.0, 13.5, 13.2], 'dynamic'),
  ];

  it('the estimates are Table 11’s: macro-averaged Sim, Real and Gap %; HL is over the per-pair gaps', () => {
    const t11 = gapReport(pairs).wbcs[0];
    const cell = rowCell(pairs, 'mpjpeLMm', { seed: 1, B: 500 });
    const row = t11.rows.find((r) => r.key === 'mpjpeLMm')!;
    expect(cell.sim.available && cell.sim.estimate).toBeCloseTo(row.sim.available ? row.sim.value : NaN, 12);
    expect(cell.real.available && cell.real.estimate).toBeCloseTo(row.real.available ? row.real.value : NaN, 12);
    expect(cell.gapPct.available && cell.gapPct.estimate).toBeCloseTo(
      row.gapPercent.available ? row.gapPercent.value : NaN,
      12,
    );
    const perPair = t11.clips.map((c) => (c.gapPercent.mpjpeLMm.available ? c.gapPercent.mpjpeLMm.value : NaN));
    const hl = hodgesLehmann(perPair);
    expect(cell.hlMedian).toEqual(hl);
    expect(cell.gapPct.available && cell.gapPct.resampled).toBe('matched pairs');
    expect(cell.n).toBe(5);
    // Every clip is ~10 % worse on the robot: distinguishable from 0.
    expect(cell.distinguishable).toBe(true);
    if (cell.gapPct.available) expect(cell.gapPct.lo).toBeGreaterThan(5);
  });

  it('a gap centred on 0 is not distinguishable from zero (control)', () => {
    const noGap = [
      pair('a', [10], [10.5, 10.2, 10.4]),
      pair('b', [20], [19.0, 19.4, 18.8]),
      pair('c', [15], [15.9, 15.5, 16.0]),
      pair('d', [30], [28.5, 29.0, 28.8]),
    ];
    const cell = rowCell(noGap, 'mpjpeLMm', { seed: 2, B: 500 });
    expect(cell.distinguishable).toBe(false);
  });

  it('one clip’s cell resamples its rollouts and trials; HL is over per-trial gaps against the simulation mean', () => {
    const c = clipCell(pairs[0], 'mpjpeLMm', { seed: 3, B: 500 });
    expect(c.real.available && c.real.resampled).toBe('episodes');
    expect(c.real.available && c.real.units).toBe(3);
    const hl = hodgesLehmann([12, 10, 14]);
    if (!c.hlMedian.available || !hl.available) throw new Error('HL unavailable');
    expect(c.hlMedian.estimate).toBeCloseTo(hl.estimate, 10);
    expect(c.hlMedian.lo).toBeCloseTo(hl.lo, 10);
    expect(c.hlMedian.hi).toBeCloseTo(hl.hi, 10);
    // With 3 trials the exact HL interval cannot reach 95 %: said, not hidden.
    expect(c.hlMedian.available && c.hlMedian.levelAchieved).toBe(false);
  });

  it('one pair in a row gives no pair bootstrap (it says to read the clip row)', () => {
    const cell = rowCell([pairs[0]], 'mpjpeLMm', { seed: 1, B: 100 });
    expect(cell.gapPct.available).toBe(false);
    if (!cell.gapPct.available) expect(cell.gapPct.reason).toMatch(/at least 2/);
  });

  it('is per binding, per group and per clip, reproducible for a seed', () => {
    const u = gapUncertainty(pairs, { seed: 4, B: 200 });
    expect(u).toHaveLength(1);
    expect(u[0].byGroup.map((g) => [g.group, g.clips])).toEqual([
      ['dynamic', 1],
      ['locomotion', 4],
    ]);
    expect(u[0].clips).toHaveLength(5);
    expect(gapUncertainty(pairs, { seed: 4, B: 200 })).toEqual(u);
  });
});

describe('pair-cluster bootstrap coverage, by simulation', () => {
  // 20 clips of heterogeneous difficulty; the robot is 10 % worse on average with a clip-specific
  // excess (sd 8 %) and trial noise: the population macro gap is 10 %.
  function campaign(rand: () => number): MatchedPair[] {
    return Array.from({ length: 20 }, (_, c) => {
      const sim = 50 + 100 * rand();
      const excess = 0.1 + 0.08 * normal(rand);
      return pair(
        `c${c}`,
        [sim],
        [0, 1, 2].map(() => sim * (1 + excess) + 3 * normal(rand)),
      );
    });
  }
  const coverage = (level: number, runs: number) => {
    const rand = seededUniform(2024);
    let hit = 0;
    for (let r = 0; r < runs; r++) {
      const cell = rowCell(campaign(rand), 'mpjpeLMm', { seed: r, B: 400, level });
      if (cell.gapPct.available && cell.gapPct.lo <= 10 && 10 <= cell.gapPct.hi) hit++;
    }
    return hit / runs;
  };
  it('a 95 % CI covers the true gap in 88–99 % of campaigns; a 50 % CI in 35–65 % (control)', () => {
    const c95 = coverage(0.95, 300);
    const c50 = coverage(0.5, 200);
    expect(c95).toBeGreaterThan(0.88);
    expect(c95).toBeLessThan(0.99);
    expect(c50).toBeGreaterThan(0.35);
    expect(c50).toBeLessThan(0.65);
  });
});

describe('reliability across hardware trials (ICC(A,1))', () => {
  const rand = seededUniform(8);
  const clips = Array.from({ length: 8 }, (_, i) => 10 + 5 * i);
  it('trials that agree: ICC near 1, no flag', () => {
    const ps = clips.map((v, i) => pair(`c${i}`, [v], [v + 0.1 * rand(), v + 0.1 * rand(), v + 0.1 * rand()]));
    const r = reliability(ps, 'mpjpeLMm', 'real');
    expect(r.repeats).toBe(3);
    expect(r.icc.available && r.icc.estimate).toBeGreaterThan(0.99);
    expect(r.flag).toBeNull();
  });
  it('trials that disagree more than clips differ are flagged: "3 trials cannot resolve this reading"', () => {
    const ps = clips.map((v, i) =>
      pair(
        `c${i}`,
        [v],
        [0, 1, 2].map(() => 30 + 60 * rand()),
      ),
    );
    const r = reliability(ps, 'mpjpeLMm', 'real');
    expect(r.icc.available && r.icc.estimate).toBeLessThan(0.5);
    expect(r.flag).toBe('3 trials cannot resolve this reading');
  });
  it('a pair with fewer trials is left out and counted; one rollout per pair has no reliability', () => {
    const ps = [...clips.map((v, i) => pair(`c${i}`, [v], [v, v + 1, v + 2])), pair('short', [1], [1, 2])];
    const r = reliability(ps, 'mpjpeLMm', 'real');
    expect(r.pairs).toBe(8);
    expect(r.leftOut).toBe(1);
    const s = reliability(ps, 'mpjpeLMm', 'sim');
    expect(s.icc.available).toBe(false);
    if (!s.icc.available) expect(s.icc.reason).toMatch(/1 rollout per pair/);
  });
});
