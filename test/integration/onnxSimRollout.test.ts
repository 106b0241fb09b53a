import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InitialState } from '../../src/domain/backend/backend';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { BuiltinTracker } from '../../src/domain/sim/builtinTracker';
import { observationSize } from '../../src/domain/wbc/observationBuilder';
import type { Controller } from '../../src/domain/wbc/controller';
import type { PolicyInterface, WbcBinding } from '../../src/domain/wbc/wbcBinding';
import { DEFAULT_MODEL_FILE } from '../../src/services/robot/loadRobotProfile';
import { createController } from '../../src/services/sim/controllerFactory';
import { createOnnxController } from '../../src/services/sim/onnxController';
import { SimEngine, type EngineRunRequest } from '../../src/services/sim/simEngine';
import type { FrameBatch } from '../../src/services/sim/simProtocol';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import { encodeLinearPolicy, J, standardInterface, trackerWeights, writeBindingFiles } from '../helpers/onnxBuilder';

// A short rollout in real MuJoCo (our G1, the embedded simulator's engine, in-thread) with ONNX
// policies built by the test: a linear "tracker" policy must command what the builtin reference
// tracker commands and track like it; a constant-action policy must drive the joints to its own
// constant targets — so the rollout demonstrably runs the policy, not the reference.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-onnx-sim-'));
let engine: SimEngine;
let DEFAULT: Float64Array;
let KP: number[];
let KD: number[];
beforeAll(async () => {
  engine = await SimEngine.load(DEFAULT_MODEL_FILE);
  DEFAULT = engine.defaultJointPosRad;
  KP = engine.profile.joints.map((_, j) => engine.profile.actuators.find((a) => a.jointIndex === j)!.kp!);
  KD = KP.map((kp) => kp / 50);
});
afterAll(() => {
  engine?.dispose();
  fs.rmSync(root, { recursive: true, force: true });
});

const FPS = 50;
const FRAMES = 51; // 1 s
const L_SHOULDER_PITCH = 15;
const R_ELBOW = 25;
const WAIST_YAW = 12;

/** Standing at the default pose, waving the left shoulder and right elbow. */
function makeClip(def: Float64Array) {
  const jointPosRad = new Float64Array(FRAMES * J);
  const rootPosM = new Float64Array(FRAMES * 3);
  const rootQuatWxyz = new Float64Array(FRAMES * 4);
  const p0 = engine.profile.defaultPose.rootPosM;
  for (let k = 0; k < FRAMES; k++) {
    const t = k / FPS;
    for (let j = 0; j < J; j++) jointPosRad[k * J + j] = def[j];
    jointPosRad[k * J + L_SHOULDER_PITCH] += -0.6 * Math.sin(Math.PI * t);
    jointPosRad[k * J + R_ELBOW] += 0.4 * Math.sin(2 * Math.PI * t);
    rootPosM.set(p0, k * 3);
    rootQuatWxyz[k * 4] = 1;
  }
  return { fps: FPS, frameCount: FRAMES, rootPosM, rootQuatWxyz, jointPosRad };
}

interface Rollout {
  frames: number;
  q: Float64Array;
  target: Float64Array;
  kp: Float64Array;
  kd: Float64Array;
  outcome: string;
}

function rollout(binding: WbcBinding, controller: Controller, clip: ReturnType<typeof makeClip>): Rollout {
  const L = engine.layout;
  const batches: FrameBatch[] = [];
  const initial: InitialState = {
    rootPosM: [clip.rootPosM[0], clip.rootPosM[1], clip.rootPosM[2]],
    rootQuatWxyz: [1, 0, 0, 0],
    jointPosRad: Array.from(clip.jointPosRad.subarray(0, J)),
    placeOnFloor: true,
  };
  const req: EngineRunRequest = { clip, binding, controller, seed: 1, initial };
  const end = engine.run(req, { emit: (b) => batches.push(b), stopRequested: () => 0 });
  const n = end.frames;
  const out: Rollout = {
    frames: n,
    q: new Float64Array(n * J),
    target: new Float64Array(n * J),
    kp: new Float64Array(n * J),
    kd: new Float64Array(n * J),
    outcome: end.outcome,
  };
  for (const b of batches) {
    for (let i = 0; i < b.count; i++) {
      const k = b.firstFrame + i;
      const o = i * L.width;
      out.q.set(b.data.subarray(o + L.q, o + L.q + J), k * J);
      out.target.set(b.data.subarray(o + L.target, o + L.target + J), k * J);
      out.kp.set(b.data.subarray(o + L.kp, o + L.kp + J), k * J);
      out.kd.set(b.data.subarray(o + L.kd, o + L.kd + J), k * J);
    }
  }
  return out;
}

