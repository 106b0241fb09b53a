// The checks on campaign rows read back (src/domain/trace/storedRecords.ts) and the rollout
// dedupe of the analysis reader: each problem named by its field, a whole record accepted.
import { describe, expect, it } from 'vitest';
import { allReadingsUnavailable, availableReading, type EpisodeMetrics } from '../../src/domain/metrics/readings';
import { metricScalars, type EpisodeResultRow } from '../../src/domain/trace/records';
import {
  calibrationRecordProblem,
  episodeMetricsProblem,
  scalarDisagreement,
} from '../../src/domain/trace/storedRecords';
import { dedupeRollouts } from '../../src/services/analysis/campaignAnalysisReader';

const metrics = (): EpisodeMetrics => ({
  ...allReadingsUnavailable('mb-metrics/1', 100, 'test'),
  failure: availableReading(null),
  progressStop: availableReading(null),
  progressSoft: availableReading(1),
  mpjpeLMm: availableReading(41.25),
});

const calibration = () => ({
  robotUnit: 'g1-1',
  capturedAt: '2026-12-06T10:00:00.000Z',
  clipId: null,
  measured: { jointPosRad: new Array(29).fill(0.1), imuQuatWxyz: [1, 0, 0, 0], rootPosM: null, rootQuatWxyz: null },
  stillness: { windowS: 1 },
  simulatorInitialState: {
    rootPosM: [0, 0, 0.79],
    rootQuatWxyz: [0.7071068, 0, 0, 0.7071068],
    jointPosRad: new Array(29).fill(0),
    placeOnFloor: true,
  },
  residuals: { settledVsMeasured: null, measuredVsClipStart: null },
});

describe('stored metrics rows', () => {
  it('accepts a whole EpisodeMetrics and names the first broken field otherwise', () => {
    expect(episodeMetricsProblem(metrics(), 'mb-metrics/1')).toBeNull();
    expect(episodeMetricsProblem(null, 'mb-metrics/1')).toBe('is null, not an object');
    expect(episodeMetricsProblem('x', 'mb-metrics/1')).toBe('is a string, not an object');
    expect(episodeMetricsProblem(metrics(), 'other/1')).toBe('contract is "mb-metrics/1", the row\'s is other/1');
    expect(episodeMetricsProblem({ ...metrics(), K: -1 }, 'mb-metrics/1')).toBe('K is not a frame count');
    expect(episodeMetricsProblem({ ...metrics(), failure: undefined }, 'mb-metrics/1')).toBe(
      'failure is not a reading object',
    );
    expect(episodeMetricsProblem({ ...metrics(), failure: { available: true, value: {} } }, 'mb-metrics/1')).toBe(
      'failure.value has no frame index',
    );
    expect(episodeMetricsProblem({ ...metrics(), mpjpeLMm: { available: true, value: null } }, 'mb-metrics/1')).toBe(
      'mpjpeLMm.value is not a finite number',
    );
    expect(episodeMetricsProblem({ ...metrics(), jointJerkP95RadS3: { available: false } }, 'mb-metrics/1')).toBe(
      'jointJerkP95RadS3 is unavailable without a reason',
    );
  });

  it('columns equal to the result agree; a changed column is named with both values', () => {
    const m = metrics();
    expect(scalarDisagreement(metricScalars(m), m)).toBeNull();
    expect(scalarDisagreement({ ...metricScalars(m), mpjpeLMm: 1 }, m)).toEqual({
      column: 'mpjpe_l_mm',
      stored: 1,
      fromResult: 41.25,
    });
    expect(scalarDisagreement({ ...metricScalars(m), failed: true }, m)).toMatchObject({ column: 'failed' });
  });
});

describe('stored calibrations', () => {
  it('accepts a whole record; refuses a non-object, a zero or non-unit quaternion, a short joint vector', () => {
    expect(calibrationRecordProblem(calibration())).toBeNull();
    expect(calibrationRecordProblem(5)).toBe('is a number, not an object');
    expect(calibrationRecordProblem([])).toBe('is an array, not an object');
    expect(calibrationRecordProblem({ ...calibration(), capturedAt: 7 })).toBe('capturedAt is not an ISO 8601 time');
    const zero = calibration();
    zero.simulatorInitialState.rootQuatWxyz = [0, 0, 0, 0];
    expect(calibrationRecordProblem(zero)).toBe(
      'simulatorInitialState.rootQuatWxyz has norm 0.00000, not a unit quaternion (±0.001)',
    );
    const imu = calibration();
    imu.measured.imuQuatWxyz = [2, 0, 0, 0];
    expect(calibrationRecordProblem(imu)).toBe('measured.imuQuatWxyz has norm 2.00000, not a unit quaternion (±0.001)');
    const short = calibration();
    short.measured.jointPosRad = [0.1];
    expect(calibrationRecordProblem(short)).toBe('measured.jointPosRad has 1 values, expected 29');
  });
});

describe('M5: dedupeRollouts', () => {
  const row = (runId: string, rolloutIndex: number | null, endedAt: string, parent = 'pt-a'): EpisodeResultRow => ({
    runId,
    parentTraceId: parent,
    executionDomain: 'simulation',
    bindingId: 'b',
    bindingVersion: '1',
    clipId: 'clip-1',
    contractId: 'mb-metrics/1',
    calibrationId: null,
    snapshotHash: null,
    rolloutIndex,
    seed: 0,
    status: 'finished',
    outcome: 'completed',
    reason: null,
    frameCount: 10,
    endedAt,
    metrics: null,
  });

  it('keeps the first settled episode of each rollout, lists the rest; other pairs and unindexed episodes untouched', () => {
    const rows = [
      row('sim-b', 0, '2026-12-06T10:00:02Z'),
      row('sim-a', 0, '2026-12-06T10:00:01Z'),
      row('sim-c', 1, '2026-12-06T10:00:03Z'),
      row('sim-d', 0, '2026-12-06T10:00:04Z', 'pt-b'),
      row('sim-e', null, '2026-12-06T10:00:05Z'),
      row('sim-f', null, '2026-12-06T10:00:06Z'),
    ];
    const { kept, duplicates } = dedupeRollouts(rows);
    expect(kept.map((r) => r.runId)).toEqual(['sim-a', 'sim-c', 'sim-d', 'sim-e', 'sim-f']);
    expect(duplicates).toEqual([
      { runId: 'sim-b', keptRunId: 'sim-a', parentTraceId: 'pt-a', executionDomain: 'simulation', rolloutIndex: 0 },
    ]);
    // Negative control: no duplicates, nothing left out.
    expect(dedupeRollouts(rows.filter((r) => r.runId !== 'sim-b')).duplicates).toEqual([]);
  });
});
