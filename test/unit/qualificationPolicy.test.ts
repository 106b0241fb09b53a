// Pure parts of qualification besides the decision: the policy object and its versioning, seeds
// and start perturbations, the per-rollout measures (posture margins by FK, saturation,
// contacts) and the qualification matrix.
import { describe, expect, it } from 'vitest';
import { quatHeading } from '../../src/domain/math/quat';
import { ClipPairEvaluator, MB_METRICS_1 } from '../../src/domain/metrics';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import {
  actuatorLimitsOf,
  checkPolicy,
  contactFramesUnion,
  customPolicy,
  floorContactAllowed,
  matrixCell,
  MB_ADMISSION_1,
  perturbedInitialState,
  policyKey,
  postureMargins,
  qualificationMatrix,
  resolvedLimits,
  RolloutMeasurer,
  rolloutProtocolKey,
  rolloutSeed,
  type ActuatorLimits,
  type MatrixPair,
} from '../../src/domain/qualification';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';

const profile = loadRobotProfile();
const J = 29;

function standClip(N = 60): MotionClip {
  const pose = profile.defaultPose;
  const rootPosM = new Float64Array(3 * N);
  const rootQuatWxyz = new Float64Array(4 * N);
  const jointPosRad = new Float64Array(J * N);
  for (let k = 0; k < N; k++) {
    rootPosM.set(pose.rootPosM, 3 * k);
    rootQuatWxyz.set(pose.rootQuatWxyz, 4 * k);
    jointPosRad.set(pose.jointPosRad, J * k);
  }
  return {
    id: 'clip-stand',
    name: 'stand',
    fps: 50,
    frameCount: N,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    provenance: { file: 'stand', format: 'motionbench-json', fileSha256: '0', fpsSource: 'file' },
    warnings: [],
    capabilityGroup: 'in_place',
  };
}

describe('admission policy object', () => {
  it('mb-admission/1 holds the stated values in one object', () => {
    expect(policyKey(MB_ADMISSION_1)).toBe('mb-admission/1');
    const p = MB_ADMISSION_1.parameters;
    expect(p.rollouts).toBe(3);
    expect(p.perturbation).toEqual({ jointRad: 0.01, rootYawRad: 0.01 });
    expect([
      p.minSuccessRate,
      p.minProgressSoft,
      p.maxMpjpeLMm,
      p.marginFraction,
      p.maxSaturationFraction,
      p.maxUnexpectedContactFrames,
    ]).toEqual([1, 1, 80, 0.6, 0.02, 0]);
    expect(p.measurement).toEqual({ saturationTorqueFraction: 0.95, ctrlRangeMarginRad: 0.001, contactMinForceN: 1 });
    expect(resolvedLimits(MB_ADMISSION_1, MB_METRICS_1.thresholds)).toEqual({
      rootHeightM: 0.15,
      rootOrientationRad: 0.6,
      endEffectorHeightM: 0.15,
    });
    expect(Object.isFrozen(MB_ADMISSION_1.parameters.perturbation)).toBe(true);
    expect(() => checkPolicy(MB_ADMISSION_1)).not.toThrow();
  });

  it('changed parameters get a derived version; the same changes the same version; a forged version is refused', () => {
    expect(customPolicy({ rollouts: 3 }).version).toBe('1');
    const five = customPolicy({ rollouts: 5 });
    expect(five.version).toMatch(/^1\+custom-[0-9a-f]{12}$/);
    expect(customPolicy({ rollouts: 5 }).version).toBe(five.version);
    expect(customPolicy({ rollouts: 5, maxMpjpeLMm: 60 }).version).not.toBe(five.version);
    expect(() => checkPolicy({ ...five, version: '1' })).toThrow(/does not match its parameters/);
    expect(() => customPolicy({ rollouts: 0 })).toThrow(/rollouts/);
    expect(() => customPolicy({ marginFraction: 1.5 })).toThrow(/marginFraction/);
  });

  it('the rollout protocol changes with perturbation/measurement only, so a new decision limit reuses the rollouts', () => {
    const base = rolloutProtocolKey(MB_ADMISSION_1);
    expect(rolloutProtocolKey(customPolicy({ maxMpjpeLMm: 60, rollouts: 5 }))).toBe(base);
    expect(rolloutProtocolKey(customPolicy({ perturbation: { jointRad: 0.02 } }))).not.toBe(base);
    expect(rolloutProtocolKey(customPolicy({ measurement: { contactMinForceN: 5 } }))).not.toBe(base);
  });

  it('seeds are reproducible 48-bit integers, different per pair and rollout', () => {
    const a = rolloutSeed('pt-0123', 0);
    expect(a).toBe(rolloutSeed('pt-0123', 0));
    expect(Number.isSafeInteger(a) && a >= 0 && a < 2 ** 48).toBe(true);
    expect(new Set([a, rolloutSeed('pt-0123', 1), rolloutSeed('pt-0124', 0)]).size).toBe(3);
  });

  it('floor contacts allowed: knees and hands in low_posture only; torso never', () => {
    expect(floorContactAllowed(MB_ADMISSION_1, 'low_posture', 'left_knee_link')).toBe(true);
    expect(floorContactAllowed(MB_ADMISSION_1, 'low_posture', 'right_wrist_yaw_link')).toBe(true);
    expect(floorContactAllowed(MB_ADMISSION_1, 'low_posture', 'left_rubber_hand')).toBe(true);
    expect(floorContactAllowed(MB_ADMISSION_1, 'low_posture', 'torso_link')).toBe(false);
    expect(floorContactAllowed(MB_ADMISSION_1, 'locomotion', 'left_knee_link')).toBe(false);
    expect(floorContactAllowed(MB_ADMISSION_1, null, 'left_knee_link')).toBe(false);
  });
});

