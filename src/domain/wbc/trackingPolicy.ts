import type { PhysicsProfile } from '../robot/physicsProfile';
import type { JointOrderMap } from '../robot/jointOrder';

// A released tracking policy as the console runs it, whatever family exported it: the resolved
// interface a family adapter (./policyFamilies.ts) reads from the file, its metadata or its
// deploy configuration. Everything per joint is stored in canonical order except where a field
// says "policy order"; `jointOrder` is the name-built table between the two.

export const POLICY_FAMILIES = [
  'beyondmimic',
  'mjlab-deploy',
  'unitree-rl-lab',
  'wbc-mjlab',
  'holosoma-wbt',
  'holomotion',
  'sonic',
  'humanoidverse',
] as const;
export type PolicyFamily = (typeof POLICY_FAMILIES)[number];

/**
 * Which motions a family's policies track, as the family trains and ships them: `own` — the one
 * motion the policy was trained on (baked into the file, named by its deploy configuration, or
 * the motion file of its deploy folder), so it is paired with that motion only; `any` — a
 * general tracker that is fed its reference at run time and may be run on any clip.
 */
export type MotionScope = 'own' | 'any';

/** The declared motion scope of each family, with what declares it. */
export const FAMILY_MOTION_SCOPE: Record<PolicyFamily, { scope: MotionScope; basis: string }> = {
  beyondmimic: {
    scope: 'own',
    basis: 'whole_body_tracking trains one policy per motion and bakes that motion into the exported .onnx',
  },
  'mjlab-deploy': {
    scope: 'own',
    basis: "unitree_rl_mjlab's tracking task trains on one motion file, shipped in the deploy folder",
  },
  'unitree-rl-lab': {
    scope: 'own',
    basis:
      "unitree_rl_lab's mimic task trains on one motion; State_Mimic reads its motion_file and fps from the FSM configuration",
  },
  'wbc-mjlab': {
    scope: 'any',
    basis: 'trained on a clip library (clips/manifest.yaml); the reference is an input at run time',
  },
  'holosoma-wbt': {
    scope: 'own',
    basis: 'holosoma whole-body tracking exports bake the trained motion into the .onnx',
  },
  holomotion: { scope: 'any', basis: 'a general motion tracker fed its reference at run time' },
  sonic: { scope: 'any', basis: 'a general motion tracker fed its reference at run time (encoder + decoder)' },
  humanoidverse: {
    scope: 'own',
    basis:
      "HumanoidVerse's motion tracking (PBHC/KungfuBot, ASAP) trains one policy per motion: config robot.motion.motion_file names it, and the motion phase term is that motion's k / (frames − 1)",
  },
};

/**
 * The observation terms the families use, by what they compute (the family's own name is kept
 * in TrackingTerm.name). Joint terms are in policy order; `_b` means "expressed in the body
 * frame" (robot anchor, robot root or reference root, as each term says).
 *   ref_joint_pos_vel   2n  reference joint angles then joint velocities at the current frame
 *   ref_joint_pos        n  reference joint angles at the current frame
 *   ref_anchor_pos_b     3  aligned reference anchor position in the robot anchor frame
 *   ref_anchor_ori_b     6  R(q_robot_anchor⁻¹ · q_ref_anchor): columns 0 and 1, row-major
 *                          [R00, R01, R10, R11, R20, R21]
 *   base_lin_vel_b       3  root linear velocity in the root frame (needs a state estimate)
 *   base_ang_vel_b       3  root angular velocity in the root frame (the pelvis IMU gyro)
 *   projected_gravity    3  world −z in the root frame
 *   joint_pos_rel        n  q − default pose
 *   joint_vel_rel        n  dq (the default velocity is 0)
 *   last_action          n  the previous raw action
 *   ref_anchor_height    1  reference anchor z (world)
 *   ref_anchor_lin_vel_b 3  reference anchor linear velocity in the reference anchor frame
 *   ref_anchor_ang_vel_b 3  reference anchor angular velocity in the reference anchor frame
 *   ref_gravity_b        3  world −z in the reference anchor frame
 *   ref_yaw_error_sin_cos 2  e = yaw(aligned reference anchor) − yaw(robot anchor): [sin e, cos e]
 *   ref_yaw_delta_sin_cos 2  d = yaw(reference anchor at frame f) − yaw(reference anchor at the
 *                          current frame): [sin d, cos d] (a term read at future frames)
 *   ref_joint_vel        n  reference joint velocities
 *   ref_anchor_ori_heading_b 6  as ref_anchor_ori_b with the robot anchor's heading (yaw only)
 *                          in place of its full orientation
 *   ref_motion_phase     1  k / (F − 1): the control step's frame over the reference's last frame
 *                          (HumanoidVerse's motion_time / motion_length, 0 at the start, 1 at the end)
 *   constant             —  the term's `values` (e.g. SONIC's encoder mode)
 *   zeros                —  `size` zeros: a slot of an input the console does not drive (another
 *                          encoder mode's terms, which the deploy code also leaves at 0)
 *   policy_token         —  the encoder's output this step (two-stage policies)
 * A term read at `frameOffsets` [o₁, …, o_m] writes its values for reference frames k + o₁, …,
 * k + o_m one after the other (frame-major inside the term), each clamped to the last frame.
 */
