import { describe, expect, it } from 'vitest';
import {
  clipDurationS,
  commonTimelineFrameCount,
  deriveJointVelocities,
  resampleClip,
  resampleFrames,
  slerpWxyzInto,
  sourceFramePosition,
  type TimedFrames,
} from '../../src/domain/motion/resample';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { csvText, enc, J, syntheticClip } from './motionTestHelpers';

/** Frames with q_j[i] = 0.01·i² + 0.001·j, root x = 0.1·i, root yaw = 0.1·i rad. */
function frames(fps: number, N: number): TimedFrames {
  const rootPosM = new Float64Array(N * 3);
  const rootQuatWxyz = new Float64Array(N * 4);
  const jointPosRad = new Float64Array(N * J);
  for (let i = 0; i < N; i++) {
    rootPosM.set([0.1 * i, 0, 0.79], i * 3);
    rootQuatWxyz.set([Math.cos(0.05 * i), 0, 0, Math.sin(0.05 * i)], i * 4);
    for (let j = 0; j < J; j++) jointPosRad[i * J + j] = 0.01 * i * i + 0.001 * j;
  }
  return { fps, frameCount: N, rootPosM, rootQuatWxyz, jointPosRad };
}
const q = (i: number) => 0.01 * i * i;
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;
const yawOf = (r: Float64Array, k: number) => 2 * Math.atan2(r[k * 4 + 3], r[k * 4]);

