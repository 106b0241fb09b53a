import type { StateFrame } from '../robot/stateFrame';
import type { RobotEmulatorProfile } from './robotEmulatorProfile';
import type { GaussianNoise } from './sensorNoise';

// What the emulated robot's sensors make of its true state (docs/ROBOT_EMULATOR.md §4, "How the
// noise reaches each reading"). Applied to every 500 Hz sample, in place, in this order:
//   joint angle     + N(0, qRad²), then quantised to whole multiples of qStepRad (an encoder
//                   reports counts: its analogue noise comes before the count)
//   joint velocity  + N(0, dqRadS²)
//   gyro            + N(0, gyroRadS²) per axis
//   accelerometer   + N(0, accelMS2²) per axis
//   attitude        rotated by a random small rotation, N(0, attitudeRad²) per axis
//   then            (lowstateFloat32) every joint and IMU reading rounded to float32, the type
//                   a G1's lowstate carries them in
// A σ of 0 draws nothing, so the order (and a zero term) keeps a profile's noise stream the same
// as before a term was added.

/** Rounds each element of `a` to the nearest whole multiple of `step` (nothing when step = 0). */
export function quantize(a: Float64Array, step: number): void {
  if (step === 0) return;
  for (let i = 0; i < a.length; i++) a[i] = Math.round(a[i] / step) * step;
}

/** The sensor model of `profile` on the readings of `frame` (a copy of the true state), in place. */
export function applySensorModel(
  frame: StateFrame,
  profile: Pick<RobotEmulatorProfile, 'encoderNoise' | 'imuNoise' | 'lowstateFloat32'>,
  noise: GaussianNoise,
): void {
  const { encoderNoise: e, imuNoise: i } = profile;
  noise.perturb(frame.jointPosRad, e.qRad);
  quantize(frame.jointPosRad, e.qStepRad);
  noise.perturb(frame.jointVelRadS, e.dqRadS);
  noise.perturb(frame.imu.gyroRadS, i.gyroRadS);
  noise.perturb(frame.imu.accelMS2, i.accelMS2);
  noise.perturbAttitude(frame.imu.quatWxyz, i.attitudeRad);
  if (profile.lowstateFloat32)
    for (const a of [
      frame.jointPosRad,
      frame.jointVelRadS,
      frame.jointTauNm,
      frame.imu.quatWxyz,
      frame.imu.gyroRadS,
      frame.imu.accelMS2,
    ])
      roundToFloat32(a);
}

/** Rounds each element of `a` to the nearest float32 (Math.fround), in place. */
export function roundToFloat32(a: Float64Array): void {
  for (let i = 0; i < a.length; i++) a[i] = Math.fround(a[i]);
}
