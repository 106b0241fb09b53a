import { Tensor } from 'onnxruntime-node';
import type { ControlCommand, ControlObservation, Controller } from '../../domain/wbc/controller';
import {
  applyAction,
  buildObservation,
  createActionMap,
  perJoint,
  type ObservationContext,
} from '../../domain/wbc/observationBuilder';
import type { OnnxBinding } from '../../domain/wbc/wbcBinding';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { openOnnxPolicy, type OnnxSession } from '../wbc/onnxPolicySession';

// The `onnx` WBC controller: builds the declared observation, runs the policy with
// onnxruntime-node (CPU, single-threaded, fixed options: deterministic), and maps the action to
// joint targets = default + actionScale·action + actionOffset with the interface's PD gains.
// Everything that can mismatch is checked in createOnnxController (see onnxPolicySession.ts);
// step() only fails if the policy itself produces a non-finite action.
//
// Loading is asynchronous (createOnnxController returns a promise); step() is synchronous — the
// inference runs on the calling thread through onnxruntime's native session — so the control
// loop calls it like any other controller (awaiting it is harmless).

/** The policy produced something unusable at run time (non-finite action). */
export class OnnxPolicyError extends Error {
  override readonly name = 'OnnxPolicyError';
  constructor(
    readonly file: string,
    readonly step: number,
    reason: string,
  ) {
    super(`${file}: ${reason} at control step ${step}`);
  }
}

export interface OnnxController extends Controller {
  readonly binding: OnnxBinding;
  readonly observationSize: number;
  /** The observation fed at the latest step (reused buffer, overwritten every step). */
  readonly observation: Float32Array;
  /** The latest raw action after clipAction (the next step's last_action); zeros after reset. */
  readonly lastAction: Float64Array;
  /** Synchronous: one inference; throws OnnxPolicyError on a non-finite action. */
  step(obs: ControlObservation, out: ControlCommand): void;
  dispose(): void;
}

export interface OnnxControllerOptions {
  /** The .onnx bytes, when the caller already has them (still checked against checkpointHash). */
  modelBytes?: Uint8Array;
}

/**
 * Opens the binding's policy and checks it against the declared interface and the robot
 * (throws InputError naming the .onnx and the mismatch). The returned controller is stepped at
 * the binding's control rate; each step runs one inference synchronously.
 */
export async function createOnnxController(
  binding: OnnxBinding,
  profile: RobotProfile,
  options: OnnxControllerOptions = {},
): Promise<OnnxController> {
  const joints = profile.joints.length;
  const iface = binding.interface;
  const map = createActionMap(iface, profile.defaultPose.jointPosRad, joints);
  const kp = perJoint(iface.gains.kp, joints, 'gains.kp');
  const kd = perJoint(iface.gains.kd, joints, 'gains.kd');

  const opened = await openOnnxPolicy(binding, joints, options.modelBytes);
  const session: OnnxSession = opened.session;
  const D = opened.observationSize;

  const observation = new Float32Array(D);
  const lastAction = new Float64Array(joints);
  const ctx: ObservationContext = { defaultJointPosRad: map.defaultJointPosRad, lastAction };
  // The tensor wraps `observation`; onnxruntime reads the buffer at each run.
  const feeds = { [iface.inputName]: new Tensor('float32', observation, opened.inputDims) };
  const outputName = iface.outputName;
  let disposed = false;

  const controller: OnnxController = {
    binding,
    physics: null,
    needs: [],
    observationSize: D,
    observation,
    lastAction,
    reset() {
      lastAction.fill(0);
    },
    step(obs, out) {
      if (disposed) throw new Error(`${binding.modelFile}: step after dispose`);
      buildObservation(iface, obs, ctx, observation);
      const action = session.run(feeds, outputName).data as Float32Array;
      if (!applyAction(action, map, lastAction, out.jointTargetRad))
        throw new OnnxPolicyError(binding.modelFile, obs.step, 'the policy produced a non-finite action');
      if (out.kp === null || out.kp.length !== joints) out.kp = new Float64Array(joints);
      if (out.kd === null || out.kd.length !== joints) out.kd = new Float64Array(joints);
      out.kp.set(kp);
      out.kd.set(kd);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      session.release();
    },
  };
  return controller;
}