export type TrackingTermKind =
  | 'ref_joint_pos_vel'
  | 'ref_joint_pos'
  | 'ref_anchor_pos_b'
  | 'ref_anchor_ori_b'
  | 'base_lin_vel_b'
  | 'base_ang_vel_b'
  | 'projected_gravity'
  | 'joint_pos_rel'
  | 'joint_vel_rel'
  | 'last_action'
  | 'ref_anchor_height'
  | 'ref_anchor_lin_vel_b'
  | 'ref_anchor_ang_vel_b'
  | 'ref_gravity_b'
  | 'ref_yaw_error_sin_cos'
  | 'ref_yaw_delta_sin_cos'
  | 'ref_joint_vel'
  | 'ref_anchor_ori_heading_b'
  | 'ref_motion_phase'
  | 'constant'
  | 'zeros'
  | 'policy_token';

/** Kinds whose size is the term's own (not a function of the kind). */
export const SIZED_KINDS: readonly TrackingTermKind[] = ['constant', 'zeros', 'policy_token'];

export function trackingTermSize(kind: TrackingTermKind, joints: number): number {
  switch (kind) {
    case 'ref_joint_pos_vel':
      return 2 * joints;
    case 'ref_joint_pos':
    case 'ref_joint_vel':
    case 'joint_pos_rel':
    case 'joint_vel_rel':
    case 'last_action':
      return joints;
    case 'ref_anchor_ori_b':
    case 'ref_anchor_ori_heading_b':
      return 6;
    case 'constant':
    case 'zeros':
    case 'policy_token':
      throw new RangeError(`a ${kind} term has its own size`);
    case 'ref_anchor_height':
    case 'ref_motion_phase':
      return 1;
    case 'ref_yaw_error_sin_cos':
    case 'ref_yaw_delta_sin_cos':
      return 2;
    default:
      return 3;
  }
}

export interface TrackingTerm {
  /** The family's own name for it (observation_names, deploy.yaml key, …). */
  name: string;
  kind: TrackingTermKind;
  /** Values per history entry. */
  size: number;
  /** History length (1 = the current value only); entries oldest first. */
  history: number;
  /**
   * Reference frames the term is read at, relative to the step's frame k (e.g. [1, …, 10] for
   * ten future frames); null = [0]. A term has history > 1 or frame offsets, not both.
   */
  frameOffsets?: readonly number[] | null;
  /**
   * What the history holds before it has `history` entries: null = every slot is the first value
   * (Isaac Lab's CircularBuffer); else the value of one padded entry, oldest slots first (SONIC's
   * deploy pads with zero state entries).
   */
  historyPad?: readonly number[] | null;
  /**
   * How the history entries are laid out: 'current_oldest_first' (the default: the current value
   * is the last of `history` entries, Isaac Lab's CircularBuffer) or 'past_newest_first' (the
   * `history` previous steps' values, the latest first, zeros until steps have been taken, the
   * current value not among them: HumanoidVerse's HistoryHandler).
   */
  historyLayout?: 'current_oldest_first' | 'past_newest_first';
  /** The values of a `constant` term. */
  values?: readonly number[];
  /** Per-value scale (length size), or null for 1. */
  scale: readonly number[] | null;
  /** Symmetric clip after scaling, or null. */
  clip: number | null;
  /** The peer source this term was checked against. */
  checkedAgainst: string;
}

export type BackendNeed = 'base_lin_vel' | 'root_pose';

/**
 * How the reference is placed relative to the robot at the start (from the family's deploy
 * code): rotation about world z that takes the reference heading onto the robot's, and whether
 * the reference is also translated so its anchor starts where the robot's anchor is.
 */
export interface ReferenceAlignment {
  rotation: 'none' | 'yaw';
  translation: 'none' | 'xy' | 'xyz';
  /** Whose heading/position is compared: the anchor body or the root (pelvis), per side. */
  robotBody: 'anchor' | 'root';
  referenceBody: 'anchor' | 'root';
  checkedAgainst: string;
}

