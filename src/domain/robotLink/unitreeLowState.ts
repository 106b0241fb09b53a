import { createStateFrame, type StateFrame } from '../robot/stateFrame';
import { G1_BRIDGE_QUAT_TOLERANCE } from '../bridge/g1BridgeContract';
import { G1_NUM_JOINTS } from '../robot/g1Joints';

// Unitree's ROS 2 lowstate (`unitree_hg/msg/LowState`, the G1's `/lowstate` as unitree_ros2
// publishes it and foxglove_bridge relays it) → the console's StateFrame (pure: a decoded
// message object in, a frame or a located refusal out). The bytes are decoded elsewhere
// (src/services/robotLink/ros2LowStateDecoder.ts) from the message definition the server
// advertises, never from a byte layout written here; this file checks that the advertised
// definition is the unitree_hg one we know (the fields we read, with their types, in their
// order) and maps the decoded values. docs/ROS2_LINK.md has the table and its sources:
//
//   motor_state[i].q / dq / tau_est, i = 0…28 → jointPosRad / jointVelRadS / jointTauNm[i]
//       (the G1's motor index is the canonical joint order: unitree_ros2
//       example/src/src/g1/lowlevel/g1_ankle_swing_example.cpp, enum G1JointIndex, lines 82–117, read
//       as `motor_state[i].q` for i < G1_NUM_MOTOR = 29 at lines 42 and 238–241; slots 29…34 of the
//       35 are not G1 joints and are ignored)
//   imu_state.quaternion [w, x, y, z] → imu.quatWxyz (and rootQuatWxyz: no motion capture)
//       (unitree_ros2 example/src/src/read_low_state_hg.cpp lines 45–48 prints them as
//       qw, qx, qy, qz in index order 0…3)
//   imu_state.gyroscope → imu.gyroRadS, imu_state.accelerometer → imu.accelMS2
//   tick → StateFrame.tick (unwrapped from uint32 by the intake), a sample counter only
//   mode_pr must be 0 (PR: ankles in pitch/roll joint space, as the canonical order is; 1 = AB
//       would put the ankle motors' A/B angles where pitch/roll are expected — enum Mode in
//       g1_ankle_swing_example.cpp lines 77–80)
//
// A sample is refused like a g1-bridge/1 lowstate is (src/domain/bridge/g1BridgeValidate.ts):
// any value not finite, a quaternion not unit within G1_BRIDGE_QUAT_TOLERANCE.

export const UNITREE_LOWSTATE_SCHEMA = 'unitree_hg/msg/LowState';
export const UNITREE_IMUSTATE_SCHEMA = 'unitree_hg/msg/IMUState';
export const UNITREE_MOTORSTATE_SCHEMA = 'unitree_hg/msg/MotorState';
/** The topic unitree_ros2 publishes the high-rate lowstate on (`lf/lowstate` is the low-rate one). */
export const UNITREE_LOWSTATE_TOPIC = '/lowstate';
/** LowState.msg: `MotorState[35] motor_state`; the G1's 29 joints are the first 29 slots. */
export const UNITREE_HG_MOTOR_SLOTS = 35;
/** `mode_pr` of a G1 whose ankles report pitch/roll (the canonical joint space). */
export const UNITREE_MODE_PR = 0;

/** One field of a parsed message definition (the shape @foxglove/rosmsg's `parse` returns). */
export interface MsgField {
  name: string;
  type: string;
  isArray?: boolean;
  arrayLength?: number;
  isConstant?: boolean;
}
export interface MsgDefinition {
  /** The type's full name (`unitree_hg/msg/IMUState`); undefined for the root type. */
  name?: string;
  definitions: readonly MsgField[];
}

/** What a field must be: its type, and for an array its fixed length (0 = any length). */
interface ExpectedField {
  name: string;
  type: string;
  arrayLength?: number;
}

/**
 * The fields the console reads, per type, in the order unitree_hg declares them
 * (/work/shared/data/ros2/unitree_hg/msg/*.msg, unitree_ros2
 * cyclonedds_ws/src/unitree/unitree_hg/msg/). Other fields may come between and are ignored.
 */
