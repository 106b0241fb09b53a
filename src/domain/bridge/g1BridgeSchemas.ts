import { EPISODE_OUTCOMES } from '../episode/episodeOutcome';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import { POLICY_FAMILIES } from '../wbc/trackingPolicy';
import {
  ACK_CODES,
  COMMAND_NAMES,
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_MAX_CONTACTS,
  G1_BRIDGE_SCHEMA_NAMES,
  ROOT_STATE_SOURCES,
  RUNNER_MOTOR_MODES,
  STOP_OUTCOMES,
  WBC_STATES,
} from './g1BridgeContract';

// JSON Schemas (draft 2020-12) of the `g1-bridge/1` messages, advertised with each channel
// (schemaEncoding "jsonschema") so Foxglove/Lichtblick can show the fields. The validators in
// g1BridgeValidate.ts are the authority (they also check finiteness and unit quaternions, which
// JSON Schema cannot express); these schemas describe the same shapes.

type Schema = Record<string, unknown>;

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

const numbers = (n: number, description: string): Schema => ({
  type: 'array',
  items: { type: 'number' },
  minItems: n,
  maxItems: n,
  description,
});
const joints = (what: string, unit: string): Schema =>
  numbers(
    G1_NUM_JOINTS,
    `${G1_NUM_JOINTS} ${what}, ${unit}, canonical Unitree SDK order: ${G1_JOINT_NAMES.join(', ')}`,
  );
const quat = (description: string): Schema =>
  numbers(4, `${description}; unit quaternion, scalar first (w, x, y, z), norm within 1e-3 of 1`);
const stampNs: Schema = {
  type: 'integer',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'publisher monotonic clock, ns (≤ 2^53 − 1)',
};
const runId: Schema = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$' };
const frameRows = (w: number, description: string): Schema => ({
  type: 'array',
  minItems: 2,
  items: numbers(w, description),
});
const gains: Schema = {
  type: 'object',
  required: ['kp', 'kd'],
  properties: {
    kp: { oneOf: [{ type: 'number', minimum: 0 }, numbers(G1_NUM_JOINTS, 'per joint')], description: 'N·m/rad' },
    kd: { oneOf: [{ type: 'number', minimum: 0 }, numbers(G1_NUM_JOINTS, 'per joint')], description: 'N·m·s/rad' },
  },
};

export const LOW_STATE_SCHEMA: Schema = {
  $schema: DRAFT,
  $id: G1_BRIDGE_SCHEMA_NAMES.lowstate,
  title: `${G1_BRIDGE_CONTRACT} /g1/lowstate`,
  description: "One sample of the robot's measured state (Unitree rt/lowstate).",
  type: 'object',
  required: ['tick', 'stamp_ns', 'q', 'dq', 'tau_est', 'imu'],
  properties: {
    tick: { type: 'integer', minimum: 0, description: 'monotonic sample counter of the source (Unitree tick)' },
    stamp_ns: stampNs,
    q: joints('joint angles', 'rad'),
    dq: joints('joint velocities', 'rad/s'),
    tau_est: joints('estimated joint torques', 'N·m'),
    imu: {
      type: 'object',
      required: ['quat_wxyz', 'gyro', 'accel'],
      properties: {
        quat_wxyz: quat('IMU attitude'),
        gyro: numbers(3, 'angular velocity, rad/s, IMU frame'),
        accel: numbers(3, 'specific force, m/s², IMU frame'),
      },
    },
    ref_frame: {
      type: ['integer', 'null'],
      minimum: 0,
      description: "optional: the clip frame (at the clip's fps) this state belongs to",
    },
    contacts: {
      type: 'array',
      maxItems: G1_BRIDGE_MAX_CONTACTS,
      description: 'optional (simulators): bodies in contact with anything but the floor-by-foot',
      items: {
        type: 'object',
        required: ['body', 'other', 'force_n'],
        properties: {
          body: { type: 'string' },
          other: { type: 'string' },
          force_n: { type: 'number', minimum: 0, description: 'normal force, N' },
        },
      },
    },
  },
};

