import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { resampleClip, slerpWxyzInto } from '../../src/domain/motion/resample';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { bodyIndexByName, type RobotProfile } from '../../src/domain/robot/robotProfile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import {
  ERROR_RED_M,
  ERROR_STOPS,
  ERROR_YELLOW_M,
  errorColorHex,
  errorColorRgb,
} from '../../renderer/src/overlay/errorScale';
import { bodyErrors, computeRunFrame, createRunFrame } from '../../renderer/src/overlay/overlayCompute';
import { RunTrajectory } from '../../renderer/src/overlay/runTrajectory';
import { seekFrame } from '../../renderer/src/playback/playback';
import { useClipStore } from '../../renderer/src/playback/clipStore';
import { poseStore } from '../../renderer/src/playback/poseStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import {
  addRun,
  appendRunFrames,
  clearRuns,
  endRun,
  removeRun,
  setErrorMode,
  setFollowLive,
  setRunTrajectory,
  startOverlayEngine,
} from '../../renderer/src/overlay/runActions';
import { overlayStore } from '../../renderer/src/overlay/overlayStore';
import { shownBodyErrors } from '../../renderer/src/overlay/overlayEngine';
import { useRunStore } from '../../renderer/src/overlay/runStore';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// The overlay of executed runs on the reference: colour scale, trajectory storage and sampling,
// per-body errors from FK, and the run store driving it from the shared playhead.

const J = 29;
let profile: RobotProfile;
let fk: ForwardKinematics;
let clip: MotionClip;
const L_SHOULDER_PITCH = 15;

beforeAll(() => {
  profile = loadRobotProfile(OUR_G1);
  fk = new ForwardKinematics(profile);
  const file = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
  clip = decodeMotionFile(new Uint8Array(fs.readFileSync(file)), { file: path.basename(file) });
});

/** The clip at 50 Hz as a packed run trajectory, with `offsets` (joint index → rad) added. */
function packedFromClip(
  c: MotionClip,
  offsets: Record<number, number> = {},
  rootShiftM: [number, number, number] = [0, 0, 0],
) {
  const r = resampleClip(c, 50);
  const jointPosRad = r.jointPosRad.slice();
  for (let k = 0; k < r.frameCount; k++)
    for (const [j, d] of Object.entries(offsets)) jointPosRad[J * k + Number(j)] += d;
  const rootPosM = r.rootPosM.slice();
  for (let k = 0; k < r.frameCount; k++) for (let a = 0; a < 3; a++) rootPosM[3 * k + a] += rootShiftM[a];
  return {
    timeS: Float64Array.from({ length: r.frameCount }, (_, k) => k / 50),
    rootPosM,
    rootQuatWxyz: r.rootQuatWxyz,
    jointPosRad,
  };
}

describe('error colour scale', () => {
  it('turns red at the mb-metrics/1 failure threshold', () => {
    expect(ERROR_RED_M).toBe(MB_METRICS_1.thresholds.endEffectorHeightM);
    expect(ERROR_RED_M).toBe(MB_METRICS_1.thresholds.rootHeightM);
  });

  it('is green at 0, yellow at 0.10 m, red from 0.25 m, and blends in between', () => {
    expect(errorColorHex(0)).toBe('#22c55e');
    expect(errorColorHex(ERROR_YELLOW_M)).toBe('#facc15');
    expect(errorColorHex(ERROR_RED_M)).toBe('#ef4444');
    expect(errorColorHex(1)).toBe('#ef4444');
    expect(errorColorHex(-1)).toBe('#22c55e');
    expect(errorColorHex(Number.NaN)).toBe('#ef4444'); // unknown is not "fine"
    const mid = errorColorRgb(0.05, [0, 0, 0]).map((v) => v * 255);
    ERROR_STOPS[0].rgb.forEach((a, c) => expect(mid[c]).toBeCloseTo((a + ERROR_STOPS[1].rgb[c]) / 2, 9));
    // The hue falls monotonically (green → yellow → red) as the error grows.
    const hue = ([r, g, b]: number[]): number => {
      const max = Math.max(r, g, b);
      const d = max - Math.min(r, g, b);
      const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
      return (h * 60 + 360) % 360;
    };
    let last = Infinity;
    for (let e = 0; e <= 0.3; e += 0.005) {
      const h = hue(errorColorRgb(e, [0, 0, 0]));
      expect(h).toBeLessThanOrEqual(last + 1e-9);
      last = h;
    }
    expect(hue(errorColorRgb(0, [0, 0, 0]))).toBeGreaterThan(120);
    expect(hue(errorColorRgb(0.25, [0, 0, 0]))).toBeLessThan(5);
  });
});

