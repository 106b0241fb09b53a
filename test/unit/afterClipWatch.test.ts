import { describe, expect, it } from 'vitest';
import { FALLEN_TILT_LIMIT_RAD } from '../../src/domain/robotLink/robotUpright';
import {
  AFTER_CLIP_STILL_S,
  AFTER_CLIP_WINDOW_S,
  AfterClipWatch,
  describeAfterClip,
  type AfterClipSample,
  type AfterClipVerdict,
} from '../../src/domain/trial/afterClipWatch';

// The watch of a robot after its clip, sample by sample at 500 Hz: a tilt past the console's
// fallen limit is a fall, upright and still for a second is standing, upright through the window
// is upright; the limit itself is the negative control (just under it is not a fall).

const RATE_HZ = 500;

/** A sample tilted `tiltRad` about x (w x y z), joints and body turning as given. */
function sample(afterS: number, tiltRad: number, jointVel = 0, gyro = 0): AfterClipSample {
  return {
    afterS,
    imuQuatWxyz: [Math.cos(tiltRad / 2), Math.sin(tiltRad / 2), 0, 0],
    jointVelRadS: new Float64Array(29).fill(jointVel),
    gyroRadS: [gyro, 0, 0],
  };
}

/** Feeds samples from `tilt(t)` (and motion) until a verdict or `untilS`. */
function play(
  tilt: (t: number) => number,
  untilS: number,
  motion: (t: number) => { joint: number; gyro: number } = () => ({ joint: 1, gyro: 0.5 }),
): { verdict: AfterClipVerdict | null; watch: AfterClipWatch } {
  const watch = new AfterClipWatch();
  for (let k = 1; k / RATE_HZ <= untilS; k++) {
    const t = k / RATE_HZ;
    const m = motion(t);
    const v = watch.push(sample(t, tilt(t), m.joint, m.gyro));
    if (v) return { verdict: v, watch };
  }
  return { verdict: null, watch };
}

describe('after the clip: is the robot still up?', () => {
  it('a robot tipping over is a fall at the sample that passes the fallen limit', () => {
    // tilt grows like an inverted pendulum's: 2° at the end of the clip, ×e every 0.27 s
    const tilt = (t: number) => ((2 * Math.PI) / 180) * Math.exp(t / 0.27);
    const { verdict } = play(tilt, AFTER_CLIP_WINDOW_S);
    const crossS = 0.27 * Math.log(FALLEN_TILT_LIMIT_RAD / ((2 * Math.PI) / 180));
    expect(verdict).toMatchObject({ kind: 'fell' });
    const fell = verdict as Extract<AfterClipVerdict, { kind: 'fell' }>;
    expect(fell.atS).toBeGreaterThanOrEqual(crossS);
    expect(fell.atS).toBeLessThan(crossS + 1.5 / RATE_HZ);
    expect(fell.tiltRad).toBeGreaterThan(FALLEN_TILT_LIMIT_RAD);
    expect(describeAfterClip(fell)).toMatch(/^fell 0\.\d\d s after the clip ended: tilt 30° \(limit 30°\)$/);
  });

  it('negative control: swaying just under the limit through the window is upright, not a fall', () => {
    const { verdict } = play(
      (t) => FALLEN_TILT_LIMIT_RAD - 0.01 - (0.05 * (1 + Math.sin(t * 6))) / 2,
      AFTER_CLIP_WINDOW_S + 0.01,
    );
    expect(verdict).toMatchObject({ kind: 'upright', still: false });
    const v = verdict as Extract<AfterClipVerdict, { kind: 'upright' }>;
    expect(v.watchedS).toBeGreaterThanOrEqual(AFTER_CLIP_WINDOW_S);
    expect(v.maxTiltRad).toBeLessThan(FALLEN_TILT_LIMIT_RAD);
    expect(describeAfterClip(v)).toMatch(/^upright 3\.0 s after the clip \(tilt at most 2\d°\)$/);
  });

  it('upright and still for a second ends the watch early: the robot stands', () => {
    // moving for the first 0.4 s (the landing), then still
    const motion = (t: number) => (t < 0.4 ? { joint: 2, gyro: 0.6 } : { joint: 0.05, gyro: 0.01 });
    const { verdict } = play(() => 0.03, AFTER_CLIP_WINDOW_S, motion);
    expect(verdict).toMatchObject({ kind: 'upright', still: true });
    const v = verdict as Extract<AfterClipVerdict, { kind: 'upright' }>;
    expect(v.watchedS).toBeCloseTo(0.4 + AFTER_CLIP_STILL_S, 2);
    expect(describeAfterClip(v)).toBe('standing still 1.4 s after the clip (tilt at most 2°)');
  });

  it('one joint still moving, or the body still turning, is not still', () => {
    const oneJoint = new AfterClipWatch();
    const gyro = new AfterClipWatch();
    for (let k = 1; k <= 2 * RATE_HZ; k++) {
      const s = sample(k / RATE_HZ, 0.02, 0.05, 0.01);
      (s.jointVelRadS as Float64Array)[17] = 0.6;
      expect(oneJoint.push(s)).toBeNull();
      expect(gyro.push(sample(k / RATE_HZ, 0.02, 0.05, 0.25))).toBeNull();
    }
  });

  it('no lowstate, or too little of it, is not known; samples that cannot be read are skipped', () => {
    expect(new AfterClipWatch().close('the link went quiet')).toEqual({
      kind: 'unknown',
      reason: 'the link went quiet: 0 lowstate sample(s) over 0.00 s after the clip',
      watchedS: 0,
      maxTiltRad: null,
      frames: 0,
    });
    const w = new AfterClipWatch();
    expect(w.push({ ...sample(0.1, 0), imuQuatWxyz: [0, 0, 0, 0] })).toBeNull();
    expect(w.push({ ...sample(0.2, 0), imuQuatWxyz: [Number.NaN, 0, 0, 0] })).toBeNull();
    expect(w.push(sample(0.3, 0.1))).toBeNull();
    expect(w.push(sample(0.25, 1.2))).toBeNull(); // time going back: not a sample of this watch
    const v = w.close('the lowstate stopped');
    expect(v).toMatchObject({ kind: 'unknown', frames: 1, watchedS: 0.3 });
    expect(describeAfterClip(v)).toBe(
      'after the clip: not known (the lowstate stopped: 1 lowstate sample(s) over 0.30 s after the clip)',
    );
  });

  it('a verdict is final: samples after it do not change it', () => {
    const w = new AfterClipWatch();
    const fell = w.push(sample(0.5, 1.0));
    expect(fell).toMatchObject({ kind: 'fell', atS: 0.5 });
    expect(w.push(sample(0.6, 0))).toBe(fell);
    expect(w.close('late')).toBe(fell);
  });
});