export const ROOT_STATE_SCHEMA: Schema = {
  $schema: DRAFT,
  $id: G1_BRIDGE_SCHEMA_NAMES.rootState,
  title: `${G1_BRIDGE_CONTRACT} /g1/root_state`,
  description:
    'Pelvis pose in the world frame (z up), when the source knows it (simulator, motion capture, estimator).',
  type: 'object',
  required: ['stamp_ns', 'pos', 'quat_wxyz', 'source'],
  properties: {
    stamp_ns: stampNs,
    pos: numbers(3, 'pelvis position, m, world frame'),
    quat_wxyz: quat('pelvis orientation, world frame'),
    source: { enum: [...ROOT_STATE_SOURCES] },
  },
};

export const WBC_STATUS_SCHEMA: Schema = {
  $schema: DRAFT,
  $id: G1_BRIDGE_SCHEMA_NAMES.wbcStatus,
  title: `${G1_BRIDGE_CONTRACT} /g1/wbc_status`,
  description: "The whole-body controller's state; on every change, every command (with ack) and as a heartbeat.",
  type: 'object',
  required: ['state', 'clip_id', 'frame'],
  properties: {
    state: { enum: [...WBC_STATES] },
    clip_id: { type: ['string', 'null'] },
    frame: { type: ['integer', 'null'], minimum: 0, description: 'reference frame index tracked/reached' },
    stamp_ns: stampNs,
    run_id: { oneOf: [runId, { type: 'null' }] },
    episode_start_ns: { type: ['integer', 'null'], minimum: 0 },
    outcome: { enum: [...EPISODE_OUTCOMES, null] },
    reason: { type: 'string' },
    runner: {
      type: 'object',
      description: 'optional: a robot-side runner (motionbench g1-runner) reports its DDS link and motor mode',
      required: [
        'mode',
        'lowcmd_hz',
        'lowcmd_period_p99_ms',
        'crc_errors',
        'remote_stop_held',
        'lowstate_age_ms',
        'interface',
        'domain',
      ],
      properties: {
        mode: { enum: [...RUNNER_MOTOR_MODES] },
        lowcmd_hz: { type: ['number', 'null'], minimum: 0 },
        lowcmd_period_p99_ms: { type: ['number', 'null'], minimum: 0 },
        crc_errors: { type: 'integer', minimum: 0 },
        remote_stop_held: { type: 'boolean' },
        lowstate_age_ms: { type: ['number', 'null'], minimum: 0 },
        interface: { type: 'string' },
        domain: { type: 'integer', minimum: 0, maximum: 232 },
      },
    },
    ack: {
      type: 'object',
      required: ['seq', 'command', 'ok', 'code', 'message'],
      properties: {
        seq: { type: ['integer', 'null'], minimum: 0 },
        command: { enum: [...COMMAND_NAMES, null] },
        ok: { type: 'boolean' },
        code: { enum: [...ACK_CODES] },
        message: { type: 'string' },
      },
    },
  },
};

const clipSchema: Schema = {
  type: 'object',
  description: 'a clip in the motionbench-clip/1 JSON shape',
  required: ['format', 'fps', 'joint_order', 'frames'],
  properties: {
    format: { const: 'motionbench-clip/1' },
    name: { type: 'string' },
    fps: { type: 'number', exclusiveMinimum: 0, maximum: 1000 },
    capability_group: { enum: ['upper_body', 'locomotion', 'in_place', 'dynamic', 'low_posture', null] },
    joint_order: { type: 'array', items: { type: 'string' }, const: [...G1_JOINT_NAMES] },
    frames: {
      type: 'object',
      required: ['root_pos_m', 'root_quat_wxyz', 'joint_pos_rad'],
      properties: {
        root_pos_m: frameRows(3, 'root position, m, world frame'),
        root_quat_wxyz: frameRows(4, 'root orientation, w x y z'),
        joint_pos_rad: frameRows(G1_NUM_JOINTS, 'joint angles, rad'),
        joint_vel_rad_s: frameRows(G1_NUM_JOINTS, 'optional joint velocities, rad/s'),
      },
    },
  },
};

