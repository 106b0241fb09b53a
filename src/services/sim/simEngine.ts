// One MuJoCo model and its episode loop: the body of a simulator worker (and usable in-thread by
// tests and tools). Physics at the model timestep, control and recording at the binding's
// control rate and 50 Hz. The model's maps are simModelMaps.ts, its floor and contacts
// simGeometry.ts, the MjData it steps simData.ts, the episode loop simEpisodeLoop.ts.
// Determinism: every episode gets a fresh MjData (mj_resetData), the model's actuator gains are
// restored before it, time is k/rate (not accumulated), nothing reads the wall clock (only
// pacing, which changes when frames are delivered, never what they contain).

import type { InitialState } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { checkInitialState } from '../../domain/sim/initialState';
import { physicsProblems, type PhysicsProfile } from '../../domain/robot/physicsProfile';
import { Xoshiro128StarStar } from '../../domain/stats/prng';
import { loadMujocoModel, type LoadedMujocoModel } from '../mujoco/mujocoRuntime';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { SimData } from './simData';
import { runEpisodeLoop, type EngineRunRequest, type EngineSink } from './simEpisodeLoop';
import { SimGeometry } from './simGeometry';
import { NBIAS, NGAIN, readModelMaps, type SimModelMaps } from './simModelMaps';
import { frameLayout, type FrameLayout, type ResolvedInitialState, type WorkerEpisodeEnd } from './simProtocol';

export { describeFailure, RECORD_RATE_HZ } from './simEpisodeLoop';
export type { EngineRunRequest, EngineSink } from './simEpisodeLoop';
export { SimModelError } from './simModelMaps';

export class SimEngine {
  readonly profile: RobotProfile;
  readonly layout: FrameLayout;
  readonly timestepS: number;
  readonly jointCount: number;
  readonly defaultJointPosRad: Float64Array;
  readonly hasImuSensors: boolean;

  private readonly mj: LoadedMujocoModel;
  private readonly maps: SimModelMaps;
  private readonly geometry: SimGeometry;
  private readonly sim: SimData;

  private constructor(
    mj: LoadedMujocoModel,
    profile: RobotProfile,
    readonly modelFile: string,
  ) {
    this.mj = mj;
    this.profile = profile;
    const J = profile.joints.length;
    this.jointCount = J;
    this.layout = frameLayout(J);
    this.timestepS = mj.model.opt.timestep;
    this.maps = readModelMaps(mj, profile, modelFile);
    this.hasImuSensors = this.maps.hasImuSensors;
    this.geometry = new SimGeometry(mj, this.maps.bodyNames, modelFile);
    this.defaultJointPosRad = Float64Array.from(profile.defaultPose.jointPosRad);
    this.sim = new SimData(mj, this.maps, J);
  }

  /** Loads an MJCF scene (with a floor) and its RobotProfile. Throws SimModelError/InputError naming the file. */
  static async load(modelFile: string): Promise<SimEngine> {
    const profile = loadRobotProfile(modelFile);
    const mj = await loadMujocoModel(modelFile);
    try {
      return new SimEngine(mj, profile, modelFile);
    } catch (err) {
      mj.dispose();
      throw err;
    }
  }

  get modelName(): string {
    return this.profile.modelName;
  }
  dispose(): void {
    // (not mj.dispose(): that frees the MjData it was loaded with, replaced since)
    this.sim.data.delete();
    this.mj.model.delete();
  }

  /**
   * Puts the model in the initial state (fresh MjData): root pose, joint angles and velocities,
   * optional seeded joint noise, then the floor solve. Returns the state actually set.
   */
  applyInitialState(initial: InitialState, seed = 0, noiseRad = 0): ResolvedInitialState {
    checkInitialState(initial, this.jointCount);
    if (!(Number.isFinite(noiseRad) && noiseRad >= 0))
      throw new RangeError(`initial joint noise must be ≥ 0 rad, got ${noiseRad}`);
    const { mujoco, model } = this.mj;
    this.sim.freshData();
    const v = this.sim.views;
    const { qposAdr, dofAdr, actOfJoint } = this.maps;
    const J = this.jointCount;
    v.qpos[0] = initial.rootPosM[0];
    v.qpos[1] = initial.rootPosM[1];
    v.qpos[2] = initial.rootPosM[2];
    const [w, x, y, z] = initial.rootQuatWxyz;
    const n = Math.hypot(w, x, y, z);
    v.qpos[3] = w / n;
    v.qpos[4] = x / n;
    v.qpos[5] = y / n;
    v.qpos[6] = z / n;
    const rng = noiseRad > 0 ? new Xoshiro128StarStar(seed) : null;
    for (let j = 0; j < J; j++) {
      let q = initial.jointPosRad[j];
      if (rng) q += (2 * rng.nextFloat() - 1) * noiseRad;
      v.qpos[qposAdr[j]] = q;
      v.qvel[dofAdr[j]] = initial.jointVelRadS ? initial.jointVelRadS[j] : 0;
      v.ctrl[actOfJoint[j]] = q;
    }
    let shift = 0;
    if (initial.placeOnFloor) {
      mujoco.mj_kinematics(model, this.sim.data);
      shift = this.geometry.floorHeight(this.sim.data) - this.lowestContactPoint();
      v.qpos[2] += shift;
    }
    mujoco.mj_forward(model, this.sim.data);
    this.sim.checkViews();
    const q = this.sim.views.qpos;
    return {
      rootPosM: [q[0], q[1], q[2]],
      rootQuatWxyz: [q[3], q[4], q[5], q[6]],
      jointPosRad: Array.from(qposAdr, (a) => q[a]),
      jointVelRadS: Array.from(dofAdr, (a) => this.sim.views.qvel[a]),
      floorShiftM: shift,
    };
  }

