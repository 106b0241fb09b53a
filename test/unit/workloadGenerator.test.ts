// The pieces of the workload generator and of the snapshot: smooth interpolation, leg IK, the
// frame resolver's floor placement, the snapshot hash scheme, and that the physical checks do
// catch a bad clip.
import { describe, expect, it } from 'vitest';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { BodyModel, jointIndex, LEG_JOINT0 } from '../../src/domain/workload/bodyModel';
import { FrameResolver, frameCountFor } from '../../src/domain/workload/clipBuilder';
import { generateCoreV1 } from '../../src/domain/workload/coreV1';
import {
  bump,
  envelope,
  KeyTrack,
  minJerk,
  oscillation,
  quinticHermite,
} from '../../src/domain/workload/interpolation';
import { measureClip, physicsViolations, STANDARD_LIMITS } from '../../src/domain/workload/physicalChecks';
import { Kit, legAngles } from '../../src/domain/workload/recipeKit';
import { quatFromRpy } from '../../src/domain/workload/rotation';
import {
  snapshotDifferences,
  snapshotHash,
  snapshotHashText,
  type WorkloadClipMeta,
} from '../../src/domain/workload/snapshot';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';

const profile = loadRobotProfile();
const model = new BodyModel(profile);
const kit = new Kit(model);

/** Finite-difference derivatives of f at t. */
const d1 = (f: (t: number) => number, t: number, h = 1e-4) => (f(t + h) - f(t - h)) / (2 * h);
const d2 = (f: (t: number) => number, t: number, h = 1e-3) => (f(t + h) - 2 * f(t) + f(t - h)) / (h * h);

describe('interpolation', () => {
  it('minJerk goes 0 → 1 with zero velocity and acceleration at both ends, symmetric about ½', () => {
    expect(minJerk(0)).toBe(0);
    expect(minJerk(1)).toBe(1);
    expect(minJerk(-1)).toBe(0);
    expect(minJerk(2)).toBe(1);
    expect(minJerk(0.5)).toBeCloseTo(0.5, 15);
    for (const s of [0.1, 0.3, 0.7]) expect(minJerk(s) + minJerk(1 - s)).toBeCloseTo(1, 14);
    for (const s of [0, 1]) {
      expect(Math.abs(d1(minJerk, s))).toBeLessThan(1e-6);
      expect(Math.abs(d2(minJerk, s))).toBeLessThan(1e-2);
    }
  });

  it('bump and envelope start and end at rest; oscillation fades in and out', () => {
    expect(bump(0.5, 0, 1)).toBe(1);
    expect(bump(0, 0, 1)).toBe(0);
    expect(bump(1, 0, 1)).toBe(0);
    expect(Math.abs(d1((t) => bump(t, 0, 1), 0))).toBeLessThan(1e-6);
    expect(envelope(2, 1, 5, 1)).toBe(1);
    expect(envelope(1, 1, 5, 1)).toBe(0);
    expect(oscillation(0.999, 1, 5, 0.5, 1)).toBe(0);
    expect(Math.abs(d1((t) => oscillation(t, 1, 5, 0.5, 1), 1.0001))).toBeLessThan(1e-3);
  });

  it('KeyTrack passes through its keys; min-jerk rests at each key, the smooth spline is C² and rests at the ends', () => {
    const keys: [number, number][] = [
      [0, 0],
      [1, 2],
      [1.5, -1],
      [3, 0.5],
    ];
    for (const mode of ['minjerk', 'smooth'] as const) {
      const tr = new KeyTrack(keys, mode);
      for (const [t, v] of keys) expect(tr.at(t)).toBeCloseTo(v, 12);
      expect(tr.at(-1)).toBe(0);
      expect(tr.at(9)).toBe(0.5);
      expect(Math.abs(d1((t) => tr.at(t), 0))).toBeLessThan(1e-5);
      expect(Math.abs(d1((t) => tr.at(t), 3))).toBeLessThan(1e-5);
    }
    const mj = new KeyTrack(keys, 'minjerk');
    expect(Math.abs(d1((t) => mj.at(t), 1))).toBeLessThan(1e-5);
    // the smooth spline moves through an interior key with the three-point velocity estimate
    // (exact for a parabola: (s0·h1 + s1·h0)/(h0 + h1) = (2·0.5 − 6·1)/1.5 at t = 1) and with
    // continuous first and second derivatives
    const f = (t: number) => new KeyTrack(keys, 'smooth').at(t);
    expect(d1(f, 1)).toBeCloseTo(-10 / 3, 4);
    expect(d1(f, 1 - 1e-3)).toBeCloseTo(d1(f, 1 + 1e-3), 1);
    expect(d2(f, 1 - 2e-3, 1e-3)).toBeCloseTo(d2(f, 1 + 2e-3, 1e-3), 0);
    expect(
      () =>
        new KeyTrack([
          [1, 0],
          [1, 1],
        ]),
    ).toThrow(/increase/);
  });

  it('quinticHermite matches its end conditions', () => {
    const h = 2;
    const f = (s: number) => quinticHermite(s, h, 1, 0.5, -0.25, 3, 1, 0.5);
    expect(f(0)).toBeCloseTo(1, 14);
    expect(f(1)).toBeCloseTo(3, 14);
    expect(d1(f, 0, 1e-5) / h).toBeCloseTo(0.5, 6);
    expect(d1(f, 1, 1e-5) / h).toBeCloseTo(1, 6);
  });
});