export interface PolicyAction {
  /** default_offset: target = offset + scale·a; reference_residual: target = ref q + scale·a. */
  mode: 'default_offset' | 'reference_residual';
  /** Canonical order. */
  scale: Float64Array;
  offset: Float64Array;
  /** Symmetric clip of the raw action, or null. */
  clip: number | null;
}

export interface BakedMotion {
  frames: number;
  fps: number;
  /** Names of the bodies the graph carries poses for (BeyondMimic), or just the root (holosoma). */
  bodyNames: readonly string[];
}

/**
 * A graph input fed back from the graph's own output of the previous step (a transformer's
 * key/value cache): zeros after reset, then each step's `output` becomes the next step's `input`.
 */
export interface RecurrentInput {
  input: string;
  output: string;
  /** Fixed dims, float32. */
  dims: readonly number[];
  checkedAgainst: string;
}

/**
 * An int64 [1] input counting the control steps since reset (HoloMotion's step_idx). When it
 * reaches `resetAt` the counter and every recurrent input are reset together, as the family's
 * deploy code does before its position table runs out; null = never.
 */
export interface StepCounterInput {
  input: string;
  resetAt: number | null;
  checkedAgainst: string;
}

/**
 * The first graph of a two-stage policy (SONIC): its own observation, run every control step
 * before the action graph; its output is the action graph's `policy_token` term.
 */
export interface EncoderStage {
  /** The encoder's .onnx, as the loader found it. */
  modelFile: string;
  input: string;
  output: string;
  observation: TrackingTerm[];
  observationSize: number;
  tokenSize: number;
  /** The encoder mode the console drives, and its id in the encoder-mode input. */
  mode: { name: string; id: number };
  checkedAgainst: string;
}

/** The motion a deploy configuration names for the policy (unitree_rl_lab's FSM `motion_file`, `fps`). */
export interface ConfiguredMotion {
  /** Absolute path of the motion file. */
  file: string;
  fps: number;
  /** Where it was read: `<config file> FSM.<state>`. */
  source: string;
}

export interface TrackingPolicySpec {
  family: PolicyFamily;
  /** `<family>/<adapter version>`: bumped whenever the adapter's reading of a file changes. */
  adapter: string;
  /** Graph input names. */
  obsInput: string;
  /** The time_step input (float32 [1, 1]) of policies that carry their reference, else null. */
  timeInput: string | null;
  actionOutput: string;
  jointOrder: JointOrderMap;
  observation: TrackingTerm[];
  observationSize: number;
  controlRateHz: number;
  physics: PhysicsProfile;
  /** Canonical order, N·m/rad and N·m·s/rad. */
  kp: Float64Array;
  kd: Float64Array;
  /** Canonical order, rad: joint_pos_rel is relative to it. */
  defaultJointPosRad: Float64Array;
  action: PolicyAction;
  anchorBody: string;
  alignment: ReferenceAlignment;
  needs: BackendNeed[];
  /** Which motions it tracks (FAMILY_MOTION_SCOPE of its family). */
  motionScope: MotionScope;
  /** The reference carried inside the file, or null (the motion must be supplied). */
  baked: BakedMotion | null;
  /** The motion a deploy configuration beside the policy names for it (not carried in the file), if any. */
  configuredMotion?: ConfiguredMotion | null;
  /** Inputs fed back from the previous step's outputs (none for feed-forward policies). */
  recurrent: readonly RecurrentInput[];
  stepCounter: StepCounterInput | null;
  /** The encoder of a two-stage policy, or null. */
  encoder: EncoderStage | null;
  /** Outputs the graph has besides the action and the recurrent ones, which the console does not read (with why). */
  ignoredOutputs: readonly { name: string; why: string }[];
  /** Anything the adapter decided that a reader of the result should know. */
  notes: string[];
}

/** Values the term writes per step: size × history × frames read. */
export const termWidth = (t: TrackingTerm): number => t.size * t.history * (t.frameOffsets?.length ?? 1);

export function observationSizeOf(terms: readonly TrackingTerm[]): number {
  return terms.reduce((s, t) => s + termWidth(t), 0);
}

export const describeTerms = (terms: readonly TrackingTerm[]): string =>
  terms
    .map((t) => {
      const m = t.history > 1 ? t.history : (t.frameOffsets?.length ?? 1);
      return `${t.name} ${t.size}${m > 1 ? `×${m}` : ''}`;
    })
    .join(' + ');
