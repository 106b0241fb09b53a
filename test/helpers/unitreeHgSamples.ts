import {
  emptyLowCmd,
  emptyLowState,
  G1_MOTOR_SLOTS,
  type LowCmd,
  type LowState,
} from '../../src/domain/robotLink/unitreeHgWire';

// Field values shared by the CRC test and its C reference (test/fixtures/dds/unitreeCrcReference.c):
// every field non-zero somewhere, floats computed in double then rounded to float32 as C's casts do.

export function sampleLowCmd(): LowCmd {
  const c = emptyLowCmd();
  c.modePr = 1;
  c.modeMachine = 5;
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    c.mode[i] = i % 3;
    c.q[i] = 0.1 * i - 1.5;
    c.dq[i] = 0.01 * i;
    c.tau[i] = -0.5 * i;
    c.kp[i] = 40 + i;
    c.kd[i] = 1 + 0.1 * i;
    c.motorReserve[i] = 7 * i;
  }
  for (let k = 0; k < 4; k++) c.reserve[k] = 0x01000000 * (k + 1) + k;
  return c;
}

export function sampleLowState(): LowState {
  const s = emptyLowState();
  s.version[0] = 1;
  s.version[1] = 2;
  s.modePr = 0;
  s.modeMachine = 5;
  s.tick = 123456789;
  for (let k = 0; k < 4; k++) s.imu.quaternion[k] = 0.25 * k + 0.5;
  for (let k = 0; k < 3; k++) {
    s.imu.gyroscope[k] = 0.01 * k - 0.02;
    s.imu.accelerometer[k] = 9.81 * (k === 2 ? 1 : 0) + 0.1 * k;
    s.imu.rpy[k] = -0.03 * k;
  }
  s.imu.temperature = -12;
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    s.mode[i] = i % 2;
    s.q[i] = 0.05 * i;
    s.dq[i] = -0.02 * i;
    s.ddq[i] = 0.001 * i;
    s.tauEst[i] = 0.3 * i - 2;
    s.temperature[2 * i] = 30 + i;
    s.temperature[2 * i + 1] = -40 + i;
    s.vol[i] = 24.5 + 0.1 * i;
    s.sensor[2 * i] = i;
    s.sensor[2 * i + 1] = 1000 + i;
    s.motorstate[i] = 3 * i;
    for (let k = 0; k < 4; k++) s.motorReserve[4 * i + k] = i + k;
  }
  for (let k = 0; k < 40; k++) s.wirelessRemote[k] = 5 * k;
  for (let k = 0; k < 4; k++) s.reserve[k] = 9 - k;
  return s;
}