  /** Lowest point (world z) of the robot's collision geometry, after mj_kinematics. */
  lowestContactPoint(): number {
    return this.geometry.lowestContactPoint(this.sim.data);
  }

  // -------------------------------------------------------------------------------------------
  // Live stepping (the robot emulator, src/services/robotEmulator/): one physics step at a time,
  // driven from outside, on the MjData that applyInitialState made. The split mirrors run():
  //   liveStep1       mj_step1: kinematics and position/velocity sensors of the current state
  //   liveReadState   the state into a StateFrame (as run() records it)
  //   liveActuate     joint targets and servo gains; liveRootWrench: xfrc_applied on the pelvis
  //   liveStep2       mj_step2: actuation, constraints, integration
  // mj_step1 + mj_step2 compute what mj_step computes, so a loop that issues the same commands
  // at the same physics steps as run() reproduces run()'s trajectory. None of this changes run().

  /** The position servos' own gains per canonical joint: kp (N·m/rad) and kd (N·m·s/rad). */
  modelJointGains(): { kp: Float64Array; kd: Float64Array } {
    const kp = new Float64Array(this.jointCount);
    const kd = new Float64Array(this.jointCount);
    for (let j = 0; j < this.jointCount; j++) {
      const a = this.maps.actOfJoint[j];
      kp[j] = this.maps.gainprm0[a * NGAIN];
      kd[j] = -this.maps.biasprm0[a * NBIAS + 2];
    }
    return { kp, kd };
  }

  /** Each joint's dry friction (dof_frictionloss), N·m, canonical order. */
  jointFrictionLoss(): Float64Array {
    const f = this.mj.model.dof_frictionloss as Float64Array;
    return Float64Array.from(this.maps.dofAdr, (a) => f[a]);
  }

  /** Sets each joint's dry friction (dof_frictionloss), N·m: a change of this engine's model, kept until dispose. */
  setJointFrictionLoss(valuesNm: ArrayLike<number>): void {
    if (valuesNm.length !== this.jointCount)
      throw new RangeError(`friction needs ${this.jointCount} values, got ${valuesNm.length}`);
    const f = this.mj.model.dof_frictionloss as Float64Array;
    for (let j = 0; j < this.jointCount; j++) {
      const v = valuesNm[j];
      if (!(Number.isFinite(v) && v >= 0))
        throw new RangeError(`friction of ${this.profile.joints[j].name} must be a finite number ≥ 0 N·m, got ${v}`);
      f[this.maps.dofAdr[j]] = v;
    }
  }

  /** Simulated time of the live MjData, s. */
  get liveTimeS(): number {
    return this.sim.data.time;
  }

  /** mj_step1 on the live state. */
  liveStep1(): void {
    this.sim.checkViews();
    this.mj.mujoco.mj_step1(this.mj.model, this.sim.data);
  }

  /** The live state (after liveStep1) into `sf`, as run() reads it; time, tick and reference frame are the caller's. */
  liveReadState(sf: StateFrame, rootLinVel: Float64Array, rootAngVel: Float64Array): void {
    this.sim.checkViews();
    this.sim.readState(sf, rootLinVel, rootAngVel);
  }

  /** The live joint angles (qpos of the 29 hinges), rad, canonical order. */
  liveJointPosRad(out: Float64Array): void {
    this.sim.checkViews();
    const q = this.sim.views.qpos;
    for (let j = 0; j < this.jointCount; j++) out[j] = q[this.maps.qposAdr[j]];
  }

  /** Joint targets (ctrl of the position servos) and gains (null = the model's), as run() applies a command. */
  liveActuate(targetRad: ArrayLike<number>, kp: Float64Array | null, kd: Float64Array | null): void {
    this.sim.checkViews();
    this.sim.applyGains(kp, kd);
    const ctrl = this.sim.views.ctrl;
    for (let j = 0; j < this.jointCount; j++) ctrl[this.maps.actOfJoint[j]] = targetRad[j];
  }

