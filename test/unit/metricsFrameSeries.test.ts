import { describe, expect, it } from 'vitest';
import { FrameSeriesBuilder } from '../../src/domain/metrics/frameSeries';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { FULL_STATE, NO_MOTION_CAPTURE, type SourceCapabilities } from '../../src/domain/metrics/readings';
import { batch, bodyIndex, edit, J, layout, moving, value, yawRoot, type Frames } from './metricsHelpers';

// The per-frame series the console plots (FrameSeriesBuilder): its MPJPE-l and joint RMS error
// per frame average to the batch reducer's episode readings, its failure marker is the batch
// reducer's first failing frame, and its failure quantities cross the contract's thresholds
// exactly where the contract says the episode failed.

function series(ref: Frames, exec: Frames, caps: SourceCapabilities = FULL_STATE): FrameSeriesBuilder {
  const s = new FrameSeriesBuilder(MB_METRICS_1, layout, caps);
  for (let k = 0; k < Math.min(ref.K, exec.K); k++) s.push(ref, k, exec, k);
  return s;
}

const mean = (a: Float64Array, n: number): number => {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i];
  return s / n;
};

describe('FrameSeriesBuilder', () => {
  const K = 200;
  const ref = moving(K, 5);
  const LEFT_KNEE = 3;
  const exec = edit(ref, 0, K, (k, f) => {
    f.jointPosRad[J * k + LEFT_KNEE] += 0.1 * Math.sin(k / 10);
    f.rootPosM[3 * k + 2] -= k >= 120 ? 0.3 : 0; // root drops 0.3 m at frame 120: a hard failure
  });

  it('per-frame MPJPE-l and joint RMS error average to the batch readings; time is k / r', () => {
    const s = series(ref, exec);
    const m = batch(ref, exec);
    expect(s.count).toBe(K);
    expect(s.timeS[150]).toBe(3);
    expect(mean(s.mpjpeLMm, K)).toBeCloseTo(value(m.mpjpeLMm), 9);
    let sq = 0;
    for (let k = 0; k < K; k++) sq += s.jointRmseRad[k] ** 2;
    expect(Math.sqrt(sq / K)).toBeCloseTo(value(m.jointPosRmseRad), 12);
    // The signed joint error is exactly q_E − q_R, and only for the edited joint.
    const knee = s.jointErrorOf(LEFT_KNEE);
    expect(knee).toHaveLength(K);
    expect(knee[31]).toBeCloseTo(0.1 * Math.sin(3.1), 12);
    expect(s.jointErrorOf(LEFT_KNEE + 1).every((v) => v === 0)).toBe(true);
  });

  it('marks the batch reducer’s failure frame and crosses the root-height threshold there; none without the drop', () => {
    const s = series(ref, exec);
    const f = value(s.failure());
    expect(f).not.toBeNull();
    expect(f!.frame).toBe(value(batch(ref, exec).failure)!.frame);
    expect(f!.frame).toBe(120);
    expect(f!.condition).toBe('root_height');
    const th = MB_METRICS_1.thresholds.rootHeightM;
    expect(s.rootHeightErrM[119]).toBeLessThan(th);
    expect(s.rootHeightErrM[120]).toBeGreaterThan(th);
    expect(s.firstFailureFrame).toBe(120);
    // Negative control: without the drop there is no failure and the root height error stays small.
    const ok = series(
      ref,
      edit(ref, 0, K, (k, g) => (g.jointPosRad[J * k + LEFT_KNEE] += 0.1)),
    );
    expect(value(ok.failure())).toBeNull();
    expect(ok.firstFailureFrame).toBe(-1);
    expect(Math.max(...ok.rootHeightErrM.subarray(0, K))).toBeLessThan(1e-9);
  });

  it('root orientation and end-effector height follow the contract’s quantities', () => {
    const yawed = edit(ref, 0, K, (k, f) => k >= 50 && yawRoot(f, k, 1.2));
    const s = series(ref, yawed);
    expect(s.rootOrientationErrRad[49]).toBeCloseTo(0, 9);
    expect(s.rootOrientationErrRad[60]).toBeCloseTo(1.2, 9);
    expect(value(s.failure())!.condition).toBe('root_orientation');
    expect(value(s.failure())!.frame).toBe(50);
    // A lifted left ankle (joint edit) shows as end-effector height error; the root's stays 0.
    const lifted = edit(ref, 0, K, (k, f) => (f.jointPosRad[J * k + LEFT_KNEE] += 1.0));
    const e = series(ref, lifted);
    const ankle = bodyIndex('left_ankle_roll_link');
    const z = 3 * (10 * layout.bodyCount + ankle) + 2; // frame 10, the left ankle's z
    const dz = Math.abs(lifted.bodyPosM[z] - ref.bodyPosM[z]);
    expect(e.endEffectorHeightErrM[10]).toBeGreaterThanOrEqual(dz);
    expect(e.endEffectorHeightErrM[10]).toBeGreaterThan(0.01);
    expect(e.rootHeightErrM[10]).toBe(0);
  });

  it('without motion capture MPJPE-l and the failure quantities are NaN (unavailable), never 0', () => {
    const s = series(ref, exec, NO_MOTION_CAPTURE);
    expect(Number.isNaN(s.mpjpeLMm[10])).toBe(true);
    expect(Number.isNaN(s.rootHeightErrM[10])).toBe(true);
    expect(Number.isNaN(s.endEffectorHeightErrM[10])).toBe(true);
    expect(s.failure().available).toBe(false);
    expect(s.jointRmseRad[10]).toBeGreaterThan(0); // joint angles are measured
  });

  it('grows past its initial capacity without losing frames; refuses a joint index out of range', () => {
    const s = new FrameSeriesBuilder(MB_METRICS_1, layout, FULL_STATE, 4);
    for (let k = 0; k < K; k++) s.push(ref, k, exec, k);
    const full = series(ref, exec);
    expect(Array.from(s.mpjpeLMm.subarray(0, K))).toEqual(Array.from(full.mpjpeLMm.subarray(0, K)));
    expect(Array.from(s.jointErrorOf(LEFT_KNEE))).toEqual(Array.from(full.jointErrorOf(LEFT_KNEE)));
    expect(() => s.jointErrorOf(J)).toThrow(RangeError);
  });
});
