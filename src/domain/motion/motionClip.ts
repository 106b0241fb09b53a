import type { Warning } from '../problems';

// A motion clip inside the program: root pose and 29 joint angles per frame, at a stated fps.
// Layout is frame-major in flat Float64Arrays; quaternions are wxyz; joints are in canonical
// G1 order (src/domain/robot/g1Joints.ts). Codecs convert at the boundary and nowhere else.

/**
 * File formats of clips; `policy-baked` is a reference motion carried inside a policy file.
 * Peers' formats: HoloMotion NPZ, ProtoMotions `.motion` (a torch.save archive) and
 * SONIC's reference CSV folders (gear_sonic_deploy/reference/<motion>/), a folder, not a file.
 */
export type ClipFormat =
  | 'lafan1-csv'
  | 'mjlab-npz'
  | 'motionbench-json'
  | 'holomotion-npz'
  | 'protomotions-motion'
  | 'humanoidverse-pkl'
  | 'sonic-csv-folder'
  | 'policy-baked';
export type ClipFileFormat = Exclude<ClipFormat, 'policy-baked'>;
export type CapabilityGroup = 'upper_body' | 'locomotion' | 'in_place' | 'dynamic' | 'low_posture';
/** Where the fps came from: the file itself, the user (--fps), or inferred from the data. */
export type FpsSource = 'file' | 'user' | 'inferred';

export interface ClipProvenance {
  /** File as the user named it. */
  file: string;
  format: ClipFormat;
  /** sha256 of the file bytes, hex. */
  fileSha256: string;
  fpsSource: FpsSource;
  /**
   * How the joint order of the file was decided, when it had to be (NPZ) or comes from a peer's
   * code (HoloMotion, ProtoMotions, SONIC): e.g. "isaaclab (from FK …)", "isaaclab (SONIC's
   * isaaclab_to_mujoco, policy_parameters.hpp:100; the CSV names no joints)".
   */
  jointOrder?: string;
  /** The root quaternion order the file stores and where that is stated, for peers' formats: e.g. "xyzw (docs/holomotion_motion_file_spec.md:44)". */
  quaternionOrder?: string;
}

export interface JointLimitWarning extends Warning {
  code: 'joint_limit';
  joint: string;
  frame: number;
  value: number;
}

export interface MotionClip {
  /** Stable id: `clip-` + first 16 hex of sha256 over fps and the numeric content. */
  id: string;
  name: string;
  fps: number;
  frameCount: number;
  /** N×3, metres, world frame, z up. */
  rootPosM: Float64Array;
  /** N×4, wxyz, unit. */
  rootQuatWxyz: Float64Array;
  /** N×29, radians, canonical joint order. */
  jointPosRad: Float64Array;
  /** N×29, rad/s, as stored in the source (NPZ joint_vel); derive with deriveJointVelocities otherwise. */
  jointVelRadS?: Float64Array;
  /** Reference world body positions if the source stores them (NPZ body_pos_w): N×B×3, metres. */
  bodyPosW?: { bodyCount: number; data: Float64Array };
  capabilityGroup?: CapabilityGroup;
  provenance: ClipProvenance;
  warnings: Warning[];
}
