import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { createControlCommand } from '../../src/domain/wbc/controller';
import { observationSize } from '../../src/domain/wbc/observationBuilder';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { createOnnxController } from '../../src/services/sim/onnxController';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import {
  encodeLinearPolicy,
  makeObservation,
  rampReference,
  seededRandom,
  standardInterface,
  writeBindingFiles,
} from '../helpers/onnxBuilder';

// The embedded simulator steps controllers inside worker_threads: the ONNX policy must load
// there and give bit-identical outputs to the main thread on the same inputs.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-onnx-worker-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function runInWorker(workerData: unknown): Promise<Float64Array> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const entry = pathToFileURL(path.join(here, 'onnxWorkerEntry.ts')).href;
  // Bare specifiers in an eval'd worker resolve from the working directory (the repo root).
  const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(boot, { eval: true, workerData });
    w.once('message', (m: Float64Array) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

it('runs the policy in a worker thread with bit-identical targets to the main thread', async () => {
  const iface = standardInterface();
  const D = observationSize(iface);
  const r = seededRandom(77);
  const model = encodeLinearPolicy({
    inDim: D,
    outDim: 29,
    weights: Array.from({ length: 29 * D }, () => 0.05 * r()),
    tanh: true,
  });
  const bindingFile = writeBindingFiles(dir, model, iface);
  const steps = 25;

  const profile = loadRobotProfile();
  const c = await createOnnxController(await loadOnnxBinding(bindingFile), profile);
  const ref = rampReference(steps);
  const cmd = createControlCommand();
  const local = new Float64Array(steps * 29);
  for (let k = 0; k < steps; k++) {
    c.step(makeObservation(ref, profile.defaultPose.jointPosRad, 1000 + k, k), cmd);
    local.set(cmd.jointTargetRad, k * 29);
  }
  c.dispose();

  const remote = await runInWorker({ bindingFile, steps });
  expect(remote.length).toBe(local.length);
  expect(Buffer.from(remote.buffer, remote.byteOffset, remote.byteLength).equals(Buffer.from(local.buffer))).toBe(true);
});
