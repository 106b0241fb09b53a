// The pieces core-v1's recipes are made of: named upper-body joints, arm poses over the stand
// pose, pose sequences, pelvis moves over the ready feet and the walking arm swing. Every value
// they compute is part of the frozen core-v1 snapshot (coreV1Recipes.ts).

import { jointIndex } from './bodyModel';
import type { LegCommand } from './clipBuilder';
import { readyCore, PoseTrack, type ArmPose, type CoreState, type Kit, type Ready, type UpperPose } from './recipeKit';
import { rotYaw, type Vec3 } from './rotation';

/** The upper-body joints the recipes move by name. */
export const J = {
  waistYaw: jointIndex('waist_yaw_joint'),
  waistRoll: jointIndex('waist_roll_joint'),
  waistPitch: jointIndex('waist_pitch_joint'),
  lSp: jointIndex('left_shoulder_pitch_joint'),
  lSr: jointIndex('left_shoulder_roll_joint'),
  lSy: jointIndex('left_shoulder_yaw_joint'),
  lEl: jointIndex('left_elbow_joint'),
  rSp: jointIndex('right_shoulder_pitch_joint'),
  rSr: jointIndex('right_shoulder_roll_joint'),
  rSy: jointIndex('right_shoulder_yaw_joint'),
  rEl: jointIndex('right_elbow_joint'),
};
export type UpperJoint = keyof typeof J;

/** An upper-body pose as a table states it: `both` is the same arm pose on either side. */
export interface PoseRow extends Omit<UpperPose, 'left' | 'right'> {
  left?: ArmPose;
  right?: ArmPose;
  both?: ArmPose;
}

/** Arm poses over the stand arm (`arm`), whole upper-body poses (`pose`, `poseOf`) and the stand pose. */
export function arms(kit: Kit) {
  const S = kit.standArm();
  const arm = (o: ArmPose): ArmPose => ({ ...S, ...o });
  const pose = (p: UpperPose) => kit.upper(p);
  const poseOf = (p: PoseRow) => {
    const { both, left, right, ...waist } = p;
    const l = both ?? left;
    const r = both ?? right;
    return pose({ ...waist, ...(l ? { left: arm(l) } : {}), ...(r ? { right: arm(r) } : {}) });
  };
  return { S, arm, pose, poseOf, STAND: kit.upper() };
}

/**
 * The boxing guard and a jab with either arm (the other stays on guard), the waist turned by
 * `waistYawRad` in each and the jabbing elbow bent to `jabElbowRad`.
 */
export function boxingPoses(kit: Kit, waistYawRad: { guard: number; jabL: number; jabR: number }, jabElbowRad: number) {
  const { arm, pose } = arms(kit);
  const guardL = arm({ pitch: -0.95, roll: 0.2, yaw: 0.1, elbow: -0.25 });
  const guardR = arm({ pitch: -0.9, roll: 0.2, yaw: 0.1, elbow: -0.2 });
  const jab = arm({ pitch: -1.45, roll: -0.02, yaw: 0, elbow: jabElbowRad });
  return {
    guard: pose({ waistYaw: waistYawRad.guard, left: guardL, right: guardR }),
    jabL: pose({ waistYaw: waistYawRad.jabL, left: jab, right: guardR }),
    jabR: pose({ waistYaw: waistYawRad.jabR, left: guardL, right: jab }),
  };
}

/** A pose sequence: keys [t, pose] with min-jerk moves between them (rest at each key). */
export const seq = (keys: ReadonlyArray<readonly [number, Float64Array]>) => new PoseTrack(keys, 'minjerk');
/** A pose sequence passing smoothly through the keys. */
export const flow = (keys: ReadonlyArray<readonly [number, Float64Array]>) => new PoseTrack(keys, 'smooth');

/** Core state with both feet flat at their ready places and the pelvis moved by (dx, dy, dz) and tilted by rpy. */
export function pelvisMove(kit: Kit, r: Ready, d: Vec3, rpy: Vec3 = [0, 0, 0]): CoreState {
  const c = readyCore(kit, r);
  return { ...c, pelvisPos: [c.pelvisPos[0] + d[0], c.pelvisPos[1] + d[1], c.pelvisPos[2] + d[2]], pelvisRpy: rpy };
}

/** Walking arm swing: each arm swings opposite to its leg, from the feet's fore-aft offset. */
export function walkArms(base: Float64Array, core: CoreState | null, gain: number): Float64Array {
  const q = new Float64Array(base);
  if (!core) return q;
  const l = core.legs[0];
  const r = core.legs[1];
  const yaw = core.pelvisRpy[2];
  const [d] = rotYaw(-yaw, r.target.pos[0] - l.target.pos[0], r.target.pos[1] - l.target.pos[1]);
  q[J.lSp] -= gain * d;
  q[J.rSp] += gain * d;
  return q;
}

export function feetCore(pelvisPos: Vec3, pelvisRpy: Vec3, left: LegCommand, right: LegCommand): CoreState {
  return { pelvisPos, pelvisRpy, legs: [left, right] };
}

/** a − b, joint by joint. */
export function diff(a: Float64Array, b: Float64Array): Float64Array {
  const d = new Float64Array(a.length);
  for (let j = 0; j < a.length; j++) d[j] = a[j] - b[j];
  return d;
}
