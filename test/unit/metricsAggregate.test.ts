import { describe, expect, it } from 'vitest';
import {
  gapPercent,
  gapReport,
  meanOfReadings,
  successRate,
  summarizePair,
  type MatchedPair,
} from '../../src/domain/metrics/aggregate';
import {
  availableReading as ok,
  NUMERIC_READINGS,
  unavailableReading as na,
  type EpisodeMetrics,
  type HardFailure,
  type NumericReadingKey,
} from '../../src/domain/metrics/readings';

// Aggregation, hand-computed: trials → pair mean → macro over clips → Gap %.

/** An episode with every numeric reading = `v` unless overridden. */
function episode(
  v: number,
  over: Partial<Record<NumericReadingKey, number | null>> = {},
  failed = false,
  contract = 'mb-metrics/1',
): EpisodeMetrics {
  const failure: HardFailure | null = failed
    ? { frame: 3, timeS: 0.06, condition: 'root_height', body: 'pelvis', error: 0.3, threshold: 0.25 }
    : null;
  const m = { contract, K: 100, failure: ok(failure), progressStop: ok(null) } as unknown as EpisodeMetrics;
  for (const key of NUMERIC_READINGS) {
    const x = key in over ? over[key] : v;
    (m as unknown as Record<string, unknown>)[key] = x === null || x === undefined ? na(`no ${key} here`) : ok(x);
  }
  return m;
}
const noMocap = (v: number): EpisodeMetrics => ({
  ...episode(v, { mpjpeLMm: null, progressSoft: null }),
  failure: na('needs global root position'),
  progressStop: na('needs global root position'),
});

describe('Gap %', () => {
  it('is (Real − Sim)/Sim × 100', () => {
    expect(gapPercent(ok(10), ok(12))).toEqual(ok(20));
    expect(gapPercent(ok(8), ok(6))).toEqual(ok(-25));
    expect(gapPercent(ok(4), ok(4))).toEqual(ok(0));
  });

  it('is unavailable, with a reason, when Sim is 0 or either side is unavailable', () => {
    const z = gapPercent(ok(0), ok(3));
    expect(z.available).toBe(false);
    if (!z.available) expect(z.reason).toMatch(/Sim is 0/);
    const r = gapPercent(ok(2), na('no motion capture'));
    expect(r).toEqual(na('Real is unavailable: no motion capture'));
    expect(gapPercent(na('x'), ok(1))).toEqual(na('Sim is unavailable: x'));
  });
});

describe('trials → pair', () => {
  it('means every reading over the trials and gives SR as the share without hard failure', () => {
    const s = summarizePair([episode(10), episode(20, {}, true), episode(30)]);
    expect(s.episodes).toBe(3);
    expect(s.contract).toBe('mb-metrics/1');
    expect(s.readings.mpjpeLMm).toEqual(ok(20));
    expect(s.readings.jointJerkP95RadS3).toEqual(ok(20));
    expect(s.readings.successRate).toEqual(ok(2 / 3));
  });

  it('is unavailable when any trial lacks the reading (a mean over some repeats is another quantity)', () => {
    const s = summarizePair([episode(10), noMocap(20), episode(30)]);
    expect(s.readings.mpjpeLMm.available).toBe(false);
    if (!s.readings.mpjpeLMm.available) expect(s.readings.mpjpeLMm.reason).toMatch(/episode 2 of 3/);
    expect(s.readings.successRate.available).toBe(false);
    expect(s.readings.jointPosRmseRad).toEqual(ok(20));
    expect(meanOfReadings([])).toEqual(na('no reading values to average'));
    expect(successRate([])).toEqual(na('no episodes'));
  });

  it('refuses to mix contracts', () => {
    expect(() => summarizePair([episode(1), episode(2, {}, false, 'mb-metrics/1+custom-abcdef012345')])).toThrow(
      /different metric contracts/,
    );
  });
});

