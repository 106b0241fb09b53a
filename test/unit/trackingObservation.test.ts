import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES, jointOrderFromNames } from '../../src/domain/robot/jointOrder';
import { TrackingObservationBuilder, type TrackingRobotState } from '../../src/domain/wbc/trackingObservation';
import {
  trackingTermSize,
  type ReferenceAlignment,
  type TrackingTerm,
  type TrackingTermKind,
} from '../../src/domain/wbc/trackingPolicy';
import type { TrackingReference } from '../../src/domain/wbc/trackingReference';

// The tracking observation terms against hand-computed values: frames, the 6-D orientation's
// element order, the reference alignment rules, joint order by name, and term history.

const J = 29;
const yawQuat = (rad: number) => [Math.cos(rad / 2), 0, 0, Math.sin(rad / 2)];

function term(kind: TrackingTermKind, history = 1): TrackingTerm {
  return {
    name: kind,
    kind,
    size: trackingTermSize(kind, J),
    history,
    scale: null,
    clip: null,
    checkedAgainst: 'test',
  };
}

const NO_ALIGN: ReferenceAlignment = {
  rotation: 'none',
  translation: 'none',
  robotBody: 'anchor',
  referenceBody: 'anchor',
  checkedAgainst: 'test',
};

function builder(
  terms: TrackingTerm[],
  alignment = NO_ALIGN,
  names: readonly string[] = G1_JOINT_NAMES,
  def = new Float64Array(J),
) {
  const observationSize = terms.reduce((s, t) => s + t.size * t.history, 0);
  return new TrackingObservationBuilder({
    observation: terms,
    observationSize,
    jointOrder: jointOrderFromNames(names),
    defaultJointPosRad: def,
    alignment,
  });
}

function reference(frames = 3, anchorQuat = [1, 0, 0, 0], anchorPos = [0, 0, 1]): TrackingReference {
  const rep = (v: number[], n: number) => Float64Array.from({ length: v.length * n }, (_, i) => v[i % v.length]);
  const jointPosRad = Float64Array.from({ length: frames * J }, (_, i) => 0.01 * (i % J) + Math.floor(i / J));
  return {
    frames,
    rateHz: 50,
    jointPosRad,
    jointVelRadS: Float64Array.from(jointPosRad, (v) => -v),
    rootPosM: rep([0, 0, 0.8], frames),
    rootQuatWxyz: rep([1, 0, 0, 0], frames),
    anchorPosM: rep(anchorPos, frames),
    anchorQuatWxyz: rep(anchorQuat, frames),
    anchorLinVelMps: rep([0.5, 0, 0], frames),
    anchorAngVelRadS: rep([0, 0, 1], frames),
  };
}

function robot(over: Partial<TrackingRobotState> = {}): TrackingRobotState {
  return {
    jointPosRad: Float64Array.from({ length: J }, (_, j) => 0.1 * j),
    jointVelRadS: Float64Array.from({ length: J }, (_, j) => -0.2 * j),
    rootQuatWxyz: [1, 0, 0, 0],
    rootPosM: [0, 0, 0.8],
    rootLinVelMps: [0, 0, 0],
    gyroRadS: [0.1, 0.2, 0.3],
    anchorPosM: [0, 0, 1],
    anchorQuatWxyz: [1, 0, 0, 0],
    ...over,
  };
}

const close = (a: ArrayLike<number>, b: number[]) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < b.length; i++) expect(a[i]).toBeCloseTo(b[i], 6);
};

