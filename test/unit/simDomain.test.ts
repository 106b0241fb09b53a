// Pure parts of the simulator: initial states (clip frame, calibration), the builtin binding and
// its version, the builtin tracker, root-assist wrench, trajectory-hash layout, clip windows.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { quatHeading, quatMul } from '../../src/domain/math/quat';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import {
  ASSIST_NOMINAL_INERTIA_KGM2,
  ASSIST_NOMINAL_MASS_KG,
  BUILTIN_LABEL,
  builtinBehaviourJson,
  makeBuiltinBinding,
  rootAssistFromStiffness,
} from '../../src/domain/sim/builtinBinding';
import { BuiltinTracker } from '../../src/domain/sim/builtinTracker';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { initialStateFromCalibration, initialStateFromClipFrame, withHeading } from '../../src/domain/sim/initialState';
import { RootAssistController, quatToRotvecInto } from '../../src/domain/sim/rootAssist';
import { TrajectoryHasher, trajectoryFrameWidth } from '../../src/domain/sim/trajectoryHash';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { createControlCommand } from '../../src/domain/wbc/controller';
import type { QuatWxyz } from '../../src/domain/units';

const J = 29;

function clipOf(N: number, fps = 30): MotionClip {
  const rootPosM = new Float64Array(3 * N);
  const rootQuatWxyz = new Float64Array(4 * N);
  const jointPosRad = new Float64Array(J * N);
  for (let k = 0; k < N; k++) {
    rootPosM.set([0.5 + 0.01 * k, -0.2, 0.78], 3 * k);
    const yaw = 0.7 + 0.01 * k;
    rootQuatWxyz.set([Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)], 4 * k);
    for (let j = 0; j < J; j++) jointPosRad[J * k + j] = 0.01 * j + 0.02 * k;
  }
  return {
    id: 'clip-test',
    name: 'test',
    fps,
    frameCount: N,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    provenance: { file: 'test.csv', format: 'lafan1-csv', fileSha256: '0', fpsSource: 'user' },
    warnings: [],
  };
}

const euler = (yaw: number, pitch: number, roll: number): QuatWxyz => {
  const qz: QuatWxyz = [Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)];
  const qy: QuatWxyz = [Math.cos(pitch / 2), 0, Math.sin(pitch / 2), 0];
  const qx: QuatWxyz = [Math.cos(roll / 2), Math.sin(roll / 2), 0, 0];
  return quatMul(quatMul(qz, qy), qx);
};

/** Largest component difference of two rotations (q and −q are the same rotation). */
const rotDiff = (a: readonly number[], b: readonly number[]): number =>
  Math.min(Math.max(...a.map((v, i) => Math.abs(v - b[i]))), Math.max(...a.map((v, i) => Math.abs(v + b[i]))));

