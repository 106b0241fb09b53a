import { EPISODE_OUTCOMES, type EpisodeOutcome } from '../episode/episodeOutcome';
import type { InitialState } from '../episode/initialState';
import { decodeMotionbenchJson } from '../motion/motionbenchJson';
import type { MotionClip } from '../motion/motionClip';
import { InputError, formatLocation } from '../problems';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import { policyInterfaceProblems } from '../wbc/observationBuilder';
import { POLICY_FAMILIES } from '../wbc/trackingPolicy';
import type { JointGains, ObservationTerm, PolicyInterface, RootAssist, WbcBinding } from '../wbc/wbcBinding';
import {
  ACK_CODES,
  COMMAND_NAMES,
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_LIMITS,
  G1_BRIDGE_MAX_CONTACTS,
  G1_BRIDGE_QUAT_TOLERANCE,
  ROOT_STATE_SOURCES,
  STOP_OUTCOMES,
  WBC_STATES,
  type AckCode,
  type CommandAck,
  type CommandName,
  type LowStateMsg,
  type RootStateMsg,
  type StopOutcome,
  type WbcStatusMsg,
  RUNNER_MOTOR_MODES,
  type RunnerStatus,
  type RunnerMotionSwitcherStatus,
  MOTION_SWITCHER_ANSWER_KINDS,
} from './g1BridgeContract';

// Validators for every `g1-bridge/1` message. They never throw into the caller: each returns
// { ok: true, value } or { ok: false, reason } with the offending field's path in the reason
// (e.g. `q[12]: must be a finite number, found null`). Checks: JSON syntax (NaN/Infinity
// literals are not JSON), size, required fields, types, array lengths (29 joints, 3-vectors,
// 4-quaternions), finite numbers, unit quaternions (±1e-3), enumerations, integer ranges.
// Unknown fields are ignored (the versioning rule of g1-bridge/1).

export type Validation<T> = { ok: true; value: T } | { ok: false; reason: string; code: AckCode };

/** A decoded command: wire arguments turned into domain objects. */
export type BridgeCommand =
  | {
      command: 'prepare';
      seq: number | null;
      clip: MotionClip;
      binding: WbcBinding;
      seed: number;
      runId: string | null;
    }
  | { command: 'start'; seq: number | null; runId: string | null }
  | { command: 'stop'; seq: number | null; reason: string; outcome: StopOutcome }
  | { command: 'damp'; seq: number | null; reason: string }
  | { command: 'hold'; seq: number | null; reason: string }
  | { command: 'reset'; seq: number | null; initial: InitialState; runId: string | null };

/** A rejected command, with whatever of its envelope could be read (for the ack). */
export interface CommandRejection {
  ok: false;
  code: AckCode;
  reason: string;
  seq: number | null;
  command: CommandName | null;
}

export type CommandValidation = { ok: true; value: BridgeCommand } | CommandRejection;

class Invalid extends Error {
  constructor(
    readonly path: string,
    readonly why: string,
    readonly code: AckCode = 'malformed',
  ) {
    super(path ? `${path}: ${why}` : why);
  }
}

const fail = (path: string, why: string, code: AckCode = 'malformed'): never => {
  throw new Invalid(path, why, code);
};

const join = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

function obj(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, `must be an object, found ${describe(v)}`);
  return v as Record<string, unknown>;
}

function num(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, `must be a finite number, found ${describe(v)}`);
  return v as number;
}

function int(v: unknown, path: string, min: number, max: number): number {
  const n = num(v, path);
  if (!Number.isInteger(n) || n < min || n > max) fail(path, `must be an integer in [${min}, ${max}], found ${n}`);
  return n;
}

function str(v: unknown, path: string, maxChars: number = G1_BRIDGE_LIMITS.idChars): string {
  if (typeof v !== 'string') fail(path, `must be a string, found ${describe(v)}`);
  const s = v as string;
  if (s.length > maxChars) fail(path, `is ${s.length} characters long, more than ${maxChars}`);
  return s;
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, `must be true or false, found ${describe(v)}`);
  return v as boolean;
}

function oneOf<T extends string>(v: unknown, path: string, options: readonly T[]): T {
  if (typeof v !== 'string' || !(options as readonly string[]).includes(v)) {
    fail(path, `must be one of ${options.join(', ')}, found ${describe(v)}`);
  }
  return v as T;
}

