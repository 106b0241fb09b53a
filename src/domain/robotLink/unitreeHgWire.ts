// Unitree G1 low-level messages (unitree_hg LowCmd_ / LowState_) as the packed little-endian
// C struct bytes the DDS addon exchanges, and the CRC-32 Unitree's SDK writes into their last
// word. Layout: natural alignment of the idlc-generated C types (x86-64 and aarch64 agree),
// padding bytes zero; LowCmd_ 1004 bytes, LowState_ 2092 bytes (docs/DDS_LINK.md has the
// offsets and their sources).
//
// CRC: CRC-32 with polynomial 0x04C11DB7, initial value 0xFFFFFFFF, no reflection and no final
// XOR (the CRC-32/MPEG-2 parameters), fed the struct as 32-bit little-endian words, each word
// most significant bit first, over every word but the last (the crc field itself): 250 words
// of LowCmd_, 522 of LowState_. Padding bytes take part as zeros.

import { InputError } from '../problems';

export const G1_MOTOR_SLOTS = 35;
export const LOW_CMD_BYTES = 1004;
export const LOW_STATE_BYTES = 2092;
export const MOTOR_CMD_BYTES = 28;
export const MOTOR_STATE_BYTES = 56;
export const LOW_CMD_MOTORS_OFFSET = 4;
export const LOW_CMD_CRC_OFFSET = 1000;
export const LOW_STATE_IMU_OFFSET = 16;
export const LOW_STATE_MOTORS_OFFSET = 72;
export const LOW_STATE_REMOTE_OFFSET = 2032;
export const LOW_STATE_CRC_OFFSET = 2088;
export const WIRELESS_REMOTE_BYTES = 40;

/** Unitree's DDS type and topic names (unitree_sdk2 / unitree_ros2). */
export const LOW_CMD_TYPE_NAME = 'unitree_hg::msg::dds_::LowCmd_';
export const LOW_STATE_TYPE_NAME = 'unitree_hg::msg::dds_::LowState_';
export const LOW_CMD_TOPIC = 'rt/lowcmd';
export const LOW_STATE_TOPIC = 'rt/lowstate';

/** LowCmd_ as arrays per field over the 35 motor slots. */
export interface LowCmd {
  modePr: number;
  modeMachine: number;
  mode: Uint8Array;
  q: Float32Array;
  dq: Float32Array;
  tau: Float32Array;
  kp: Float32Array;
  kd: Float32Array;
  motorReserve: Uint32Array;
  reserve: Uint32Array;
  crc: number;
}

export interface ImuState {
  quaternion: Float32Array;
  gyroscope: Float32Array;
  accelerometer: Float32Array;
  rpy: Float32Array;
  temperature: number;
}

/** LowState_ as arrays per field over the 35 motor slots (temperature 2 per motor, sensor 2, reserve 4). */
export interface LowState {
  version: Uint32Array;
  modePr: number;
  modeMachine: number;
  tick: number;
  imu: ImuState;
  mode: Uint8Array;
  q: Float32Array;
  dq: Float32Array;
  ddq: Float32Array;
  tauEst: Float32Array;
  temperature: Int16Array;
  vol: Float32Array;
  sensor: Uint32Array;
  motorstate: Uint32Array;
  motorReserve: Uint32Array;
  wirelessRemote: Uint8Array;
  reserve: Uint32Array;
  crc: number;
}

export function emptyLowCmd(): LowCmd {
  const n = G1_MOTOR_SLOTS;
  return {
    modePr: 0,
    modeMachine: 0,
    mode: new Uint8Array(n),
    q: new Float32Array(n),
    dq: new Float32Array(n),
    tau: new Float32Array(n),
    kp: new Float32Array(n),
    kd: new Float32Array(n),
    motorReserve: new Uint32Array(n),
    reserve: new Uint32Array(4),
    crc: 0,
  };
}

export function emptyLowState(): LowState {
  const n = G1_MOTOR_SLOTS;
  return {
    version: new Uint32Array(2),
    modePr: 0,
    modeMachine: 0,
    tick: 0,
    imu: {
      quaternion: new Float32Array(4),
      gyroscope: new Float32Array(3),
      accelerometer: new Float32Array(3),
      rpy: new Float32Array(3),
      temperature: 0,
    },
    mode: new Uint8Array(n),
    q: new Float32Array(n),
    dq: new Float32Array(n),
    ddq: new Float32Array(n),
    tauEst: new Float32Array(n),
    temperature: new Int16Array(2 * n),
    vol: new Float32Array(n),
    sensor: new Uint32Array(2 * n),
    motorstate: new Uint32Array(n),
    motorReserve: new Uint32Array(4 * n),
    wirelessRemote: new Uint8Array(WIRELESS_REMOTE_BYTES),
    reserve: new Uint32Array(4),
    crc: 0,
  };
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32/MPEG-2 of a byte stream (poly 0x04C11DB7, init 0xFFFFFFFF, unreflected, no final XOR). */
export function crc32Mpeg2(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]) & 0xff];
  return crc >>> 0;
}

