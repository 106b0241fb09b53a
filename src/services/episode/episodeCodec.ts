import type protobuf from 'protobufjs';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { protoType, typeFromDescriptorSet } from './episodeProto';
import type { CommandMessage, ExecutedMessage, MetricsMessage, ReferenceMessage } from './episodeSchemas';

// Encoding and decoding the messages of episode files.
//
// Writing (`motionbench-episode/2`): protobuf through the compiled schemas of episodeProto.ts,
// straight from the recorder's typed arrays (no intermediate number[]).
//
// Reading (either format): a channel's decoder is made from what the FILE says: JSON for
// message encoding "json"; for "protobuf" the message type is rebuilt from the FileDescriptorSet
// in the channel's Schema record, never from the program's own schemas. Decoded messages are
// normalised to the JSON episodes' shapes (ExecutedMessage, …), so every consumer (gap review,
// report, analysis) reads both formats through one path.

/** How the recorder stores the measured joints and IMU of an executed frame. */
export type MeasuredPrecision = 'float64' | 'float32';

const f32Exact = (a: ArrayLike<number>): boolean => {
  for (let i = 0; i < a.length; i++) if (!Object.is(Math.fround(a[i]), a[i])) return false;
  return true;
};

/** Whether every measured value of `f` (joints, IMU) is exactly a float32, as a G1's lowstate is. */
export function measuredIsFloat32(f: StateFrame): boolean {
  return (
    f32Exact(f.jointPosRad) &&
    f32Exact(f.jointVelRadS) &&
    f32Exact(f.jointTauNm) &&
    f32Exact(f.imu.quatWxyz) &&
    f32Exact(f.imu.gyroRadS) &&
    f32Exact(f.imu.accelMS2)
  );
}

const EMPTY = new Float64Array(0);

/** The fields StateFrame and RobotState share, camelCase as protobufjs expects. */
function stateFields(f: StateFrame, rootLinVelMps: ArrayLike<number> | null, rootAngVelRadS: ArrayLike<number> | null) {
  return {
    timeS: f.timeS,
    tick: f.tick,
    ...(f.referenceFrame !== null && { referenceFrame: f.referenceFrame }),
    rootPosM: f.rootPosM ?? EMPTY,
    rootQuatWxyz: f.rootQuatWxyz ?? EMPTY,
    jointPosRad: f.jointPosRad,
    jointVelRadS: f.jointVelRadS,
    jointTauNm: f.jointTauNm,
    imu: { quatWxyz: f.imu.quatWxyz, gyroRadS: f.imu.gyroRadS, accelMS2: f.imu.accelMS2 },
    ...(f.contacts !== null && { contacts: { items: f.contacts } }),
    rootLinVelMps: rootLinVelMps ?? EMPTY,
    rootAngVelRadS: rootAngVelRadS ?? EMPTY,
  };
}

const STATE_FRAME = protoType('StateFrame');
const ROBOT_STATE = protoType('RobotState');
const REFERENCE_FRAME = protoType('ReferenceFrame');
const COMMAND = protoType('Command');
const LIVE_METRICS = protoType('LiveMetrics');

/** Schema name of the executed-state messages for a precision. */
export const executedSchemaName = (p: MeasuredPrecision): string =>
  p === 'float32' ? 'motionbench.RobotState' : 'motionbench.StateFrame';

/**
 * An executed frame as protobuf. With 'float32', a frame whose measured values are not all
 * exactly float32 also carries the whole frame in double (`exact`; `exact` counts them).
 */
export function encodeExecuted(
  f: StateFrame,
  precision: MeasuredPrecision,
  rootLinVelMps: ArrayLike<number> | null,
  rootAngVelRadS: ArrayLike<number> | null,
): { data: Uint8Array; exact: boolean } {
  const fields = stateFields(f, rootLinVelMps, rootAngVelRadS);
  if (precision === 'float64') return { data: STATE_FRAME.encode(fields).finish(), exact: false };
  const exact = !measuredIsFloat32(f);
  return { data: ROBOT_STATE.encode(exact ? { ...fields, exact: fields } : fields).finish(), exact };
}

export function encodeReference(m: {
  timeS: number;
  frame: number;
  rootPosM: ArrayLike<number>;
  rootQuatWxyz: ArrayLike<number>;
  jointPosRad: ArrayLike<number>;
}): Uint8Array {
  return REFERENCE_FRAME.encode(m).finish();
}

export function encodeCommand(m: {
  timeS: number;
  frame: number;
  jointTargetRad: ArrayLike<number>;
  kp?: ArrayLike<number>;
  kd?: ArrayLike<number>;
  assistWrench?: ArrayLike<number> | null;
}): Uint8Array {
  const w = m.assistWrench;
  return COMMAND.encode({
    timeS: m.timeS,
    frame: m.frame,
    jointTargetRad: m.jointTargetRad,
    kp: m.kp ?? EMPTY,
    kd: m.kd ?? EMPTY,
    ...(w && { rootAssistWrench: { forceN: [w[0], w[1], w[2]], torqueNm: [w[3], w[4], w[5]] } }),
  }).finish();
}