const EXPECTED: Readonly<Record<string, readonly ExpectedField[]>> = {
  [UNITREE_LOWSTATE_SCHEMA]: [
    { name: 'mode_pr', type: 'uint8' },
    { name: 'mode_machine', type: 'uint8' },
    { name: 'tick', type: 'uint32' },
    { name: 'imu_state', type: UNITREE_IMUSTATE_SCHEMA },
    { name: 'motor_state', type: UNITREE_MOTORSTATE_SCHEMA, arrayLength: UNITREE_HG_MOTOR_SLOTS },
  ],
  [UNITREE_IMUSTATE_SCHEMA]: [
    { name: 'quaternion', type: 'float32', arrayLength: 4 },
    { name: 'gyroscope', type: 'float32', arrayLength: 3 },
    { name: 'accelerometer', type: 'float32', arrayLength: 3 },
  ],
  [UNITREE_MOTORSTATE_SCHEMA]: [
    { name: 'mode', type: 'uint8' },
    { name: 'q', type: 'float32' },
    { name: 'dq', type: 'float32' },
    { name: 'ddq', type: 'float32' },
    { name: 'tau_est', type: 'float32' },
  ],
};

/** The advertised definition is not the unitree_hg LowState the console maps (names the type and field). */
export class UnitreeDefinitionError extends Error {
  override readonly name = 'UnitreeDefinitionError';
  constructor(
    /** `unitree_hg/msg/MotorState.q`, or the type alone when the type is missing. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

const describeField = (f: MsgField): string => `${f.type}${f.isArray ? `[${f.arrayLength ?? ''}]` : ''} ${f.name}`;
const describeExpected = (e: ExpectedField): string =>
  `${e.type}${e.arrayLength !== undefined ? `[${e.arrayLength}]` : ''} ${e.name}`;

/**
 * Checks that parsed definitions (root first, as foxglove_bridge concatenates them and
 * @foxglove/rosmsg parses them) are unitree_hg's LowState with the fields this file reads, of the
 * types and in the order Unitree declares them. Throws UnitreeDefinitionError naming the field.
 */
export function checkUnitreeLowStateDefinition(definitions: readonly MsgDefinition[]): void {
  if (definitions.length === 0) throw new UnitreeDefinitionError(UNITREE_LOWSTATE_SCHEMA, 'the definition is empty');
  const byName = new Map<string, MsgDefinition>();
  definitions.forEach((d, i) => byName.set(i === 0 ? UNITREE_LOWSTATE_SCHEMA : (d.name ?? ''), d));
  for (const [type, expected] of Object.entries(EXPECTED)) {
    const def = byName.get(type);
    if (!def) throw new UnitreeDefinitionError(type, 'not in the advertised definition (no "MSG: " section for it)');
    const fields = def.definitions.filter((f) => !f.isConstant);
    let at = -1;
    for (const e of expected) {
      const where = `${type}.${e.name}`;
      const i = fields.findIndex((f) => f.name === e.name);
      if (i < 0) throw new UnitreeDefinitionError(where, `missing; expected \`${describeExpected(e)}\``);
      const f = fields[i];
      const arrayOk = e.arrayLength === undefined ? !f.isArray : f.isArray === true && f.arrayLength === e.arrayLength;
      if (f.type !== e.type || !arrayOk)
        throw new UnitreeDefinitionError(where, `is \`${describeField(f)}\`; expected \`${describeExpected(e)}\``);
      if (i < at)
        throw new UnitreeDefinitionError(
          where,
          `comes before ${type}.${fields[at].name}; unitree_hg declares it after (a reordered definition is a different message)`,
        );
      at = i;
    }
  }
}

/** A refused sample, naming the field (`motor_state[3].dq`, `imu_state.quaternion`, …). */
export interface UnitreeSampleRefusal {
  ok: false;
  field: string;
  reason: string;
}

/** The sample's values, read from the decoded message: the counter and what goes into the frame. */
export interface UnitreeLowStateSample {
  ok: true;
  /** `tick` as sent (uint32, may wrap). */
  tick: number;
  modeMachine: number;
  /** The frame; its timeS and tick are the caller's to set (the intake's time base and unwrapped tick). */
  frame: StateFrame;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isNumArray = (v: unknown): v is ArrayLike<number> =>
  Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));

/**
 * Maps one decoded unitree_hg LowState to a StateFrame, or names the field that makes it unusable.
 * Values are float32 on the wire; they are copied into the frame's Float64Arrays unchanged (exact).
 */
export function unitreeLowStateToFrame(msg: unknown): UnitreeLowStateSample | UnitreeSampleRefusal {
  const no = (field: string, reason: string): UnitreeSampleRefusal => ({ ok: false, field, reason });
  if (!isObj(msg)) return no('(message)', 'is not a decoded message');
  const tick = msg.tick;
  if (typeof tick !== 'number' || !Number.isInteger(tick) || tick < 0 || tick > 0xffffffff)
    return no('tick', `must be a uint32, found ${String(tick)}`);
  if (msg.mode_pr !== UNITREE_MODE_PR)
    return no(
      'mode_pr',
      `is ${String(msg.mode_pr)}: the ankles report A/B motor angles, not the pitch/roll joints of the canonical order (mode_pr must be ${UNITREE_MODE_PR}, PR)`,
    );
  const modeMachine = typeof msg.mode_machine === 'number' ? msg.mode_machine : NaN;
  const imu = msg.imu_state;
  if (!isObj(imu)) return no('imu_state', 'missing');
  const frame = createStateFrame(false);
  const vec = (v: unknown, path: string, len: number, out: Float64Array): UnitreeSampleRefusal | null => {
    if (!isNumArray(v) || v.length !== len) return no(path, `must be ${len} numbers`);
    for (let i = 0; i < len; i++) {
      const x = v[i];
      if (typeof x !== 'number' || !Number.isFinite(x))
        return no(`${path}[${i}]`, `must be finite, found ${String(x)}`);
      out[i] = x;
    }
    return null;
  };
  const bad =
    vec(imu.quaternion, 'imu_state.quaternion', 4, frame.imu.quatWxyz) ??
    vec(imu.gyroscope, 'imu_state.gyroscope', 3, frame.imu.gyroRadS) ??
    vec(imu.accelerometer, 'imu_state.accelerometer', 3, frame.imu.accelMS2);
  if (bad) return bad;
  const qq = frame.imu.quatWxyz;
  const n = Math.hypot(qq[0], qq[1], qq[2], qq[3]);
  if (!(Math.abs(n - 1) <= G1_BRIDGE_QUAT_TOLERANCE))
    return no(
      'imu_state.quaternion',
      `quaternion (w, x, y, z) must be unit within ${G1_BRIDGE_QUAT_TOLERANCE}, its norm is ${n.toPrecision(6)}`,
    );
  frame.rootQuatWxyz = qq.slice();
  const motors = msg.motor_state;
  if (!Array.isArray(motors) || motors.length !== UNITREE_HG_MOTOR_SLOTS)
    return no('motor_state', `must be ${UNITREE_HG_MOTOR_SLOTS} MotorState`);
  for (let i = 0; i < G1_NUM_JOINTS; i++) {
    const m: unknown = motors[i];
    if (!isObj(m)) return no(`motor_state[${i}]`, 'is not a MotorState');
    for (const [key, out] of [
      ['q', frame.jointPosRad],
      ['dq', frame.jointVelRadS],
      ['tau_est', frame.jointTauNm],
    ] as const) {
      const x = m[key];
      if (typeof x !== 'number' || !Number.isFinite(x))
        return no(`motor_state[${i}].${key}`, `must be finite, found ${String(x)}`);
      out[i] = x;
    }
  }
  frame.tick = tick;
  return { ok: true, tick, modeMachine, frame };
}

/** Unwraps a uint32 counter into an ever-increasing one (a step back by more than 2^31 is a wrap). */
export class Uint32Unwrapper {
  private last: number | null = null;
  private wraps = 0;

  next(raw: number): number {
    if (this.last !== null && raw < this.last && this.last - raw > 2 ** 31) this.wraps++;
    this.last = raw;
    return raw + this.wraps * 2 ** 32;
  }

  reset(): void {
    this.last = null;
    this.wraps = 0;
  }
}
