// Builds the Controller for a WBC binding inside a simulator worker. One entry per binding kind:
//   builtin — the reference tracker (src/domain/sim/builtinTracker.ts);
//   onnx    — a released policy family (PolicyBinding): the tracking-policy controller
//             (src/services/wbc/trackingPolicyController.ts); a declared interface:
//             `createOnnxController(binding, profile)` exported by ./onnxController.ts (written
//             separately; loaded on first use so a build without it still runs builtin bindings);
//   remote  — refused: the remote simulator or robot runs that policy itself.

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BuiltinTracker } from '../../domain/sim/builtinTracker';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { Controller } from '../../domain/wbc/controller';
import type { OnnxBinding, WbcBinding } from '../../domain/wbc/wbcBinding';

export class ControllerUnavailableError extends Error {
  override readonly name = 'ControllerUnavailableError';
}

type OnnxFactory = (binding: OnnxBinding, profile: RobotProfile) => Promise<Controller>;

const ONNX_MODULE = new URL('./onnxController.ts', import.meta.url);
let onnxFactory: Promise<OnnxFactory> | undefined;

async function loadOnnxFactory(): Promise<OnnxFactory> {
  if (ONNX_MODULE.protocol === 'file:' && !fs.existsSync(fileURLToPath(ONNX_MODULE))) {
    throw new ControllerUnavailableError(
      'onnx bindings not available: this build has no ONNX controller (src/services/sim/onnxController.ts)',
    );
  }
  // A computed specifier, so type checking and bundling do not require the module to exist.
  const mod = (await import(/* @vite-ignore */ ONNX_MODULE.href)) as { createOnnxController?: OnnxFactory };
  if (typeof mod.createOnnxController !== 'function') {
    throw new ControllerUnavailableError(
      'onnx bindings not available: onnxController.ts does not export createOnnxController(binding, profile)',
    );
  }
  return mod.createOnnxController;
}

/**
 * Loads the policy controllers' code and initialises the ONNX runtime now (about 0.15 s the
 * first time) so that a later createController costs only the policy's own load. A process whose
 * loop keeps real-time promises (the robot emulator: its lowstate stream and interlock box) calls
 * it before those start. A build without onnxController.ts still preloads the released-policy
 * controller.
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
