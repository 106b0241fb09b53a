import { describe, expect, it } from 'vitest';
import { parseRequest, type GapClipDto } from '../../src/api/contract';
import { resampleFrames } from '../../src/domain/motion/resample';
import { frameJointRmse, toContractTimeline, type TimedSample } from '../../src/services/console/gapReview';
import {
  formatGapPercent,
  formatGapValue,
  replayRunLabel,
  sortGapClips,
  trialCountsText,
} from '../../renderer/src/gap/gapFormat';

// The gap.* requests of the console API (src/api/gapContract.ts) and the pure shaping behind Gap
// review: the 50 Hz contract timeline of a recorded trajectory (src/services/console/gapReview.ts)
// and the panel's sort and formatting (renderer/src/gap/gapReview.ts).

const bad = (method: string, params: unknown) => {
  const r = parseRequest(method, params);
  if (r.ok) throw new Error(`${method} accepted ${JSON.stringify(params)}`);
  return r.error;
};

describe('gap contract', () => {
  it('accepts well-formed requests', () => {
    for (const [m, p] of [
      ['gap.report', { campaignDir: '/tmp/c' }],
      ['gap.report', { campaignDir: '/tmp/c', sort: 'joint_pos_rmse' }],
      ['gap.report', { campaignDir: 'C:\\camp', sort: 'clip' }],
      ['gap.replay', { campaignDir: '/tmp/c', parentTraceId: 'pt-0123abcd' }],
    ] as const) {
      expect(parseRequest(m, p), `${m} ${JSON.stringify(p)}`).toMatchObject({ ok: true });
    }
  });

  it('names the offending field of a bad request', () => {
    expect(bad('gap.report', {})).toMatchObject({ code: 'bad_params', field: 'params.campaignDir' });
    expect(bad('gap.report', { campaignDir: 'relative/c' }).message).toMatch(
      /params\.campaignDir: must be an absolute path/,
    );
    expect(bad('gap.report', { campaignDir: '/tmp/c', sort: 'mpjpe' })).toMatchObject({ field: 'params.sort' });
    expect(bad('gap.report', { campaignDir: '/tmp/c', sort: 'mpjpe' }).message).toMatch(/mpjpe_l_mm/);
    expect(bad('gap.report', { campaignDir: '/tmp/c', limit: 3 })).toMatchObject({ field: 'params.limit' });
    expect(bad('gap.replay', { campaignDir: '/tmp/c' })).toMatchObject({ field: 'params.parentTraceId' });
    expect(bad('gap.replay', { campaignDir: '/tmp/c', parentTraceId: 'pt 1/../x' })).toMatchObject({
      field: 'params.parentTraceId',
      message: expect.stringMatching(/not a parent trace id/),
    });
    expect(bad('gap.replay', { campaignDir: '/tmp/\0c', parentTraceId: 'pt-1' })).toMatchObject({
      field: 'params.campaignDir',
    });
  });
});

const J = 29;
/** n samples at `rateHz`, joints on a ramp (q_j = t + j), root moving in x; time stamps as tick / rate. */
function recording(
  n: number,
  rateHz: number,
  o: { root?: boolean; jitterS?: (i: number) => number } = {},
): TimedSample[] {
  return Array.from({ length: n }, (_, i) => {
    const t = i / rateHz + (o.jitterS?.(i) ?? 0);
    return {
      timeS: t,
      rootPosM: o.root === false ? null : [0.5 * t, 0, 0.78],
      rootQuatWxyz: o.root === false ? null : [Math.cos(0.1 * t), 0, 0, Math.sin(0.1 * t)],
      jointPosRad: Array.from({ length: J }, (_, j) => Math.sin(3 * t) + 0.01 * j),
    };
  });
}