describe('start perturbation', () => {
  it('offsets every joint by at most ±0.01 rad (clamped into its range) and the yaw by at most ±0.01 rad, reproducibly', () => {
    const clip = standClip();
    const ranges = profile.joints.map((j) => j.rangeRad);
    const base = initialStateFromClipFrame(clip);
    const a = perturbedInitialState(clip, 12345, MB_ADMISSION_1.parameters.perturbation, ranges);
    const b = perturbedInitialState(clip, 12345, MB_ADMISSION_1.parameters.perturbation, ranges);
    const c = perturbedInitialState(clip, 12346, MB_ADMISSION_1.parameters.perturbation, ranges);
    expect(a).toEqual(b);
    expect(a.applied.jointOffsetsRad).not.toEqual(c.applied.jointOffsetsRad);
    for (let j = 0; j < J; j++) {
      const d = a.initial.jointPosRad[j] - base.jointPosRad[j];
      expect(Math.abs(d)).toBeLessThanOrEqual(0.01);
      expect(d).toBeCloseTo(a.applied.jointOffsetsRad[j], 15);
      const r = ranges[j]!;
      expect(a.initial.jointPosRad[j]).toBeGreaterThanOrEqual(r[0]);
      expect(a.initial.jointPosRad[j]).toBeLessThanOrEqual(r[1]);
    }
    expect(Math.abs(a.applied.rootYawRad)).toBeLessThanOrEqual(0.01);
    expect(
      quatHeading(a.initial.rootQuatWxyz as [number, number, number, number]) -
        quatHeading(base.rootQuatWxyz as [number, number, number, number]),
    ).toBeCloseTo(a.applied.rootYawRad, 12);
    expect(a.initial.rootPosM).toEqual(base.rootPosM);
    expect(a.initial.placeOnFloor).toBe(true);
    // A joint at its range end is clamped: the knee's lower limit.
    const knee = profile.joints.findIndex((j) => j.name === 'left_knee_joint');
    const atLimit = standClip();
    for (let k = 0; k < atLimit.frameCount; k++) atLimit.jointPosRad[J * k + knee] = ranges[knee]![0];
    const offs = Array.from(
      { length: 20 },
      (_, s) =>
        perturbedInitialState(atLimit, s, MB_ADMISSION_1.parameters.perturbation, ranges).initial.jointPosRad[knee],
    );
    expect(Math.min(...offs)).toBeGreaterThanOrEqual(ranges[knee]![0]);
  });
});