export function encodeLiveMetrics(m: {
  timeS: number;
  frame: number;
  mpjpeLMm: number | null;
  jointRmseRad: number | null;
  firstFailureFrame: number;
}): Uint8Array {
  return LIVE_METRICS.encode({
    timeS: m.timeS,
    frame: m.frame,
    ...(m.mpjpeLMm !== null && { mpjpeLMm: m.mpjpeLMm }),
    ...(m.jointRmseRad !== null && { jointRmseRad: m.jointRmseRad }),
    firstFailureFrame: m.firstFailureFrame,
  }).finish();
}

// ---- decoding -------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, arrays: true, defaults: false };

const nums = (v: unknown): number[] => (Array.isArray(v) ? (v as number[]) : []);
const numsOrNull = (v: unknown): number[] | null => (Array.isArray(v) && v.length > 0 ? (v as number[]) : null);
const numOr = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);
const has = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k) && o[k] !== undefined;

function executedFrom(o: Obj): ExecutedMessage {
  if (has(o, 'exact')) return executedFrom(o.exact as Obj);
  const imu = (o.imu ?? {}) as Obj;
  const contacts = has(o, 'contacts') ? (((o.contacts as Obj).items ?? []) as Obj[]) : null;
  return {
    timeS: numOr(o.timeS, 0),
    tick: numOr(o.tick, 0),
    referenceFrame: has(o, 'referenceFrame') ? (o.referenceFrame as number) : null,
    rootPosM: numsOrNull(o.rootPosM),
    rootQuatWxyz: numsOrNull(o.rootQuatWxyz),
    jointPosRad: nums(o.jointPosRad),
    jointVelRadS: nums(o.jointVelRadS),
    jointTauNm: nums(o.jointTauNm),
    imu: { quatWxyz: nums(imu.quatWxyz), gyroRadS: nums(imu.gyroRadS), accelMS2: nums(imu.accelMS2) },
    contacts: contacts
      ? contacts.map((c) => ({ body: String(c.body ?? ''), other: String(c.other ?? ''), forceN: numOr(c.forceN, 0) }))
      : null,
    rootLinVelMps: numsOrNull(o.rootLinVelMps),
    rootAngVelRadS: numsOrNull(o.rootAngVelRadS),
  };
}

function referenceFrom(o: Obj): ReferenceMessage {
  return {
    timeS: numOr(o.timeS, 0),
    frame: numOr(o.frame, 0),
    rootPosM: nums(o.rootPosM),
    rootQuatWxyz: nums(o.rootQuatWxyz),
    jointPosRad: nums(o.jointPosRad),
  };
}

function commandFrom(o: Obj): CommandMessage {
  const kp = numsOrNull(o.kp);
  const kd = numsOrNull(o.kd);
  const w = has(o, 'rootAssistWrench') ? (o.rootAssistWrench as Obj) : null;
  return {
    timeS: numOr(o.timeS, 0),
    frame: numOr(o.frame, 0),
    jointTargetRad: nums(o.jointTargetRad),
    ...(kp && { kp }),
    ...(kd && { kd }),
    rootAssistWrench: w ? { forceN: nums(w.forceN), torqueNm: nums(w.torqueNm) } : null,
  };
}

function liveFrom(o: Obj): MetricsMessage {
  return {
    timeS: numOr(o.timeS, 0),
    kind: 'live',
    frame: numOr(o.frame, 0),
    mpjpeLMm: has(o, 'mpjpeLMm') ? (o.mpjpeLMm as number) : null,
    jointRmseRad: has(o, 'jointRmseRad') ? (o.jointRmseRad as number) : null,
    firstFailureFrame: numOr(o.firstFailureFrame, -1),
  };
}

/** How a protobuf message of each known schema becomes the JSON episodes' shape. */
const NORMALISE: Record<string, (o: Obj) => unknown> = {
  'motionbench.StateFrame': executedFrom,
  'motionbench.RobotState': executedFrom,
  'motionbench.ReferenceFrame': referenceFrom,
  'motionbench.Command': commandFrom,
  'motionbench.LiveMetrics': liveFrom,
};

export interface SchemaRecord {
  name: string;
  encoding: string;
  data: Uint8Array;
}

/**
 * The decoder of a channel's messages, from its message encoding and its Schema record. Throws
 * (with the reason) for an encoding this program does not read.
 */
export function messageDecoder(messageEncoding: string, schema: SchemaRecord | null): (data: Uint8Array) => unknown {
  if (messageEncoding === 'json') {
    const text = new TextDecoder();
    return (data) => JSON.parse(text.decode(data)) as unknown;
  }
  if (messageEncoding === 'protobuf') {
    if (!schema || schema.encoding !== 'protobuf')
      throw new Error(`a protobuf channel needs a protobuf schema (got ${schema ? `"${schema.encoding}"` : 'none'})`);
    const type = typeFromDescriptorSet(schema.data, schema.name);
    const normalise = NORMALISE[schema.name] ?? ((o: Obj) => o);
    return (data) => normalise(type.toObject(type.decode(data), TO_OBJECT));
  }
  throw new Error(`message encoding "${messageEncoding}" is not one this program reads (json, protobuf)`);
}
