import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { BUILTIN_TARGET_LEAD_FRAMES, BuiltinTracker } from '../../src/domain/sim/builtinTracker';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { createControlCommand } from '../../src/domain/wbc/controller';
import { buildObservation, observationLayout, observationSize } from '../../src/domain/wbc/observationBuilder';
import type { OnnxBinding, PolicyInterface } from '../../src/domain/wbc/wbcBinding';
import { createOnnxController, OnnxPolicyError, type OnnxController } from '../../src/services/sim/onnxController';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import { checkOnnxIo, ONNX_SESSION_OPTIONS, verifyOnnxBinding } from '../../src/services/wbc/onnxPolicySession';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import {
  encodeLinearPolicy,
  encodeOnnxModel,
  inlineBinding,
  J,
  makeObservation,
  rampReference,
  seededRandom,
  standardInterface,
  trackerWeights,
  writeBindingFiles,
  type LinearPolicySpec,
} from '../helpers/onnxBuilder';

let profile: RobotProfile;
let DEFAULT: number[];
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-onnx-ctrl-'));
let n = 0;
beforeAll(() => {
  profile = loadRobotProfile();
  DEFAULT = [...profile.defaultPose.jointPosRad];
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const iface = standardInterface({}, 2); // D = 29+29+3+3+58+29 = 151
const D = observationSize(iface);

/** Writes the model + binding.json and loads it the way the console does. */
async function bindingFor(
  spec: Partial<LinearPolicySpec> | Uint8Array,
  i: PolicyInterface = iface,
): Promise<OnnxBinding> {
  const bytes = spec instanceof Uint8Array ? spec : encodeLinearPolicy({ inDim: D, outDim: J, ...spec });
  return loadOnnxBinding(writeBindingFiles(path.join(root, `c${n++}`), bytes, i));
}

async function loadFailure(
  spec: Partial<LinearPolicySpec> | Uint8Array,
  i: PolicyInterface = iface,
): Promise<InputError> {
  const b = await bindingFor(spec, i);
  const e = await createOnnxController(b, profile).then(
    (c) => {
      c.dispose();
      return null;
    },
    (err: unknown) => err,
  );
  expect(e, 'expected the load to fail').toBeInstanceOf(InputError);
  expect((e as InputError).location.file).toBe(b.modelFile);
  expect((e as Error).message.startsWith(`${b.modelFile}: `)).toBe(true);
  return e as InputError;
}

function randomLinear(
  seed: number,
  tanh = false,
): { W: Float64Array; b: Float64Array; spec: Partial<LinearPolicySpec> } {
  const r = seededRandom(seed);
  const W = Float64Array.from({ length: J * D }, () => 0.05 * r());
  const b = Float64Array.from({ length: J }, () => 0.1 * r());
  return { W, b, spec: { weights: W, bias: b, tanh } };
}

describe('createOnnxController: interface checks at load', () => {
  it('names the feature count and the declared layout when the input size differs', async () => {
    const e = await loadFailure(encodeLinearPolicy({ inDim: D + 2, outDim: J }));
    expect(e.message).toContain(
      `input "obs" has ${D + 2} features, the declared interface builds ${D} (joint_pos_rel_default 29 + joint_vel 29 + base_ang_vel 3 + projected_gravity 3 + reference_joint_pos 2×29 + last_action 29)`,
    );
  });

  it('rejects an action of the wrong size', async () => {
    const e = await loadFailure({ outDim: 28 });
    expect(e.message).toContain('output "actions" has 28 values per step; the robot has 29 joints to command');
  });

  it('rejects a missing input name and lists the model inputs', async () => {
    const e = await loadFailure({ inputName: 'observations' });
    expect(e.message).toContain(`the model has no input "obs" (its inputs: observations [1, ${D}] float32)`);
  });

  it('rejects a missing output name', async () => {
    const e = await loadFailure({ outputName: 'mu' });
    expect(e.message).toContain('the model has no output "actions" (its outputs: mu [1, 29] float32)');
  });

  it('rejects a non-float32 model', async () => {
    const e = await loadFailure({ elemType: 'float64' });
    expect(e.message).toContain('input "obs" is float64; the console feeds float32');
    expect(e.message).toContain('output "actions" is float64; expected float32');
  });

  it('rejects a batch dimension other than 1 and inputs of other ranks', async () => {
    expect((await loadFailure({ inputDims: [4, D], outputDims: [4, J] })).message).toContain(
      'input "obs" has batch dimension 4',
    );
    const rank3 = encodeOnnxModel({
      nodes: [{ opType: 'Identity', inputs: ['obs'], outputs: ['actions'] }],
      initializers: [],
      inputs: [{ name: 'obs', type: 'float32', dims: [1, 1, D] }],
      outputs: [{ name: 'actions', type: 'float32', dims: [1, 1, D] }],
    });
    expect((await loadFailure(rank3)).message).toContain(
      `input "obs" has shape [1, 1, ${D}]; expected [1, ${D}] or [${D}]`,
    );
  });

  it('rejects a model that needs an input the interface does not declare', async () => {
    const two = encodeOnnxModel({
      nodes: [{ opType: 'Add', inputs: ['obs', 'phase'], outputs: ['actions'] }],
      initializers: [],
      inputs: [
        { name: 'obs', type: 'float32', dims: [1, D] },
        { name: 'phase', type: 'float32', dims: [1, D] },
      ],
      outputs: [{ name: 'actions', type: 'float32', dims: [1, D] }],
    });
    const e = await loadFailure(two);
    expect(e.message).toContain('the model also needs input "phase", which the interface does not declare');
  });

  it('catches a wrong action size hidden behind symbolic dims with the trial inference', async () => {
    const e = await loadFailure({ outDim: 28, inputDims: ['batch', 'features'], outputDims: ['batch', 'actions'] });
    // onnxruntime's shape inference may already resolve the symbolic dim; either way it fails at load.
    expect(e.message).toMatch(
      /output "actions" has (28 values per step|shape \[1, 28\] \(28 values\) at run time); the robot has 29 joints to command/,
    );
  });

  it('reports corrupt bytes as not a loadable ONNX model, naming the file', async () => {
    const good = encodeLinearPolicy({ inDim: D, outDim: J });
    const e1 = await loadFailure(Uint8Array.from({ length: 256 }, (_, i) => (i * 37 + 11) & 0xff));
    expect(e1.message).toMatch(/policy\.onnx: not a loadable ONNX model \(onnxruntime: .+\)/);
    const e2 = await loadFailure(good.subarray(0, Math.floor(good.length / 2)));
    expect(e2.message).toMatch(/not a loadable ONNX model/);
  });

  it('rejects a model file that changed after the binding was loaded', async () => {
    const b = await bindingFor({});
    fs.writeFileSync(b.modelFile, encodeLinearPolicy({ inDim: D, outDim: J, bias: new Float64Array(J).fill(1) }));
    await expect(createOnnxController(b, profile)).rejects.toThrow(/differs from the binding's checkpointHash/);
  });

  it('accepts [D] and [batch, D] inputs', async () => {
    for (const inputDims of [[D], ['batch', D]] as (number | string)[][]) {
      const c = await createOnnxController(await bindingFor({ inputDims }), profile);
      const cmd = createControlCommand();
      c.step(makeObservation(rampReference(5), DEFAULT), cmd);
      expect(Array.from(cmd.jointTargetRad)).toEqual(DEFAULT.map((d) => d + 0)); // zero weights: targets = default
      c.dispose();
    }
  });

  it('verifyOnnxBinding checks without keeping a session; checkOnnxIo is usable on plain metadata', async () => {
    await expect(verifyOnnxBinding(await bindingFor({}))).resolves.toBeUndefined();
    await expect(verifyOnnxBinding(await bindingFor({ outDim: 30 }))).rejects.toThrow(/has 30 values per step/);
    const io = checkOnnxIo(
      [{ name: 'obs', isTensor: true, type: 'float32', shape: [D] }],
      [{ name: 'actions', isTensor: true, type: 'float32', shape: [J] }],
      iface,
    );
    expect(io).toEqual({ problems: [], inputDims: [D] });
  });
});

describe('OnnxController.step', () => {
  let controller: OnnxController;
  const { W, b, spec } = randomLinear(42);
  const scale = Array.from({ length: J }, (_, j) => 0.2 + 0.01 * j);
  const stepIface = standardInterface({
    actionScale: scale,
    actionOffset: 0.01,
    gains: { kp: Array.from({ length: J }, (_, j) => 50 + j), kd: 3 },
  });

  beforeAll(async () => {
    controller = await createOnnxController(await bindingFor(spec, stepIface), profile);
  });
  afterAll(() => controller.dispose());

  /** Expected targets from the observation the controller fed, W·obs + b in float64. */
  function handTargets(obs: Float32Array, Wm = W, bv = b, tanh = false): number[] {
    const t: number[] = [];
    for (let j = 0; j < J; j++) {
      let a = bv[j];
      for (let d = 0; d < D; d++) a += Wm[j * D + d] * obs[d];
      if (tanh) a = Math.tanh(a);
      t.push(DEFAULT[j] + scale[j] * a + 0.01);
    }
    return t;
  }

  it('feeds the declared observation and maps W·obs + b to targets, with the interface gains', async () => {
    controller.reset();
    const ref = rampReference(20);
    const obs = makeObservation(ref, DEFAULT, 7, 3);
    const cmd = createControlCommand();
    controller.step(obs, cmd);
    const expectedObs = buildObservation(
      stepIface,
      obs,
      { defaultJointPosRad: DEFAULT, lastAction: new Float64Array(J) },
      new Float32Array(D),
    );
    expect(Array.from(controller.observation)).toEqual(Array.from(expectedObs));
    const want = handTargets(controller.observation);
    for (let j = 0; j < J; j++) expect(cmd.jointTargetRad[j]).toBeCloseTo(want[j], 5);
    expect(Array.from(cmd.kp!)).toEqual(Array.from({ length: J }, (_, j) => 50 + j));
    expect(Array.from(cmd.kd!)).toEqual(new Array(J).fill(3));
  });

  it('feeds its action back as last_action, and reset clears it', async () => {
    controller.reset();
    const ref = rampReference(20);
    const cmd = createControlCommand();
    controller.step(makeObservation(ref, DEFAULT, 1, 0), cmd);
    const a0 = Array.from(controller.lastAction);
    expect(a0.some((v) => v !== 0)).toBe(true);
    for (let j = 0; j < J; j++) expect(cmd.jointTargetRad[j]).toBeCloseTo(DEFAULT[j] + scale[j] * a0[j] + 0.01, 12);
    controller.step(makeObservation(ref, DEFAULT, 2, 1), cmd);
    const la = observationLayout(stepIface).find((s) => s.term === 'last_action')!;
    expect(Array.from(controller.observation.subarray(la.offset, la.offset + J))).toEqual(a0.map(Math.fround));
    const want = handTargets(controller.observation);
    for (let j = 0; j < J; j++) expect(cmd.jointTargetRad[j]).toBeCloseTo(want[j], 5);
    controller.reset();
    expect(Array.from(controller.lastAction).every((v) => v === 0)).toBe(true);
  });

  it('steps synchronously (no event-loop turn needed) and refuses to step after dispose', async () => {
    const obs = makeObservation(rampReference(5), DEFAULT, 3, 1);
    const cmd = createControlCommand();
    expect(controller.step(obs, cmd)).toBeUndefined();
    expect(cmd.kp).not.toBeNull();
    const c = await createOnnxController(await bindingFor({}), profile);
    c.dispose();
    c.dispose();
    expect(() => c.step(obs, createControlCommand())).toThrow(/step after dispose/);
  });

  it('runs a tanh policy', async () => {
    const r = randomLinear(9, true);
    const c = await createOnnxController(await bindingFor(r.spec, stepIface), profile);
    const cmd = createControlCommand();
    c.step(makeObservation(rampReference(5), DEFAULT, 4, 1), cmd);
    const want = handTargets(c.observation, r.W, r.b, true);
    for (let j = 0; j < J; j++) expect(cmd.jointTargetRad[j]).toBeCloseTo(want[j], 5);
    c.dispose();
  });

  it('with tracker weights, commands the reference of the next frame, like the builtin tracker', async () => {
    const { W: tw, b: tb } = trackerWeights(iface, DEFAULT, BUILTIN_TARGET_LEAD_FRAMES);
    const c = await createOnnxController(await bindingFor({ weights: tw, bias: tb }), profile);
    const ref = rampReference(30);
    const builtin = new BuiltinTracker(makeBuiltinBinding(), J);
    const cmd = createControlCommand();
    const want = createControlCommand();
    for (const k of [0, 5, 28, 29]) {
      const obs = makeObservation(ref, DEFAULT, k, k);
      c.step(obs, cmd);
      builtin.step(obs, want);
      const next = Math.min(k + 1, 29);
      for (let j = 0; j < J; j++) {
        expect(cmd.jointTargetRad[j]).toBeCloseTo(ref.jointPosRad[next * J + j], 5);
        expect(cmd.jointTargetRad[j]).toBeCloseTo(want.jointTargetRad[j], 5);
      }
    }
    c.dispose();
  });

  it('throws OnnxPolicyError on a non-finite action', async () => {
    const bias = new Float64Array(J);
    bias[3] = Infinity;
    // A finite trial inference is not possible with an infinite bias: it is caught at load.
    expect((await loadFailure({ bias })).message).toContain(
      'a trial inference on a zero observation gave a non-finite action (Infinity for joint 3)',
    );
    // Large weights overflow float32 only for large observations: load passes, step fails.
    const W2 = new Float64Array(J * D).fill(3e38);
    const c = await createOnnxController(await bindingFor({ weights: W2 }), profile);
    expect(() => c.step(makeObservation(rampReference(5), DEFAULT, 3, 2), createControlCommand())).toThrow(
      OnnxPolicyError,
    );
    c.dispose();
  });
});

describe('determinism', () => {
  it('the same inputs give bit-identical targets, across sessions and after reset', async () => {
    const { spec } = randomLinear(5, true);
    const bnd = await bindingFor(spec);
    const ref = rampReference(40);
    const run = (c: OnnxController) => {
      c.reset();
      const out: number[] = [];
      const cmd = createControlCommand();
      for (let k = 0; k < 40; k++) {
        c.step(makeObservation(ref, DEFAULT, 100 + k, k), cmd);
        out.push(...cmd.jointTargetRad);
      }
      return Float64Array.from(out);
    };
    const c1 = await createOnnxController(bnd, profile);
    const c2 = await createOnnxController(bnd, profile);
    const a = run(c1);
    const bb = run(c2);
    const c = run(c1);
    expect(Buffer.from(bb.buffer).equals(Buffer.from(a.buffer))).toBe(true);
    expect(Buffer.from(c.buffer).equals(Buffer.from(a.buffer))).toBe(true);
    c1.dispose();
    c2.dispose();
  });

  it('the synchronous native run gives the same bits as the public async InferenceSession.run', async () => {
    const { spec } = randomLinear(13, true);
    const bytes = encodeLinearPolicy({ inDim: D, outDim: J, ...spec });
    const c = await createOnnxController(inlineBinding(iface), profile, { modelBytes: bytes });
    const pub = await InferenceSession.create(bytes, { ...ONNX_SESSION_OPTIONS });
    const ref = rampReference(10);
    for (let k = 0; k < 5; k++) {
      c.step(makeObservation(ref, DEFAULT, 50 + k, k), createControlCommand());
      const r = await pub.run({ obs: new Tensor('float32', c.observation.slice(), [1, D]) });
      expect(Array.from(r.actions.data as Float32Array)).toEqual(Array.from(c.lastAction));
    }
    await pub.release();
    c.dispose();
  });

  it('an inline binding (bytes passed in) behaves like a file binding', async () => {
    const { spec } = randomLinear(11);
    const bytes = encodeLinearPolicy({ inDim: D, outDim: J, ...spec });
    const c = await createOnnxController(inlineBinding(iface), profile, { modelBytes: bytes });
    const f = await createOnnxController(await bindingFor(bytes), profile);
    const obs = makeObservation(rampReference(5), DEFAULT, 8, 2);
    const x = createControlCommand();
    const y = createControlCommand();
    c.step(obs, x);
    f.step(obs, y);
    expect(Array.from(x.jointTargetRad)).toEqual(Array.from(y.jointTargetRad));
    c.dispose();
    f.dispose();
  });
});