describe('rollout measures', () => {
  it('posture margins from FK: the largest root-height, orientation and end-effector errors over frames 0..K−2', () => {
    const ref = standClip(20);
    const exec = standClip(20);
    exec.rootPosM[3 * 5 + 2] -= 0.05; // frame 5: whole body 5 cm lower
    const yaw = 0.3;
    exec.rootQuatWxyz.set([Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)], 4 * 8); // frame 8: turned 0.3 rad
    const elbow = profile.joints.findIndex((j) => j.name === 'right_elbow_joint');
    exec.jointPosRad[J * 12 + elbow] += 1.0; // frame 12: right forearm swung
    exec.rootPosM[3 * 19 + 2] -= 0.5; // the last frame does not count
    const ev = new ClipPairEvaluator(MB_METRICS_1, profile);
    const t = ev.evaluate(ref, exec);
    const m = postureMargins(ev.layout, t.ref, t.exec, t.K)!;
    expect(m.frames).toBe(19);
    expect(m.rootHeight.maxM).toBeCloseTo(0.05, 12);
    expect(m.rootHeight.frame).toBe(5);
    expect(m.rootOrientation.maxRad).toBeCloseTo(0.3, 12);
    expect(m.rootOrientation.frame).toBe(8);
    expect(m.endEffectorHeight.frame).toBe(12);
    expect(m.endEffectorHeight.body).toBe('right_wrist_yaw_link');
    expect(m.endEffectorHeight.maxM).toBeGreaterThan(0.05);
    expect(postureMargins(ev.layout, t.ref, t.exec, 1)).toBeNull();
  });

  it('saturation: |τ| ≥ 0.95 × force limit or a target within 1 mrad of its ctrlrange counts, once per joint sample', () => {
    const limits: ActuatorLimits = actuatorLimitsOf(profile);
    const knee = limits.jointNames.indexOf('left_knee_joint');
    expect(limits.forceLimitNm[knee]).toBe(139);
    expect(limits.ctrlRangeRad[knee]).toEqual([-0.087267, 2.8798]);
    const m = new RolloutMeasurer(
      limits,
      profile.bodies.map((b) => b.name),
      MB_ADMISSION_1.parameters.measurement,
    );
    const tau = new Float64Array(J);
    const target = Float64Array.from(profile.defaultPose.jointPosRad);
    m.addFrame(0, tau, target, []); // nothing saturated
    tau[knee] = -0.95 * 139; // exactly at the threshold
    m.addFrame(1, tau, target, []);
    tau[knee] = 0.949 * 139;
    target[knee] = 2.8798 - 0.0005; // within 1 mrad of the upper end
    m.addFrame(2, tau, target, []);
    tau[knee] = 139;
    target[knee] = 3.5; // beyond the range and saturated: counted once
    m.addFrame(3, tau, target, []);
    const r = m.result(null);
    expect(r.saturation.samples).toBe(4 * J);
    expect(r.saturation.saturated).toBe(3);
    expect(r.saturation.torqueSaturated).toBe(2);
    expect(r.saturation.targetSaturated).toBe(2);
    expect(r.saturation.fraction).toBeCloseTo(3 / (4 * J), 15);
    expect(r.saturation.worstJoint).toEqual({ name: 'left_knee_joint', fraction: 0.75 });
    expect(r.margins).toBeNull();
    expect(r.marginsUnavailable).toMatch(/fewer than two frames/);
  });

  it('contacts: non-foot bodies on the floor above 1 N, as runs of frames; self-contacts and zero-force margin contacts ignored', () => {
    const limits = actuatorLimitsOf(profile);
    const m = new RolloutMeasurer(
      limits,
      profile.bodies.map((b) => b.name),
      MB_ADMISSION_1.parameters.measurement,
    );
    const tau = new Float64Array(J);
    const tgt = Float64Array.from(profile.defaultPose.jointPosRad);
    for (let k = 0; k < 10; k++) {
      const cs = [{ body: 'left_elbow_link', other: 'torso_link', forceN: 50 }]; // self contact
      if (k >= 2 && k < 5) cs.push({ body: 'torso_link', other: 'floor', forceN: 100 + k });
      if (k === 7) cs.push({ body: 'torso_link', other: 'floor', forceN: 20 });
      if (k >= 4 && k < 6) cs.push({ body: 'pelvis', other: '', forceN: 10 });
      if (k === 9) cs.push({ body: 'left_knee_link', other: 'floor', forceN: 0 });
      m.addFrame(k, tau, tgt, cs);
    }
    const r = m.result(null);
    expect(r.contactsKnown).toBe(true);
    expect(r.floorContacts).toEqual([
      {
        body: 'torso_link',
        other: ['floor'],
        frames: 4,
        runs: [
          [2, 5],
          [7, 8],
        ],
        firstFrame: 2,
        firstTimeS: 0.04,
        maxForceN: 104,
      },
      { body: 'pelvis', other: ['world'], frames: 2, runs: [[4, 6]], firstFrame: 4, firstTimeS: 0.08, maxForceN: 10 },
    ]);
    expect(contactFramesUnion(r.floorContacts)).toBe(5);
    const blind = new RolloutMeasurer(limits, [], MB_ADMISSION_1.parameters.measurement);
    blind.addFrame(0, tau, null, null);
    expect(blind.result(null).contactsKnown).toBe(false);
    expect(blind.result(null).saturation.framesWithoutCommand).toBe(1);
  });
});

