// Worker body for onnxWorker.test.ts: runs an ONNX policy inside a worker_threads Worker (as the
// embedded simulator does) and posts the joint targets of every step back.
import { parentPort, workerData } from 'node:worker_threads';
import { createControlCommand } from '../../src/domain/wbc/controller';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { createOnnxController } from '../../src/services/sim/onnxController';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import { makeObservation, rampReference } from '../helpers/onnxBuilder';

const { bindingFile, steps } = workerData as { bindingFile: string; steps: number };
const profile = loadRobotProfile();
const controller = await createOnnxController(await loadOnnxBinding(bindingFile), profile);
const ref = rampReference(steps);
const cmd = createControlCommand();
const out = new Float64Array(steps * 29);
for (let k = 0; k < steps; k++) {
  controller.step(makeObservation(ref, profile.defaultPose.jointPosRad, 1000 + k, k), cmd);
  out.set(cmd.jointTargetRad, k * 29);
}
controller.dispose();
parentPort!.postMessage(out);
