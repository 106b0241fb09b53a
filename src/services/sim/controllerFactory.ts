// Builds the Controller for a WBC binding inside a simulator worker. One entry per binding kind:
//   builtin — the reference tracker (src/domain/sim/builtinTracker.ts);
//   onnx    — a released policy family (PolicyBinding): the tracking-policy controller
//             (src/services/wbc/trackingPolicyController.ts); a declared interface:
//             `createOnnxController(binding, profile)` of ./onnxController.ts.
// Both policy controllers are imported on first use: they load onnxruntime-node, which a process
// that only runs builtin bindings never needs.
//   remote  — refused: the remote simulator or robot runs that policy itself.

import { BuiltinTracker } from '../../domain/sim/builtinTracker';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { Controller } from '../../domain/wbc/controller';
import type { OnnxBinding, WbcBinding } from '../../domain/wbc/wbcBinding';

export class ControllerUnavailableError extends Error {
  override readonly name = 'ControllerUnavailableError';
}

type OnnxFactory = (binding: OnnxBinding, profile: RobotProfile) => Promise<Controller>;

let onnxFactory: Promise<OnnxFactory> | undefined;

async function loadOnnxFactory(): Promise<OnnxFactory> {
  const { createOnnxController } = await import('./onnxController');
  return createOnnxController;
}

/**
 * Loads the policy controllers' code and initialises the ONNX runtime now (about 0.15 s the
 * first time) so that a later createController costs only the policy's own load. A process whose
 * loop keeps real-time promises (the robot emulator: its lowstate stream and interlock box) calls
 * it before those start.
 */
export async function preloadPolicyControllers(): Promise<void> {
  const { warmUpOnnxRuntime } = await import('../wbc/onnxPolicySession');
  await import('../wbc/trackingPolicyController');
  onnxFactory ??= loadOnnxFactory();
  await onnxFactory.catch(() => {
    onnxFactory = undefined;
  });
  warmUpOnnxRuntime();
}

/** The controller for a binding on a robot model. Rejects with a message naming the problem. */
export async function createController(binding: WbcBinding, profile: RobotProfile): Promise<Controller> {
  switch (binding.kind) {
    case 'builtin':
      return new BuiltinTracker(binding, profile.joints.length);
    case 'onnx': {
      if (binding.family !== undefined) {
        const { createTrackingPolicyController } = await import('../wbc/trackingPolicyController');
        return createTrackingPolicyController(binding, profile);
      }
      onnxFactory ??= loadOnnxFactory();
      const factory = await onnxFactory.catch((err: unknown) => {
        onnxFactory = undefined;
        throw err;
      });
      return factory(binding, profile);
    }
    case 'remote':
      throw new ControllerUnavailableError(
        `binding ${binding.id}@${binding.version} is of kind "remote": the remote simulator or robot runs that policy itself; the embedded simulator cannot`,
      );
    default:
      throw new ControllerUnavailableError(`unknown binding kind "${(binding as { kind: string }).kind}"`);
  }
}
