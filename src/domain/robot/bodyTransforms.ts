import { quatFromAxisAngle, quatNormalize, quatRotate } from '../math/quat';
import type { QuatWxyz, Vec3M } from '../units';
import type { RobotProfile } from './robotProfile';

// A robot's transform tree (as TF and Foxglove's 3D panel take it): every body's frame in its
// parent's frame, from root pose + joint angles, by the same rule as forwardKinematics.ts
// (MuJoCo's mj_kinematics): the body's fixed offset (pos, quat), then the rotation about its
// hinge axis by (q − ref) around the joint anchor. The root (free-joint) body's frame is the root
// pose in the world, quaternion normalised.
//
// A hinge body whose fixed offset has a rotation gets two frames: `<body>@rest`, the constant
// offset (pos, quat) in the parent, and `<body>`, the joint's own motion in it
// (rotation axisAngle(axis, q − ref), translation anchor − R·anchor). The tree then carries the
// joint as a pure axis rotation: two of its quaternion components are exactly zero and the
// `@rest` frames never change, so an episode stores a moving joint in two numbers (half the
// bytes of the composed rotation), and composing the tree still gives ForwardKinematics' world
// poses to rounding (test/integration/episodeFormat.test.ts checks it to 1e-9 m).

export interface TreeFrame {
  /** The body's name, or `<body>@rest` for a body's fixed offset. */
  name: string;
  /** Index of the parent frame in `frames`, -1 for the world. */
  parent: number;
  /** The profile body this frame is (-1 for a `@rest` frame). */
  body: number;
}

type Motion =
  | { kind: 'root' }
  | { kind: 'fixed'; posM: Vec3M; quatWxyz: QuatWxyz }
  | { kind: 'hinge'; posM: Vec3M; axis: Vec3M; anchorM: Vec3M; refRad: number; jointIndex: number };

export const REST_SUFFIX = '@rest';

const isIdentity = (q: QuatWxyz): boolean => q[0] === 1 && q[1] === 0 && q[2] === 0 && q[3] === 0;

export class BodyFrameTree {
  readonly frames: readonly TreeFrame[];
  private readonly motion: readonly Motion[];

  constructor(profile: RobotProfile) {
    const frames: TreeFrame[] = [];
    const motion: Motion[] = [];
    const frameOfBody: number[] = [];
    profile.bodies.forEach((b, i) => {
      const parent = b.parent < 0 ? -1 : frameOfBody[b.parent];
      const j = b.joint;
      if (j?.kind === 'free') {
        frames.push({ name: b.name, parent, body: i });
        motion.push({ kind: 'root' });
      } else if (j?.kind === 'hinge') {
        let jointParent = parent;
        let posM = b.posM;
        if (!isIdentity(b.quatWxyz)) {
          frames.push({ name: `${b.name}${REST_SUFFIX}`, parent, body: -1 });
          motion.push({ kind: 'fixed', posM: b.posM, quatWxyz: b.quatWxyz });
          jointParent = frames.length - 1;
          posM = [0, 0, 0];
        }
        frames.push({ name: b.name, parent: jointParent, body: i });
        motion.push({
          kind: 'hinge',
          posM,
          axis: j.axis,
          anchorM: j.anchorM,
          refRad: j.refRad,
          jointIndex: j.jointIndex,
        });
      } else {
        frames.push({ name: b.name, parent, body: i });
        motion.push({ kind: 'fixed', posM: b.posM, quatWxyz: b.quatWxyz });
      }
      frameOfBody[i] = frames.length - 1;
    });
    this.frames = frames;
    this.motion = motion;
  }

  /**
   * Writes frame f's translation (m, parent frame) to outPosM[3f..] and rotation (w, x, y, z) to
   * outQuatWxyz[4f..]. Joint angles in canonical order.
   */
  compute(
    rootPosM: ArrayLike<number>,
    rootQuatWxyz: ArrayLike<number>,
    jointPosRad: ArrayLike<number>,
    outPosM: Float64Array,
    outQuatWxyz: Float64Array,
  ): void {
    this.motion.forEach((m, f) => {
      if (m.kind === 'root') {
        outPosM.set([rootPosM[0], rootPosM[1], rootPosM[2]], 3 * f);
        outQuatWxyz.set(quatNormalize([rootQuatWxyz[0], rootQuatWxyz[1], rootQuatWxyz[2], rootQuatWxyz[3]]), 4 * f);
      } else if (m.kind === 'fixed') {
        outPosM.set(m.posM, 3 * f);
        outQuatWxyz.set(m.quatWxyz, 4 * f);
      } else {
        const rot = quatFromAxisAngle(m.axis, jointPosRad[m.jointIndex] - m.refRad);
        let pos: Vec3M = m.posM;
        if (m.anchorM.some((v) => v !== 0)) {
          const a = quatRotate(rot, m.anchorM);
          pos = [m.posM[0] + m.anchorM[0] - a[0], m.posM[1] + m.anchorM[1] - a[1], m.posM[2] + m.anchorM[2] - a[2]];
        }
        outPosM.set(pos, 3 * f);
        outQuatWxyz.set(rot, 4 * f);
      }
    });
  }
}
