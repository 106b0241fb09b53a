import type { QuatWxyz, Vec3M } from '../units';

// A RobotProfile is everything the program knows about a robot's structure, read from MJCF.
// Bodies are in MuJoCo's depth-first order with the world body left out: index 0 is the root
// body (pelvis for the G1), so profile body i is MuJoCo body id i + 1.

export type GeomType = 'plane' | 'sphere' | 'capsule' | 'ellipsoid' | 'cylinder' | 'box' | 'mesh';

export interface GeomSpec {
  name?: string;
  type: GeomType;
  /**
   * MuJoCo size semantics, metres: sphere [r]; capsule and cylinder [r, half-length along z];
   * box [hx, hy, hz]; ellipsoid [rx, ry, rz]; plane [hx, hy, spacing]; mesh [] (see `mesh`).
   */
  size: number[];
  /** Pose in the body frame, `fromto` already resolved. */
  posM: Vec3M;
  quatWxyz: QuatWxyz;
  rgba: [number, number, number, number];
  /** MuJoCo group: 0-2 are conventionally visual, 3 collision in Menagerie models. */
  group: number;
  /** True when the geom takes part in collisions (contype or conaffinity non-zero). */
  collides: boolean;
  mesh?: {
    name: string;
    /** Path relative to the directory of the top-level model file, meshdir applied. */
    file: string;
    scale: Vec3M;
  };
}

export type BodyJoint =
  | { kind: 'free'; name: string }
  | {
      kind: 'hinge';
      name: string;
      /** Index into RobotProfile.joints (canonical order). */
      jointIndex: number;
      /** Unit axis in the body frame. */
      axis: Vec3M;
      /** Joint anchor in the body frame, metres. */
      anchorM: Vec3M;
      /** qpos0 of the joint (MJCF `ref`), radians; the rotation is about (q - ref). */
      refRad: number;
    };

export interface BodySpec {
  name: string;
  index: number;
  /** Parent body index, -1 for a child of the world. */
  parent: number;
  /** Pose of the body frame in its parent's frame at qpos0. */
  posM: Vec3M;
  quatWxyz: QuatWxyz;
  /** At most one joint per body is supported; null = welded to its parent. */
  joint: BodyJoint | null;
  massKg: number;
  geoms: GeomSpec[];
}

export interface JointSpec {
  name: string;
  /** Canonical index (position in the 29-vector). */
  index: number;
  bodyIndex: number;
  axis: Vec3M;
  /** [lower, upper] in radians, or null when the joint is unlimited. */
  rangeRad: readonly [number, number] | null;
}

export interface ActuatorSpec {
  name: string;
  jointIndex: number;
  kind: 'position' | 'motor' | 'velocity' | 'general';
  kp?: number;
  ctrlRange?: readonly [number, number];
  forceRange?: readonly [number, number];
}

export interface RobotPose {
  rootPosM: Vec3M;
  rootQuatWxyz: QuatWxyz;
  /** Joint angles in canonical order, radians. */
  jointPosRad: readonly number[];
}

export interface RobotProfile {
  modelName: string;
  /** The model file as the user named it. */
  sourceFile: string;
  bodies: BodySpec[];
  /** Hinge joints in canonical order. */
  joints: JointSpec[];
  actuators: ActuatorSpec[];
  /** Index of the body carrying the free joint. */
  rootBodyIndex: number;
  /** Body indices of the end-effectors used by the metric contract. */
  endEffectorBodyIndices: number[];
  /** Bodies whose positions are tracked by metrics (all bodies, pelvis included). */
  trackedBodyIndices: number[];
  /** `stand` keyframe if the model has one, else qpos0. */
  defaultPose: RobotPose;
  /** Source of defaultPose: the keyframe name, or 'qpos0'. */
  defaultPoseSource: string;
  /** Physics timestep, seconds. */
  timestepS: number;
}

export const bodyIndexByName = (p: RobotProfile, name: string): number => p.bodies.findIndex((b) => b.name === name);