describe('initial states', () => {
  it('from a clip frame: pose of the frame, joint velocities by central differences', () => {
    const clip = clipOf(10);
    const s = initialStateFromClipFrame(clip, { frame: 3 });
    expect(s.rootPosM).toEqual([0.53, -0.2, 0.78]);
    expect(s.jointPosRad[5]).toBeCloseTo(0.05 + 0.06, 15);
    expect(s.jointVelRadS![5]).toBeCloseTo(0.02 * 30, 12);
    expect(s.placeOnFloor).toBe(true);
    expect(initialStateFromClipFrame(clip, { withJointVelocities: false }).jointVelRadS).toBeUndefined();
    expect(() => initialStateFromClipFrame(clip, { frame: 10 })).toThrow(/outside the clip's frames 0..9/);
  });

  it('withHeading keeps roll and pitch and replaces the heading', () => {
    for (const [y, p, r] of [
      [2.5, 0.1, -0.2],
      [-1, -0.3, 0.05],
      [0, 0, 0],
    ]) {
      const q = withHeading(euler(y, p, r), 0.4);
      const expected = euler(0.4, p, r);
      expect(rotDiff(expected, q)).toBeLessThan(1e-12);
      expect(quatHeading(q)).toBeCloseTo(0.4, 12);
    }
  });

  it('from a calibration: roll/pitch/joints measured; x, y, heading from the clip; still; on the floor', () => {
    const clip = clipOf(10);
    const joints = Array.from({ length: J }, (_, j) => 0.1 * Math.sin(j));
    const s = initialStateFromCalibration({ rootQuatWxyz: euler(-2, 0.05, -0.03), jointPosRad: joints }, clip);
    expect(s.rootPosM[0]).toBe(0.5);
    expect(s.rootPosM[1]).toBe(-0.2);
    expect(rotDiff(euler(0.7, 0.05, -0.03), s.rootQuatWxyz)).toBeLessThan(1e-12);
    expect(s.jointPosRad).toEqual(joints);
    expect(s.jointVelRadS).toEqual(new Array(J).fill(0));
    expect(s.placeOnFloor).toBe(true);
    // with motion capture the measured position and heading are kept
    const m = initialStateFromCalibration(
      { rootQuatWxyz: euler(-2, 0.05, -0.03), jointPosRad: joints, rootPosM: [3, 4, 0.8] },
      clip,
    );
    expect(m.rootPosM).toEqual([3, 4, 0.8]);
    expect(quatHeading(m.rootQuatWxyz)).toBeCloseTo(-2, 12);
    expect(() => initialStateFromCalibration({ rootQuatWxyz: [1, 0, 0, 0], jointPosRad: [0, 1] }, clip)).toThrow(
      /2 joint angles/,
    );
  });
});

describe('builtin binding', () => {
  it('derives the assist gains from the stiffness by fixed rules', () => {
    const a = rootAssistFromStiffness(3000);
    expect(a.kpNPerM).toBe(3000);
    expect(a.kdNsPerM).toBeCloseTo(2 * Math.sqrt(3000 * ASSIST_NOMINAL_MASS_KG), 12);
    expect(a.kpNmPerRad).toBeCloseTo(600, 12);
    expect(a.kdNmsPerRad).toBeCloseTo(2 * Math.sqrt(600 * ASSIST_NOMINAL_INERTIA_KGM2), 12);
    expect(() => rootAssistFromStiffness(-1)).toThrow(/≥ 0/);
  });

  it('versions by behaviour: gains and assist change the version, labels say what it is', () => {
    const plain = makeBuiltinBinding();
    const same = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(0) });
    const assisted = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
    const assisted2 = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3001) });
    const stiff = makeBuiltinBinding({ gains: { kp: 300, kd: 10 } });
    expect(plain.version).toMatch(/^pd1-[0-9a-f]{10}$/);
    expect(same.version).toBe(plain.version);
    expect(new Set([plain.version, assisted.version, assisted2.version, stiff.version]).size).toBe(4);
    expect(plain.label).toBe(BUILTIN_LABEL);
    expect(assisted.label).toBe(`${BUILTIN_LABEL} (root assist 3000 N/m)`);
    expect(makeBuiltinBinding({ label: 'stiff PD' }).label).toBe(`stiff PD (${BUILTIN_LABEL})`);
    expect(makeBuiltinBinding({ versionPrefix: 'lab-3' }).version).toBe(`lab-3+${plain.version.slice(4)}`);
    expect(JSON.parse(builtinBehaviourJson(assisted)).root_assist.kp_n_per_m).toBe(3000);
  });

  it('the tracker commands reference frame k + 1 with the binding gains', () => {
    const b = makeBuiltinBinding({ gains: { kp: Array.from({ length: J }, (_, j) => 100 + j), kd: 5 } });
    const tracker = new BuiltinTracker(b, J);
    const ref = clipOf(4, 50);
    const cmd = createControlCommand(J);
    const obs = {
      step: 0,
      timeS: 0,
      state: createStateFrame(),
      reference: {
        rateHz: 50,
        frameCount: 4,
        rootPosM: ref.rootPosM,
        rootQuatWxyz: ref.rootQuatWxyz,
        jointPosRad: ref.jointPosRad,
      },
      referenceFrame: 1,
      defaultJointPosRad: new Float64Array(J),
      rootLinVelMps: null,
    };
    tracker.step(obs, cmd);
    expect(Array.from(cmd.jointTargetRad)).toEqual(Array.from(ref.jointPosRad.subarray(2 * J, 3 * J)));
    expect(cmd.kp![7]).toBe(107);
    expect(cmd.kd![7]).toBe(5);
    tracker.step({ ...obs, referenceFrame: 3 }, cmd);
    expect(Array.from(cmd.jointTargetRad)).toEqual(Array.from(ref.jointPosRad.subarray(3 * J, 4 * J)));
    expect(cmd.kp).not.toBeNull();
    const model = new BuiltinTracker(makeBuiltinBinding(), J);
    model.step(obs, cmd);
    expect(cmd.kp).toBeNull();
    expect(() => new BuiltinTracker(makeBuiltinBinding({ gains: { kp: [1, 2], kd: 1 } }), J)).toThrow(
      /gains.kp has 2 values/,
    );
  });
});