describe('RunTrajectory', () => {
  it('grows, keeps time order, replaces a repeated time, holds a missing root pose', () => {
    const t = new RunTrajectory(J, 2);
    const q = new Float64Array(J);
    for (let i = 0; i < 100; i++) {
      q[0] = i;
      t.append({ timeS: i * 0.02, rootPosM: [i, 0, 0.8], rootQuatWxyz: [1, 0, 0, 0], jointPosRad: q });
    }
    expect(t.count).toBe(100);
    expect(t.lastTimeS).toBeCloseTo(1.98, 12);
    expect(t.jointPosRad[J * 99]).toBe(99);
    expect(() => t.append({ timeS: 1.5, rootPosM: null, rootQuatWxyz: null, jointPosRad: q })).toThrow(
      /before the previous sample/,
    );
    expect(() => t.append({ timeS: 3, rootPosM: null, rootQuatWxyz: null, jointPosRad: new Float64Array(3) })).toThrow(
      /3 joint angles/,
    );
    q[0] = -1;
    t.append({ timeS: 1.98, rootPosM: null, rootQuatWxyz: null, jointPosRad: q });
    expect(t.count).toBe(100);
    expect(t.jointPosRad[J * 99]).toBe(-1);
    expect(Array.from(t.rootPosM.subarray(3 * 99, 3 * 100))).toEqual([98, 0, 0.8]); // held from sample 98
    expect(t.hasRootPosition).toBe(true);
  });

  it('samples like the metric contract resamples: linear joints and position, slerp orientation', () => {
    const t = new RunTrajectory(J);
    const p = packedFromClip(clip);
    t.setPacked(p);
    const root = new Float64Array(3);
    const quat = new Float64Array(4);
    const q = new Float64Array(J);
    // On a sample: exact.
    expect(t.sampleAt(2.0, root, quat, q)).toEqual({ i0: 100, alpha: 0, clamped: null });
    expect(Array.from(q)).toEqual(Array.from(p.jointPosRad.subarray(J * 100, J * 101)));
    // Between samples 100 and 101, 30 % of the way.
    const at = t.sampleAt(2.006, root, quat, q);
    expect(at.i0).toBe(100);
    expect(at.alpha).toBeCloseTo(0.3, 9);
    for (let j = 0; j < J; j++) {
      const a = p.jointPosRad[J * 100 + j];
      expect(q[j]).toBeCloseTo(a + (p.jointPosRad[J * 101 + j] - a) * at.alpha, 12);
    }
    const expectQuat = new Float64Array(4);
    slerpWxyzInto(expectQuat, 0, p.rootQuatWxyz, 400, p.rootQuatWxyz, 404, at.alpha);
    for (let c = 0; c < 4; c++) expect(quat[c]).toBeCloseTo(expectQuat[c], 12);
    // Outside: the end samples, flagged.
    expect(t.sampleAt(-1, root, quat, q).clamped).toBe('before');
    expect(t.sampleAt(1e6, root, quat, q)).toEqual({ i0: t.count - 1, alpha: 0, clamped: 'after' });
  });

  it('checks packed sizes', () => {
    const t = new RunTrajectory(J);
    expect(() =>
      t.setPacked({ timeS: [0, 1], rootPosM: null, rootQuatWxyz: null, jointPosRad: new Float64Array(J) }),
    ).toThrow(/expected 2×29/);
    expect(() =>
      t.setPacked({ timeS: [0], rootPosM: [0, 0], rootQuatWxyz: null, jointPosRad: new Float64Array(J) }),
    ).toThrow(/rootPosM/);
  });
});

