import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClipPairEvaluator } from '../../src/domain/metrics/clipPairMetrics';
import { customContract, MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { resampleClip } from '../../src/domain/motion/resample';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { RunTrajectory, type PackedTrajectory } from '../../renderer/src/overlay/runTrajectory';
import { liveTrialRing, liveTrialRingStore, recordTrialLive } from '../../renderer/src/plots/liveTrialRing';
import {
  compareRunsPlot,
  failureChecksPlot,
  failureThresholdLines,
  trackingPlot,
  withGaps,
} from '../../renderer/src/plots/plotData';
import { runSeries } from '../../renderer/src/plots/runSeries';
import { SampleRing } from '../../renderer/src/plots/sampleRing';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// The pure parts of the plots over time (renderer/src/plots/): the run series against the batch
// evaluation of the same frames, incremental growth of a live run, the plot columns and threshold
// lines, and the live ring.

const profile = loadRobotProfile(OUR_G1);
const fk = new ForwardKinematics(profile);
const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(sharedData('motions/g1_moves/npz/B_HandsUp.npz'))), {
  file: 'B_HandsUp.npz',
});
const ref50 = resampleClip(clip, 50);
const J = 29;
const KNEE = 3;

/** An "executed" run: the reference at 50 Hz with the left knee off by 0.1 rad and the root `drop.m` low from frame `drop.at` on. */
function executed(frames = ref50.frameCount, drop = { at: Infinity, m: 0 }) {
  const rootPosM = ref50.rootPosM.slice(0, 3 * frames);
  const jointPosRad = ref50.jointPosRad.slice(0, J * frames);
  for (let k = 0; k < frames; k++) {
    jointPosRad[J * k + KNEE] += 0.1;
    if (k >= drop.at) rootPosM[3 * k + 2] -= drop.m;
  }
  return {
    fps: 50,
    frameCount: frames,
    timeS: Float64Array.from({ length: frames }, (_, k) => k / 50),
    rootPosM,
    rootQuatWxyz: ref50.rootQuatWxyz.slice(0, 4 * frames),
    jointPosRad,
  };
}

function trajectoryOf(e: PackedTrajectory): RunTrajectory {
  const t = new RunTrajectory(J);
  t.setPacked(e);
  return t;
}

const input = (runId: string, trajectory: RunTrajectory, ended: boolean) => ({
  runId,
  trajectory,
  ended,
  clip,
  profile,
  fk,
});

describe('runSeries: a run against the clip on display', () => {
  it('has K frames whose MPJPE-l and joint RMS error give the batch evaluation of the same run', () => {
    const e = executed();
    const s = runSeries(input('a', trajectoryOf(e), true));
    const ev = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(clip, e);
    expect(s.count).toBe(ev.K);
    let mm = 0;
    let sq = 0;
    for (let k = 0; k < s.count; k++) {
      mm += s.mpjpeLMm[k];
      sq += s.jointRmseRad[k] ** 2;
    }
    expect(ev.metrics.mpjpeLMm.available && ev.metrics.mpjpeLMm.value).toBeCloseTo(mm / s.count, 6);
    expect(ev.metrics.jointPosRmseRad.available && ev.metrics.jointPosRmseRad.value).toBeCloseTo(
      Math.sqrt(sq / s.count),
      9,
    );
    expect(s.jointErrorOf(KNEE)[100]).toBeCloseTo(0.1, 9);
    expect(s.failure()).toEqual({ available: true, value: null });
  });

  it('marks the failure frame the batch evaluation finds; none for a small drop (negative control)', () => {
    const fell = executed(ref50.frameCount, { at: 200, m: 0.3 });
    const s = runSeries(input('b', trajectoryOf(fell), true));
    const ev = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(clip, fell);
    const f = ev.metrics.failure.available ? ev.metrics.failure.value : null;
    expect(f?.frame).toBe(200);
    expect(failureChecksPlot(s).failureTimeS).toBe(f!.timeS);
    expect(trackingPlot(s).failureLabel).toBe('failed: root height · frame 200');
    const ok = runSeries(input('c', trajectoryOf(executed(ref50.frameCount, { at: 200, m: 0.02 })), true));
    expect(failureChecksPlot(ok).failureTimeS).toBeNull();
  });

  it('grows with a live run, holding back the newest sample until the run ends, and restarts on a new recording', () => {
    const e = executed(120);
    const traj = new RunTrajectory(J);
    const sample = (k: number) => ({
      timeS: k / 50,
      rootPosM: e.rootPosM.subarray(3 * k, 3 * k + 3),
      rootQuatWxyz: e.rootQuatWxyz.subarray(4 * k, 4 * k + 4),
      jointPosRad: e.jointPosRad.subarray(J * k, J * k + J),
    });
    for (let k = 0; k < 50; k++) traj.append(sample(k));
    const s = runSeries(input('live', traj, false));
    expect(s.count).toBe(49); // frame 49 = the newest sample, which may still be replaced
    for (let k = 50; k < 120; k++) traj.append(sample(k));
    expect(runSeries(input('live', traj, false))).toBe(s); // the same builder, grown
    expect(s.count).toBe(119);
    expect(runSeries(input('live', traj, true)).count).toBe(120);
    // A recording set over the live frames (generation changes): a new series from frame 0.
    traj.setPacked(executed(120, { at: 10, m: 0.3 }));
    const again = runSeries(input('live', traj, true));
    expect(again).not.toBe(s);
    expect(again.count).toBe(120);
    expect(again.rootHeightErrM[50]).toBeCloseTo(0.3, 9);
  });

  it('a run without a global root has joint errors but no MPJPE-l or failure quantities (null gaps, never 0)', () => {
    const e = executed(100);
    const traj = trajectoryOf({ ...e, rootPosM: null, rootQuatWxyz: null });
    const s = runSeries(input('nomocap', traj, true));
    const cols = trackingPlot(s).columns;
    expect(cols[1].every((v) => v === null)).toBe(true);
    expect(cols[2].every((v) => v !== null && v > 0)).toBe(true);
    expect(
      failureChecksPlot(s)
        .columns.slice(1)
        .every((c) => c.every((v) => v === null)),
    ).toBe(true);
  });
});

