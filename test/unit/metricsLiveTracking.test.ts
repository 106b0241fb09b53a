import { describe, expect, it } from 'vitest';
import { ClipPairEvaluator } from '../../src/domain/metrics/clipPairMetrics';
import { LiveTrackingMetrics, type LiveStateFrame } from '../../src/domain/metrics/liveTracking';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import {
  FULL_STATE,
  NO_MOTION_CAPTURE,
  type EpisodeMetrics,
  type SourceCapabilities,
} from '../../src/domain/metrics/readings';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { resampleClip } from '../../src/domain/motion/resample';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// LiveTrackingMetrics (src/domain/metrics/liveTracking.ts) against the batch evaluation: a real
// clip from ../shared/data is the reference; the executed stream is a perturbed copy sampled at
// the robot's rate (500 Hz, 333 Hz, 50 Hz, 30 Hz), pushed frame by frame. After the last frame the live
// result must equal the batch readings of the same frames taken as a clip, bit for bit.

const J = 29;
const profile = loadRobotProfile(OUR_G1);
const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
const REFERENCE = loadClipFile(sharedData('motions/g1_moves/csv/B_HandsUp.csv')); // 60 fps

interface Stream {
  clip: MotionClip;
  frames: LiveStateFrame[];
}

/**
 * The reference sampled at `rateHz`, perturbed: joint offsets, a slow root drift in x, a yaw
 * wobble and — when `fallAtS` is given — the root sinking 0.5 m/s from then on (a root-height
 * failure ~0.5 s later). Without mocap the frames carry no root position (the clip for the batch
 * has zeros there, as the live side assumes).
 */
function stream(rateHz: number, opts: { mocap: boolean; fallAtS?: number }): Stream {
  const base = resampleClip(REFERENCE, rateHz);
  const N = base.frameCount;
  const rootPosM = base.rootPosM.slice();
  const rootQuatWxyz = base.rootQuatWxyz.slice();
  const jointPosRad = base.jointPosRad.slice();
  for (let i = 0; i < N; i++) {
    const t = i / rateHz;
    for (let j = 0; j < J; j++) jointPosRad[i * J + j] += 0.04 * Math.sin(3 * t + j);
    rootPosM[3 * i] += 0.02 * t;
    if (opts.fallAtS !== undefined && t > opts.fallAtS) rootPosM[3 * i + 2] -= 0.5 * (t - opts.fallAtS);
    // yaw wobble: q ← q ⊗ (cos a, 0, 0, sin a)
    const a = 0.05 * Math.sin(2 * t);
    const [w, x, y, z] = rootQuatWxyz.subarray(4 * i, 4 * i + 4);
    const c = Math.cos(a);
    const s = Math.sin(a);
    rootQuatWxyz.set([w * c - z * s, x * c + y * s, y * c - x * s, z * c + w * s], 4 * i);
    if (!opts.mocap) rootPosM.fill(0, 3 * i, 3 * i + 3);
  }
  const clip: MotionClip = { ...base, fps: rateHz, frameCount: N, rootPosM, rootQuatWxyz, jointPosRad };
  const frames: LiveStateFrame[] = [];
  for (let i = 0; i < N; i++) {
    frames.push({
      timeS: i / rateHz,
      rootPosM: opts.mocap ? rootPosM.subarray(3 * i, 3 * i + 3) : null,
      rootQuatWxyz: rootQuatWxyz.subarray(4 * i, 4 * i + 4),
      jointPosRad: jointPosRad.subarray(J * i, J * i + J),
    });
  }
  return { clip, frames };
}

function live(rateHz: number, availability: SourceCapabilities): LiveTrackingMetrics {
  return new LiveTrackingMetrics({
    contract: MB_METRICS_1,
    profile,
    reference: REFERENCE,
    availability,
    streamRateHz: rateHz,
  });
}

/** Pushes every frame; returns the timeline frame at which the live failure flag went up (−1: never). */
function pushAll(m: LiveTrackingMetrics, frames: LiveStateFrame[]): number {
  let flaggedAt = -1;
  for (const f of frames) {
    expect(m.push(f)).toBeNull();
    if (flaggedAt < 0 && m.reading.failure) flaggedAt = m.reading.frame;
  }
  m.finish();
  return flaggedAt;
}

const batch = (s: Stream, caps: SourceCapabilities): EpisodeMetrics =>
  evaluator.evaluate(REFERENCE, s.clip, caps).metrics;