describe('tracking observation terms', () => {
  it('anchor orientation: identity gives [1,0,0,1,0,0]; a robot yawed +90° sees R(q_robot⁻¹·q_ref) columns 0, 1 row-major', () => {
    const b = builder([term('ref_anchor_ori_b')]);
    close(b.build(robot(), reference(), 0, new Float32Array(J)), [1, 0, 0, 1, 0, 0]);
    b.reset();
    // q_rel = Rz(−90°): R = [[0, 1, 0], [−1, 0, 0], [0, 0, 1]] → R00 R01 R10 R11 R20 R21
    close(
      b.build(robot({ anchorQuatWxyz: yawQuat(Math.PI / 2) }), reference(), 0, new Float32Array(J)),
      [0, 1, -1, 0, 0, 0],
    );
  });

  it('yaw alignment at the first step removes a heading difference; it is kept for the episode and cleared by reset', () => {
    const align: ReferenceAlignment = { ...NO_ALIGN, rotation: 'yaw', translation: 'xyz' };
    const b = builder([term('ref_anchor_ori_b'), term('ref_anchor_pos_b')], align);
    const r = robot({ anchorQuatWxyz: yawQuat(0.7), anchorPosM: [2, -1, 1.1] });
    close(b.build(r, reference(), 0, new Float32Array(J)), [1, 0, 0, 1, 0, 0, 0, 0, 0]);
    // The robot then turns a further 90°: the aligned reference did not turn with it.
    const turned = robot({ anchorQuatWxyz: yawQuat(0.7 + Math.PI / 2), anchorPosM: [2, -1, 1.1] });
    close(b.build(turned, reference(), 1, new Float32Array(J)).subarray(0, 6), [0, 1, -1, 0, 0, 0]);
    b.reset();
    close(b.build(turned, reference(), 0, new Float32Array(J)), [1, 0, 0, 1, 0, 0, 0, 0, 0]);
  });

  it('anchor position: the reference anchor in the robot anchor frame (no alignment)', () => {
    const b = builder([term('ref_anchor_pos_b')]);
    // reference 1 m ahead in world x; robot yawed +90°: in its frame that is −y
    close(
      b.build(
        robot({ anchorQuatWxyz: yawQuat(Math.PI / 2), anchorPosM: [0, 0, 1] }),
        reference(3, [1, 0, 0, 0], [1, 0, 1]),
        0,
        new Float32Array(J),
      ),
      [0, -1, 0],
    );
  });

  it('base linear velocity in the root frame; a missing state estimate is refused', () => {
    const b = builder([term('base_lin_vel_b'), term('projected_gravity'), term('base_ang_vel_b')]);
    close(
      b.build(
        robot({ rootQuatWxyz: yawQuat(Math.PI / 2), rootLinVelMps: [1, 0, 0] }),
        reference(),
        0,
        new Float32Array(J),
      ),
      [0, -1, 0, 0, 0, -1, 0.1, 0.2, 0.3],
    );
    expect(() =>
      builder([term('base_lin_vel_b')]).build(robot({ rootLinVelMps: null }), reference(), 0, new Float32Array(J)),
    ).toThrow(/state estimate/);
  });

  it('joint terms are written in the policy order through the name table, relative to the default pose', () => {
    const def = Float64Array.from({ length: J }, (_, j) => 0.05 * j);
    const b = builder([term('joint_pos_rel'), term('ref_joint_pos_vel')], NO_ALIGN, G1_ISAACLAB_JOINT_NAMES, def);
    const r = robot();
    const ref = reference();
    const obs = b.build(r, ref, 1, new Float32Array(J));
    G1_ISAACLAB_JOINT_NAMES.forEach((n, i) => {
      const c = G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
      expect(obs[i]).toBeCloseTo(0.1 * c - 0.05 * c, 6);
      expect(obs[J + i]).toBeCloseTo(ref.jointPosRad[J + c], 5);
      expect(obs[2 * J + i]).toBeCloseTo(ref.jointVelRadS[J + c], 5);
    });
  });

  it('reference anchor terms of wbc-mjlab are in the reference anchor frame', () => {
    const b = builder([
      term('ref_anchor_height'),
      term('ref_anchor_lin_vel_b'),
      term('ref_anchor_ang_vel_b'),
      term('ref_gravity_b'),
    ]);
    // anchor yawed +90°, moving +x at 0.5 m/s and turning about z: in its frame −y, z unchanged
    close(
      b.build(robot(), reference(3, yawQuat(Math.PI / 2), [0, 0, 0.9]), 0, new Float32Array(J)),
      [0.9, 0, -0.5, 0, 0, 0, 1, 0, 0, -1],
    );
  });

  it('history: the first step fills every entry, later steps shift oldest-first; frames are clamped to the reference', () => {
    const b = builder([term('ref_joint_pos', 3)]);
    const ref = reference(3);
    const last = new Float32Array(J);
    const o0 = Array.from(b.build(robot(), ref, 0, last));
    expect(o0.slice(0, J)).toEqual(o0.slice(J, 2 * J));
    expect(o0.slice(0, J)).toEqual(o0.slice(2 * J));
    const o1 = Array.from(b.build(robot(), ref, 1, last));
    expect(o1.slice(J, 2 * J)).toEqual(o0.slice(0, J));
    expect(o1[2 * J]).toBeCloseTo(ref.jointPosRad[J], 6);
    const o9 = Array.from(b.build(robot(), ref, 9, last));
    expect(o9[2 * J]).toBeCloseTo(ref.jointPosRad[2 * J], 6); // clamped to the last frame
  });
});