/** Unitree's CRC over the first `wordCount` little-endian 32-bit words of `bytes` (each word MSB first). */
export function unitreeCrc32(bytes: Uint8Array, wordCount: number): number {
  if (!Number.isInteger(wordCount) || wordCount < 0 || wordCount * 4 > bytes.length)
    throw new RangeError(`unitreeCrc32: ${wordCount} words exceed ${bytes.length} bytes`);
  let crc = 0xffffffff;
  for (let w = 0; w < wordCount; w++) {
    const o = w * 4;
    crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[o + 3]) & 0xff];
    crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[o + 2]) & 0xff];
    crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[o + 1]) & 0xff];
    crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[o]) & 0xff];
  }
  return crc >>> 0;
}

function requireLength(bytes: Uint8Array, expected: number, message: string): void {
  if (bytes.length !== expected)
    throw new InputError({ file: message, key: 'length' }, `${bytes.length} bytes; the message is ${expected}`);
}

/** The packed bytes of a LowCmd_ with its CRC computed and written (the `crc` field is ignored). */
export function encodeLowCmd(cmd: LowCmd, out: Uint8Array = new Uint8Array(LOW_CMD_BYTES)): Uint8Array {
  requireLength(out, LOW_CMD_BYTES, 'LowCmd_');
  out.fill(0);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint8(0, cmd.modePr);
  v.setUint8(1, cmd.modeMachine);
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    const o = LOW_CMD_MOTORS_OFFSET + i * MOTOR_CMD_BYTES;
    v.setUint8(o, cmd.mode[i]);
    v.setFloat32(o + 4, cmd.q[i], true);
    v.setFloat32(o + 8, cmd.dq[i], true);
    v.setFloat32(o + 12, cmd.tau[i], true);
    v.setFloat32(o + 16, cmd.kp[i], true);
    v.setFloat32(o + 20, cmd.kd[i], true);
    v.setUint32(o + 24, cmd.motorReserve[i], true);
  }
  for (let k = 0; k < 4; k++) v.setUint32(984 + 4 * k, cmd.reserve[k], true);
  v.setUint32(LOW_CMD_CRC_OFFSET, unitreeCrc32(out, LOW_CMD_CRC_OFFSET / 4), true);
  return out;
}

/** Fields of LowCmd_ bytes (padding ignored). Refuses any length but 1004 before reading. */
export function decodeLowCmd(bytes: Uint8Array): LowCmd {
  requireLength(bytes, LOW_CMD_BYTES, 'LowCmd_');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cmd = emptyLowCmd();
  cmd.modePr = v.getUint8(0);
  cmd.modeMachine = v.getUint8(1);
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    const o = LOW_CMD_MOTORS_OFFSET + i * MOTOR_CMD_BYTES;
    cmd.mode[i] = v.getUint8(o);
    cmd.q[i] = v.getFloat32(o + 4, true);
    cmd.dq[i] = v.getFloat32(o + 8, true);
    cmd.tau[i] = v.getFloat32(o + 12, true);
    cmd.kp[i] = v.getFloat32(o + 16, true);
    cmd.kd[i] = v.getFloat32(o + 20, true);
    cmd.motorReserve[i] = v.getUint32(o + 24, true);
  }
  for (let k = 0; k < 4; k++) cmd.reserve[k] = v.getUint32(984 + 4 * k, true);
  cmd.crc = v.getUint32(LOW_CMD_CRC_OFFSET, true);
  return cmd;
}

/** The packed bytes of a LowState_ with its CRC computed and written (the `crc` field is ignored). */
export function encodeLowState(s: LowState, out: Uint8Array = new Uint8Array(LOW_STATE_BYTES)): Uint8Array {
  requireLength(out, LOW_STATE_BYTES, 'LowState_');
  out.fill(0);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint32(0, s.version[0], true);
  v.setUint32(4, s.version[1], true);
  v.setUint8(8, s.modePr);
  v.setUint8(9, s.modeMachine);
  v.setUint32(12, s.tick, true);
  let o = LOW_STATE_IMU_OFFSET;
  for (const arr of [s.imu.quaternion, s.imu.gyroscope, s.imu.accelerometer, s.imu.rpy])
    for (let k = 0; k < arr.length; k++, o += 4) v.setFloat32(o, arr[k], true);
  v.setInt16(o, s.imu.temperature, true);
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    const m = LOW_STATE_MOTORS_OFFSET + i * MOTOR_STATE_BYTES;
    v.setUint8(m, s.mode[i]);
    v.setFloat32(m + 4, s.q[i], true);
    v.setFloat32(m + 8, s.dq[i], true);
    v.setFloat32(m + 12, s.ddq[i], true);
    v.setFloat32(m + 16, s.tauEst[i], true);
    v.setInt16(m + 20, s.temperature[2 * i], true);
    v.setInt16(m + 22, s.temperature[2 * i + 1], true);
    v.setFloat32(m + 24, s.vol[i], true);
    v.setUint32(m + 28, s.sensor[2 * i], true);
    v.setUint32(m + 32, s.sensor[2 * i + 1], true);
    v.setUint32(m + 36, s.motorstate[i], true);
    for (let k = 0; k < 4; k++) v.setUint32(m + 40 + 4 * k, s.motorReserve[4 * i + k], true);
  }
  out.set(s.wirelessRemote.subarray(0, WIRELESS_REMOTE_BYTES), LOW_STATE_REMOTE_OFFSET);
  for (let k = 0; k < 4; k++) v.setUint32(2072 + 4 * k, s.reserve[k], true);
  v.setUint32(LOW_STATE_CRC_OFFSET, unitreeCrc32(out, LOW_STATE_CRC_OFFSET / 4), true);
  return out;
}