/** A JSON array of exactly `len` finite numbers (copied into a plain array). */
function vec(v: unknown, path: string, len: number): number[] {
  if (!Array.isArray(v)) fail(path, `must be an array of ${len} numbers, found ${describe(v)}`);
  const a = v as unknown[];
  if (a.length !== len) fail(path, `must have ${len} values, found ${a.length}`);
  const out = new Array<number>(len);
  for (let i = 0; i < len; i++) {
    const x = a[i];
    if (typeof x !== 'number' || !Number.isFinite(x))
      fail(join(path, i), `must be a finite number, found ${describe(x)}`);
    out[i] = x as number;
  }
  return out;
}

function unitQuat(v: unknown, path: string): number[] {
  const q = vec(v, path, 4);
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(Math.abs(n - 1) <= G1_BRIDGE_QUAT_TOLERANCE)) {
    fail(
      path,
      `quaternion (w, x, y, z) must be unit within ${G1_BRIDGE_QUAT_TOLERANCE}, its norm is ${n.toPrecision(6)}`,
    );
  }
  return q;
}

const stamp = (v: unknown, path: string): number => int(v, path, 0, Number.MAX_SAFE_INTEGER);

function optional<T>(
  o: Record<string, unknown>,
  key: string,
  path: string,
  read: (v: unknown, p: string) => T,
): T | undefined {
  const v = o[key];
  return v === undefined ? undefined : read(v, join(path, key));
}

function nullable<T>(read: (v: unknown, p: string) => T): (v: unknown, p: string) => T | null {
  return (v, p) => (v === null ? null : read(v, p));
}

const RUN_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
function runId(v: unknown, path: string): string {
  const s = str(v, path, 128);
  if (!RUN_ID_RE.test(s))
    fail(path, 'must be 1–128 characters of letters, digits and . _ : @ / - (starting with a letter or digit)');
  return s;
}

function run<T>(f: () => T): Validation<T> {
  try {
    return { ok: true, value: f() };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: err.message, code: err.code };
    return {
      ok: false,
      reason: `internal validator error: ${(err as Error)?.message ?? String(err)}`,
      code: 'malformed',
    };
  }
}

// ---------------------------------------------------------------------------------------------
// JSON text

const utf8 = new TextDecoder('utf-8', { fatal: true });

function byteLengthOf(data: ArrayBufferView | ArrayBuffer | string, maxBytes: number): number {
  if (typeof data !== 'string') return data.byteLength;
  // UTF-8 takes at most 3 bytes per UTF-16 unit: count exactly only when it could matter.
  return data.length * 3 <= maxBytes ? data.length : new TextEncoder().encode(data).byteLength;
}

/** Locates why `text` is not JSON (NaN/Infinity literals, truncation…), in a few words. */
function jsonSyntaxReason(text: string): string {
  const nonFinite = /(?:^|[\s,:[])(-?Infinity|NaN)(?=[\s,\]}]|$)/.exec(text);
  if (nonFinite) return `invalid JSON: ${nonFinite[1]} is not a JSON number (non-finite numbers are not allowed)`;
  try {
    JSON.parse(text);
    return 'invalid JSON';
  } catch (err) {
    return `invalid JSON: ${(err as Error).message}`;
  }
}

/**
 * Decodes and parses one message's JSON text (bytes as received). Rejects messages larger than
 * `maxBytes`, invalid UTF-8 and invalid JSON, with a reason.
 */