describe('plot columns and threshold lines', () => {
  it('withGaps turns NaN and ±∞ into null and keeps the rest', () => {
    expect(withGaps(Float64Array.of(1, Number.NaN, 2, Infinity), 3)).toEqual([1, null, 2]);
  });

  it('draws the mb-metrics/1 thresholds as two lines (root and end-effector height share 0.25 m); three when they differ', () => {
    expect(failureThresholdLines(MB_METRICS_1)).toEqual([
      { scale: 'm', value: 0.25, label: 'root / EE Δz 0.25 m' },
      { scale: 'rad', value: 1, label: 'angle 1 rad' },
    ]);
    const c = customContract({ thresholds: { endEffectorHeightM: 0.3 } });
    expect(failureThresholdLines(c).map((l) => [l.scale, l.value])).toEqual([
      ['m', 0.25],
      ['m', 0.3],
      ['rad', 1],
    ]);
  });

  it('puts several runs on one time axis, a shorter run ending in nulls', () => {
    const long = runSeries(input('l', trajectoryOf(executed(100)), true));
    const short = runSeries(input('s', trajectoryOf(executed(60)), true));
    const p = compareRunsPlot([long, short], 'jointRmseRad', 50);
    expect(p.columns[0]).toHaveLength(100);
    expect(p.columns[0][99]).toBeCloseTo(1.98, 12);
    expect(p.columns[1].every((v) => v !== null)).toBe(true);
    expect(p.columns[2].slice(0, 60).every((v) => v !== null)).toBe(true);
    expect(p.columns[2].slice(60).every((v) => v === null)).toBe(true);
  });
});

describe('SampleRing and the live trial ring', () => {
  it('keeps the newest `capacity` samples oldest first; NaN as null', () => {
    const r = new SampleRing(4, 2);
    r.push(0, [1, 10]);
    r.push(1, [2, Number.NaN]);
    expect(r.columns()).toEqual([
      [0, 1],
      [1, 2],
      [10, null],
    ]);
    for (let t = 2; t < 7; t++) r.push(t, [t + 1, 10 * (t + 1)]);
    expect(r.size).toBe(4);
    expect(r.lastTimeS).toBe(6);
    expect(r.columns()).toEqual([
      [3, 4, 5, 6],
      [4, 5, 6, 7],
      [40, 50, 60, 70],
    ]);
    expect(() => new SampleRing(0, 1)).toThrow(RangeError);
  });

  it("records a trial's live batches, latches the first failed sample, and starts over for a new run", () => {
    const batch = (runId: string, t0: number, failedFrom: number | null) => ({
      runId,
      count: 3,
      timeS: [t0, t0 + 0.02, t0 + 0.04],
      readings: {
        mpjpeLMm: [10, null, 12],
        jointRmseRad: [0.1, 0.2, 0.3],
        firstFailureFrame: null,
        failed: [0, 1, 2].map((i) => failedFrom !== null && i >= failedFrom),
        failure: failedFrom !== null ? 'root_height of pelvis at frame 7' : null,
      },
    });
    recordTrialLive(batch('r1', 0, null));
    recordTrialLive(batch('r1', 0.06, 1));
    recordTrialLive(batch('r1', 0.12, 0));
    expect(liveTrialRing.size).toBe(9);
    expect(liveTrialRingStore.getState()).toMatchObject({ runId: 'r1', failureTimeS: 0.08 });
    expect(liveTrialRing.columns()[1].slice(0, 3)).toEqual([10, null, 12]);
    recordTrialLive(batch('r2', 0, null));
    expect(liveTrialRing.size).toBe(3);
    expect(liveTrialRingStore.getState()).toMatchObject({ runId: 'r2', failureTimeS: null, failure: null });
  });
});
