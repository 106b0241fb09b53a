// The progress arithmetic shared by the CLI line and the board, and the simulator worker budget.
import { describe, expect, it } from 'vitest';
import { formatDuration, progressLine, progressRates } from '../../src/domain/qualification';
import { simWorkerBudget } from '../../src/domain/sim/simWorkerBudget';

const MiB = 2 ** 20;

describe('progressRates', () => {
  it('rate is clip-seconds done per elapsed second; time left is what remains at that rate', () => {
    const r = progressRates({
      clipSecondsPlanned: 360,
      clipSecondsDone: 90,
      elapsedS: 6,
      pairsDone: 3,
      pairsTotal: 12,
    });
    expect(r.fraction).toBe(0.25);
    expect(r.clipSecondsPerS).toBe(15);
    expect(r.etaS).toBe(18);
  });
  it('no rate and no time left before anything was simulated (or at time zero)', () => {
    expect(
      progressRates({ clipSecondsPlanned: 360, clipSecondsDone: 0, elapsedS: 4, pairsDone: 0, pairsTotal: 12 }),
    ).toEqual({ fraction: 0, clipSecondsPerS: null, etaS: null });
    expect(
      progressRates({ clipSecondsPlanned: 360, clipSecondsDone: 5, elapsedS: 0, pairsDone: 0, pairsTotal: 12 }).etaS,
    ).toBe(null);
  });
  it('done is capped at the plan (partial rollouts may overshoot): fraction 1, nothing left', () => {
    const r = progressRates({
      clipSecondsPlanned: 100,
      clipSecondsDone: 104,
      elapsedS: 10,
      pairsDone: 4,
      pairsTotal: 4,
    });
    expect(r).toEqual({ fraction: 1, clipSecondsPerS: 10, etaS: 0 });
  });
  it('nothing to simulate (every pair decided before): the fraction counts pairs', () => {
    expect(
      progressRates({ clipSecondsPlanned: 0, clipSecondsDone: 0, elapsedS: 1, pairsDone: 2, pairsTotal: 8 }).fraction,
    ).toBe(0.25);
    expect(
      progressRates({ clipSecondsPlanned: 0, clipSecondsDone: 0, elapsedS: 1, pairsDone: 0, pairsTotal: 0 }).fraction,
    ).toBe(1);
  });
});

describe('formatDuration and progressLine', () => {
  it('m:ss below an hour, h:mm:ss from an hour, --:-- when unknown', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(59.6)).toBe('1:00');
    expect(formatDuration(3599)).toBe('59:59');
    expect(formatDuration(3725)).toBe('1:02:05');
    expect(formatDuration(null)).toBe('--:--');
    expect(formatDuration(Infinity)).toBe('--:--');
  });
  it('names done/total, clip-seconds, the rate and the time left', () => {
    const p = { rolloutsDone: 5, rolloutsPlanned: 36, pairsDone: 1, pairsTotal: 12, clipSecondsPlanned: 358.4 };
    expect(progressLine({ ...p, clipSecondsDone: 52.2, elapsedS: 3.6 })).toBe(
      '5/36 rollouts · 1/12 pairs · 52/358 clip-s · 14.5 clip-s/s · 0:21 left',
    );
    expect(progressLine({ ...p, rolloutsDone: 0, clipSecondsDone: 0, elapsedS: 1 })).toBe(
      '0/36 rollouts · 1/12 pairs · 0/358 clip-s · -- clip-s/s · --:-- left',
    );
  });
});

describe('simWorkerBudget', () => {
  it('one worker per core when memory allows', () => {
    expect(simWorkerBudget({ cores: 8, availableBytes: 16 * 1024 * MiB })).toEqual({
      workers: 8,
      limitedBy: 'cores',
      memoryWorkers: 62,
    });
  });
  it('capped by available memory less the main process reserve, at the measured resident size per worker', () => {
    // (3 GiB − 512 MiB) / 256 MiB = 10
    expect(simWorkerBudget({ cores: 16, availableBytes: 3 * 1024 * MiB })).toEqual({
      workers: 10,
      limitedBy: 'memory',
      memoryWorkers: 10,
    });
    expect(
      simWorkerBudget({ cores: 4, availableBytes: 1000 * MiB, workerBytes: 100 * MiB, reserveBytes: 0 }).workers,
    ).toBe(4);
  });
  it('never below one worker', () => {
    expect(simWorkerBudget({ cores: 2, availableBytes: 100 * MiB })).toEqual({
      workers: 1,
      limitedBy: 'memory',
      memoryWorkers: 0,
    });
    expect(simWorkerBudget({ cores: 0, availableBytes: 16 * 1024 * MiB }).workers).toBe(1);
  });
});