describe('toContractTimeline (50 Hz contract timeline)', () => {
  it('takes the frames on the grid of a 500 Hz recording as they are (every 10th)', () => {
    const src = recording(1001, 500); // 2 s
    const tl = toContractTimeline(src, 50, J);
    expect(tl.resampling).toBe('on_grid');
    expect(tl.frames).toBe(101);
    expect(tl.sourceRateHz).toBeCloseTo(500, 9);
    for (const k of [0, 1, 37, 100]) {
      expect(tl.jointPosRad.slice(J * k, J * k + J)).toEqual(src[10 * k].jointPosRad);
      expect(tl.rootPosM!.slice(3 * k, 3 * k + 3)).toEqual(src[10 * k].rootPosM);
      expect(tl.timeS[k]).toBe(k / 50);
    }
  });

  it('uses the contract resampler for a uniform source off the grid (30 Hz), and keeps no root without one', () => {
    const src = recording(61, 30, { root: false }); // 2 s
    const tl = toContractTimeline(src, 50, J);
    expect(tl.resampling).toBe('contract_resampler');
    expect(tl.frames).toBe(101);
    expect(tl.rootPosM).toBeNull();
    expect(tl.rootQuatWxyz).toBeNull();
    const q = Float64Array.from(src.flatMap((s) => s.jointPosRad));
    const ref = resampleFrames(
      { fps: 30, frameCount: 61, rootPosM: new Float64Array(183), rootQuatWxyz: new Float64Array(244), jointPosRad: q },
      50,
      101,
    );
    for (let i = 0; i < tl.jointPosRad.length; i++) expect(tl.jointPosRad[i]).toBeCloseTo(ref.jointPosRad[i], 12);
  });

  it('interpolates a jittered source by its time stamps (and jitter only off the grid times keeps the grid frames)', () => {
    expect(
      toContractTimeline(recording(201, 100, { jitterS: (i) => (i % 2 === 1 ? 0.0003 : 0) }), 50, J).resampling,
    ).toBe('on_grid');
    const src = recording(201, 100, { jitterS: (i) => (i % 2 === 0 && i > 0 ? 0.0003 : 0) });
    const tl = toContractTimeline(src, 50, J);
    expect(tl.resampling).toBe('by_time');
    // t = 0.02 lies between sample 1 (0.01 s) and sample 2 (0.0203 s).
    const a = (0.02 - 0.01) / (0.0203 - 0.01);
    expect(tl.jointPosRad[J + 3]).toBeCloseTo(
      src[1].jointPosRad[3] + (src[2].jointPosRad[3] - src[1].jointPosRad[3]) * a,
      12,
    );
    expect(tl.rootPosM![3]).toBeCloseTo(src[1].rootPosM![0] + (src[2].rootPosM![0] - src[1].rootPosM![0]) * a, 12);
  });

  it('refuses time going backwards and a wrong joint count, naming the frame', () => {
    const src = recording(5, 50);
    src[3] = { ...src[3], timeS: 0.01 };
    expect(() => toContractTimeline(src, 50, J)).toThrow(/frame 3/);
    expect(() => toContractTimeline(recording(5, 50), 50, 23)).toThrow(/frame 0 has 29 joint angles, expected 23/);
  });

  it('per-frame joint RMSE against the reference over the common frames', () => {
    const ref = new Float64Array(3 * J);
    const exec = new Float64Array(2 * J).fill(0.1);
    exec[J] = 0.1 + Math.sqrt(J) * 0.2; // frame 1: one joint far off
    const e = frameJointRmse(ref, exec, J);
    expect(e).toHaveLength(2);
    expect(e[0]).toBeCloseTo(0.1, 12);
    expect(e[1]).toBeGreaterThan(e[0]);
  });
});

const v = (value: number | null, reason?: string) => (value === null ? { value, reason: reason ?? 'x' } : { value });
function clip(name: string, mpjpeGap: number | null, srGap: number | null): GapClipDto {
  const r = (g: number | null) => ({
    sim: v(1),
    real: v(g === null ? null : 1 + g / 100),
    gapPercent: v(g, 'Real is unavailable: no motion capture'),
  });
  return {
    clipId: `clip-${name}`,
    clip: name,
    group: 'upper_body',
    parentTraceId: `pt-${name}`,
    calibrationId: 'cal-1',
    capturedAt: null,
    robotUnit: null,
    simTrials: { used: 1, failed: 0, stopped: 0, excluded: [] },
    realTrials: { used: 3, failed: 1, stopped: 1, excluded: [] },
    trials: [],
    readings: { mpjpe_l_mm: r(mpjpeGap), sr: r(srGap) },
  };
}

describe('Gap review panel shaping', () => {
  const clips = [clip('b', 10, -5), clip('a', -40, null), clip('c', null, 0), clip('d', 10, 50)];

  it('sorts per clip by |Gap %| largest first, unavailable last, ties by name; reversed on a second click; by name', () => {
    expect(sortGapClips(clips, { column: 'mpjpe_l_mm', reversed: false }).map((c) => c.clip)).toEqual([
      'a',
      'b',
      'd',
      'c',
    ]);
    expect(sortGapClips(clips, { column: 'mpjpe_l_mm', reversed: true }).map((c) => c.clip)).toEqual([
      'c',
      'd',
      'b',
      'a',
    ]);
    expect(sortGapClips(clips, { column: 'sr', reversed: false }).map((c) => c.clip)).toEqual(['d', 'b', 'c', 'a']);
    expect(sortGapClips(clips, { column: 'clip', reversed: false }).map((c) => c.clip)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('formats as the report: SR %, MPJPE-l cm, progress 3 decimals, 4 significant digits, n/a never 0', () => {
    expect(formatGapValue('sr', v(2 / 3))).toBe('66.7%');
    expect(formatGapValue('mpjpe_l_mm', v(43.21))).toBe('4.32');
    expect(formatGapValue('progress_soft', v(0.86666))).toBe('0.867');
    expect(formatGapValue('joint_vel_rmse', v(0.000412345))).toBe('0.0004123');
    expect(formatGapValue('joint_acc_rms', v(123.456))).toBe('123.5');
    expect(formatGapValue('mpjpe_l_mm', v(null, 'no motion capture'))).toBe('n/a');
    expect(formatGapPercent(v(-33.333))).toBe('-33.3%');
    expect(formatGapPercent(v(0))).toBe('+0.0%');
    expect(formatGapPercent(v(null))).toBe('n/a');
    expect(trialCountsText({ used: 3, failed: 1, stopped: 1 })).toBe('3 (1 failed, 1 stopped)');
    expect(trialCountsText({ used: 3, failed: 0, stopped: 0 })).toBe('3');
  });

  it('labels replayed runs by branch, outcome and where the root comes from; trials numbered from 1', () => {
    expect(replayRunLabel({ domain: 'simulation', trialIndex: 0, outcome: 'completed', rootMeasured: true })).toBe(
      'sim branch',
    );
    expect(replayRunLabel({ domain: 'real_robot', trialIndex: 2, outcome: 'hard_failure', rootMeasured: false })).toBe(
      'real trial 3 · hard failure · root at reference', // stored trialIndex 2: the third trial
    );
  });
});