async function onnxBinding(
  name: string,
  iface: PolicyInterface,
  weights: Float64Array | undefined,
  bias: Float64Array,
) {
  const model = encodeLinearPolicy({ inDim: observationSize(iface), outDim: J, weights, bias });
  return loadOnnxBinding(writeBindingFiles(path.join(root, name), model, iface));
}

describe('ONNX policy in a MuJoCo rollout (embedded simulator engine)', () => {
  it('a linear tracker policy commands what the builtin tracker commands and tracks like it', async () => {
    const clip = makeClip(DEFAULT);
    const iface = standardInterface({ gains: { kp: KP, kd: KD } }, 2);
    const { W, b } = trackerWeights(iface, DEFAULT, 1);
    const binding = await onnxBinding('tracker', iface, W, b);
    const onnx = (await createController(binding, engine.profile)) as Controller & { dispose(): void };
    const r = rollout(binding, onnx, clip);
    onnx.dispose();
    const builtinBinding = makeBuiltinBinding({ gains: { kp: KP, kd: KD } });
    const ref = rollout(builtinBinding, new BuiltinTracker(builtinBinding, J), clip);

    expect(r.outcome).toBe('completed');
    expect(ref.outcome).toBe('completed');
    expect(r.frames).toBe(FRAMES);
    // Targets: the reference of the next frame (float32 policy arithmetic: within 1e-5 rad).
    for (let k = 0; k < FRAMES - 1; k++) {
      for (let j = 0; j < J; j++) {
        expect(Math.abs(r.target[k * J + j] - clip.jointPosRad[(k + 1) * J + j])).toBeLessThan(1e-5);
        expect(Math.abs(r.target[k * J + j] - ref.target[k * J + j])).toBeLessThan(1e-5);
      }
    }
    // Gains from the interface reach the actuators.
    for (let j = 0; j < J; j++) {
      expect(r.kp[5 * J + j]).toBe(KP[j]);
      expect(r.kd[5 * J + j]).toBeCloseTo(KD[j], 12);
    }
    // Executed joints: the waving joints follow the reference, and the ONNX rollout matches the builtin one.
    let maxTrackErr = 0;
    let maxDiff = 0;
    for (let k = 10; k < FRAMES; k++) {
      for (const j of [L_SHOULDER_PITCH, R_ELBOW])
        maxTrackErr = Math.max(maxTrackErr, Math.abs(r.q[k * J + j] - clip.jointPosRad[k * J + j]));
      for (let j = 0; j < J; j++) maxDiff = Math.max(maxDiff, Math.abs(r.q[k * J + j] - ref.q[k * J + j]));
    }
    expect(maxTrackErr).toBeLessThan(0.08);
    expect(maxDiff).toBeLessThan(1e-4); // float32 policy arithmetic vs float64 reference targets
  });

  it('a constant-action policy drives the joints to its own targets, not the reference', async () => {
    const clip = makeClip(DEFAULT);
    const iface = standardInterface({ gains: { kp: KP, kd: KD }, actionScale: 0.5 }, 1);
    const bias = new Float64Array(J);
    bias[L_SHOULDER_PITCH] = 0.8; // → target default + 0.4 rad, while the reference swings to −0.6
    bias[R_ELBOW] = -0.6; //          → default − 0.3 rad
    bias[WAIST_YAW] = 0.2; //         → default + 0.1 rad
    const binding = await onnxBinding('constant', iface, undefined, bias);
    const c = await createOnnxController(binding, engine.profile);
    const r = rollout(binding, c, clip);
    c.dispose();

    expect(r.outcome).toBe('completed');
    const want = Array.from({ length: J }, (_, j) => DEFAULT[j] + 0.5 * Math.fround(bias[j]));
    for (let k = 0; k < FRAMES - 1; k++) for (let j = 0; j < J; j++) expect(r.target[k * J + j]).toBe(want[j]);
    const last = (FRAMES - 1) * J;
    for (const j of [L_SHOULDER_PITCH, R_ELBOW, WAIST_YAW]) {
      expect(Math.abs(r.q[last + j] - want[j])).toBeLessThan(0.05);
      expect(Math.abs(r.q[last + j] - DEFAULT[j])).toBeGreaterThan(0.08);
    }
    // The reference's shoulder swing (−0.6 rad at t = 0.5 s) is not followed.
    const mid = 25 * J + L_SHOULDER_PITCH;
    expect(r.q[mid] - clip.jointPosRad[mid]).toBeGreaterThan(0.7);
  });
});