describe('qualification matrix', () => {
  const ep = (runId: string, failed: boolean | null, ps: number | null, mp: number | null) => ({
    runId,
    rolloutIndex: 0,
    failed,
    progressSoft: ps,
    mpjpeLMm: mp,
  });
  const mk = (
    clip: string,
    group: MatrixPair['group'],
    decision: MatrixPair['decision'],
    episodes: MatrixPair['episodes'],
    binding = 'b@1',
  ): MatrixPair => ({
    snapshotHash: 's',
    bindingKey: binding,
    clipId: clip,
    clipName: clip,
    group,
    parentTraceId: `pt-${clip}-${binding}`,
    decision,
    episodes,
  });
  it('pools rollouts for SR, macro-averages pair means for progress-soft and MPJPE-l, counts pending apart', () => {
    const pairs = [
      mk('a', 'locomotion', { admitted: true, reasons: [] }, [ep('1', false, 1, 20), ep('2', false, 1, 40)]),
      mk('b', 'locomotion', { admitted: false, reasons: ['x'] }, [ep('3', true, 0.5, 200), ep('4', false, 1, 100)]),
      mk('c', 'dynamic', { admitted: false, reasons: ['y'] }, [ep('5', false, 1, null)]),
      mk('d', 'dynamic', null, []),
      mk('a', 'locomotion', { admitted: true, reasons: [] }, [ep('6', false, 1, 10)], 'b@2'),
    ];
    const rows = qualificationMatrix(pairs);
    expect(rows.map((r) => r.bindingKey)).toEqual(['b@1', 'b@2']);
    const all = rows[0].overall;
    expect([all.pairs, all.admitted, all.rejected, all.pending, all.episodes]).toEqual([4, 1, 2, 1, 5]);
    expect(all.sr).toBeCloseTo(4 / 5, 15);
    expect(all.progressSoft).toBeCloseTo((1 + 0.75 + 1) / 3, 15);
    expect(all.mpjpeLMm).toBeCloseTo((30 + 150) / 2, 12); // clip c has an unavailable reading: left out, not 0
    expect(all.mpjpeLClips).toBe(2);
    expect(rows[0].byGroup.dynamic.pending).toBe(1);
    expect(rows[0].byGroup.upper_body.pairs).toBe(0);
    expect(matrixCell([]).sr).toBeNull();
  });
});