export function parseJsonMessage(data: ArrayBufferView | ArrayBuffer | string, maxBytes: number): Validation<unknown> {
  try {
    const n = byteLengthOf(data, maxBytes);
    if (n > maxBytes)
      return { ok: false, code: 'oversized', reason: `message is ${n} bytes, more than the ${maxBytes}-byte limit` };
    if (n === 0) return { ok: false, code: 'malformed', reason: 'message is empty' };
    let text: string;
    if (typeof data === 'string') text = data;
    else {
      const bytes =
        data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      try {
        text = utf8.decode(bytes);
      } catch {
        return { ok: false, code: 'malformed', reason: 'message is not valid UTF-8 text' };
      }
    }
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      return { ok: false, code: 'malformed', reason: jsonSyntaxReason(text) };
    }
  } catch (err) {
    return { ok: false, code: 'malformed', reason: `unreadable message: ${(err as Error)?.message ?? String(err)}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Server → client messages

export function validateLowState(v: unknown): Validation<LowStateMsg> {
  return run(() => {
    const o = obj(v, '');
    const imu = obj(o.imu, 'imu');
    const msg: LowStateMsg = {
      tick: int(o.tick, 'tick', 0, Number.MAX_SAFE_INTEGER),
      stamp_ns: stamp(o.stamp_ns, 'stamp_ns'),
      q: vec(o.q, 'q', G1_NUM_JOINTS),
      dq: vec(o.dq, 'dq', G1_NUM_JOINTS),
      tau_est: vec(o.tau_est, 'tau_est', G1_NUM_JOINTS),
      imu: {
        quat_wxyz: unitQuat(imu.quat_wxyz, 'imu.quat_wxyz'),
        gyro: vec(imu.gyro, 'imu.gyro', 3),
        accel: vec(imu.accel, 'imu.accel', 3),
      },
    };
    const ref = optional(
      o,
      'ref_frame',
      '',
      nullable((x, p) => int(x, p, 0, Number.MAX_SAFE_INTEGER)),
    );
    if (ref !== undefined) msg.ref_frame = ref;
    if (o.contacts !== undefined) {
      if (!Array.isArray(o.contacts) || o.contacts.length > G1_BRIDGE_MAX_CONTACTS) {
        fail(
          'contacts',
          `must be an array of at most ${G1_BRIDGE_MAX_CONTACTS} contacts, found ${describe(o.contacts)}`,
        );
      }
      msg.contacts = (o.contacts as unknown[]).map((c, i) => {
        const p = join('contacts', i);
        const co = obj(c, p);
        const forceN = num(co.force_n, join(p, 'force_n'));
        if (forceN < 0) fail(join(p, 'force_n'), `must be ≥ 0, found ${forceN}`);
        return { body: str(co.body, join(p, 'body')), other: str(co.other, join(p, 'other')), force_n: forceN };
      });
    }
    return msg;
  });
}

export function validateRootState(v: unknown): Validation<RootStateMsg> {
  return run(() => {
    const o = obj(v, '');
    return {
      stamp_ns: stamp(o.stamp_ns, 'stamp_ns'),
      pos: vec(o.pos, 'pos', 3),
      quat_wxyz: unitQuat(o.quat_wxyz, 'quat_wxyz'),
      source: oneOf(o.source, 'source', ROOT_STATE_SOURCES),
    };
  });
}

function readAck(v: unknown, path: string): CommandAck {
  const o = obj(v, path);
  return {
    seq: nullable((x, p) => int(x, p, 0, Number.MAX_SAFE_INTEGER))(o.seq ?? null, join(path, 'seq')),
    command: nullable((x, p) => oneOf(x, p, COMMAND_NAMES))(o.command ?? null, join(path, 'command')),
    ok: bool(o.ok, join(path, 'ok')),
    code: oneOf(o.code, join(path, 'code'), ACK_CODES),
    message: str(o.message ?? '', join(path, 'message'), G1_BRIDGE_LIMITS.textChars),
  };
}

/** Largest LowCmd rate, period or lowstate age a runner status may report (a day, in ms). */
const RUNNER_FIGURE_MAX = 86_400_000;

function readRunnerStatus(v: unknown, path: string): RunnerStatus {
  const o = obj(v, path);
  const figure = (x: unknown, p: string): number => {
    const n = num(x, p);
    if (n < 0 || n > RUNNER_FIGURE_MAX) fail(p, `must be in [0, ${RUNNER_FIGURE_MAX}]`);
    return n;
  };
  const need = (k: string): unknown => (o[k] === undefined ? fail(join(path, k), 'is required') : o[k]);
  return {
    mode: oneOf(o.mode, join(path, 'mode'), RUNNER_MOTOR_MODES),
    lowcmd_hz: nullable(figure)(need('lowcmd_hz'), join(path, 'lowcmd_hz')),
    lowcmd_period_p99_ms: nullable(figure)(need('lowcmd_period_p99_ms'), join(path, 'lowcmd_period_p99_ms')),
    crc_errors: int(o.crc_errors, join(path, 'crc_errors'), 0, Number.MAX_SAFE_INTEGER),
    remote_stop_held: bool(o.remote_stop_held, join(path, 'remote_stop_held')),
    lowstate_age_ms: nullable(figure)(need('lowstate_age_ms'), join(path, 'lowstate_age_ms')),
    interface: str(o.interface, join(path, 'interface')),
    domain: int(o.domain, join(path, 'domain'), 0, 232),
    ...(o.motion_switcher === undefined
      ? {}
      : { motion_switcher: nullable(readMotionSwitcher)(o.motion_switcher, join(path, 'motion_switcher')) }),
  };
}

function readMotionSwitcher(v: unknown, path: string): RunnerMotionSwitcherStatus {
  const o = obj(v, path);
  return {
    answer: oneOf(o.answer, join(path, 'answer'), MOTION_SWITCHER_ANSWER_KINDS),
    mode: nullable((x, p) => str(x, p))(o.mode === undefined ? null : o.mode, join(path, 'mode')),
    allowed: bool(o.allowed, join(path, 'allowed')),
    detail: str(o.detail, join(path, 'detail')),
  };
}

export function validateWbcStatus(v: unknown): Validation<WbcStatusMsg> {
  return run(() => {
    const o = obj(v, '');
    const msg: WbcStatusMsg = {
      state: oneOf(o.state, 'state', WBC_STATES),
      clip_id: nullable((x, p) => str(x, p))(
        o.clip_id === undefined ? fail('clip_id', 'is required (null when no clip)') : o.clip_id,
        'clip_id',
      ),
      frame: nullable((x, p) => int(x, p, 0, Number.MAX_SAFE_INTEGER))(
        o.frame === undefined ? fail('frame', 'is required (null when none)') : o.frame,
        'frame',
      ),
    };
    const s = optional(o, 'stamp_ns', '', stamp);
    if (s !== undefined) msg.stamp_ns = s;
    const r = optional(o, 'run_id', '', nullable(runId));
    if (r !== undefined) msg.run_id = r;
    const es = optional(o, 'episode_start_ns', '', nullable(stamp));
    if (es !== undefined) msg.episode_start_ns = es;
    const oc = optional(
      o,
      'outcome',
      '',
      nullable((x, p) => oneOf<EpisodeOutcome>(x, p, EPISODE_OUTCOMES)),
    );
    if (oc !== undefined) msg.outcome = oc;
    const reason = optional(o, 'reason', '', (x, p) => str(x, p, G1_BRIDGE_LIMITS.textChars));
    if (reason !== undefined) msg.reason = reason;
    const ack = optional(o, 'ack', '', readAck);
    if (ack !== undefined) msg.ack = ack;
    const runner = optional(o, 'runner', '', readRunnerStatus);
    if (runner !== undefined) msg.runner = runner;
    return msg;
  });
}

/** parseJsonMessage + validateLowState. */
export function decodeLowState(data: ArrayBufferView | ArrayBuffer | string): Validation<LowStateMsg> {
  const p = parseJsonMessage(data, G1_BRIDGE_LIMITS.lowStateBytes);
  return p.ok ? validateLowState(p.value) : p;
}

export function decodeRootState(data: ArrayBufferView | ArrayBuffer | string): Validation<RootStateMsg> {
  const p = parseJsonMessage(data, G1_BRIDGE_LIMITS.rootStateBytes);
  return p.ok ? validateRootState(p.value) : p;
}

export function decodeWbcStatus(data: ArrayBufferView | ArrayBuffer | string): Validation<WbcStatusMsg> {
  const p = parseJsonMessage(data, G1_BRIDGE_LIMITS.wbcStatusBytes);
  return p.ok ? validateWbcStatus(p.value) : p;
}

// ---------------------------------------------------------------------------------------------
// Command arguments → domain objects

const CLIP_FILE = 'g1-bridge prepare';

/** A `motionbench-clip/1`-shaped object → MotionClip (through the same decoder as clip files). */
export function decodeWireClip(v: unknown, path = 'clip'): Validation<MotionClip> {
  return run(() => {
    const o = obj(v, path);
    const frames = obj(o.frames, join(path, 'frames'));
    let clip: MotionClip;
    try {
      clip = decodeMotionbenchJson(JSON.stringify(o), { file: CLIP_FILE });
    } catch (err) {
      if (err instanceof InputError) {
        const key = err.location.key;
        return fail(key ? join(path, key) : path, err.reason);
      }
      throw err;
    }
    if (frames.joint_vel_rad_s !== undefined) {
      const rows = frames.joint_vel_rad_s;
      const p = join(path, 'frames.joint_vel_rad_s');
      if (!Array.isArray(rows) || rows.length !== clip.frameCount) {
        fail(p, `must be an array of ${clip.frameCount} frames (as many as root_pos_m), found ${describe(rows)}`);
      }
      const out = new Float64Array(clip.frameCount * G1_NUM_JOINTS);
      (rows as unknown[]).forEach((r, k) => out.set(vec(r, join(p, k), G1_NUM_JOINTS), k * G1_NUM_JOINTS));
      clip.jointVelRadS = out;
    }
    return clip;
  });
}

function gains(v: unknown, path: string): JointGains {
  const o = obj(v, path);
  const one = (x: unknown, p: string): number | readonly number[] => {
    const a = Array.isArray(x) ? vec(x, p, G1_NUM_JOINTS) : [num(x, p)];
    if (a.some((g) => g < 0)) fail(p, 'gains must be ≥ 0');
    return Array.isArray(x) ? a : a[0];
  };
  return { kp: one(o.kp, join(path, 'kp')), kd: one(o.kd, join(path, 'kd')) };
}

function scaleOrVector(v: unknown, path: string): number | readonly number[] {
  return Array.isArray(v) ? vec(v, path, G1_NUM_JOINTS) : num(v, path);
}

function positive(v: unknown, path: string): number {
  const x = num(v, path);
  if (x <= 0) fail(path, `must be > 0, found ${x}`);
  return x;
}

const OBS_TERMS = [
  'joint_pos_rel_default',
  'joint_vel',
  'base_ang_vel',
  'projected_gravity',
  'reference_joint_pos',
  'last_action',
] as const;

function policyInterface(v: unknown, path: string): PolicyInterface {
  const o = obj(v, path);
  const obsPath = join(path, 'observation');
  if (!Array.isArray(o.observation) || o.observation.length === 0 || o.observation.length > 64) {
    fail(obsPath, `must be an array of 1–64 observation terms, found ${describe(o.observation)}`);
  }
  const observation: ObservationTerm[] = (o.observation as unknown[]).map((t, i) => {
    const p = join(obsPath, i);
    const to = obj(t, p);
    const term = oneOf(to.term, join(p, 'term'), OBS_TERMS);
    const scale = num(to.scale, join(p, 'scale'));
    if (term !== 'reference_joint_pos') return { term, scale };
    const ref: ObservationTerm = { term, scale, frames: int(to.frames, join(p, 'frames'), 1, 1000) };
    const offset = optional(to, 'offset', p, (x, q) => int(x, q, 0, 1000));
    return offset === undefined ? ref : { ...ref, offset };
  });
  const iface: PolicyInterface = {
    inputName: str(o.inputName, join(path, 'inputName')),
    outputName: str(o.outputName, join(path, 'outputName')),
    observation,
    actionScale: scaleOrVector(o.actionScale, join(path, 'actionScale')),
    actionOffset: o.actionOffset === undefined ? 0 : scaleOrVector(o.actionOffset, join(path, 'actionOffset')),
    gains: gains(o.gains, join(path, 'gains')),
  };
  const def = optional(o, 'defaultJointPosRad', path, (x, p) => vec(x, p, G1_NUM_JOINTS));
  if (def !== undefined) iface.defaultJointPosRad = def;
  const co = optional(o, 'clipObservation', path, positive);
  if (co !== undefined) iface.clipObservation = co;
  const ca = optional(o, 'clipAction', path, positive);
  if (ca !== undefined) iface.clipAction = ca;
  const problems = policyInterfaceProblems(iface, G1_NUM_JOINTS);
  if (problems.length > 0) fail(path, problems.join('; '));
  return iface;
}

function rootAssist(v: unknown, path: string): RootAssist {
  const o = obj(v, path);
  const nonNeg = (k: string) => {
    const x = num(o[k], join(path, k));
    if (x < 0) fail(join(path, k), 'must be ≥ 0');
    return x;
  };
  return {
    kpNPerM: nonNeg('kpNPerM'),
    kdNsPerM: nonNeg('kdNsPerM'),
    kpNmPerRad: nonNeg('kpNmPerRad'),
    kdNmsPerRad: nonNeg('kdNmsPerRad'),
  };
}

/** A WbcBinding record (JSON, field names as in src/domain/wbc/wbcBinding.ts) → WbcBinding. */
export function decodeWireBinding(v: unknown, path = 'binding'): Validation<WbcBinding> {
  return run((): WbcBinding => {
    const o = obj(v, path);
    const kind = oneOf(o.kind, join(path, 'kind'), ['builtin', 'onnx', 'remote'] as const);
    const id = str(o.id, join(path, 'id'));
    if (id.trim() === '') fail(join(path, 'id'), 'must not be empty');
    const version = str(o.version, join(path, 'version'));
    if (version.trim() === '') fail(join(path, 'version'), 'must not be empty');
    const controlRateHz = num(o.controlRateHz, join(path, 'controlRateHz'));
    if (controlRateHz <= 0 || controlRateHz > 2000)
      fail(join(path, 'controlRateHz'), `must be in (0, 2000] Hz, found ${controlRateHz}`);
    const label = str(o.label ?? '', join(path, 'label'), G1_BRIDGE_LIMITS.textChars);
    const common = { id, version, controlRateHz, label };
    const hash = nullable((x, p) => str(x, p))(o.checkpointHash ?? null, join(path, 'checkpointHash'));
    if (kind === 'builtin') {
      return {
        ...common,
        kind,
        gains: nullable(gains)(o.gains ?? null, join(path, 'gains')),
        rootAssist: nullable(rootAssist)(o.rootAssist ?? null, join(path, 'rootAssist')),
        checkpointHash: null,
      };
    }
    if (kind === 'onnx') {
      if (hash === null)
        fail(join(path, 'checkpointHash'), 'is required for an onnx binding (sha256 of the .onnx bytes)');
      if (o.family !== undefined) {
        // A released policy: the identity only; the robot reads the files at policyPath itself
        // and refuses them unless they hash to checkpointHash.
        return {
          ...common,
          kind,
          family: oneOf(o.family, join(path, 'family'), POLICY_FAMILIES),
          policyPath: str(o.policyPath, join(path, 'policyPath'), 4096),
          modelFile: str(o.modelFile, join(path, 'modelFile'), 4096),
          checkpointHash: hash as string,
          adapter: str(o.adapter, join(path, 'adapter'), 200),
          physicsId: str(o.physicsId, join(path, 'physicsId'), 200),
          bakedClipId: nullable((x, p) => str(x, p))(o.bakedClipId ?? null, join(path, 'bakedClipId')),
          ...(o.preset !== undefined && { preset: str(o.preset, join(path, 'preset'), 200) }),
        };
      }
      return {
        ...common,
        kind,
        modelFile: str(o.modelFile, join(path, 'modelFile'), 4096),
        checkpointHash: hash as string,
        interface: policyInterface(o.interface, join(path, 'interface')),
      };
    }
    return { ...common, kind, checkpointHash: hash };
  });
}

export function decodeWireInitialState(v: unknown, path = 'initial_state'): Validation<InitialState> {
  return run((): InitialState => {
    const o = obj(v, path);
    const p = vec(o.root_pos_m, join(path, 'root_pos_m'), 3);
    const q = unitQuat(o.root_quat_wxyz, join(path, 'root_quat_wxyz'));
    const initial: InitialState = {
      rootPosM: [p[0], p[1], p[2]],
      rootQuatWxyz: [q[0], q[1], q[2], q[3]],
      jointPosRad: vec(o.joint_pos_rad, join(path, 'joint_pos_rad'), G1_NUM_JOINTS),
      placeOnFloor: o.place_on_floor === undefined ? false : bool(o.place_on_floor, join(path, 'place_on_floor')),
    };
    if (o.joint_vel_rad_s !== undefined)
      return { ...initial, jointVelRadS: vec(o.joint_vel_rad_s, join(path, 'joint_vel_rad_s'), G1_NUM_JOINTS) };
    return initial;
  });
}

// ---------------------------------------------------------------------------------------------
// Commands

function unwrap<T>(r: Validation<T>): T {
  if (!r.ok) throw new Invalid('', r.reason, r.code);
  return r.value;
}

/** Validates a parsed `/console/command` message and decodes its arguments. */
export function validateCommand(v: unknown): CommandValidation {
  let seq: number | null = null;
  let command: CommandName | null = null;
  try {
    const o = obj(v, '');
    if (o.seq !== undefined && o.seq !== null) seq = int(o.seq, 'seq', 0, Number.MAX_SAFE_INTEGER);
    if (o.contract !== undefined && o.contract !== G1_BRIDGE_CONTRACT) {
      fail(
        'contract',
        `${describe(o.contract)} is not supported; this server speaks ${G1_BRIDGE_CONTRACT}`,
        'unsupported_contract',
      );
    }
    if (typeof o.command !== 'string' || !(COMMAND_NAMES as readonly string[]).includes(o.command)) {
      fail(
        'command',
        `unknown command ${describe(o.command)}; expected one of ${COMMAND_NAMES.join(', ')}`,
        o.command === undefined ? 'malformed' : 'unknown_command',
      );
    }
    command = o.command as CommandName;
    const args = o.args === undefined || o.args === null ? {} : obj(o.args, 'args');
    const reasonOf = (fallback: string) =>
      optional(args, 'reason', 'args', (x, p) => str(x, p, G1_BRIDGE_LIMITS.textChars)) ?? fallback;
    const runIdOf = () => optional(args, 'run_id', 'args', nullable(runId)) ?? null;
    let value: BridgeCommand;
    switch (command) {
      case 'prepare': {
        if (args.clip === undefined) fail('args.clip', 'is required');
        const clip = unwrap(decodeWireClip(args.clip, 'args.clip'));
        if (args.binding === undefined) fail('args.binding', 'is required');
        const binding = unwrap(decodeWireBinding(args.binding, 'args.binding'));
        const clipId = optional(args, 'clip_id', 'args', (x, p) => str(x, p));
        if (clipId !== undefined && clipId !== clip.id) {
          fail(
            'args.clip_id',
            `${clipId} does not match the clip's content id ${clip.id} (the clip changed in transit or was encoded lossily)`,
          );
        }
        const seed = optional(args, 'seed', 'args', (x, p) => int(x, p, 0, Number.MAX_SAFE_INTEGER)) ?? 0;
        value = { command, seq, clip, binding, seed, runId: runIdOf() };
        break;
      }
      case 'start':
        value = { command, seq, runId: runIdOf() };
        break;
      case 'stop':
        value = {
          command,
          seq,
          reason: reasonOf('stop command'),
          outcome: optional(args, 'outcome', 'args', (x, p) => oneOf(x, p, STOP_OUTCOMES)) ?? 'aborted_by_operator',
        };
        break;
      case 'damp':
        value = { command, seq, reason: reasonOf('damp command') };
        break;
      case 'hold':
        value = { command, seq, reason: reasonOf('hold command') };
        break;
      case 'reset': {
        if (args.initial_state === undefined) fail('args.initial_state', 'is required');
        value = {
          command,
          seq,
          initial: unwrap(decodeWireInitialState(args.initial_state, 'args.initial_state')),
          runId: runIdOf(),
        };
        break;
      }
    }
    return { ok: true, value };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, code: err.code, reason: err.message, seq, command };
    const detail =
      err instanceof InputError
        ? `${formatLocation(err.location)}: ${err.reason}`
        : ((err as Error)?.message ?? String(err));
    return { ok: false, code: 'malformed', reason: `internal validator error: ${detail}`, seq, command };
  }
}

/** parseJsonMessage + validateCommand. */
export function decodeCommand(data: ArrayBufferView | ArrayBuffer | string): CommandValidation {
  const p = parseJsonMessage(data, G1_BRIDGE_LIMITS.commandBytes);
  if (!p.ok) return { ok: false, code: p.code, reason: p.reason, seq: null, command: null };
  return validateCommand(p.value);
}