describe('LiveTrackingMetrics equals the batch evaluation', () => {
  for (const rateHz of [500, 333, 50, 30]) {
    it(`with motion capture at ${rateHz} Hz, failure flag at the batch's failure frame`, () => {
      const s = stream(rateHz, { mocap: true, fallAtS: 2 });
      const seen: number[] = [];
      const m = new LiveTrackingMetrics({
        contract: MB_METRICS_1,
        profile,
        reference: REFERENCE,
        availability: FULL_STATE,
        streamRateHz: rateHz,
        onReading: (r) => seen.push(r.frame),
      });
      const flaggedAt = pushAll(m, s.frames);
      expect(seen).toEqual(Array.from({ length: m.frameCount }, (_, k) => k));
      const b = batch(s, FULL_STATE);
      expect(m.result()).toEqual(b);
      expect(b.failure.available && b.failure.value).toBeTruthy();
      const bf = b.failure.available ? b.failure.value! : null;
      expect(flaggedAt).toBe(bf!.frame);
      expect(m.reading.failure).toEqual(bf);
      expect(m.reading.progressStop).toEqual(b.progressStop.available ? b.progressStop.value : 'unavailable');
      // the running joint RMSE is the episode's after the last frame
      expect(m.reading.jointPosRmseRad).toBe(b.jointPosRmseRad.available ? b.jointPosRmseRad.value : NaN);
      expect(m.reading.frame).toBe(b.K - 1);
      expect(m.frameCount).toBe(b.K);
      expect(m.reading.degraded).toBe(false);
      expect(m.reading.missingSourceFrames).toBe(0);
    });
  }

  it('without motion capture: global readings unavailable with a reason (null live, never 0), joint readings equal', () => {
    const s = stream(500, { mocap: false, fallAtS: 2 });
    const m = live(500, NO_MOTION_CAPTURE);
    const before = m.reading.failureUnavailable;
    expect(pushAll(m, s.frames)).toBe(-1);
    const b = batch(s, NO_MOTION_CAPTURE);
    const r = m.result();
    expect(r).toEqual(b);
    expect(r.mpjpeLMm.available).toBe(false);
    expect(r.failure.available).toBe(false);
    expect(r.jointPosRmseRad.available).toBe(true);
    expect(m.reading.frameMpjpeLMm).toBeNull();
    expect(m.reading.mpjpeUnavailable).toMatch(/global heading/);
    expect(m.reading.failure).toBeNull();
    expect(before).toMatch(/global position and heading/);
    expect(m.reading.frameJointRmseRad).toBeGreaterThan(0);
  });

  it('readings so far equal the batch over the same prefix (live reading mid-stream)', () => {
    const s = stream(500, { mocap: true });
    const m = live(500, FULL_STATE);
    const cut = 1001; // frames 0..1000 → timeline frames 0..100
    for (const f of s.frames.slice(0, cut)) m.push(f);
    const prefix: MotionClip = {
      ...s.clip,
      frameCount: cut,
      rootPosM: s.clip.rootPosM.slice(0, 3 * cut),
      rootQuatWxyz: s.clip.rootQuatWxyz.slice(0, 4 * cut),
      jointPosRad: s.clip.jointPosRad.slice(0, J * cut),
    };
    expect(m.result()).toEqual(batch({ clip: prefix, frames: [] }, FULL_STATE));
    expect(m.reading.frame).toBe(100);
    expect(m.reading.progress).toBeCloseTo(100 / (m.reading.plannedFrames - 1), 15);
  });
});

describe('LiveTrackingMetrics refuses bad frames and reports gaps', () => {
  it('refuses out-of-order, duplicate and non-finite frames without changing its state', () => {
    const s = stream(500, { mocap: true });
    const m = live(500, FULL_STATE);
    for (const f of s.frames.slice(0, 300)) m.push(f);
    const reading = JSON.stringify(m.reading);
    const result = m.result();
    const bad: Array<[LiveStateFrame, string, RegExp]> = [
      [s.frames[200], 'out_of_order', /does not come after/],
      [s.frames[299], 'out_of_order', /does not come after/],
      [
        { ...s.frames[300], jointPosRad: Float64Array.from(s.frames[300].jointPosRad, (v, j) => (j === 7 ? NaN : v)) },
        'non_finite',
        /jointPosRad\[7\] is NaN/,
      ],
      [{ ...s.frames[300], rootPosM: new Float64Array([0, Infinity, 0]) }, 'non_finite', /rootPosM\[1\] is Infinity/],
      [{ ...s.frames[300], timeS: NaN }, 'non_finite', /timeS is NaN/],
      [{ ...s.frames[300], rootPosM: null }, 'missing_root', /no root position/],
      [{ ...s.frames[300], jointPosRad: new Float64Array(28) }, 'bad_frame', /29 values, found 28/],
    ];
    for (const [frame, code, message] of bad) {
      const p = m.push(frame);
      expect(p).toMatchObject({ code, accepted: false });
      expect(p!.message).toMatch(message);
    }
    const after = JSON.parse(JSON.stringify(m.reading));
    expect(after.refusedFrames).toBe(bad.length);
    expect({ ...after, refusedFrames: 0 }).toEqual(JSON.parse(reading));
    expect(m.result()).toEqual(result);
    // the stream continues as if nothing happened: still equal to batch at the end
    for (const f of s.frames.slice(300)) expect(m.push(f)).toBeNull();
    m.finish();
    expect(m.result()).toEqual(batch(s, FULL_STATE));
    expect(m.push(s.frames[0])).toMatchObject({ code: 'finished', accepted: false });
  });

  it('interpolates over a dropped frame silently and over a long gap with a problem (degraded)', () => {
    const s = stream(500, { mocap: true });
    const full = live(500, FULL_STATE);
    pushAll(full, s.frames);
    const oneDropped = live(500, FULL_STATE);
    for (let i = 0; i < s.frames.length; i++) if (i !== 777) expect(oneDropped.push(s.frames[i])).toBeNull();
    oneDropped.finish();
    expect(oneDropped.reading.missingSourceFrames).toBe(1);
    expect(oneDropped.reading.degraded).toBe(false);
    expect(oneDropped.frameCount).toBe(full.frameCount);
    const a = full.result().jointPosRmseRad;
    const b = oneDropped.result().jointPosRmseRad;
    expect(a.available && b.available).toBe(true);
    if (a.available && b.available) expect(Math.abs(a.value - b.value)).toBeLessThan(1e-6 * a.value);

    const gap = live(500, FULL_STATE);
    const problems = [];
    for (let i = 0; i < s.frames.length; i++) {
      if (i > 1000 && i < 1080) continue; // 160 ms without a frame
      const p = gap.push(s.frames[i]);
      if (p) problems.push(p);
    }
    gap.finish();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: 'gap', accepted: true, timeS: 1080 / 500 });
    expect(problems[0].message).toMatch(/no frame for 160\.0 ms/);
    expect(gap.reading).toMatchObject({ degraded: true, missingSourceFrames: 79 });
    expect(gap.frameCount).toBe(full.frameCount);
  });
});
