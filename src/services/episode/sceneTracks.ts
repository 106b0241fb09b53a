import type { StateFrame } from '../../domain/robot/stateFrame';
import { BodyFrameTree } from '../../domain/robot/bodyTransforms';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { bodyFrameId, encodeFrameTransforms, encodeRobotScene } from './foxgloveScene';
import { movingFrames, snapMovingFrames, type MovingFrames } from './trackPrecision';

// The 3D tracks of an episode (`motionbench-episode/2` with a robot profile): the executed
// robot's and the reference's transform trees and geometry, for Foxglove's 3D panel.
//
//   /exec/transforms, /ref/transforms  foxglove.FrameTransforms: frames `exec/<body>`, `ref/<body>`
//                                       (and `…/<body>@rest`, BodyFrameTree), each in its
//                                       parent's frame, the root in `world`
//   /exec/scene, /ref/scene            foxglove.SceneUpdate, once at the episode start: each body's
//                                       visual primitives locked to its frame; the reference
//                                       translucent
//
// Both trees' moving values are snapped to the grids trackPrecision.ts states (a drawing's
// precision; the joint state beside them is exact).
// Rates: the reference tree at every reference frame (50 Hz). The executed tree at every executed
// frame, at most TRANSFORM_RATE_HZ: a simulator's 50 Hz frames all; a robot's 500 Hz stream every
// 10th (the state topic keeps every frame; the picture does not need them).
// A frame without a root pose (a robot without motion capture) has no place in the world: its
// tree hangs from the reference's root frame with the identity, i.e. drawn root-aligned on the
// reference, the frame MPJPE-l compares in. Without a reference such frames get no transforms.

export const WORLD_FRAME = 'world';
export const EXEC_PREFIX = 'exec';
export const REF_PREFIX = 'ref';
export const TRANSFORM_RATE_HZ = 50;

const EXEC_RGBA = [0.25, 0.55, 0.95, 1] as const;
const REF_RGBA = [0.95, 0.6, 0.2, 0.35] as const;

const UNIT_QUAT = [1, 0, 0, 0];
const ORIGIN = [0, 0, 0];

export class SceneTracks {
  private readonly tree: BodyFrameTree;
  private readonly moving: MovingFrames;
  private readonly posM: Float64Array;
  private readonly quatWxyz: Float64Array;
  private nextExecS = -Infinity;
  private readonly refRoot: string;

  constructor(
    private readonly profile: RobotProfile,
    private readonly hasReference: boolean,
  ) {
    this.tree = new BodyFrameTree(profile);
    this.moving = movingFrames(this.tree, profile);
    this.posM = new Float64Array(3 * this.tree.frames.length);
    this.quatWxyz = new Float64Array(4 * this.tree.frames.length);
    this.refRoot = bodyFrameId(REF_PREFIX, profile.bodies[profile.rootBodyIndex].name);
  }

  /** The two SceneUpdates (the reference's only with a reference). */
  scenes(timeNs: bigint): { exec: Uint8Array; ref: Uint8Array | null } {
    return {
      exec: encodeRobotScene(this.profile, EXEC_PREFIX, timeNs, { rgba: EXEC_RGBA }).data,
      ref: this.hasReference ? encodeRobotScene(this.profile, REF_PREFIX, timeNs, { rgba: REF_RGBA }).data : null,
    };
  }

  /** The reference tree of one reference frame. */
  reference(
    timeNs: bigint,
    rootPosM: ArrayLike<number>,
    rootQuatWxyz: ArrayLike<number>,
    jointPosRad: ArrayLike<number>,
  ): Uint8Array {
    this.tree.compute(rootPosM, rootQuatWxyz, jointPosRad, this.posM, this.quatWxyz);
    snapMovingFrames(this.moving, this.posM, this.quatWxyz);
    return encodeFrameTransforms(this.tree, REF_PREFIX, WORLD_FRAME, timeNs, this.posM, this.quatWxyz);
  }

  /** The executed tree of `f`, or null when the rate limit or a missing root leaves it out. */
  executed(f: StateFrame, timeNs: bigint): Uint8Array | null {
    if (f.timeS < this.nextExecS) return null;
    const rooted = f.rootPosM !== null && f.rootQuatWxyz !== null;
    if (!rooted && !this.hasReference) return null;
    this.nextExecS = f.timeS + 1 / TRANSFORM_RATE_HZ - 1e-6;
    this.tree.compute(f.rootPosM ?? ORIGIN, f.rootQuatWxyz ?? UNIT_QUAT, f.jointPosRad, this.posM, this.quatWxyz);
    snapMovingFrames(this.moving, this.posM, this.quatWxyz);
    const parent = rooted ? WORLD_FRAME : this.refRoot;
    return encodeFrameTransforms(this.tree, EXEC_PREFIX, parent, timeNs, this.posM, this.quatWxyz);
  }
}
