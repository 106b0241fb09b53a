import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { G1_NUM_JOINTS as J } from '../../src/domain/robot/g1Joints';
import type { VelocityPolicyFault } from '../../src/domain/wbc/velocityPolicy';
import { SimEngine } from '../../src/services/sim/simEngine';
import {
  loadStandingPolicy,
  StandingPolicyController,
  StandingPolicyError,
} from '../../src/services/wbc/standingPolicy';
import { MENAGERIE_SCENE, OUR_G1, sharedData } from '../helpers/sharedData';

// unitree_rl_lab's released velocity policy at zero command on the floor in real MuJoCo (no
// gantry, no assist), started from its own default pose: it must stand for 20 s. Negative
// controls: the same run with joint_ids_map read the other way, or the history interleaved frame
// by frame instead of term by term, falls.

const POLICY = sharedData('policies/unitree_rl_lab_g1_velocity_v0');
const DURATION_S = 20;

export interface StandResult {
  minPelvisZM: number;
  maxTiltRad: number;
  finalPelvisZM: number;
  fellAtS: number | null;
  startPelvisZM: number;
  error?: string;
}

function tiltOf(w: number, x: number, y: number): number {
  void w;
  return Math.acos(Math.max(-1, Math.min(1, 1 - 2 * (x * x + y * y))));
}

function stand(engine: SimEngine, fault: VelocityPolicyFault | null): StandResult {
  const loaded = loadStandingPolicy(POLICY);
  const ctl = new StandingPolicyController(loaded, fault ? { fault } : {});
  const restore = engine.applyPhysics(ctl.physics);
  try {
    const pose = new Array<number>(J).fill(0);
    for (let i = 0; i < J; i++) pose[loaded.spec.jointIdsMap[i]] = loaded.spec.defaultJointPosRad[i];
    engine.applyInitialState({
      rootPosM: [0, 0, 0.8],
      rootQuatWxyz: [1, 0, 0, 0],
      jointPosRad: pose,
      placeOnFloor: true,
    });
    const sf = createStateFrame(true);
    const lin = new Float64Array(3);
    const ang = new Float64Array(3);
    const target = Float64Array.from(pose);
    const zero = new Float64Array(J);
    const S = ctl.physics.decimation;
    const steps = Math.round(DURATION_S / ctl.physics.timestepS);
    let minZ = Infinity;
    let maxTilt = 0;
    let fellAtS: number | null = null;
    let startZ = NaN;
    let z = NaN;
    for (let n = 0; n < steps; n++) {
      engine.liveStep1();
      if (n % S === 0) {
        engine.liveReadState(sf, lin, ang);
        if (n === 0) ctl.reset(sf);
        try {
          ctl.step(sf, target);
        } catch (e) {
          // A non-finite action (the simulation blew up under it) ends the run: counted as a fall.
          if (!(e instanceof StandingPolicyError)) throw e;
          return {
            minPelvisZM: minZ,
            maxTiltRad: maxTilt,
            finalPelvisZM: z,
            fellAtS: fellAtS ?? n * ctl.physics.timestepS,
            startPelvisZM: startZ,
            error: e.message,
          };
        }
      }
      engine.liveMotorDrive(target, ctl.kp, ctl.kd, zero);
      engine.liveStep2();
      const { qpos } = engine.liveQposQvel();
      z = qpos[2];
      if (n === 0) startZ = z;
      const tilt = tiltOf(qpos[3], qpos[4], qpos[5]);
      minZ = Math.min(minZ, z);
      maxTilt = Math.max(maxTilt, tilt);
      if (fellAtS === null && (z < 0.5 || tilt > 0.8)) fellAtS = (n + 1) * ctl.physics.timestepS;
    }
    return { minPelvisZM: minZ, maxTiltRad: maxTilt, finalPelvisZM: z, fellAtS, startPelvisZM: startZ };
  } finally {
    restore();
    ctl.dispose();
  }
}

describe.each([
  ['our G1 (assets/, the emulator default)', OUR_G1],
  ["MuJoCo Menagerie's G1 (scene.xml)", MENAGERIE_SCENE],
])('unitree_rl_lab velocity policy at zero command on the floor: %s', (_name, model) => {
  let engine: SimEngine;
  beforeAll(async () => {
    engine = await SimEngine.load(model);
  });
  afterAll(() => engine?.dispose());

  it(`stands ${DURATION_S} s from its default pose`, () => {
    const r = stand(engine, null);
    console.log(`[standing] ${_name}: ${JSON.stringify(r)}`);
    expect(r.fellAtS).toBeNull();
    expect(r.minPelvisZM).toBeGreaterThan(r.startPelvisZM - 0.1);
    expect(r.maxTiltRad).toBeLessThan(0.2);
  });

  it('negative control: joint_ids_map read the other way round falls', () => {
    const r = stand(engine, 'inverse_joint_ids_map');
    console.log(`[standing] ${_name} inverse_joint_ids_map: ${JSON.stringify(r)}`);
    expect(r.fellAtS).not.toBeNull();
  });

  it('negative control: a frame-wise history falls', () => {
    const r = stand(engine, 'frame_wise_history');
    console.log(`[standing] ${_name} frame_wise_history: ${JSON.stringify(r)}`);
    expect(r.fellAtS).not.toBeNull();
  });
});