/** Fields of LowState_ bytes (padding ignored). Refuses any length but 2092 before reading. */
export function decodeLowState(bytes: Uint8Array): LowState {
  requireLength(bytes, LOW_STATE_BYTES, 'LowState_');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const s = emptyLowState();
  s.version[0] = v.getUint32(0, true);
  s.version[1] = v.getUint32(4, true);
  s.modePr = v.getUint8(8);
  s.modeMachine = v.getUint8(9);
  s.tick = v.getUint32(12, true);
  let o = LOW_STATE_IMU_OFFSET;
  for (const arr of [s.imu.quaternion, s.imu.gyroscope, s.imu.accelerometer, s.imu.rpy])
    for (let k = 0; k < arr.length; k++, o += 4) arr[k] = v.getFloat32(o, true);
  s.imu.temperature = v.getInt16(o, true);
  for (let i = 0; i < G1_MOTOR_SLOTS; i++) {
    const m = LOW_STATE_MOTORS_OFFSET + i * MOTOR_STATE_BYTES;
    s.mode[i] = v.getUint8(m);
    s.q[i] = v.getFloat32(m + 4, true);
    s.dq[i] = v.getFloat32(m + 8, true);
    s.ddq[i] = v.getFloat32(m + 12, true);
    s.tauEst[i] = v.getFloat32(m + 16, true);
    s.temperature[2 * i] = v.getInt16(m + 20, true);
    s.temperature[2 * i + 1] = v.getInt16(m + 22, true);
    s.vol[i] = v.getFloat32(m + 24, true);
    s.sensor[2 * i] = v.getUint32(m + 28, true);
    s.sensor[2 * i + 1] = v.getUint32(m + 32, true);
    s.motorstate[i] = v.getUint32(m + 36, true);
    for (let k = 0; k < 4; k++) s.motorReserve[4 * i + k] = v.getUint32(m + 40 + 4 * k, true);
  }
  s.wirelessRemote.set(bytes.subarray(LOW_STATE_REMOTE_OFFSET, LOW_STATE_REMOTE_OFFSET + WIRELESS_REMOTE_BYTES));
  for (let k = 0; k < 4; k++) s.reserve[k] = v.getUint32(2072 + 4 * k, true);
  s.crc = v.getUint32(LOW_STATE_CRC_OFFSET, true);
  return s;
}

/** Padding byte ranges [start, end) of each struct: zero in the CRC, whatever a sender left there. */
const LOW_CMD_PADDING: readonly (readonly [number, number])[] = [
  [2, 4],
  ...Array.from({ length: G1_MOTOR_SLOTS }, (_, i) => {
    const o = LOW_CMD_MOTORS_OFFSET + i * MOTOR_CMD_BYTES;
    return [o + 1, o + 4] as const;
  }),
];
const LOW_STATE_PADDING: readonly (readonly [number, number])[] = [
  [10, 12],
  [70, 72],
  ...Array.from({ length: G1_MOTOR_SLOTS }, (_, i) => {
    const o = LOW_STATE_MOTORS_OFFSET + i * MOTOR_STATE_BYTES;
    return [o + 1, o + 4] as const;
  }),
];

function crcWithZeroPadding(bytes: Uint8Array, padding: readonly (readonly [number, number])[], crcOffset: number) {
  const copy = bytes.slice(0, crcOffset);
  for (const [a, b] of padding) copy.fill(0, a, b);
  return unitreeCrc32(copy, crcOffset / 4);
}

/** Whether LowCmd_ bytes carry the CRC Unitree's SDK computes for their fields. */
export function lowCmdCrcValid(bytes: Uint8Array): boolean {
  requireLength(bytes, LOW_CMD_BYTES, 'LowCmd_');
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(LOW_CMD_CRC_OFFSET, true);
  return stored === crcWithZeroPadding(bytes, LOW_CMD_PADDING, LOW_CMD_CRC_OFFSET);
}

/** Whether LowState_ bytes carry the CRC Unitree's SDK computes for their fields. */
export function lowStateCrcValid(bytes: Uint8Array): boolean {
  requireLength(bytes, LOW_STATE_BYTES, 'LowState_');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return v.getUint32(LOW_STATE_CRC_OFFSET, true) === crcWithZeroPadding(bytes, LOW_STATE_PADDING, LOW_STATE_CRC_OFFSET);
}
