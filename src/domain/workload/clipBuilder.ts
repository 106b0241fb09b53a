// Turns a recipe (a function of time giving the desired whole-body state) into a MotionClip.
//
// Each frame is one of two kinds:
//   'joint'  all 29 joint angles are given; the root orientation is given; the root position is
//            solved: x, y so that the midpoint of the two ankle_roll_link origins sits on the
//            given anchor, z so that the lowest foot contact point touches the floor (z = 0).
//            Used for standing poses and the transitions between the stand pose and a ready
//            (knees slightly bent) pose, where both feet are flat and still.
//   'ik'     the pelvis pose is given and each leg has a foot target (6-DoF pose of the
//            ankle_roll_link), solved by leg IK warm-started from the previous frame. Waist and
//            arm angles are given.
// After either, a floor pass raises the root if any foot contact point would be below the floor
// (for 'ik' frames this only absorbs IK rounding: foot targets are placed on or above the floor).

import { normaliseQuaternionsInPlace, computeClipId } from '../motion/clipCommon';
import type { CapabilityGroup, MotionClip } from '../motion/motionClip';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import { BodyModel, IkError, LEG_JOINT0, type FootTarget, type Side } from './bodyModel';
import { quatFromRpy, type Vec3 } from './rotation';

/** A leg's command in an 'ik' frame: the 6-DoF pose of its foot (ankle_roll_link). */
export type LegCommand = { kind: 'foot'; target: FootTarget };

export interface JointFrame {
  kind: 'joint';
  /** 29 joint angles, canonical order. */
  joints: Float64Array;
  /** Root roll, pitch, yaw (ZYX). */
  rootRpy: Vec3;
  /** World x, y for the midpoint of the two ankle_roll_link origins. */
  anchorXY: [number, number];
}

export interface IkFrame {
  kind: 'ik';
  /** 29 joint angles; the entries of legs with a foot target are solved. */
  joints: Float64Array;
  pelvisPos: Vec3;
  pelvisRpy: Vec3;
  legs: [LegCommand, LegCommand];
}

export type FrameSpec = JointFrame | IkFrame;

export interface ResolvedPose {
  rootPos: Vec3;
  rootQuat: [number, number, number, number];
  joints: Float64Array;
}

/** Largest accepted leg-IK residual (m + rad). A larger one is a recipe error. */
export const IK_TOLERANCE = 1e-7;

/** Resolves frame specs into root pose + joint angles, frame after frame (the IK warm-starts). */
export class FrameResolver {
  private readonly prevJoints = new Float64Array(G1_NUM_JOINTS);
  private hasPrev = false;

  constructor(readonly model: BodyModel) {}

  resolve(spec: FrameSpec, where: string): ResolvedPose {
    const m = this.model;
    const joints = new Float64Array(spec.joints);
    if (spec.kind === 'joint') {
      const rootQuat = quatFromRpy(spec.rootRpy[0], spec.rootRpy[1], spec.rootRpy[2]);
      m.forward([0, 0, 0], rootQuat, joints);
      const fl = 3 * m.footBody[0];
      const fr = 3 * m.footBody[1];
      const mx = 0.5 * (m.pos[fl] + m.pos[fr]);
      const my = 0.5 * (m.pos[fl + 1] + m.pos[fr + 1]);
      const low = Math.min(m.footLowest(0), m.footLowest(1));
      const pose: ResolvedPose = { rootPos: [spec.anchorXY[0] - mx, spec.anchorXY[1] - my, -low], rootQuat, joints };
      this.remember(joints);
      return pose;
    }
    const rootQuat = quatFromRpy(spec.pelvisRpy[0], spec.pelvisRpy[1], spec.pelvisRpy[2]);
    const rootPos: Vec3 = [spec.pelvisPos[0], spec.pelvisPos[1], spec.pelvisPos[2]];
    for (const side of [0, 1] as Side[]) {
      // warm start from the previous frame's solution
      const j0 = LEG_JOINT0[side];
      if (this.hasPrev) for (let k = 0; k < 6; k++) joints[j0 + k] = this.prevJoints[j0 + k];
    }
    for (const side of [0, 1] as Side[]) {
      const r = m.solveLeg(side, rootPos, rootQuat, joints, spec.legs[side].target);
      if (!(r <= IK_TOLERANCE)) {
        throw new IkError(
          `${where}: the ${side === 0 ? 'left' : 'right'} foot target is out of reach (IK residual ${r.toExponential(2)}; joints ${Array.from(joints.subarray(LEG_JOINT0[side], LEG_JOINT0[side] + 6), (v) => v.toFixed(3)).join(', ')})`,
        );
      }
    }
    // floor pass
    m.forward(rootPos, rootQuat, joints);
    const low = Math.min(m.footLowest(0), m.footLowest(1));
    if (low < 0) rootPos[2] -= low;
    this.remember(joints);
    return { rootPos, rootQuat, joints };
  }

  private remember(joints: Float64Array): void {
    this.prevJoints.set(joints);
    this.hasPrev = true;
  }
}

export interface RecipeMeta {
  name: string;
  group: CapabilityGroup;
  description: string;
  durationS: number;
  /** True when both feet may leave the floor at once (jumps, jogging). */
  flight: boolean;
}

export interface Recipe extends RecipeMeta {
  sample(t: number): FrameSpec;
}

/** Frames of a clip of `durationS` at `fps`: round(durationS·fps) + 1. */
export const frameCountFor = (durationS: number, fps: number): number => Math.round(durationS * fps) + 1;

/** Generates the clip of a recipe at `fps`. Provenance is filled in by the caller. */
export function buildClip(model: BodyModel, recipe: Recipe, fps: number): Omit<MotionClip, 'provenance'> {
  const N = frameCountFor(recipe.durationS, fps);
  const J = G1_NUM_JOINTS;
  const rootPosM = new Float64Array(3 * N);
  const rootQuatWxyz = new Float64Array(4 * N);
  const jointPosRad = new Float64Array(J * N);
  const resolver = new FrameResolver(model);
  for (let k = 0; k < N; k++) {
    const t = k / fps;
    const pose = resolver.resolve(recipe.sample(t), `${recipe.name} frame ${k} (t = ${t.toFixed(2)} s)`);
    rootPosM.set(pose.rootPos, 3 * k);
    rootQuatWxyz.set(pose.rootQuat, 4 * k);
    jointPosRad.set(pose.joints, J * k);
  }
  normaliseQuaternionsInPlace(rootQuatWxyz, N);
  return {
    id: computeClipId(fps, N, rootPosM, rootQuatWxyz, jointPosRad),
    name: recipe.name,
    fps,
    frameCount: N,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    capabilityGroup: recipe.group,
    warnings: [],
  };
}