const bindingSchema: Schema = {
  type: 'object',
  description: 'the WbcBinding record as the console stores it (field names of motionbench-wbc-binding/1)',
  required: ['id', 'version', 'kind', 'controlRateHz'],
  properties: {
    id: { type: 'string' },
    version: { type: 'string' },
    kind: { enum: ['builtin', 'onnx', 'remote'] },
    controlRateHz: { type: 'number', exclusiveMinimum: 0, maximum: 2000 },
    label: { type: 'string' },
    checkpointHash: { type: ['string', 'null'] },
    family: {
      enum: [...POLICY_FAMILIES],
      description: 'a released tracking policy (kind onnx): the robot reads policyPath and checks checkpointHash',
    },
    policyPath: { type: 'string' },
    adapter: { type: 'string' },
    physicsId: { type: 'string' },
    bakedClipId: { type: ['string', 'null'] },
    preset: {
      type: 'string',
      description: 'the declared preset (<id>@<version>) a released policy without its own interface is read under',
    },
    gains: { oneOf: [gains, { type: 'null' }] },
    rootAssist: {
      oneOf: [
        {
          type: 'object',
          required: ['kpNPerM', 'kdNsPerM', 'kpNmPerRad', 'kdNmsPerRad'],
          properties: {
            kpNPerM: { type: 'number', minimum: 0 },
            kdNsPerM: { type: 'number', minimum: 0 },
            kpNmPerRad: { type: 'number', minimum: 0 },
            kdNmsPerRad: { type: 'number', minimum: 0 },
          },
        },
        { type: 'null' },
      ],
    },
    modelFile: { type: 'string' },
    interface: { type: 'object' },
  },
};

const initialStateSchema: Schema = {
  type: 'object',
  required: ['root_pos_m', 'root_quat_wxyz', 'joint_pos_rad'],
  properties: {
    root_pos_m: numbers(3, 'm, world frame'),
    root_quat_wxyz: quat('root orientation'),
    joint_pos_rad: joints('joint angles', 'rad'),
    joint_vel_rad_s: joints('joint velocities', 'rad/s'),
    place_on_floor: { type: 'boolean', default: false },
  },
};

const command = (name: string, args: Schema | null, argsRequired: boolean): Schema => ({
  type: 'object',
  required: argsRequired ? ['command', 'args'] : ['command'],
  properties: {
    command: { const: name },
    seq: { type: 'integer', minimum: 0, description: 'echoed in the ack' },
    contract: { const: G1_BRIDGE_CONTRACT },
    args: args ?? { type: 'object' },
  },
});
const reasonArgs: Schema = { type: 'object', properties: { reason: { type: 'string' } } };

export const COMMAND_SCHEMA: Schema = {
  $schema: DRAFT,
  $id: G1_BRIDGE_SCHEMA_NAMES.command,
  title: `${G1_BRIDGE_CONTRACT} /console/command`,
  description: 'A command from the console. Every command is answered by a wbc_status carrying an ack with its seq.',
  oneOf: [
    command(
      'prepare',
      {
        type: 'object',
        required: ['clip', 'binding'],
        properties: {
          clip: clipSchema,
          binding: bindingSchema,
          seed: { type: 'integer', minimum: 0 },
          run_id: runId,
          clip_id: { type: 'string' },
        },
      },
      true,
    ),
    command('start', { type: 'object', properties: { run_id: runId } }, false),
    command(
      'stop',
      { type: 'object', properties: { reason: { type: 'string' }, outcome: { enum: [...STOP_OUTCOMES] } } },
      false,
    ),
    command('damp', reasonArgs, false),
    command('hold', reasonArgs, false),
    command(
      'reset',
      { type: 'object', required: ['initial_state'], properties: { initial_state: initialStateSchema, run_id: runId } },
      true,
    ),
  ],
};

export const G1_BRIDGE_SCHEMAS = {
  lowstate: LOW_STATE_SCHEMA,
  rootState: ROOT_STATE_SCHEMA,
  wbcStatus: WBC_STATUS_SCHEMA,
  command: COMMAND_SCHEMA,
} as const;

/** A channel description for the Foxglove `advertise` (JSON encoding, JSON Schema). */
export function g1BridgeChannel(
  which: keyof typeof G1_BRIDGE_SCHEMAS,
  topic: string,
): {
  topic: string;
  encoding: 'json';
  schemaName: string;
  schema: string;
  schemaEncoding: 'jsonschema';
} {
  return {
    topic,
    encoding: 'json',
    schemaName: G1_BRIDGE_SCHEMA_NAMES[which],
    schema: JSON.stringify(G1_BRIDGE_SCHEMAS[which]),
    schemaEncoding: 'jsonschema',
  };
}
