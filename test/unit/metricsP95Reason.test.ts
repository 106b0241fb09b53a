// The P95 readings' "unavailable" reasons name the P95, not the RMS: executed
// frames whose joint angles are finite but so large that the accelerations overflow leave
// joint_acc_p95 / joint_jerk_p95 unavailable, and the reason must say which reading it is.
import { describe, expect, it } from 'vitest';
import { episodeMetricsJson } from '../../src/domain/metrics/readings';
import { batch, edit, J, standing, stream } from './metricsHelpers';

describe('P95 unavailable reasons', () => {
  const ref = standing(60);
  // Joint 3 at ±1e308 rad on alternate frames: every value is finite, the second difference is not.
  const exec = edit(ref, 10, 20, (k, f) => (f.jointPosRad[J * k + 3] = k % 2 === 0 ? 1e308 : -1e308));

  for (const [name, reduce] of [
    ['batch', batch],
    ['streaming', stream],
  ] as const) {
    it(`${name} reducer: joint_acc_p95 and joint_jerk_p95 say "P95", the RMS readings say "RMS"`, () => {
      const m = reduce(ref, exec);
      expect(m.jointAccRmsRadS2.available).toBe(false);
      expect(m.jointAccP95RadS2.available).toBe(false);
      expect(m.jointJerkP95RadS3.available).toBe(false);
      const why = episodeMetricsJson(m).unavailable as Record<string, string>;
      expect(why.joint_acc_rms).toMatch(/^joint-acceleration RMS is not finite/);
      expect(why.joint_acc_p95).toMatch(/^joint-acceleration P95 is not finite/);
      expect(why.joint_jerk_rms).toMatch(/^joint-jerk RMS is not finite/);
      expect(why.joint_jerk_p95).toMatch(/^joint-jerk P95 is not finite/);
      for (const k of ['joint_acc_p95', 'joint_jerk_p95']) expect(why[k]).not.toMatch(/RMS/);
    });
  }
});