describe('leg IK and floor placement', () => {
  it('reaches the foot pose of a known leg shape to 1e-10 from the ready pose', () => {
    const pelvisPos: [number, number, number] = [0.05, -0.02, 0.7];
    const rpy: [number, number, number] = [0.05, 0.1, 0.3];
    for (const side of [0, 1] as const) {
      const leg = { hipPitch: -0.6, hipRoll: 0.15, hipYaw: 0.1, knee: 1.1, anklePitch: -0.3, ankleRoll: 0.05 };
      const want = kit.footPoseOfLeg(pelvisPos, rpy, side, leg);
      const joints = new Float64Array(kit.stand);
      joints.set(legAngles(side, { hipPitch: -0.4, knee: 0.8, anklePitch: -0.4 }), LEG_JOINT0[side]);
      const r = model.solveLeg(side, pelvisPos, quatFromRpy(...rpy), joints, {
        pos: want.pos,
        quat: quatFromRpy(...want.rpy),
      });
      expect(r).toBeLessThan(1e-10);
      const got = Array.from(joints.subarray(LEG_JOINT0[side], LEG_JOINT0[side] + 6));
      const exp = legAngles(side, leg);
      for (let k = 0; k < 6; k++) expect(got[k]).toBeCloseTo(exp[k], 8);
    }
  });

  it('reports a residual for an unreachable target and stays inside the joint limits', () => {
    const joints = new Float64Array(kit.stand);
    const r = model.solveLeg(0, [0, 0, 0.79], [1, 0, 0, 0], joints, { pos: [0.5, 0.1, 0.0], quat: [1, 0, 0, 0] });
    expect(r).toBeGreaterThan(1e-3);
    for (let j = 0; j < G1_NUM_JOINTS; j++) {
      expect(joints[j]).toBeGreaterThanOrEqual(model.lowerLimit[j]);
      expect(joints[j]).toBeLessThanOrEqual(model.upperLimit[j]);
    }
  });

  it('a joint frame puts the lowest foot contact point on the floor and the feet midpoint on the anchor', () => {
    const q = new Float64Array(kit.stand);
    q.set(legAngles(0, { hipPitch: -0.3, knee: 0.6, anklePitch: -0.3 }), LEG_JOINT0[0]);
    q.set(legAngles(1, { hipPitch: -0.3, knee: 0.6, anklePitch: -0.3 }), LEG_JOINT0[1]);
    const pose = new FrameResolver(model).resolve(
      { kind: 'joint', joints: q, rootRpy: [0, 0, 0.7], anchorXY: [1.5, -2] },
      'test',
    );
    model.forward(pose.rootPos, pose.rootQuat, pose.joints);
    expect(Math.min(model.footLowest(0), model.footLowest(1))).toBeCloseTo(0, 12);
    const l = 3 * model.footBody[0];
    const r = 3 * model.footBody[1];
    expect(0.5 * (model.pos[l] + model.pos[r])).toBeCloseTo(1.5, 12);
    expect(0.5 * (model.pos[l + 1] + model.pos[r + 1])).toBeCloseTo(-2, 12);
  });

  it('the stand pose on the floor is the model keyframe (root z 0.7929)', () => {
    const r = kit.ready(0);
    expect(r.pelvis[2]).toBeCloseTo(profile.defaultPose.rootPosM[2], 4);
    expect(model.soleHeight).toBeCloseTo(0.036, 12);
    expect(frameCountFor(8.5, 50)).toBe(426);
  });
});

