// One MuJoCo model and its episode loop: the body of a simulator worker (and usable in-thread by
// tests and tools). Physics at the model timestep, control and recording at the binding's
// control rate and 50 Hz.
//
// Episode loop, control step n = 0..N (N = (K − 1)·M control steps, K recorded frames at 50 Hz,
// M = control rate / 50, S = physics steps per control step):
//   mj_step1                 kinematics, collisions and position/velocity sensors of the state
//                            at t_n (the accelerometer reads the previous physics step's value)
//   read the state           into a preallocated StateFrame; record it when n is a 50 Hz frame
//                            (and push it to the streaming hard-failure detector)
//   controller.step          joint targets (+ optional PD gains) → ctrl (+ gainprm/biasprm)
//   root assist              (builtin binding) xfrc_applied on the pelvis, re-evaluated before
//                            every physics step with the reference pose interpolated at that step
//   mj_step2                 completes the first physics step; contacts and their forces of the
//                            recorded frame are read here
//   mj_step × (S − 1)        the rest of the control interval
// Determinism: every episode gets a fresh MjData (mj_resetData), the model's actuator gains are
// restored before it, time is k/rate (not accumulated), nothing reads the wall clock (only
// pacing, which changes when frames are delivered, never what they contain).

import type { InitialState } from '../../domain/backend/backend';
import { createStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import { MB_METRICS_1, StreamingPoseMetrics, type HardFailure } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { checkInitialState, initialStateFromClipFrame } from '../../domain/sim/initialState';
import { liftedRootPositions, referenceLiftOf } from '../../domain/sim/referencePlacement';
import { physicsProblems, type PhysicsProfile } from '../../domain/robot/physicsProfile';
import { RootAssistController } from '../../domain/sim/rootAssist';
import { Xoshiro128StarStar } from '../../domain/stats/prng';
import {
  createControlCommand,
  type ControlObservation,
  type ControlReference,
  type Controller,
} from '../../domain/wbc/controller';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { loadMujocoModel, type LoadedMujocoModel } from '../mujoco/mujocoRuntime';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import {
  frameLayout,
  STOP_NONE,
  STOP_OUTCOMES,
  type BatchContact,
  type FrameBatch,
  type FrameLayout,
  type ResolvedInitialState,
  type WorkerEpisodeEnd,
} from './simProtocol';

/** The recording rate, Hz: the metric contract's common-timeline rate. */
export const RECORD_RATE_HZ = MB_METRICS_1.rateHz;

const mjOBJ_BODY = 1;
const mjOBJ_SENSOR = 20;
const mjGEOM_PLANE = 0;
const mjGEOM_SPHERE = 2;
const mjGEOM_CAPSULE = 3;
const mjGEOM_ELLIPSOID = 4;
const mjGEOM_CYLINDER = 5;
const mjGEOM_BOX = 6;
const mjGEOM_MESH = 7;
const mjJNT_FREE = 0;
const NGAIN = 10;
const NBIAS = 10;

export class SimModelError extends Error {
  override readonly name = 'SimModelError';
}

export interface EngineSink {
  /** Receives a batch of recorded frames; the buffers are handed over (the engine keeps none). */
  emit(batch: FrameBatch): void;
  /** A STOP_* code, checked at every control step (0 = go on). */
  stopRequested(): number;
  /** Called after every recorded frame with its index (fault injection, progress). */
  onFrame?(frame: number): void;
}

export interface EngineRunRequest {
  clip: Pick<MotionClip, 'fps' | 'frameCount' | 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad'> & Partial<MotionClip>;
  binding: WbcBinding;
  controller: Controller;
  seed: number;
  initial: InitialState;
  framesPerBatch?: number;
  initialJointNoiseRad?: number;
}

interface Views {
  qpos: Float64Array;
  qvel: Float64Array;
  ctrl: Float64Array;
  xfrc: Float64Array;
  sensordata: Float64Array;
  qfrcActuator: Float64Array;
  gainprm: Float64Array;
  biasprm: Float64Array;
}

export class SimEngine {
  readonly profile: RobotProfile;
  readonly layout: FrameLayout;
  readonly timestepS: number;
  readonly jointCount: number;
  readonly defaultJointPosRad: Float64Array;
  readonly hasImuSensors: boolean;

  private readonly mj: LoadedMujocoModel;
  private data: LoadedMujocoModel['data'];
  private views!: Views;
  // model maps (canonical joint j)
  private readonly qposAdr: Int32Array;
  private readonly dofAdr: Int32Array;
  private readonly actOfJoint: Int32Array;
  private readonly gainprm0: Float64Array;
  private readonly biasprm0: Float64Array;
  private readonly rootBody: number;
  private readonly gyroAdr: number;
  private readonly accelAdr: number;
  private readonly imuSiteQuat: Float64Array;
  // geometry (floor solve, contacts)
  private readonly geomBody: Int32Array;
  private readonly geomType: Int32Array;
  private readonly geomSize: Float64Array;
  private readonly geomCollides: Uint8Array;
  private readonly geomMesh: Int32Array;
  private readonly meshVertAdr: Int32Array;
  private readonly meshVertNum: Int32Array;
  private readonly meshVert: Float32Array;
  private readonly floorGeoms: number[];
  private readonly footBodies: Set<number>;
  private readonly bodyNames: string[];
  private readonly geomNames: string[];
  private readonly pyramidal: boolean;
  private gainsModified = false;

  private constructor(
    mj: LoadedMujocoModel,
    profile: RobotProfile,
    readonly modelFile: string,
  ) {
    this.mj = mj;
    this.data = mj.data;
    this.profile = profile;
    const { mujoco, model } = mj;
    const J = profile.joints.length;
    this.jointCount = J;
    this.layout = frameLayout(J);
    this.timestepS = model.opt.timestep;
    const where = modelFile;
    if (model.nq !== 7 + J || model.nv !== 6 + J) {
      throw new SimModelError(
        `${where}: the simulator needs a floating base plus ${J} hinge joints (nq ${7 + J}, nv ${6 + J}); the model has nq ${model.nq}, nv ${model.nv}`,
      );
    }
    // body ids: profile body i is MuJoCo body i + 1; check by name.
    const bodyNames = ['world'];
    for (let b = 1; b < model.nbody; b++) bodyNames.push(mujoco.mj_id2name(model, mjOBJ_BODY, b) ?? `body${b}`);
    profile.bodies.forEach((b, i) => {
      if (bodyNames[i + 1] !== b.name)
        throw new SimModelError(`${where}: body order differs between MuJoCo and the model reader at "${b.name}"`);
    });
    this.bodyNames = bodyNames;
    this.rootBody = profile.rootBodyIndex + 1;
    const jntType = model.jnt_type as Int32Array;
    const bodyJntAdr = model.body_jntadr as Int32Array;
    const rootJoint = bodyJntAdr[this.rootBody];
    const jntQposAdr = model.jnt_qposadr as Int32Array;
    const jntDofAdr = model.jnt_dofadr as Int32Array;
    if (
      rootJoint < 0 ||
      jntType[rootJoint] !== mjJNT_FREE ||
      jntQposAdr[rootJoint] !== 0 ||
      jntDofAdr[rootJoint] !== 0
    ) {
      throw new SimModelError(
        `${where}: the root body "${profile.bodies[profile.rootBodyIndex].name}" must carry the model's first joint, a free joint`,
      );
    }
    this.qposAdr = new Int32Array(J);
    this.dofAdr = new Int32Array(J);
    this.actOfJoint = new Int32Array(J).fill(-1);
    const jointIdOf = new Map<number, number>();
    profile.joints.forEach((jt, j) => {
      const id = mujoco.mj_name2id(model, 3, jt.name);
      if (id < 0) throw new SimModelError(`${where}: MuJoCo has no joint "${jt.name}"`);
      this.qposAdr[j] = jntQposAdr[id];
      this.dofAdr[j] = jntDofAdr[id];
      jointIdOf.set(id, j);
    });
    const trnid = model.actuator_trnid as Int32Array;
    const gain = model.actuator_gainprm as Float64Array;
    const bias = model.actuator_biasprm as Float64Array;
    for (let a = 0; a < model.nu; a++) {
      const j = jointIdOf.get(trnid[2 * a]);
      if (j === undefined) continue;
      const isPositionServo = gain[a * NGAIN] > 0 && bias[a * NBIAS] === 0 && bias[a * NBIAS + 1] === -gain[a * NGAIN];
      if (isPositionServo && this.actOfJoint[j] < 0) this.actOfJoint[j] = a;
    }
    const missing = profile.joints.filter((_, j) => this.actOfJoint[j] < 0).map((jt) => jt.name);
    if (missing.length > 0)
      throw new SimModelError(
        `${where}: no position actuator drives ${missing.join(', ')} (the simulator commands joints through position servos)`,
      );
    this.gainprm0 = Float64Array.from(gain);
    this.biasprm0 = Float64Array.from(bias);
    // IMU
    const sensorAdr = model.sensor_adr as Int32Array;
    const gyroId = mujoco.mj_name2id(model, mjOBJ_SENSOR, 'imu-pelvis-angular-velocity');
    const accelId = mujoco.mj_name2id(model, mjOBJ_SENSOR, 'imu-pelvis-linear-acceleration');
    this.gyroAdr = gyroId >= 0 ? sensorAdr[gyroId] : -1;
    this.accelAdr = accelId >= 0 ? sensorAdr[accelId] : -1;
    this.hasImuSensors = this.gyroAdr >= 0 && this.accelAdr >= 0;
    this.imuSiteQuat = new Float64Array([1, 0, 0, 0]);
    const siteId = mujoco.mj_name2id(model, 6, 'imu_in_pelvis');
    if (siteId >= 0 && (model.site_bodyid as Int32Array)[siteId] === this.rootBody)
      this.imuSiteQuat.set((model.site_quat as Float64Array).subarray(4 * siteId, 4 * siteId + 4));
    // geometry
    this.geomBody = Int32Array.from(model.geom_bodyid as Int32Array);
    this.geomType = Int32Array.from(model.geom_type as Int32Array);
    this.geomSize = Float64Array.from(model.geom_size as Float64Array);
    const contype = model.geom_contype as Int32Array;
    const conaff = model.geom_conaffinity as Int32Array;
    this.geomCollides = Uint8Array.from({ length: model.ngeom }, (_, g) =>
      contype[g] !== 0 || conaff[g] !== 0 ? 1 : 0,
    );
    this.geomMesh = Int32Array.from(model.geom_dataid as Int32Array);
    this.meshVertAdr = Int32Array.from(model.mesh_vertadr as Int32Array);
    this.meshVertNum = Int32Array.from(model.mesh_vertnum as Int32Array);
    this.meshVert = Float32Array.from(model.mesh_vert as Float32Array);
    this.floorGeoms = [];
    for (let g = 0; g < model.ngeom; g++)
      if (this.geomBody[g] === 0 && this.geomType[g] === mjGEOM_PLANE && this.geomCollides[g]) this.floorGeoms.push(g);
    if (this.floorGeoms.length === 0) {
      throw new SimModelError(
        `${where}: the model has no floor (a collision plane on the world body); for MuJoCo Menagerie's G1 load scene.xml, which includes g1.xml and adds the floor`,
      );
    }
    this.geomNames = [];
    for (let g = 0; g < model.ngeom; g++) this.geomNames.push(mujoco.mj_id2name(model, 5, g) ?? '');
    this.footBodies = new Set(
      ['left_ankle_roll_link', 'right_ankle_roll_link'].map((n) => bodyNames.indexOf(n)).filter((b) => b > 0),
    );
    this.pyramidal = model.opt.cone === 0;
    const d = profile.defaultPose.jointPosRad;
    this.defaultJointPosRad = Float64Array.from(d);
    this.refreshViews();
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
    this.data.delete();
    this.mj.model.delete();
  }

  private refreshViews(): void {
    const { model } = this.mj;
    const d = this.data;
    this.views = {
      qpos: d.qpos as Float64Array,
      qvel: d.qvel as Float64Array,
      ctrl: d.ctrl as Float64Array,
      xfrc: d.xfrc_applied as Float64Array,
      sensordata: d.sensordata as Float64Array,
      qfrcActuator: d.qfrc_actuator as Float64Array,
      gainprm: model.actuator_gainprm as Float64Array,
      biasprm: model.actuator_biasprm as Float64Array,
    };
  }

  /** WASM memory growth detaches typed-array views; re-fetch them when that happened. */
  private checkViews(): void {
    if (this.views.qpos.length === 0 || this.views.gainprm.length === 0) this.refreshViews();
  }

  /** A fresh MjData (deleting the previous one), reset, with the model's own actuator gains. */
  private freshData(): void {
    const { mujoco, model } = this.mj;
    this.data.delete();
    this.data = new mujoco.MjData(model);
    mujoco.mj_resetData(model, this.data);
    this.refreshViews();
    if (this.gainsModified) {
      this.views.gainprm.set(this.gainprm0);
      this.views.biasprm.set(this.biasprm0);
      this.gainsModified = false;
    }
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
    this.freshData();
    const v = this.views;
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
      v.qpos[this.qposAdr[j]] = q;
      v.qvel[this.dofAdr[j]] = initial.jointVelRadS ? initial.jointVelRadS[j] : 0;
      v.ctrl[this.actOfJoint[j]] = q;
    }
    let shift = 0;
    if (initial.placeOnFloor) {
      mujoco.mj_kinematics(model, this.data);
      shift = this.floorHeight() - this.lowestContactPoint();
      v.qpos[2] += shift;
    }
    mujoco.mj_forward(model, this.data);
    this.checkViews();
    const q = this.views.qpos;
    return {
      rootPosM: [q[0], q[1], q[2]],
      rootQuatWxyz: [q[3], q[4], q[5], q[6]],
      jointPosRad: Array.from(this.qposAdr, (a) => q[a]),
      jointVelRadS: Array.from(this.dofAdr, (a) => this.views.qvel[a]),
      floorShiftM: shift,
    };
  }

  private floorHeight(): number {
    const xpos = this.data.geom_xpos as Float64Array;
    let h = -Infinity;
    for (const g of this.floorGeoms) h = Math.max(h, xpos[3 * g + 2]);
    return h;
  }

  /** Lowest point (world z) of the robot's collision geometry, after mj_kinematics. */
  lowestContactPoint(): number {
    const xpos = this.data.geom_xpos as Float64Array;
    const xmat = this.data.geom_xmat as Float64Array;
    let low = Infinity;
    for (let g = 0; g < this.geomBody.length; g++) {
      if (this.geomBody[g] === 0 || !this.geomCollides[g]) continue;
      const cz = xpos[3 * g + 2];
      const m6 = xmat[9 * g + 6];
      const m7 = xmat[9 * g + 7];
      const m8 = xmat[9 * g + 8];
      const s0 = this.geomSize[3 * g];
      const s1 = this.geomSize[3 * g + 1];
      const s2 = this.geomSize[3 * g + 2];
      let z: number;
      switch (this.geomType[g]) {
        case mjGEOM_SPHERE:
          z = cz - s0;
          break;
        case mjGEOM_CAPSULE:
          z = cz - Math.abs(m8) * s1 - s0;
          break;
        case mjGEOM_CYLINDER:
          z = cz - Math.abs(m8) * s1 - s0 * Math.sqrt(Math.max(0, 1 - m8 * m8));
          break;
        case mjGEOM_ELLIPSOID:
          z = cz - Math.sqrt((m6 * s0) ** 2 + (m7 * s1) ** 2 + (m8 * s2) ** 2);
          break;
        case mjGEOM_BOX:
          z = cz - Math.abs(m6) * s0 - Math.abs(m7) * s1 - Math.abs(m8) * s2;
          break;
        case mjGEOM_MESH: {
          const mesh = this.geomMesh[g];
          if (mesh < 0) continue;
          const a = 3 * this.meshVertAdr[mesh];
          const nv = this.meshVertNum[mesh];
          let mn = Infinity;
          const vert = this.meshVert;
          for (let i = 0; i < nv; i++) {
            const o = a + 3 * i;
            const vz = m6 * vert[o] + m7 * vert[o + 1] + m8 * vert[o + 2];
            if (vz < mn) mn = vz;
          }
          z = cz + mn;
          break;
        }
        default:
          continue;
      }
      if (z < low) low = z;
    }
    if (low === Infinity) throw new SimModelError(`${this.modelFile}: the robot has no collision geometry to stand on`);
    return low;
  }

  /** Applies a command's gains (null = the model's) to the position servos. */
  private applyGains(kp: Float64Array | null, kd: Float64Array | null): void {
    const { gainprm, biasprm } = this.views;
    if (kp === null && kd === null) {
      if (this.gainsModified) {
        gainprm.set(this.gainprm0);
        biasprm.set(this.biasprm0);
        this.gainsModified = false;
      }
      return;
    }
    for (let j = 0; j < this.jointCount; j++) {
      const a = this.actOfJoint[j];
      const p = kp ? kp[j] : this.gainprm0[a * NGAIN];
      const d = kd ? kd[j] : -this.biasprm0[a * NBIAS + 2];
      if (gainprm[a * NGAIN] !== p || biasprm[a * NBIAS + 1] !== -p || biasprm[a * NBIAS + 2] !== -d) {
        gainprm[a * NGAIN] = p;
        biasprm[a * NBIAS + 1] = -p;
        biasprm[a * NBIAS + 2] = -d;
        this.gainsModified = true;
      }
    }
  }

  /** Reads the current state into `sf` (time, tick and reference frame are set by the caller). */
  private readState(sf: StateFrame, rootLinVel: Float64Array, rootAngVel: Float64Array): void {
    const { qpos, qvel, qfrcActuator, sensordata } = this.views;
    const rp = sf.rootPosM!;
    rp[0] = qpos[0];
    rp[1] = qpos[1];
    rp[2] = qpos[2];
    const rq = sf.rootQuatWxyz!;
    rq[0] = qpos[3];
    rq[1] = qpos[4];
    rq[2] = qpos[5];
    rq[3] = qpos[6];
    for (let c = 0; c < 3; c++) {
      rootLinVel[c] = qvel[c];
      rootAngVel[c] = qvel[3 + c];
    }
    const J = this.jointCount;
    for (let j = 0; j < J; j++) {
      sf.jointPosRad[j] = qpos[this.qposAdr[j]];
      sf.jointVelRadS[j] = qvel[this.dofAdr[j]];
      sf.jointTauNm[j] = qfrcActuator[this.dofAdr[j]];
    }
    // IMU on the pelvis: orientation of the IMU site, gyro and accelerometer from the model's
    // sensors (site frame); without sensors the gyro is the pelvis angular velocity and the
    // accelerometer reads zero.
    const s = this.imuSiteQuat;
    const iq = sf.imu.quatWxyz;
    iq[0] = rq[0] * s[0] - rq[1] * s[1] - rq[2] * s[2] - rq[3] * s[3];
    iq[1] = rq[0] * s[1] + rq[1] * s[0] + rq[2] * s[3] - rq[3] * s[2];
    iq[2] = rq[0] * s[2] - rq[1] * s[3] + rq[2] * s[0] + rq[3] * s[1];
    iq[3] = rq[0] * s[3] + rq[1] * s[2] - rq[2] * s[1] + rq[3] * s[0];
    const g = sf.imu.gyroRadS;
    const acc = sf.imu.accelMS2;
    if (this.hasImuSensors) {
      for (let c = 0; c < 3; c++) {
        g[c] = sensordata[this.gyroAdr + c];
        acc[c] = sensordata[this.accelAdr + c];
      }
    } else {
      for (let c = 0; c < 3; c++) {
        g[c] = rootAngVel[c];
        acc[c] = 0;
      }
    }
  }

  /** Contacts other than a foot on the floor, with normal force (after mj_step2 or mj_forward). */
  private readContacts(frame: number, out: BatchContact[]): void {
    const d = this.data;
    const ncon = d.ncon;
    if (ncon === 0) return;
    const vec = d.contact;
    const efc = d.efc_force as Float64Array;
    for (let i = 0; i < ncon; i++) {
      const c = vec.get(i);
      if (!c) continue;
      const g1 = c.geom1;
      const g2 = c.geom2;
      const b1 = this.geomBody[g1];
      const b2 = this.geomBody[g2];
      const foot1 = this.footBodies.has(b1);
      const foot2 = this.footBodies.has(b2);
      const floorFoot = (b1 === 0 && foot2) || (b2 === 0 && foot1);
      if (!floorFoot && c.efc_address >= 0) {
        let f = 0;
        const adr = c.efc_address;
        if (this.pyramidal) {
          const rows = c.dim === 1 ? 1 : 2 * (c.dim - 1);
          for (let r = 0; r < rows; r++) f += efc[adr + r];
        } else f = efc[adr];
        const robot = b1 === 0 ? b2 : b1;
        const other = b1 === 0 ? g1 : b2 === 0 ? g2 : -1;
        out.push({
          frame,
          body: this.bodyNames[robot],
          other: other >= 0 ? this.geomNames[other] || 'world' : this.bodyNames[b2 === robot ? b1 : b2],
          forceN: f,
        });
      }
      c.delete();
    }
    vec.delete();
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
      const a = this.actOfJoint[j];
      kp[j] = this.gainprm0[a * NGAIN];
      kd[j] = -this.biasprm0[a * NBIAS + 2];
    }
    return { kp, kd };
  }

  /** Each joint's dry friction (dof_frictionloss), N·m, canonical order. */
  jointFrictionLoss(): Float64Array {
    const f = this.mj.model.dof_frictionloss as Float64Array;
    return Float64Array.from(this.dofAdr, (a) => f[a]);
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
      f[this.dofAdr[j]] = v;
    }
  }

  /** Simulated time of the live MjData, s. */
  get liveTimeS(): number {
    return this.data.time;
  }

  /** mj_step1 on the live state. */
  liveStep1(): void {
    this.checkViews();
    this.mj.mujoco.mj_step1(this.mj.model, this.data);
  }

  /** The live state (after liveStep1) into `sf`, as run() reads it; time, tick and reference frame are the caller's. */
  liveReadState(sf: StateFrame, rootLinVel: Float64Array, rootAngVel: Float64Array): void {
    this.checkViews();
    this.readState(sf, rootLinVel, rootAngVel);
  }

  /** The live joint angles (qpos of the 29 hinges), rad, canonical order. */
  liveJointPosRad(out: Float64Array): void {
    this.checkViews();
    const q = this.views.qpos;
    for (let j = 0; j < this.jointCount; j++) out[j] = q[this.qposAdr[j]];
  }

  /** Joint targets (ctrl of the position servos) and gains (null = the model's), as run() applies a command. */
  liveActuate(targetRad: ArrayLike<number>, kp: Float64Array | null, kd: Float64Array | null): void {
    this.checkViews();
    this.applyGains(kp, kd);
    const ctrl = this.views.ctrl;
    for (let j = 0; j < this.jointCount; j++) ctrl[this.actOfJoint[j]] = targetRad[j];
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
    this.checkViews();
    const { gainprm, biasprm, ctrl } = this.views;
    for (let j = 0; j < this.jointCount; j++) {
      const a = this.actOfJoint[j];
      gainprm[a * NGAIN] = kp[j];
      biasprm[a * NBIAS] = biasNm[j];
      biasprm[a * NBIAS + 1] = -kp[j];
      biasprm[a * NBIAS + 2] = -kd[j];
      ctrl[a] = qDesRad[j];
    }
    this.gainsModified = true;
  }

  /** Each joint's effort limit (its actuator's force range, symmetric), N·m; Infinity where the model sets none. */
  jointEffortLimitNm(): Float64Array {
    const range = this.mj.model.actuator_forcerange as Float64Array;
    const limited = this.mj.model.actuator_forcelimited as Uint8Array;
    return Float64Array.from(this.actOfJoint, (a) =>
      limited[a] ? Math.min(-range[2 * a], range[2 * a + 1]) : Number.POSITIVE_INFINITY,
    );
  }

  /** The wrench on the root body (world frame: force N, torque N·m), or null for none. */
  liveRootWrench(wrench: ArrayLike<number> | null): void {
    this.checkViews();
    const o = 6 * this.rootBody;
    for (let c = 0; c < 6; c++) this.views.xfrc[o + c] = wrench ? wrench[c] : 0;
  }

  /** qpos and qvel of the live state (views: read them before the next step, never keep them). */
  liveQposQvel(): { qpos: Float64Array; qvel: Float64Array } {
    this.checkViews();
    return { qpos: this.views.qpos, qvel: this.views.qvel };
  }

  /** mj_step2 on the live state (completes the physics step liveStep1 began). */
  liveStep2(): void {
    this.checkViews();
    this.mj.mujoco.mj_step2(this.mj.model, this.data);
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
      const d = this.dofAdr[j];
      arm[d] = p.armatureKgM2[j];
      fric[d] = p.frictionLossNm[j];
      damp[d] = p.dampingNmsPerRad[j];
      const a = this.actOfJoint[j];
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
      return this.runEpisode(request, sink, physics);
    } finally {
      restore?.();
    }
  }

  private runEpisode(request: EngineRunRequest, sink: EngineSink, physics: PhysicsProfile | null): WorkerEpisodeEnd {
    const { mujoco, model } = this.mj;
    const { binding, controller } = request;
    const J = this.jointCount;
    const L = this.layout;
    const dt = model.opt.timestep;
    const controlRate = binding.controlRateHz;
    const M = Math.round(controlRate / RECORD_RATE_HZ);
    if (!(M >= 1 && Math.abs(M * RECORD_RATE_HZ - controlRate) < 1e-9)) {
      throw new RangeError(
        `binding ${binding.id}@${binding.version}: control rate ${controlRate} Hz is not a multiple of the ${RECORD_RATE_HZ} Hz recording rate`,
      );
    }
    const S = Math.round(1 / (controlRate * dt));
    if (!(S >= 1 && Math.abs(S * controlRate * dt - 1) < 1e-9)) {
      throw new RangeError(
        `binding ${binding.id}@${binding.version}: control period 1/${controlRate} s is not a whole number of ${dt} s physics steps`,
      );
    }
    if (physics && S !== physics.decimation) {
      throw new RangeError(
        `binding ${binding.id}@${binding.version}: ${S} physics steps per control step, its physics profile ${physics.id} says ${physics.decimation}`,
      );
    }
    const clip = {
      name: 'clip',
      id: 'clip',
      provenance: { file: '', format: 'motionbench-json', fileSha256: '', fpsSource: 'file' },
      warnings: [],
      ...request.clip,
    } as MotionClip;
    const ref50 = resampleClip(clip, RECORD_RATE_HZ);
    const refCtl = controlRate === RECORD_RATE_HZ ? ref50 : resampleClip(clip, controlRate);
    const K = ref50.frameCount;
    const N = (K - 1) * M;
    const reference: ControlReference = {
      rateHz: controlRate,
      frameCount: refCtl.frameCount,
      rootPosM: refCtl.rootPosM,
      rootQuatWxyz: refCtl.rootQuatWxyz,
      jointPosRad: refCtl.jointPosRad,
    };
    const lastCtl = refCtl.frameCount - 1;

    // The reference as placed for this run (src/domain/sim/referencePlacement.ts): the floor solve
    // of its own frame 0, before (and independent of) the robot's start, which is set from scratch
    // next. The hard-failure test below compares with it; the controller reads the clip unplaced.
    const referenceLiftM = referenceLiftOf(
      this.applyInitialState(initialStateFromClipFrame(clip, { withJointVelocities: false })).floorShiftM,
    );
    this.applyInitialState(request.initial, request.seed, request.initialJointNoiseRad ?? 0);
    controller.reset();
    const data = this.data;
    const sf = createStateFrame(true);
    const rootLinVel = new Float64Array(3);
    const rootAngVel = new Float64Array(3);
    const cmd = createControlCommand(J);
    const obs: ControlObservation = {
      step: 0,
      timeS: 0,
      state: sf,
      reference,
      referenceFrame: 0,
      defaultJointPosRad: this.defaultJointPosRad,
      rootLinVelMps: rootLinVel,
    };
    const assist =
      binding.kind === 'builtin' && binding.rootAssist && binding.rootAssist.kpNPerM > 0
        ? new RootAssistController(binding.rootAssist)
        : null;
    const wrench = new Float64Array(6);
    const metrics = new StreamingPoseMetrics(MB_METRICS_1, this.profile, undefined, { expectedFrames: K });
    const execPose = { rootPosM: sf.rootPosM!, rootQuatWxyz: sf.rootQuatWxyz!, jointPosRad: sf.jointPosRad };
    const refPose = {
      rootPosM: referenceLiftM === 0 ? ref50.rootPosM : liftedRootPositions(ref50.rootPosM, referenceLiftM),
      rootQuatWxyz: ref50.rootQuatWxyz,
      jointPosRad: ref50.jointPosRad,
    };
    const perBatch = Math.max(1, Math.floor(request.framesPerBatch ?? 10));
    const W = L.width;
    let batch = new Float64Array(perBatch * W);
    let batchCount = 0;
    let batchFirst = 0;
    let contacts: BatchContact[] = [];
    let recorded = 0;
    const flush = () => {
      if (batchCount === 0) return;
      sink.emit({ data: batch, count: batchCount, firstFrame: batchFirst, contacts });
      batch = new Float64Array(perBatch * W);
      batchCount = 0;
      contacts = [];
    };
    const root = 6 * this.rootBody;
    let end: Omit<WorkerEpisodeEnd, 'frames' | 'plannedFrames' | 'simSeconds' | 'failure' | 'referenceLiftM'> | null =
      null;

    for (let n = 0; n <= N; n++) {
      this.checkViews();
      const v = this.views;
      mujoco.mj_step1(model, data);
      const expectedTime = n * S * dt;
      if (!(Math.abs(data.time - expectedTime) <= 1e-9 * Math.max(1, expectedTime))) {
        end = {
          outcome: 'infrastructure_error',
          reason: `the simulation became unstable at t = ${(n / controlRate).toFixed(3)} s (MuJoCo reset its state)`,
        };
        break;
      }
      this.readState(sf, rootLinVel, rootAngVel);
      const record = n % M === 0;
      const k = n / M;
      const tS = n / controlRate;
      sf.timeS = tS;
      sf.tick = n;
      sf.referenceFrame = Math.min(n, lastCtl);
      if (!isFiniteState(sf, rootLinVel, rootAngVel)) {
        end = {
          outcome: 'infrastructure_error',
          reason: `the simulation produced a non-finite state at t = ${tS.toFixed(3)} s`,
        };
        break;
      }
      // Command (not after the last frame).
      if (n < N) {
        obs.step = n;
        obs.timeS = tS;
        obs.referenceFrame = sf.referenceFrame;
        try {
          controller.step(obs, cmd);
        } catch (err) {
          // A controller that cannot produce a command (a policy's non-finite action) ends the
          // episode as an infrastructure error; the simulator itself is sound.
          end = {
            outcome: 'infrastructure_error',
            reason: `the controller failed at t = ${tS.toFixed(3)} s: ${(err as Error)?.message ?? String(err)}`,
          };
          break;
        }
        const tgt = cmd.jointTargetRad;
        let bad = -1;
        for (let j = 0; j < J; j++) if (!Number.isFinite(tgt[j])) bad = j;
        if (bad >= 0) {
          end = {
            outcome: 'infrastructure_error',
            reason: `the controller produced a non-finite target for ${this.profile.joints[bad].name} at t = ${tS.toFixed(3)} s`,
          };
          break;
        }
        this.applyGains(cmd.kp, cmd.kd);
        for (let j = 0; j < J; j++) v.ctrl[this.actOfJoint[j]] = tgt[j];
        if (assist) {
          assist.setSegment(
            refCtl.rootPosM,
            refCtl.rootQuatWxyz,
            Math.min(n, lastCtl),
            Math.min(n + 1, lastCtl),
            controlRate,
          );
          assist.compute(0, v.qpos, v.qvel, wrench, 0);
          for (let c = 0; c < 6; c++) v.xfrc[root + c] = wrench[c];
        }
      }
      if (record) {
        // Hard-failure detection and live metrics on the 50 Hz timeline.
        metrics.pushPose(refPose, k, execPose, 0);
        const o = batchCount * W;
        if (batchCount === 0) batchFirst = k;
        batch[o + L.time] = k / RECORD_RATE_HZ + 0;
        for (let c = 0; c < 3; c++) {
          batch[o + L.rootPos + c] = sf.rootPosM![c] + 0;
          batch[o + L.rootLinVel + c] = rootLinVel[c] + 0;
          batch[o + L.rootAngVel + c] = rootAngVel[c] + 0;
          batch[o + L.gyro + c] = sf.imu.gyroRadS[c];
          batch[o + L.accel + c] = sf.imu.accelMS2[c];
        }
        for (let c = 0; c < 4; c++) {
          batch[o + L.rootQuat + c] = sf.rootQuatWxyz![c] + 0;
          batch[o + L.imuQuat + c] = sf.imu.quatWxyz[c];
        }
        const gp = v.gainprm;
        const bp = v.biasprm;
        for (let j = 0; j < J; j++) {
          batch[o + L.q + j] = sf.jointPosRad[j] + 0;
          batch[o + L.dq + j] = sf.jointVelRadS[j] + 0;
          batch[o + L.tau + j] = sf.jointTauNm[j];
          const a = this.actOfJoint[j];
          batch[o + L.target + j] = n < N ? cmd.jointTargetRad[j] : v.ctrl[a];
          batch[o + L.kp + j] = gp[a * NGAIN];
          batch[o + L.kd + j] = -bp[a * NBIAS + 2];
        }
        batch[o + L.tick] = k;
        batch[o + L.refFrame] = k;
        for (let c = 0; c < 6; c++) batch[o + L.wrench + c] = assist && n < N ? wrench[c] : NaN;
        const live = metrics.reducer;
        batch[o + L.liveMpjpe] = live.frameMpjpeLMm ?? NaN;
        batch[o + L.liveJointRmse] = live.frameJointRmseRad ?? NaN;
        batch[o + L.liveFailFrame] = live.firstFailureFrame;
        batchCount++;
        recorded = k + 1;
      }
      const stop = sink.stopRequested();
      if (n === N || stop !== STOP_NONE) {
        if (record) {
          mujoco.mj_forward(model, data);
          this.readContacts(k, contacts);
        }
        if (stop !== STOP_NONE) end = { outcome: STOP_OUTCOMES[stop] ?? 'aborted_by_operator', reason: 'stopped' };
        if (record) {
          if (batchCount === perBatch) flush();
          sink.onFrame?.(k);
        }
        break;
      }
      // Physics for this control interval.
      mujoco.mj_step2(model, data);
      if (record) {
        this.readContacts(k, contacts);
        if (batchCount === perBatch) flush();
        sink.onFrame?.(k);
      }
      for (let s = 1; s < S; s++) {
        if (assist) {
          assist.compute(s / S, v.qpos, v.qvel, wrench, 0);
          for (let c = 0; c < 6; c++) v.xfrc[root + c] = wrench[c];
        }
        mujoco.mj_step(model, data);
      }
    }
    flush();
    const result = metrics.result();
    const failure = result.failure.available ? result.failure.value : null;
    if (!end) {
      end = failure
        ? {
            outcome: 'hard_failure',
            reason: `hard failure at frame ${failure.frame} (t = ${failure.timeS.toFixed(2)} s): ${describeFailure(failure)}`,
          }
        : { outcome: 'completed', reason: 'reached the end of the clip' };
    }
    return {
      ...end,
      frames: recorded,
      plannedFrames: K,
      simSeconds: recorded > 0 ? (recorded - 1) / RECORD_RATE_HZ : 0,
      failure,
      referenceLiftM,
    };
  }
}

export function describeFailure(f: HardFailure): string {
  const unit = f.condition === 'root_orientation' ? 'rad' : 'm';
  return `${f.condition} of ${f.body}: ${f.error.toFixed(3)} ${unit} > ${f.threshold} ${unit}`;
}

function isFiniteState(sf: StateFrame, lin: Float64Array, ang: Float64Array): boolean {
  let s = 0;
  for (let c = 0; c < 3; c++) s += sf.rootPosM![c] + lin[c] + ang[c];
  for (let c = 0; c < 4; c++) s += sf.rootQuatWxyz![c];
  for (let j = 0; j < sf.jointPosRad.length; j++) s += sf.jointPosRad[j] + sf.jointVelRadS[j];
  return Number.isFinite(s);
}