  /**
   * Drives each joint's actuator as a G1 motor driver does: force = kp·(qDes − q) − kd·q̇ + biasNm,
   * MuJoCo clamping it to the actuator's force range (the motor's effort limit), with the kd term
   * integrated implicitly as the position servos' own damping is. A caller folds kd·dqDes and the
   * feed-forward torque into biasNm; kp = kd = biasNm = 0 is a motor without torque. The gains stay
   * set until the next liveActuate or liveMotorDrive.
   */
  liveMotorDrive(
    qDesRad: ArrayLike<number>,
    kp: ArrayLike<number>,
    kd: ArrayLike<number>,
    biasNm: ArrayLike<number>,
  ): void {
    this.sim.checkViews();
    const { gainprm, biasprm, ctrl } = this.sim.views;
    for (let j = 0; j < this.jointCount; j++) {
      const a = this.maps.actOfJoint[j];
      gainprm[a * NGAIN] = kp[j];
      biasprm[a * NBIAS] = biasNm[j];
      biasprm[a * NBIAS + 1] = -kp[j];
      biasprm[a * NBIAS + 2] = -kd[j];
      ctrl[a] = qDesRad[j];
    }
    this.sim.gainsModified = true;
  }

  /** Each joint's effort limit (its actuator's force range, symmetric), N·m; Infinity where the model sets none. */
  jointEffortLimitNm(): Float64Array {
    const range = this.mj.model.actuator_forcerange as Float64Array;
    const limited = this.mj.model.actuator_forcelimited as Uint8Array;
    return Float64Array.from(this.maps.actOfJoint, (a) =>
      limited[a] ? Math.min(-range[2 * a], range[2 * a + 1]) : Number.POSITIVE_INFINITY,
    );
  }

  /** The wrench on the root body (world frame: force N, torque N·m), or null for none. */
  liveRootWrench(wrench: ArrayLike<number> | null): void {
    this.sim.checkViews();
    const o = 6 * this.maps.rootBody;
    for (let c = 0; c < 6; c++) this.sim.views.xfrc[o + c] = wrench ? wrench[c] : 0;
  }

  /** qpos and qvel of the live state (views: read them before the next step, never keep them). */
  liveQposQvel(): { qpos: Float64Array; qvel: Float64Array } {
    this.sim.checkViews();
    return { qpos: this.sim.views.qpos, qvel: this.sim.views.qvel };
  }

  /** mj_step2 on the live state (completes the physics step liveStep1 began). */
  liveStep2(): void {
    this.sim.checkViews();
    this.mj.mujoco.mj_step2(this.mj.model, this.sim.data);
  }

  /**
   * Applies a controller's physics profile to the model (timestep, per-joint armature, dry
   * friction, damping, and effort limits as the position servos' force range); returns the
   * function that restores the model's own values. Joints are matched by canonical index.
   */
  applyPhysics(p: PhysicsProfile): () => void {
    const problems = physicsProblems(p, this.jointCount);
    if (problems.length) throw new RangeError(`physics profile ${p.id}: ${problems.join('; ')}`);
    const { model } = this.mj;
    const opt = model.opt;
    const arm = model.dof_armature as Float64Array;
    const fric = model.dof_frictionloss as Float64Array;
    const damp = model.dof_damping as Float64Array;
    const range = model.actuator_forcerange as Float64Array;
    const limited = model.actuator_forcelimited as Uint8Array;
    const saved = {
      timestep: opt.timestep,
      arm: arm.slice(),
      fric: fric.slice(),
      damp: damp.slice(),
      range: range.slice(),
      limited: limited.slice(),
    };
    opt.timestep = p.timestepS;
    for (let j = 0; j < this.jointCount; j++) {
      const d = this.maps.dofAdr[j];
      arm[d] = p.armatureKgM2[j];
      fric[d] = p.frictionLossNm[j];
      damp[d] = p.dampingNmsPerRad[j];
      const a = this.maps.actOfJoint[j];
      range[2 * a] = -p.effortLimitNm[j];
      range[2 * a + 1] = p.effortLimitNm[j];
      limited[a] = 1;
    }
    return () => {
      const o = this.mj.model.opt;
      o.timestep = saved.timestep;
      (this.mj.model.dof_armature as Float64Array).set(saved.arm);
      (this.mj.model.dof_frictionloss as Float64Array).set(saved.fric);
      (this.mj.model.dof_damping as Float64Array).set(saved.damp);
      (this.mj.model.actuator_forcerange as Float64Array).set(saved.range);
      (this.mj.model.actuator_forcelimited as Uint8Array).set(saved.limited);
    };
  }

  /**
   * Runs one episode synchronously from `request.initial` to the end of the clip (or a stop),
   * handing recorded frames to the sink in batches. A controller with a physics profile runs on
   * that physics; the model's own is restored afterwards.
   */
  run(request: EngineRunRequest, sink: EngineSink): WorkerEpisodeEnd {
    const physics = request.controller.physics;
    const restore = physics ? this.applyPhysics(physics) : null;
    try {
      const { mj, sim, geometry, maps, profile, layout, jointCount, defaultJointPosRad } = this;
      const engine = { mj, sim, geometry, maps, profile, layout, jointCount, defaultJointPosRad };
      const applyInitialState = (initial: InitialState, seed?: number, noiseRad?: number) =>
        this.applyInitialState(initial, seed, noiseRad);
      return runEpisodeLoop({ ...engine, applyInitialState }, request, sink, physics);
    } finally {
      restore?.();
    }
  }
}