describe('snapshot hash', () => {
  const metas: WorkloadClipMeta[] = [
    { id: 'clip-bbbbbbbbbbbbbbbb', name: 'walk', group: 'locomotion', duration_s: 2, frames: 61, fps: 30 },
    { id: 'clip-aaaaaaaaaaaaaaaa', name: 'wave', group: 'upper_body', duration_s: 1, frames: 51, fps: 50 },
  ];

  it('hashes the documented text: a scheme line, then id, name, group, fps, frames per clip sorted by id', () => {
    const text = snapshotHashText(metas);
    expect(text).toBe(
      'mb-workload-hash/1\nclip-aaaaaaaaaaaaaaaa\twave\tupper_body\t50\t51\nclip-bbbbbbbbbbbbbbbb\twalk\tlocomotion\t30\t61\n',
    );
    expect(snapshotHash(metas)).toBe(sha256HexOfString(text));
    expect(snapshotHash(metas)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on order; changes with any clip id, name, group, fps or frame count', () => {
    const h = snapshotHash(metas);
    expect(snapshotHash([...metas].reverse())).toBe(h);
    for (const change of [
      { id: 'clip-cccccccccccccccc' },
      { name: 'walk2' },
      { group: 'dynamic' as const },
      { fps: 60 },
      { frames: 62 },
    ]) {
      expect(snapshotHash([{ ...metas[0], ...change }, metas[1]]), JSON.stringify(change)).not.toBe(h);
    }
    expect(snapshotHash(metas.slice(0, 1))).not.toBe(h);
    expect(() => snapshotHash([{ ...metas[0], name: 'a\tb' }])).toThrow(/tab or newline/);
  });

  it('snapshotDifferences names changed, missing and extra clips', () => {
    const a = { clips: metas, snapshot_hash: snapshotHash(metas) };
    expect(snapshotDifferences(a, a)).toEqual([]);
    const changed = [
      { ...metas[0], id: 'clip-0000000000000000' },
      { ...metas[1], name: 'wave2' },
    ];
    const d = snapshotDifferences(a, { clips: changed, snapshot_hash: snapshotHash(changed) });
    expect(d.join('\n')).toMatch(/clip walk: id clip-bbbbbbbbbbbbbbbb \(frozen\) ≠ clip-0000000000000000/);
    expect(d.join('\n')).toMatch(/clip wave: frozen .* but not generated/);
    expect(d.join('\n')).toMatch(/clip wave2: generated/);
    expect(d.join('\n')).toMatch(/snapshot_hash/);
  });
});

describe('physical checks catch bad clips', () => {
  const base = generateCoreV1(profile, { only: ['ip_weight_shift'], withFileSha256: false }).clips[0];
  const copy = (): MotionClip => ({
    ...base,
    rootPosM: base.rootPosM.slice(),
    rootQuatWxyz: base.rootQuatWxyz.slice(),
    jointPosRad: base.jointPosRad.slice(),
  });
  const checks = (c: MotionClip) =>
    physicsViolations(measureClip(c, model, profile.defaultPose.jointPosRad), STANDARD_LIMITS, false).map(
      (v) => v.check,
    );

  it('the generated clip passes', () => {
    expect(checks(base)).toEqual([]);
  });
  it('a joint near its limit, a foot through the floor, a jump in a joint, floating feet, a sliding foot', () => {
    const J = G1_NUM_JOINTS;
    const k = 200;
    let c = copy();
    c.jointPosRad[k * J + jointIndex('waist_roll_joint')] = 0.5; // limit 0.52
    expect(checks(c)).toContain('joint_limits');
    c = copy();
    c.rootPosM[3 * k + 2] -= 0.001;
    expect(checks(c)).toContain('floor');
    c = copy();
    for (let i = k; i < c.frameCount; i++)
      c.jointPosRad[i * J + jointIndex('left_elbow_joint')] += i < c.frameCount - 1 ? 0.3 : 0;
    expect(checks(c)).toEqual(expect.arrayContaining(['joint_velocity', 'joint_acceleration', 'joint_jerk']));
    c = copy();
    c.rootPosM[3 * k + 2] += 0.01;
    expect(checks(c)).toContain('contact');
    c = copy();
    for (let i = k; i < c.frameCount - 30; i++) c.rootPosM[3 * i] += 0.0001 * (i - k);
    expect(checks(c)).toContain('foot_slip');
    c = copy();
    c.jointPosRad[(c.frameCount - 1) * J + 20] += 0.01;
    expect(checks(c)).toEqual(expect.arrayContaining(['end_pose', 'end_rest']));
  });
  it('a knee through the floor is a clearance violation', () => {
    const c = copy();
    const k = 100;
    // fold the left leg so the knee drops (feet stay where FK puts them; the knee goes low)
    c.jointPosRad[k * G1_NUM_JOINTS + jointIndex('left_hip_pitch_joint')] = 0.3;
    c.jointPosRad[k * G1_NUM_JOINTS + jointIndex('left_knee_joint')] = 2.8;
    c.rootPosM[3 * k + 2] = 0.3;
    expect(checks(c)).toContain('clearance');
  });
});
