import type { StateFrame } from '../robot/stateFrame';
import type { PhysicsProfile } from '../robot/physicsProfile';
import type { BackendNeed } from './trackingPolicy';
import type { WbcBinding } from './wbcBinding';

// The contract between a backend's control loop and a whole-body controller. A controller is
// stepped at its binding's control rate with the measured state and the reference, and writes
// joint targets (and optionally PD gains) into a preallocated command. Controllers must be
// deterministic given the same inputs: the replay audit depends on it.

/** The reference motion on the control timeline (resampled to the control rate). */
export interface ControlReference {
  rateHz: number;
  frameCount: number;
  /** frameCount×3, metres. */
  rootPosM: Float64Array;
  /** frameCount×4, wxyz. */
  rootQuatWxyz: Float64Array;
  /** frameCount×29, rad, canonical order. */
  jointPosRad: Float64Array;
}

export interface ControlObservation {
  /** Control step index k (time k / rate). */
  step: number;
  timeS: number;
  state: StateFrame;
  reference: ControlReference;
  /** Reference frame to track at this step (clamped to the last frame). */
  referenceFrame: number;
  /** The model's default joint pose (stand keyframe), canonical order, rad. */
  defaultJointPosRad: Float64Array;
  /**
   * Root (pelvis) linear velocity, world frame, m/s, from the backend's state estimate (the
   * simulator's free joint); null when the backend has none.
   */
  rootLinVelMps: Float64Array | null;
}

export interface ControlCommand {
  /** 29 joint position targets, rad, canonical order. */
  jointTargetRad: Float64Array;
  /** Per-joint PD gains overriding the model's actuators; null keeps the model's. */
  kp: Float64Array | null;
  kd: Float64Array | null;
}

export interface Controller {
  readonly binding: WbcBinding;
  /**
   * The physics the controller was trained with, which the simulator applies to its model for
   * the episode (timestep, decimation, armature, effort limits, friction); null keeps the
   * model's own physics.
   */
  readonly physics: PhysicsProfile | null;
  /**
   * What the controller needs from the backend beyond joints and IMU (e.g. base_lin_vel: a state
   * estimate of the root velocity). A backend that cannot supply a need refuses the controller.
   */
  readonly needs: readonly BackendNeed[];
  /** Clears internal state (last action, filters) before an episode. */
  reset(): void;
  step(obs: ControlObservation, out: ControlCommand): void;
  /** Frees native resources (ONNX sessions). */
  dispose?(): Promise<void> | void;
}

/** `inner` with its step replaced by `step` (binding, physics, needs and reset delegate to `inner`). */
export function withStep(inner: Controller, step: Controller['step']): Controller {
  return { binding: inner.binding, physics: inner.physics, needs: inner.needs, reset: () => inner.reset(), step };
}

export function createControlCommand(joints = 29): ControlCommand {
  return { jointTargetRad: new Float64Array(joints), kp: null, kd: null };
}