describe('computeRunFrame', () => {
  const refAt = (frame: number) => {
    const bodyPosM = new Float64Array(3 * fk.bodyCount);
    fk.computeClipFrame(clip, frame, bodyPosM, new Float64Array(4 * fk.bodyCount));
    return {
      rootPosM: clip.rootPosM.subarray(3 * frame, 3 * frame + 3),
      rootQuatWxyz: clip.rootQuatWxyz.subarray(4 * frame, 4 * frame + 4),
      bodyPosM,
    };
  };

  it('is zero for the reference itself and the FK distance for a joint offset', () => {
    const frame = 300; // 5.0 s at 60 fps = sample 250 at 50 Hz
    const ref = refAt(frame);
    const same = new RunTrajectory(J);
    same.setPacked(packedFromClip(clip));
    const out = createRunFrame(fk.bodyCount, J);
    computeRunFrame(out, same, fk, ref, profile.rootBodyIndex, frame / clip.fps);
    expect(out.valid).toBe(true);
    expect(out.maxErrLocalM).toBeLessThan(1e-12);
    expect(out.rootErrM).toBeLessThan(1e-12);

    const off = new RunTrajectory(J);
    off.setPacked(packedFromClip(clip, { [L_SHOULDER_PITCH]: 0.6 }));
    computeRunFrame(out, off, fk, ref, profile.rootBodyIndex, frame / clip.fps);
    const q = Float64Array.from(clip.jointPosRad.subarray(J * frame, J * frame + J));
    q[L_SHOULDER_PITCH] += 0.6;
    const e = new Float64Array(3 * fk.bodyCount);
    fk.compute(ref.rootPosM, ref.rootQuatWxyz, q, e, new Float64Array(4 * fk.bodyCount));
    const wrist = bodyIndexByName(profile, 'left_wrist_yaw_link');
    const expected = Math.hypot(
      e[3 * wrist] - ref.bodyPosM[3 * wrist],
      e[3 * wrist + 1] - ref.bodyPosM[3 * wrist + 1],
      e[3 * wrist + 2] - ref.bodyPosM[3 * wrist + 2],
    );
    expect(expected).toBeGreaterThan(0.2);
    expect(out.bodyErrLocalM[wrist]).toBeCloseTo(expected, 12);
    expect(out.bodyErrGlobalM[wrist]).toBeCloseTo(expected, 12);
    expect(out.bodyErrLocalM[bodyIndexByName(profile, 'right_wrist_yaw_link')]).toBeLessThan(1e-12);
    expect(out.bodyErrLocalM[bodyIndexByName(profile, 'left_ankle_roll_link')]).toBeLessThan(1e-12);
    let sum = 0;
    for (let b = 0; b < fk.bodyCount; b++) sum += out.bodyErrLocalM[b];
    expect(out.mpjpeLocalM).toBeCloseTo(sum / fk.bodyCount, 15);
    expect(profile.bodies[out.maxErrLocalBody].name).toMatch(/^left_/);
  });

  it('separates a root offset (world error) from local tracking error', () => {
    const frame = 120;
    const shifted = new RunTrajectory(J);
    shifted.setPacked(packedFromClip(clip, {}, [0.3, -0.4, 0]));
    const out = createRunFrame(fk.bodyCount, J);
    computeRunFrame(out, shifted, fk, refAt(frame), profile.rootBodyIndex, frame / clip.fps);
    expect(out.maxErrLocalM).toBeLessThan(1e-9);
    expect(out.rootErrM).toBeCloseTo(0.5, 9);
    expect(out.maxErrGlobalM).toBeCloseTo(0.5, 9);
    expect(bodyErrors(out, 'global')).toBe(out.bodyErrGlobalM);
    expect(bodyErrors(out, 'local')).toBe(out.bodyErrLocalM);
  });

  it('places a run without a global root position at the reference root and reports no world error', () => {
    const frame = 120;
    const p = packedFromClip(clip, {}, [5, 5, 0]);
    const noRoot = new RunTrajectory(J);
    noRoot.setPacked({ ...p, rootPosM: null });
    const out = createRunFrame(fk.bodyCount, J);
    computeRunFrame(out, noRoot, fk, refAt(frame), profile.rootBodyIndex, frame / clip.fps);
    expect(out.rootFromReference).toBe(true);
    expect(Number.isNaN(out.rootErrM)).toBe(true);
    expect(Number.isNaN(out.maxErrGlobalM)).toBe(true);
    expect(out.maxErrLocalM).toBeLessThan(1e-9);
    expect(bodyErrors(out, 'global')).toBe(out.bodyErrLocalM); // colours fall back to local
  });
});

