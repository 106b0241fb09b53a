import { G1_NUM_JOINTS } from './g1Joints';

// One sample of a robot's measured state, as every backend streams it (DESIGN §3, §5.1).
// Fields mirror Unitree's rt/lowstate plus an optional root pose; arrays are typed and
// preallocated so a 500 Hz stream can reuse frames from a pool instead of allocating.

export interface StateFrame {
  /** Seconds since the episode started (backend clock). */
  timeS: number;
  /** Monotonic sample counter from the source (lowstate tick); gaps reveal dropped frames. */
  tick: number;
  /** Root (pelvis) position, world frame, metres; null when the source has none (no mocap). */
  rootPosM: Float64Array | null;
  /** Root orientation, wxyz; null when unknown. A robot without mocap still has the IMU's. */
  rootQuatWxyz: Float64Array | null;
  /** 29 joint angles, rad, canonical order. */
  jointPosRad: Float64Array;
  /** 29 joint velocities, rad/s. */
  jointVelRadS: Float64Array;
  /** 29 estimated joint torques, N·m. */
  jointTauNm: Float64Array;
  imu: {
    quatWxyz: Float64Array;
    gyroRadS: Float64Array;
    accelMS2: Float64Array;
  };
  /** Bodies in contact with anything other than the floor-by-foot, where the backend knows. */
  contacts: ContactInfo[] | null;
  /** Index of the reference frame this state was commanded against, if any. */
  referenceFrame: number | null;
}

export interface ContactInfo {
  body: string;
  other: string;
  /** Normal force magnitude, N. */
  forceN: number;
}

export function createStateFrame(withRoot = true): StateFrame {
  return {
    timeS: 0,
    tick: 0,
    rootPosM: withRoot ? new Float64Array(3) : null,
    rootQuatWxyz: new Float64Array([1, 0, 0, 0]),
    jointPosRad: new Float64Array(G1_NUM_JOINTS),
    jointVelRadS: new Float64Array(G1_NUM_JOINTS),
    jointTauNm: new Float64Array(G1_NUM_JOINTS),
    imu: { quatWxyz: new Float64Array([1, 0, 0, 0]), gyroRadS: new Float64Array(3), accelMS2: new Float64Array(3) },
    contacts: null,
    referenceFrame: null,
  };
}

/** What a robot's own sensors give: encoders (angle, velocity, torque estimate) and the IMU. */
export interface SensorReadings {
  jointPosRad: ArrayLike<number>;
  jointVelRadS: ArrayLike<number>;
  jointTauNm: ArrayLike<number>;
  imu: { quatWxyz: ArrayLike<number>; gyroRadS: ArrayLike<number>; accelMS2: ArrayLike<number> };
}

/** Copies the sensor readings of `src` into `dst` in place (no allocation); time, tick and root are left as they are. */
export function copySensorReadings(src: SensorReadings, dst: StateFrame): void {
  dst.jointPosRad.set(src.jointPosRad);
  dst.jointVelRadS.set(src.jointVelRadS);
  dst.jointTauNm.set(src.jointTauNm);
  dst.imu.quatWxyz.set(src.imu.quatWxyz);
  dst.imu.gyroRadS.set(src.imu.gyroRadS);
  dst.imu.accelMS2.set(src.imu.accelMS2);
}

/** Deep copy, for consumers that keep frames beyond the listener call. */
export function cloneStateFrame(f: StateFrame): StateFrame {
  return {
    timeS: f.timeS,
    tick: f.tick,
    rootPosM: f.rootPosM ? f.rootPosM.slice() : null,
    rootQuatWxyz: f.rootQuatWxyz ? f.rootQuatWxyz.slice() : null,
    jointPosRad: f.jointPosRad.slice(),
    jointVelRadS: f.jointVelRadS.slice(),
    jointTauNm: f.jointTauNm.slice(),
    imu: { quatWxyz: f.imu.quatWxyz.slice(), gyroRadS: f.imu.gyroRadS.slice(), accelMS2: f.imu.accelMS2.slice() },
    contacts: f.contacts ? f.contacts.map((c) => ({ ...c })) : null,
    referenceFrame: f.referenceFrame,
  };
}