describe('root assist', () => {
  const gains = rootAssistFromStiffness(3000);
  const pos = Float64Array.of(0, 0, 0.8, 0, 0, 0.8);
  const quat = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0);

  it('no wrench at the reference pose with the reference velocity', () => {
    const a = new RootAssistController(gains);
    a.setSegment(pos, quat, 0, 1, 50);
    const out = new Float64Array(6);
    a.compute(0.5, [0, 0, 0.8, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], out, 0);
    for (const v of out) expect(Math.abs(v)).toBeLessThan(1e-12);
  });

  it('a spring-damper towards the interpolated reference pose', () => {
    const p = Float64Array.of(0, 0, 0.8, 0.1, 0, 0.8);
    const yaw = 0.2;
    const q = Float64Array.of(1, 0, 0, 0, Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2));
    const a = new RootAssistController(gains);
    a.setSegment(p, q, 0, 1, 50);
    const out = new Float64Array(6);
    // at α = 0.5 the reference is at x = 0.05, yaw 0.1, moving at 5 m/s and 10 rad/s
    a.compute(0.5, [0, 0, 0.7, 1, 0, 0, 0], [5, 0, 0, 0, 0, 10], out, 0);
    expect(out[0]).toBeCloseTo(3000 * 0.05, 9);
    expect(out[1]).toBeCloseTo(0, 12);
    expect(out[2]).toBeCloseTo(3000 * 0.1, 9);
    expect(out[5]).toBeCloseTo(600 * 0.1, 9);
    // velocity error damps: moving at the wrong speed
    a.compute(0, [0, 0, 0.8, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0], out, 0);
    expect(out[1]).toBeCloseTo(-gains.kdNsPerM, 9);
    // the angular velocity is read in the pelvis frame and rotated to the world: a pelvis yawed
    // by 90° spinning about its local x spins about world y
    const c = Math.SQRT1_2;
    a.setSegment(pos, Float64Array.of(c, 0, 0, c, c, 0, 0, c), 0, 1, 50);
    a.compute(0, [0, 0, 0.8, c, 0, 0, c], [0, 0, 0, 1, 0, 0], out, 0);
    expect(out[3]).toBeCloseTo(0, 9);
    expect(out[4]).toBeCloseTo(-gains.kdNmsPerRad, 9);
  });

  it('rotation vectors, including the shortest arc and tiny angles', () => {
    const out = new Float64Array(3);
    quatToRotvecInto([Math.cos(0.5), Math.sin(0.5), 0, 0], 0, out, 0);
    expect(out[0]).toBeCloseTo(1, 14);
    quatToRotvecInto([-Math.cos(0.5), -Math.sin(0.5), 0, 0], 0, out, 0);
    expect(out[0]).toBeCloseTo(1, 14);
    quatToRotvecInto([1, 0, 0, 1e-14], 0, out, 0);
    expect(out[2]).toBe(2e-14);
  });
});

describe('trajectory hash layout', () => {
  it('is sha256 of little-endian float64 (time, root pos, quat, q, root lin/ang vel, dq) per frame, −0 as +0', () => {
    expect(trajectoryFrameWidth(J)).toBe(72);
    const frames = [0, 1].map((k) => ({
      timeS: k / 50,
      rootPosM: [0.1 * k, -0, 0.8],
      rootQuatWxyz: [1, 0, 0, 0],
      jointPosRad: Array.from({ length: J }, (_, j) => j * 0.01 + k),
      rootLinVelMps: [0, 0.5, 0],
      rootAngVelRadS: [0.1, 0, 0],
      jointVelRadS: Array.from({ length: J }, (_, j) => -j),
    }));
    const h = new TrajectoryHasher(J);
    frames.forEach((f) => h.add(f));
    const buf = Buffer.alloc(2 * 72 * 8);
    let o = 0;
    for (const f of frames) {
      for (const v of [
        f.timeS,
        ...f.rootPosM,
        ...f.rootQuatWxyz,
        ...f.jointPosRad,
        ...f.rootLinVelMps,
        ...f.rootAngVelRadS,
        ...f.jointVelRadS,
      ]) {
        buf.writeDoubleLE(v === 0 ? 0 : v, o);
        o += 8;
      }
    }
    expect(h.digestHex()).toBe(createHash('sha256').update(buf).digest('hex'));
    expect(() => new TrajectoryHasher(J).add({ ...frames[0], jointPosRad: [1] })).toThrow(
      /joint positions has 1 values/,
    );
  });
});

describe('clipHead', () => {
  it('keeps frames 0..floor(s·fps) with a new id', () => {
    const c = clipOf(100);
    const h = clipHead(c, 1);
    expect(h.frameCount).toBe(31);
    expect(Array.from(h.jointPosRad)).toEqual(Array.from(c.jointPosRad.subarray(0, 31 * J)));
    expect(h.id).toMatch(/^clip-[0-9a-f]{16}$/);
    expect(clipHead(c, 100)).toBe(c);
  });
});