describe('run store on the shared playhead', () => {
  let stop: () => void;
  beforeAll(() => {
    setRobotProfile(profile);
    useClipStore.setState({ loaded: clipFromDto(clipToDto(clip)) });
    stop = startOverlayEngine();
    seekFrame(0);
  });
  afterAll(() => {
    clearRuns();
    stop();
  });

  it('needs the reference clip and refuses duplicate ids', () => {
    addRun({ id: 'a', live: false });
    expect(() => addRun({ id: 'a' })).toThrow(/already exists/);
    expect(() => addRun({ id: 'bad id!' })).toThrow(/run id/);
    removeRun('a');
    expect(useRunStore.getState().runs).toEqual([]);
  });

  it('replay: the overlay follows seeks; errors match FK; mode switch re-reads', () => {
    addRun({ id: 'replay', label: 'left shoulder +0.6', live: false, source: 'synthetic' });
    setRunTrajectory('replay', packedFromClip(clip, { [L_SHOULDER_PITCH]: 0.6 }));
    seekFrame(300);
    const f = overlayStore.getState().frames.get('replay')!;
    expect(f.valid).toBe(true);
    expect(f.timeS).toBeCloseTo(5, 12);
    const wrist = bodyIndexByName(profile, 'left_wrist_yaw_link');
    const before = overlayStore.getState().revision;
    expect(shownBodyErrors('replay')![wrist]).toBeGreaterThan(0.2);
    setErrorMode('global');
    expect(overlayStore.getState().revision).toBeGreaterThan(before);
    expect(shownBodyErrors('replay')).toBe(f.bodyErrGlobalM);
    setErrorMode('local');
    endRun('replay', 'completed');
    expect(useRunStore.getState().runs[0]).toMatchObject({ live: false, outcome: 'completed' });
    removeRun('replay');
  });

  it('live: appended frames move the playhead to the newest sample when following', () => {
    setFollowLive(true);
    seekFrame(0);
    addRun({ id: 'live', live: true });
    const p = packedFromClip(clip, { [L_SHOULDER_PITCH]: 0.2 });
    const frames = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => {
        const k = from + i;
        return {
          timeS: p.timeS[k],
          rootPosM: p.rootPosM.subarray(3 * k, 3 * k + 3),
          rootQuatWxyz: p.rootQuatWxyz.subarray(4 * k, 4 * k + 4),
          jointPosRad: p.jointPosRad.subarray(J * k, J * k + J),
        };
      });
    appendRunFrames('live', frames(0, 50)); // up to 0.98 s
    expect(poseStore.getState().frame).toBe(Math.floor(0.98 * 60 + 1e-6));
    expect(overlayStore.getState().frames.get('live')!.valid).toBe(true);
    setFollowLive(false);
    appendRunFrames('live', frames(50, 100));
    expect(poseStore.getState().frame).toBe(58); // stays
    setFollowLive(true);
  });

  it('drops the runs when another clip is loaded', () => {
    expect(useRunStore.getState().runs.length).toBeGreaterThan(0);
    const other = resampleClip(clip, 30);
    useClipStore.setState({ loaded: clipFromDto(clipToDto(other)) });
    expect(useRunStore.getState().runs).toEqual([]);
    expect(overlayStore.getState().frames.size).toBe(0);
  });
});
