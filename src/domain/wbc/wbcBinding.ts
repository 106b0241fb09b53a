import type { PolicyFamily } from './trackingPolicy';

// A WBC binding is the versioned record of which controller runs a clip (DESIGN §3). Results
// name the binding id and version; anything that changes behaviour (gains, assist, checkpoint)
// changes the version, so old results never silently mix with new ones.

export type WbcBindingKind = 'builtin' | 'onnx' | 'remote';

export interface RootAssist {
  /** Translational stiffness of the virtual gantry on the pelvis, N/m (0 = off). */
  kpNPerM: number;
  /** Translational damping, N·s/m. */
  kdNsPerM: number;
  /** Rotational stiffness, N·m/rad, and damping, N·m·s/rad. */
  kpNmPerRad: number;
  kdNmsPerRad: number;
}

export interface JointGains {
  /** Per joint (canonical order) or one value for all; N·m/rad. */
  kp: number | readonly number[];
  /** N·m·s/rad. */
  kd: number | readonly number[];
}

interface BindingCommon {
  id: string;
  version: string;
  /** Control rate, Hz (50 for everything built in). */
  controlRateHz: number;
  /** Free text shown beside results (e.g. "reference tracker, not a policy"). */
  label: string;
}

/** Joint PD to the reference angles through the model's position actuators, optional root assist. */
export interface BuiltinBinding extends BindingCommon {
  kind: 'builtin';
  gains: JointGains | null;
  rootAssist: RootAssist | null;
  checkpointHash: null;
}

/** An ONNX policy with an interface declared in a binding file (docs/ONNX_POLICIES.md). */
export interface OnnxBinding extends BindingCommon {
  kind: 'onnx';
  /** Absent: the interface is declared. (A released family's binding is a PolicyBinding.) */
  family?: undefined;
  /** Path of the .onnx file as the user named it. */
  modelFile: string;
  /** sha256 of the .onnx bytes; part of the identity. */
  checkpointHash: string;
  interface: PolicyInterface;
}

/** The simulator or robot runs the policy itself; the console only sends prepare/start/stop. */
export interface RemoteBinding extends BindingCommon {
  kind: 'remote';
  checkpointHash: string | null;
}

/**
 * A released tracking policy read as it is by its family's adapter (src/domain/wbc/
 * policyFamilies.ts). The binding is the identity only (JSON-safe): whoever runs it reads the
 * files again and refuses them if they no longer hash to `checkpointHash`.
 */
export interface PolicyBinding extends BindingCommon {
  kind: 'onnx';
  family: PolicyFamily;
  /** The .onnx file or policy folder as the user named it. */
  policyPath: string;
  /** The .onnx the folder resolves to. */
  modelFile: string;
  /** sha256 over the .onnx, its external data and its configuration files, in order. */
  checkpointHash: string;
  /** `<family>/<n>`: the adapter that read it. */
  adapter: string;
  /** The physics profile id the policy runs with (src/domain/robot/physicsProfile.ts). */
  physicsId: string;
  /** The clip id of the motion baked into the file, or null. */
  bakedClipId: string | null;
  /**
   * The declared preset (`<id>@<version>`, src/domain/wbc/policyPresets.ts) the file is read
   * under; absent when the files carry their own interface. Whoever runs the binding reads the
   * files under it again.
   */
  preset?: string;
}

export type WbcBinding = BuiltinBinding | OnnxBinding | PolicyBinding | RemoteBinding;

export type ObservationTerm =
  | { term: 'joint_pos_rel_default'; scale: number }
  | { term: 'joint_vel'; scale: number }
  | { term: 'base_ang_vel'; scale: number }
  | { term: 'projected_gravity'; scale: number }
  /**
   * Reference joint angles (absolute, rad) of `frames` consecutive frames starting at
   * referenceFrame + offset (default offset 1: the next frame, the pose to reach by the end of
   * this control interval, as the builtin tracker commands), clamped at the clip end.
   */
  | { term: 'reference_joint_pos'; frames: number; scale: number; offset?: number }
  | { term: 'last_action'; scale: number };

/** The declared observation/action interface of an ONNX policy; checked when it is loaded. */
export interface PolicyInterface {
  inputName: string;
  outputName: string;
  observation: ObservationTerm[];
  /** joint target = default pose + actionScale · action + actionOffset (rad), per joint. */
  actionScale: number | readonly number[];
  actionOffset: number | readonly number[];
  gains: JointGains;
  /** The policy's own default pose (rad, canonical order) for joint_pos_rel_default and the action; default: the model's. */
  defaultJointPosRad?: readonly number[];
  /** Clip every observation entry to ±clipObservation after scaling (rsl_rl `clip_observations`). */
  clipObservation?: number;
  /** Clip the raw action to ±clipAction before mapping it to targets (and before it becomes last_action). */
  clipAction?: number;
}

/**
 * Whether a binding can be run on a clip: a released policy that carries its reference tracks
 * only that motion; every other binding tracks any clip.
 */
export function bindingTracksClip(b: WbcBinding, clipId: string): boolean {
  return !(b.kind === 'onnx' && b.family !== undefined && b.bakedClipId !== null && b.bakedClipId !== clipId);
}

export function bindingKey(b: WbcBinding): string {
  return `${b.id}@${b.version}`;
}
