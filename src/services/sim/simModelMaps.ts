// What the simulator needs to know of a loaded MuJoCo model, per canonical joint of the
// RobotProfile: where its angle and velocity live, the position servo that drives it and that
// servo's own gains, the root body, the pelvis IMU. Reading them checks the model is one the
// simulator can drive (a floating base plus hinge joints, each driven by a position servo).

import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { LoadedMujocoModel } from '../mujoco/mujocoRuntime';

/** Stride of actuator_gainprm and actuator_biasprm per actuator (MuJoCo's mjNGAIN, mjNBIAS). */
export const NGAIN = 10;
export const NBIAS = 10;

export const mjOBJ_BODY = 1;
const mjOBJ_JOINT = 3;
const mjOBJ_SITE = 6;
const mjOBJ_SENSOR = 20;
const mjJNT_FREE = 0;

export class SimModelError extends Error {
  override readonly name = 'SimModelError';
}

export interface SimModelMaps {
  /** qpos address of each canonical joint. */
  readonly qposAdr: Int32Array;
  /** qvel (dof) address of each canonical joint. */
  readonly dofAdr: Int32Array;
  /** The position servo (actuator index) of each canonical joint. */
  readonly actOfJoint: Int32Array;
  /** The model's own actuator_gainprm and actuator_biasprm, restored before every episode. */
  readonly gainprm0: Float64Array;
  readonly biasprm0: Float64Array;
  /** MuJoCo body index of the root (profile body i is MuJoCo body i + 1; 0 is the world). */
  readonly rootBody: number;
  /** sensordata addresses of the pelvis gyro and accelerometer, −1 when the model has none. */
  readonly gyroAdr: number;
  readonly accelAdr: number;
  readonly hasImuSensors: boolean;
  /** Orientation of the IMU site in the pelvis (wxyz; identity when the model has no such site). */
  readonly imuSiteQuat: Float64Array;
  /** MuJoCo body names by index ('world' first). */
  readonly bodyNames: string[];
}

/** The joint, actuator and IMU maps of `mj`; a model the simulator cannot drive is a SimModelError naming `where`. */
export function readModelMaps(mj: LoadedMujocoModel, profile: RobotProfile, where: string): SimModelMaps {
  const { mujoco, model } = mj;
  const J = profile.joints.length;
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
  const rootBody = profile.rootBodyIndex + 1;
  const jntType = model.jnt_type as Int32Array;
  const bodyJntAdr = model.body_jntadr as Int32Array;
  const rootJoint = bodyJntAdr[rootBody];
  const jntQposAdr = model.jnt_qposadr as Int32Array;
  const jntDofAdr = model.jnt_dofadr as Int32Array;
  if (rootJoint < 0 || jntType[rootJoint] !== mjJNT_FREE || jntQposAdr[rootJoint] !== 0 || jntDofAdr[rootJoint] !== 0) {
    throw new SimModelError(
      `${where}: the root body "${profile.bodies[profile.rootBodyIndex].name}" must carry the model's first joint, a free joint`,
    );
  }
  const qposAdr = new Int32Array(J);
  const dofAdr = new Int32Array(J);
  const actOfJoint = new Int32Array(J).fill(-1);
  const jointIdOf = new Map<number, number>();
  profile.joints.forEach((jt, j) => {
    const id = mujoco.mj_name2id(model, mjOBJ_JOINT, jt.name);
    if (id < 0) throw new SimModelError(`${where}: MuJoCo has no joint "${jt.name}"`);
    qposAdr[j] = jntQposAdr[id];
    dofAdr[j] = jntDofAdr[id];
    jointIdOf.set(id, j);
  });
  const trnid = model.actuator_trnid as Int32Array;
  const gain = model.actuator_gainprm as Float64Array;
  const bias = model.actuator_biasprm as Float64Array;
  for (let a = 0; a < model.nu; a++) {
    const j = jointIdOf.get(trnid[2 * a]);
    if (j === undefined) continue;
    const isPositionServo = gain[a * NGAIN] > 0 && bias[a * NBIAS] === 0 && bias[a * NBIAS + 1] === -gain[a * NGAIN];
    if (isPositionServo && actOfJoint[j] < 0) actOfJoint[j] = a;
  }
  const missing = profile.joints.filter((_, j) => actOfJoint[j] < 0).map((jt) => jt.name);
  if (missing.length > 0)
    throw new SimModelError(
      `${where}: no position actuator drives ${missing.join(', ')} (the simulator commands joints through position servos)`,
    );
  // IMU
  const sensorAdr = model.sensor_adr as Int32Array;
  const gyroId = mujoco.mj_name2id(model, mjOBJ_SENSOR, 'imu-pelvis-angular-velocity');
  const accelId = mujoco.mj_name2id(model, mjOBJ_SENSOR, 'imu-pelvis-linear-acceleration');
  const gyroAdr = gyroId >= 0 ? sensorAdr[gyroId] : -1;
  const accelAdr = accelId >= 0 ? sensorAdr[accelId] : -1;
  const imuSiteQuat = new Float64Array([1, 0, 0, 0]);
  const siteId = mujoco.mj_name2id(model, mjOBJ_SITE, 'imu_in_pelvis');
  if (siteId >= 0 && (model.site_bodyid as Int32Array)[siteId] === rootBody)
    imuSiteQuat.set((model.site_quat as Float64Array).subarray(4 * siteId, 4 * siteId + 4));
  return {
    qposAdr,
    dofAdr,
    actOfJoint,
    gainprm0: Float64Array.from(gain),
    biasprm0: Float64Array.from(bias),
    rootBody,
    gyroAdr,
    accelAdr,
    hasImuSensors: gyroAdr >= 0 && accelAdr >= 0,
    imuSiteQuat,
    bodyNames,
  };
}