describe('pairs → clips (macro) → Table 11', () => {
  // WBC "sonic": three clips; WBC "holo": one clip. Real = 3 trials, Sim = 1 episode.
  const pairs: MatchedPair[] = [
    {
      wbc: 'sonic',
      clipId: 'walk',
      group: 'locomotion',
      sim: [episode(10)],
      real: [episode(12), episode(14), episode(16, {}, true)],
    },
    {
      wbc: 'sonic',
      clipId: 'wave',
      group: 'upper_body',
      sim: [episode(20)],
      real: [episode(30), episode(30), episode(30)],
    },
    {
      wbc: 'sonic',
      clipId: 'run',
      group: 'locomotion',
      sim: [episode(30, { jointJerkRmsRadS3: 0 })],
      real: [episode(33), episode(36), episode(39)],
    },
    { wbc: 'holo', clipId: 'walk', sim: [episode(5)], real: [noMocap(6), noMocap(6), noMocap(6)] },
  ];
  const report = gapReport(pairs);
  const sonic = report.wbcs.find((w) => w.wbc === 'sonic')!;
  const holo = report.wbcs.find((w) => w.wbc === 'holo')!;
  const row = (rows: typeof sonic.rows, key: string) => rows.find((r) => r.key === key)!;

  it('per clip: pair means and their gap', () => {
    const walk = sonic.clips.find((c) => c.clipId === 'walk')!;
    expect(walk.real.readings.mpjpeLMm).toEqual(ok(14));
    expect(walk.gapPercent.mpjpeLMm).toEqual(ok(40)); // (14 − 10)/10
    expect(walk.real.readings.successRate).toEqual(ok(2 / 3));
    expect(walk.sim.readings.successRate).toEqual(ok(1));
  });

  it('overall: macro-average over the matched clips, then Gap % of the averages', () => {
    // Sim (10 + 20 + 30)/3 = 20; Real (14 + 30 + 36)/3 = 80/3; gap (80/3 − 20)/20 = 33.33…%
    const r = row(sonic.rows, 'mpjpeLMm');
    expect(r.sim).toEqual(ok(20));
    expect(r.real.available && r.real.value).toBeCloseTo(80 / 3, 12);
    expect(r.gapPercent.available && r.gapPercent.value).toBeCloseTo(100 / 3, 10);
    expect(r.clips).toBe(3);
    expect(r.excluded).toEqual([]);
    // SR: Sim 1 on every clip; Real (2/3 + 1 + 1)/3 = 8/9.
    const sr = row(sonic.rows, 'successRate');
    expect(sr.sim).toEqual(ok(1));
    expect(sr.real.available && sr.real.value).toBeCloseTo(8 / 9, 12);
    // A Sim of 0 on one clip is still averaged (0 is a value); only a macro Sim of 0 voids the gap.
    const jerk = row(sonic.rows, 'jointJerkRmsRadS3');
    expect(jerk.sim).toEqual(ok(10));
    expect(sonic.clips.find((c) => c.clipId === 'run')!.gapPercent.jointJerkRmsRadS3.available).toBe(false);
  });

  it('by capability group', () => {
    expect(sonic.byGroup.map((g) => [g.group, g.clips])).toEqual([
      ['locomotion', 2],
      ['upper_body', 1],
    ]);
    const loco = row(sonic.byGroup[0].rows, 'mpjpeLMm');
    expect(loco.sim).toEqual(ok(20)); // (10 + 30)/2
    expect(loco.real).toEqual(ok(25)); // (14 + 36)/2
    expect(loco.gapPercent).toEqual(ok(25));
    expect(holo.byGroup.map((g) => g.group)).toEqual(['unassigned']);
  });

  it('a reading unavailable on the real robot (no motion capture) is unavailable in the table, with the clips and reasons', () => {
    const r = row(holo.rows, 'mpjpeLMm');
    expect(r.clips).toBe(0);
    expect(r.real.available).toBe(false);
    expect(r.gapPercent.available).toBe(false);
    expect(r.excluded).toEqual([{ clipId: 'walk', reason: 'Real: unavailable in episode 1 of 3: no mpjpeLMm here' }]);
    expect(row(holo.rows, 'successRate').gapPercent.available).toBe(false);
    // Joint readings need no global state: available.
    expect(row(holo.rows, 'jointPosRmseRad').gapPercent).toEqual(ok(20));
  });

  it('refuses repeated pairs and mixed contracts', () => {
    expect(() => gapReport([pairs[0], pairs[0]])).toThrow(/appears twice/);
    expect(() =>
      gapReport([pairs[0], { ...pairs[1], sim: [episode(1, {}, false, 'mb-metrics/1+custom-000000000000')] }]),
    ).toThrow(/different metric contracts/);
    expect(report.contract).toBe('mb-metrics/1');
  });
});
