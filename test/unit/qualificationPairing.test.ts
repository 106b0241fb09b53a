import { describe, expect, it } from 'vitest';
import { groupRows, type PolicyTableEpisode } from '../../src/domain/metrics/policyTable';
import { allReadingsUnavailable, type EpisodeMetrics } from '../../src/domain/metrics';
import { notPairedReason, summarizeNotPaired, type OwnMotion } from '../../src/domain/qualification';
import { FAMILY_MOTION_SCOPE, POLICY_FAMILIES } from '../../src/domain/wbc/trackingPolicy';

// Single-motion pairing (a declared scope per family) and the open-tracker table's per-group rows.

const own: OwnMotion = {
  clipIds: ['clip-a'],
  source: 'the motion baked into A.onnx (A)',
  basis: 'one motion per policy',
};

describe('pairing', () => {
  it('pairs a single-motion binding with its own clip only, and says why not otherwise', () => {
    expect(notPairedReason(own, 'clip-a')).toBeNull();
    expect(notPairedReason(own, 'clip-b')).toBe(
      'a single-motion policy: it tracks only the motion baked into A.onnx (A) (one motion per policy)',
    );
  });
  it('pairs a binding without a declaration with every clip', () => {
    expect(notPairedReason(undefined, 'clip-b')).toBeNull();
  });
  it('summarizes per binding with the count', () => {
    const w = 'why';
    expect(
      summarizeNotPaired([
        { binding: 'p@1', clipId: 'x', clipName: 'x', why: w },
        { binding: 'p@1', clipId: 'y', clipName: 'y', why: w },
        { binding: 'q@1', clipId: 'x', clipName: 'x', why: w },
      ]),
    ).toEqual(['p@1: not paired with 2 clips — why', 'q@1: not paired with 1 clip — why']);
  });
  it('declares a scope for every family: the single-motion families own, the general trackers any', () => {
    for (const f of POLICY_FAMILIES) expect(FAMILY_MOTION_SCOPE[f].basis.length).toBeGreaterThan(10);
    const owns = POLICY_FAMILIES.filter((f) => FAMILY_MOTION_SCOPE[f].scope === 'own');
    expect(owns).toEqual(expect.arrayContaining(['beyondmimic', 'mjlab-deploy', 'unitree-rl-lab', 'holosoma-wbt']));
    expect(FAMILY_MOTION_SCOPE['wbc-mjlab'].scope).toBe('any');
  });
});

const ok = (mpjpe: number, progress = 1): EpisodeMetrics => ({
  ...allReadingsUnavailable('mb-metrics/1', 10, 'x'),
  failure: { available: true, value: null },
  progressSoft: { available: true, value: progress },
  mpjpeLMm: { available: true, value: mpjpe },
});
const failed = (mpjpe: number, progress: number): EpisodeMetrics => ({
  ...ok(mpjpe, progress),
  failure: {
    available: true,
    value: { frame: 3, timeS: 0.06, condition: 'root_height', body: 'pelvis', error: 0.3, threshold: 0.25 },
  },
});
const ep = (group: PolicyTableEpisode['group'], metrics: EpisodeMetrics): PolicyTableEpisode => ({
  clip: group,
  clipId: group,
  group,
  seconds: 1,
  outcome: 'completed',
  failure: null,
  referenceLiftM: 0,
  metrics,
  wallSeconds: 0,
});

describe('groupRows', () => {
  it('gives SR, progress-soft and MPJPE-l per group (macro over clips), then all', () => {
    const rows = groupRows([ep('dynamic', ok(20)), ep('locomotion', failed(60, 0.5)), ep('dynamic', ok(40))]);
    expect(rows.map((r) => [r.group, r.clips])).toEqual([
      ['dynamic', 2],
      ['locomotion', 1],
      ['all', 3],
    ]);
    expect(rows[0].successRate).toEqual({ available: true, value: 1 });
    expect(rows[0].mpjpeLMm).toEqual({ available: true, value: 30 });
    expect(rows[1].successRate).toEqual({ available: true, value: 0 });
    expect(rows[2].successRate.available && rows[2].successRate.value).toBeCloseTo(2 / 3, 12);
    expect(rows[2].progressSoft.available && rows[2].progressSoft.value).toBeCloseTo(2.5 / 3, 12);
  });
  it('has no "all" row for a single group, and nothing for no episodes', () => {
    expect(groupRows([ep('dynamic', ok(20))]).map((r) => r.group)).toEqual(['dynamic']);
    expect(groupRows([])).toEqual([]);
  });
});
