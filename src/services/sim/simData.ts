// The MjData an engine steps and its typed-array views: a fresh one per episode with the model's
// own servo gains, a command's gains applied to the position servos, and the state read out in
// canonical joint order.

import type { StateFrame } from '../../domain/robot/stateFrame';
import type { LoadedMujocoModel } from '../mujoco/mujocoRuntime';
import { NBIAS, NGAIN, type SimModelMaps } from './simModelMaps';

export type MjData = LoadedMujocoModel['data'];

export interface SimViews {
  qpos: Float64Array;
  qvel: Float64Array;
  ctrl: Float64Array;
  xfrc: Float64Array;
  sensordata: Float64Array;
  qfrcActuator: Float64Array;
  gainprm: Float64Array;
  biasprm: Float64Array;
}

export class SimData {
  data: MjData;
  views!: SimViews;
  /** Set when the servos' gains differ from the model's own (gainprm0/biasprm0). */
  gainsModified = false;

  constructor(
    private readonly mj: LoadedMujocoModel,
    private readonly maps: SimModelMaps,
    private readonly jointCount: number,
  ) {
    this.data = mj.data;
    this.refreshViews();
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
  checkViews(): void {
    if (this.views.qpos.length === 0 || this.views.gainprm.length === 0) this.refreshViews();
  }

  /** A fresh MjData (deleting the previous one), reset, with the model's own actuator gains. */
  freshData(): void {
    const { mujoco, model } = this.mj;
    this.data.delete();
    this.data = new mujoco.MjData(model);
    mujoco.mj_resetData(model, this.data);
    this.refreshViews();
    if (this.gainsModified) {
      this.views.gainprm.set(this.maps.gainprm0);
      this.views.biasprm.set(this.maps.biasprm0);
      this.gainsModified = false;
    }
  }

  /** Applies a command's gains (null = the model's) to the position servos. */
  applyGains(kp: Float64Array | null, kd: Float64Array | null): void {
    const { gainprm, biasprm } = this.views;
    const { gainprm0, biasprm0, actOfJoint } = this.maps;
    if (kp === null && kd === null) {
      if (this.gainsModified) {
        gainprm.set(gainprm0);
        biasprm.set(biasprm0);
        this.gainsModified = false;
      }
      return;
    }
    for (let j = 0; j < this.jointCount; j++) {
      const a = actOfJoint[j];
      const p = kp ? kp[j] : gainprm0[a * NGAIN];
      const d = kd ? kd[j] : -biasprm0[a * NBIAS + 2];
      if (gainprm[a * NGAIN] !== p || biasprm[a * NBIAS + 1] !== -p || biasprm[a * NBIAS + 2] !== -d) {
        gainprm[a * NGAIN] = p;
        biasprm[a * NBIAS + 1] = -p;
        biasprm[a * NBIAS + 2] = -d;
        this.gainsModified = true;
      }
    }
  }

  /** Reads the current state into `sf` (time, tick and reference frame are set by the caller). */
  readState(sf: StateFrame, rootLinVel: Float64Array, rootAngVel: Float64Array): void {
    const { qpos, qvel, qfrcActuator, sensordata } = this.views;
    const { qposAdr, dofAdr } = this.maps;
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
      sf.jointPosRad[j] = qpos[qposAdr[j]];
      sf.jointVelRadS[j] = qvel[dofAdr[j]];
      sf.jointTauNm[j] = qfrcActuator[dofAdr[j]];
    }
    // IMU on the pelvis: orientation of the IMU site, gyro and accelerometer from the model's
    // sensors (site frame); without sensors the gyro is the pelvis angular velocity and the
    // accelerometer reads zero.
    const s = this.maps.imuSiteQuat;
    const iq = sf.imu.quatWxyz;
    iq[0] = rq[0] * s[0] - rq[1] * s[1] - rq[2] * s[2] - rq[3] * s[3];
    iq[1] = rq[0] * s[1] + rq[1] * s[0] + rq[2] * s[3] - rq[3] * s[2];
    iq[2] = rq[0] * s[2] - rq[1] * s[3] + rq[2] * s[0] + rq[3] * s[1];
    iq[3] = rq[0] * s[3] + rq[1] * s[2] - rq[2] * s[1] + rq[3] * s[0];
    const g = sf.imu.gyroRadS;
    const acc = sf.imu.accelMS2;
    if (this.maps.hasImuSensors) {
      for (let c = 0; c < 3; c++) {
        g[c] = sensordata[this.maps.gyroAdr + c];
        acc[c] = sensordata[this.maps.accelAdr + c];
      }
    } else {
      for (let c = 0; c < 3; c++) {
        g[c] = rootAngVel[c];
        acc[c] = 0;
      }
    }
  }
}