describe('common timeline (DESIGN §4)', () => {
  it('K = floor(r·D + 1e-9) + 1 with D = (N − 1)/fps', () => {
    expect(clipDurationS({ fps: 30, frameCount: 10 })).toBeCloseTo(0.3, 15);
    expect(commonTimelineFrameCount(50, { fps: 30, frameCount: 10 })).toBe(16);
    expect(commonTimelineFrameCount(50, { fps: 60, frameCount: 13 })).toBe(11);
    expect(commonTimelineFrameCount(50, { fps: 30, frameCount: 11 })).toBe(17); // D = 1/3 s
    expect(commonTimelineFrameCount(50, { fps: 30, frameCount: 4 })).toBe(6); // r·D = 5 (± rounding)
    expect(commonTimelineFrameCount(50, { fps: 30, frameCount: 10 }, { fps: 60, frameCount: 13 })).toBe(11);
    expect(() => commonTimelineFrameCount(0, { fps: 30, frameCount: 10 })).toThrow(RangeError);
  });

  it('source frame position f = (k/r)·fps; the last frame is used as is', () => {
    expect(sourceFramePosition(3, 50, 30, 10)).toEqual({ i0: 1, alpha: expect.closeTo(0.8, 12) });
    expect(sourceFramePosition(15, 50, 30, 10)).toEqual({ i0: 9, alpha: 0 }); // f = 9 = N − 1
    expect(sourceFramePosition(40, 50, 30, 10)).toEqual({ i0: 9, alpha: 0 });
  });

  it('30 → 50 Hz: K and linearly interpolated joints and positions', () => {
    const src = frames(30, 10);
    const out = resampleFrames(src, 50, commonTimelineFrameCount(50, src));
    expect(out.frameCount).toBe(16);
    expect(out.fps).toBe(50);
    // k = 1: t = 0.02 s, f = 0.6 → between frames 0 and 1, α = 0.6
    expect(out.jointPosRad[1 * J + 0]).toBeCloseTo(0.006, 12);
    expect(out.jointPosRad[1 * J + 5]).toBeCloseTo(0.006 + 0.005, 12);
    // k = 3: f = 1.8 → 0.01 + 0.8·(0.04 − 0.01) = 0.034
    expect(out.jointPosRad[3 * J]).toBeCloseTo(0.034, 12);
    // k = 7: f = 4.2 → 0.16 + 0.2·0.09 = 0.178
    expect(out.jointPosRad[7 * J]).toBeCloseTo(0.178, 12);
    expect(out.rootPosM[7 * 3]).toBeCloseTo(0.42, 12);
    // k = 0 and k = K − 1 are the first and last source frames
    expect(out.jointPosRad[0]).toBe(0);
    expect(out.jointPosRad[15 * J]).toBeCloseTo(q(9), 12);
    expect(out.rootPosM[15 * 3]).toBeCloseTo(0.9, 12);
    // root yaw is slerped: k = 3 → yaw 0.1·1.8
    expect(yawOf(out.rootQuatWxyz, 3)).toBeCloseTo(0.18, 12);
  });

  it('60 → 50 Hz: K and values', () => {
    const src = frames(60, 13);
    const out = resampleFrames(src, 50, commonTimelineFrameCount(50, src));
    expect(out.frameCount).toBe(11);
    // k = 1: f = 1.2 → lerp(q1, q2, 0.2)
    expect(out.jointPosRad[1 * J]).toBeCloseTo(lerp(q(1), q(2), 0.2), 12);
    // k = 5: f = 6 → frame 6
    expect(out.jointPosRad[5 * J]).toBeCloseTo(q(6), 12);
    // k = 7: f = 8.4 → lerp(q8, q9, 0.4)
    expect(out.jointPosRad[7 * J + 3]).toBeCloseTo(lerp(q(8), q(9), 0.4) + 0.003, 12);
    expect(yawOf(out.rootQuatWxyz, 7)).toBeCloseTo(0.84, 12);
    // k = 10: f = 12 → the last frame
    expect(out.jointPosRad[10 * J]).toBeCloseTo(q(12), 12);
  });

  it('a duration that is not a multiple of the output period ends before the last source frame', () => {
    const src = frames(30, 11);
    const out = resampleFrames(src, 50, commonTimelineFrameCount(50, src));
    expect(out.frameCount).toBe(17);
    // k = 16: t = 0.32 s, f = 9.6
    expect(out.jointPosRad[16 * J]).toBeCloseTo(lerp(q(9), q(10), 0.6), 12);
  });

  it('with an externally given K beyond the clip, trailing frames repeat the last frame', () => {
    const src = frames(30, 4);
    const out = resampleFrames(src, 50, 10);
    for (let k = 6; k < 10; k++) expect(out.jointPosRad[k * J]).toBe(src.jointPosRad[3 * J]);
    expect(() => resampleFrames(src, 50, 0)).toThrow(RangeError);
  });

  it('slerp takes the shortest arc', () => {
    const yawQ = (a: number) => [Math.cos(a / 2), 0, 0, Math.sin(a / 2)];
    const out = new Float64Array(4);
    // q1 stored with the opposite sign: the short way from yaw 0.2 to yaw 0.6 passes yaw 0.4
    slerpWxyzInto(out, 0, new Float64Array(yawQ(0.2)), 0, new Float64Array(yawQ(0.6).map((v) => -v)), 0, 0.5);
    expect(Array.from(out)).toEqual(yawQ(0.4).map((v) => expect.closeTo(v, 12)));
    // large angle (acos branch): yaw 0 → yaw 2 rad at t = 0.25 is yaw 0.5 rad
    slerpWxyzInto(out, 0, new Float64Array(yawQ(0)), 0, new Float64Array(yawQ(2)), 0, 0.25);
    expect(Array.from(out)).toEqual(yawQ(0.5).map((v) => expect.closeTo(v, 12)));
    // yaw 170° → yaw −170° goes through 180°, not through 0
    const a = (170 * Math.PI) / 180;
    slerpWxyzInto(out, 0, new Float64Array(yawQ(a)), 0, new Float64Array(yawQ(-a)), 0, 0.5);
    expect(Math.abs(out[0])).toBeLessThan(1e-12);
    expect(Math.abs(out[3])).toBeCloseTo(1, 12);
  });

  it('slerp stays exact for nearby quaternions (no linear shortcut)', () => {
    // 0.01 rad apart about a tilted axis: an nlerp shortcut would be off by ~3e-9 at t = 0.3.
    const axis = [0.48, -0.6, 0.64];
    const q = (a: number) => [Math.cos(a / 2), ...axis.map((c) => c * Math.sin(a / 2))];
    const out = new Float64Array(4);
    slerpWxyzInto(out, 0, new Float64Array(q(0.5)), 0, new Float64Array(q(0.51)), 0, 0.3);
    const want = q(0.503);
    for (let c = 0; c < 4; c++) expect(Math.abs(out[c] - want[c])).toBeLessThan(1e-15);
  });

  it('lands on whole source frames exactly: a 50 fps clip resampled to 50 Hz is reproduced bit for bit', () => {
    const src = syntheticClip(400);
    const clip: MotionClip = decodeLafan1Csv(enc(csvText(src)), { file: 'x.csv', fps: 50 });
    const same = resampleClip(clip, 50);
    expect(same.frameCount).toBe(400);
    expect(Array.from(same.jointPosRad)).toEqual(Array.from(clip.jointPosRad));
    expect(Array.from(same.rootQuatWxyz)).toEqual(Array.from(clip.rootQuatWxyz));
    // and every third 30 fps frame is a 50 Hz frame (k = 5m ↔ source frame 3m), copied as is
    const c30: MotionClip = decodeLafan1Csv(enc(csvText(src)), { file: 'x.csv', fps: 30 });
    const r = resampleClip(c30, 50);
    for (let m = 0; 5 * m < r.frameCount; m++) {
      expect(Array.from(r.jointPosRad.subarray(5 * m * J, (5 * m + 1) * J))).toEqual(
        Array.from(c30.jointPosRad.subarray(3 * m * J, (3 * m + 1) * J)),
      );
    }
  });

  it('resampleClip returns a new clip at rate r with a new id; a same-rate resample keeps the numbers', () => {
    const clip: MotionClip = decodeLafan1Csv(enc(csvText(syntheticClip(31))), { file: 'x.csv', fps: 30 });
    const r50 = resampleClip(clip, 50);
    expect(r50.fps).toBe(50);
    expect(r50.frameCount).toBe(51);
    expect(r50.id).not.toBe(clip.id);
    expect(r50.provenance).toEqual(clip.provenance);
    const same = resampleClip(clip, 30);
    expect(same.frameCount).toBe(31);
    expect(Array.from(same.jointPosRad).every((v, i) => Math.abs(v - clip.jointPosRad[i]) < 1e-15)).toBe(true);
    const withVel = resampleClip({ ...clip, jointVelRadS: deriveJointVelocities(clip) }, 50);
    expect(withVel.jointVelRadS?.length).toBe(51 * J);
  });
});

describe('deriveJointVelocities', () => {
  it('central differences inside, one-sided at the ends, rad/s', () => {
    const fps = 10;
    const N = 6;
    const jointPosRad = new Float64Array(N * J);
    for (let k = 0; k < N; k++) for (let j = 0; j < J; j++) jointPosRad[k * J + j] = (j + 1) * (k / fps) ** 2;
    const v = deriveJointVelocities({ fps, frameCount: N, jointPosRad });
    expect(v.length).toBe(N * J);
    for (let k = 1; k < N - 1; k++) expect(v[k * J + 2]).toBeCloseTo(3 * 2 * (k / fps), 12);
    expect(v[0]).toBeCloseTo((0.01 - 0) * fps, 12);
    expect(v[(N - 1) * J]).toBeCloseTo((0.25 - 0.16) * fps, 12);
  });
});
