import type { EpisodeOutcome } from '../episode/episodeOutcome';
import type { WbcBinding } from '../wbc/wbcBinding';

// `g1-bridge/1`: the message contract between the console and a simulator or robot bridge,
// carried over the Foxglove WebSocket protocol (foxglove.websocket.v1) with JSON encoding
// (DESIGN §5.1; the full contract for bridge implementers is docs/G1_BRIDGE.md).
//
// These are the wire shapes: snake_case keys, plain JSON arrays, quaternions scalar first
// (w, x, y, z), joints in the canonical Unitree SDK order (src/domain/robot/g1Joints.ts), SI
// units (m, rad, rad/s, N·m, m/s²). Decoders turn them into domain objects at the boundary.
// (One exception to snake_case: a prepare's `binding` is the console's WbcBinding record as is.)
//
// Versioning: a later `g1-bridge/1` may add optional fields (readers ignore unknown fields);
// any change to a field's meaning, unit, frame or requiredness, or a new required field, is
// `g1-bridge/2` with new schema names. The major version is in every schema name and in the
// server's `contract` metadata, so a reader refuses a contract it does not know.

export const G1_BRIDGE_CONTRACT = 'g1-bridge/1';

export const G1_BRIDGE_TOPICS = {
  lowstate: '/g1/lowstate',
  rootState: '/g1/root_state',
  wbcStatus: '/g1/wbc_status',
  /** Client-published channel (the console advertises it). */
  command: '/console/command',
} as const;

export const G1_BRIDGE_SCHEMA_NAMES = {
  lowstate: `${G1_BRIDGE_CONTRACT}/LowState`,
  rootState: `${G1_BRIDGE_CONTRACT}/RootState`,
  wbcStatus: `${G1_BRIDGE_CONTRACT}/WbcStatus`,
  command: `${G1_BRIDGE_CONTRACT}/Command`,
} as const;

/** Message encoding of every channel. */
export const G1_BRIDGE_ENCODING = 'json';

/** Size limits, bytes of the JSON text; a larger message is rejected unparsed. */
export const G1_BRIDGE_LIMITS = {
  lowStateBytes: 64 * 1024,
  rootStateBytes: 8 * 1024,
  wbcStatusBytes: 64 * 1024,
  /** A prepare carries the whole clip: 32 MiB is about 15 min at 50 fps. */
  commandBytes: 32 * 1024 * 1024,
  /** ids, names, labels */
  idChars: 200,
  /** reasons, messages */
  textChars: 2000,
} as const;

/** A quaternion whose norm differs from 1 by more than this is malformed. */
export const G1_BRIDGE_QUAT_TOLERANCE = 1e-3;

/** Server metadata keys (serverInfo.metadata, all values strings). */
export const G1_BRIDGE_METADATA = {
  contract: 'contract',
  executionDomain: 'execution_domain',
  stateRateHz: 'state_rate_hz',
  exactReset: 'exact_reset',
  bindingKinds: 'binding_kinds',
  contacts: 'contacts',
  jointTorque: 'joint_torque',
  commands: 'commands',
  backendId: 'backend_id',
  backendName: 'backend_name',
  /** Unix time, ms (decimal string), of the publisher's stamp_ns = 0: lets a client on a synchronised clock measure one-way latency. */
  stampOriginUnixMs: 'stamp_origin_unix_ms',
} as const;

// ---------------------------------------------------------------------------------------------
// Server → client

/** `/g1/lowstate`: one sample of Unitree's rt/lowstate. */
export interface LowStateMsg {
  /** Monotonic sample counter of the source (Unitree's tick); never decreases on a connection. */
  tick: number;
  /** Sample time, ns, on the publisher's monotonic clock; integer ≤ 2^53 − 1. */
  stamp_ns: number;
  /** 29 joint angles, rad, canonical order (motor_state[i].q). */
  q: number[];
  /** 29 joint velocities, rad/s (motor_state[i].dq). */
  dq: number[];
  /** 29 estimated joint torques, N·m (motor_state[i].tau_est). */
  tau_est: number[];
  imu: {
    /** Attitude, unit quaternion w, x, y, z (imu_state.quaternion, same order). */
    quat_wxyz: number[];
    /** Angular velocity, rad/s, IMU frame. */
    gyro: number[];
    /** Specific force, m/s², IMU frame (≈ +9.81 on z when standing still). */
    accel: number[];
  };
  /** Optional: the clip frame (at the clip's own fps) this state belongs to, during an episode. */
  ref_frame?: number | null;
  /**
   * Optional (simulators): bodies in contact with anything but the floor-by-foot, as the
   * StateFrame has them; absent when the source does not know (a robot).
   */
  contacts?: Array<{ body: string; other: string; force_n: number }>;
}

/** Most contacts one lowstate may list. */
export const G1_BRIDGE_MAX_CONTACTS = 256;

export type RootStateSource = 'mocap' | 'estimator' | 'sim';
export const ROOT_STATE_SOURCES: readonly RootStateSource[] = ['mocap', 'estimator', 'sim'];

/** `/g1/root_state` (optional topic): the pelvis pose in the world frame, z up. */
export interface RootStateMsg {
  /** Same clock as lowstate; equal to the lowstate stamp it belongs to when both are sampled together. */
  stamp_ns: number;
  /** Pelvis position, m, world frame. */
  pos: number[];
  /** Pelvis orientation, unit quaternion w, x, y, z, world frame. */
  quat_wxyz: number[];
  source: RootStateSource;
}

/** `standing`: a robot-side runner's declared standing controller keeps the robot up (after a clip). */
export type WbcState = 'idle' | 'damping' | 'ready' | 'tracking' | 'done' | 'fault' | 'standing';
export const WBC_STATES: readonly WbcState[] = ['idle', 'damping', 'ready', 'tracking', 'done', 'fault', 'standing'];
/**
 * The states in which a run's episode is over (its wbc_status carries the run's outcome): the clip
 * ran out (`done`, or `standing` when a declared standing controller took over at its end), the
 * motors were damped, the controller faulted, or the robot side went idle.
 */
export const WBC_EPISODE_OVER_STATES: ReadonlySet<WbcState> = new Set(['done', 'standing', 'damping', 'fault', 'idle']);

export type CommandName = 'prepare' | 'start' | 'stop' | 'damp' | 'hold' | 'reset';
export const COMMAND_NAMES: readonly CommandName[] = ['prepare', 'start', 'stop', 'damp', 'hold', 'reset'];

export type StopOutcome = Extract<EpisodeOutcome, 'aborted_by_operator' | 'estop' | 'intervention'>;
export const STOP_OUTCOMES: readonly StopOutcome[] = ['aborted_by_operator', 'estop', 'intervention'];

/**
 * The outcome a `stop` carries on the wire for an episode outcome the console records: only
 * g1-bridge/1's own stop outcomes travel (a `link_lost` stop goes out as a plain stop).
 */
export function wireStopOutcome(outcome: EpisodeOutcome | undefined): StopOutcome | undefined {
  return outcome !== undefined && (STOP_OUTCOMES as readonly string[]).includes(outcome)
    ? (outcome as StopOutcome)
    : undefined;
}

/** The answer to one command, carried by the wbc_status published right after it. */
export interface CommandAck {
  /** The command's `seq`, or null when it had none or could not be read. */
  seq: number | null;
  command: CommandName | null;
  ok: boolean;
  /** 'ok' or a refusal code (see ACK_CODES). */
  code: AckCode;
  message: string;
}

export type AckCode =
  | 'ok'
  | 'malformed'
  | 'oversized'
  | 'unknown_command'
  | 'unsupported_contract'
  | 'not_controller'
  | 'bad_state'
  | 'unsupported'
  | 'backend_error';
export const ACK_CODES: readonly AckCode[] = [
  'ok',
  'malformed',
  'oversized',
  'unknown_command',
  'unsupported_contract',
  'not_controller',
  'bad_state',
  'unsupported',
  'backend_error',
];

/** `/g1/wbc_status`: the controller's state; published on every change, on every command, and as a heartbeat. */
export interface WbcStatusMsg {
  state: WbcState;
  /** Id of the prepared/running/last clip (motionbench clip id), null when none. */
  clip_id: string | null;
  /** Reference frame index being tracked (tracking) or reached (done), null otherwise. */
  frame: number | null;
  /** Optional: publisher clock, ns (same clock as lowstate). */
  stamp_ns?: number;
  /** Optional: the episode's run id (tracking, done, damping, fault after an episode). */
  run_id?: string | null;
  /** Optional: stamp_ns at which the current/last episode started (its time 0). */
  episode_start_ns?: number | null;
  /** Optional: how the last episode ended (done, damping, fault, idle after it). */
  outcome?: EpisodeOutcome | null;
  /** Optional: human-readable detail (why done/fault). */
  reason?: string;
  /** Optional: present when this status answers a command. */
  ack?: CommandAck;
  /** Optional: the robot-side runner's own state (`motionbench g1-runner`); absent from simulators. */
  runner?: RunnerStatus;
}

/** The runner's motor mode (docs/G1_RUNNER.md): what its LowCmd does to the motors now. */
export type RunnerMotorMode = 'damping' | 'ramping' | 'holding' | 'tracking' | 'standing';
export const RUNNER_MOTOR_MODES: readonly RunnerMotorMode[] = ['damping', 'ramping', 'holding', 'tracking', 'standing'];

/**
 * `wbc_status.runner`: what a robot-side runner reports of its DDS link, at the heartbeat rate.
 * Rates and counts are the runner's own measurements over its last report interval (~1 s).
 */
export interface RunnerStatus {
  mode: RunnerMotorMode;
  /** LowCmd messages written per second, measured; null before the first report. */
  lowcmd_hz: number | null;
  /** LowCmd period p99 over the last report interval, ms; null before the first report. */
  lowcmd_period_p99_ms: number | null;
  /** LowState messages dropped for a wrong CRC since the runner started. */
  crc_errors: number;
  /** The wireless remote's stop combination (L2 + B) is held in the latest lowstate. */
  remote_stop_held: boolean;
  /** Milliseconds since the last lowstate the runner received over DDS; null before the first. */
  lowstate_age_ms: number | null;
  /** DDS network interface and domain id the runner drives. */
  interface: string;
  domain: number;
  /** Optional: the motion switcher's last answer (asked at `prepare`); null before the first. */
  motion_switcher?: RunnerMotionSwitcherStatus | null;
}

/** What the robot's motion switcher said to the runner's last CheckMode (docs/G1_RUNNER.md "Motion switcher"). */
export type MotionSwitcherAnswerKind = 'free' | 'mode' | 'error' | 'unreadable' | 'no_answer';
export const MOTION_SWITCHER_ANSWER_KINDS: readonly MotionSwitcherAnswerKind[] = [
  'free',
  'mode',
  'error',
  'unreadable',
  'no_answer',
];

export interface RunnerMotionSwitcherStatus {
  /** free: no high-level mode; mode: one owns the motors; error/unreadable: an unusable answer; no_answer: silence. */
  answer: MotionSwitcherAnswerKind;
  /** The mode's name when answer is `mode`, else null. */
  mode: string | null;
  /** Whether prepare went on under this answer. */
  allowed: boolean;
  /** The runner's trace line for it. */
  detail: string;
}

// ---------------------------------------------------------------------------------------------
// Client → server: `/console/command`

/** A clip in the shape of `motionbench-clip/1` JSON (src/domain/motion/motionbenchJson.ts). */
export interface WireClip {
  format: 'motionbench-clip/1';
  name?: string;
  fps: number;
  capability_group?: string | null;
  joint_order: string[];
  frames: {
    root_pos_m: number[][];
    root_quat_wxyz: number[][];
    joint_pos_rad: number[][];
    /** Optional reference joint velocities, rad/s. */
    joint_vel_rad_s?: number[][];
  };
}

/**
 * A WBC binding as the console stores it: the WbcBinding record as JSON, with the field names of
 * `motionbench-wbc-binding/1` (src/domain/wbc/wbcBinding.ts, docs/ONNX_POLICIES.md) — e.g.
 * `{kind: 'builtin', id, version, label, controlRateHz, gains, rootAssist, checkpointHash}`.
 * An `onnx` binding's modelFile is a path on the server's machine.
 */
export type WireBinding = WbcBinding;

export interface WireInitialState {
  root_pos_m: number[];
  root_quat_wxyz: number[];
  joint_pos_rad: number[];
  joint_vel_rad_s?: number[];
  /** Lower the root so the lowest foot touches the floor (default false). */
  place_on_floor?: boolean;
}

interface CommandEnvelope {
  /** Client sequence number echoed in the ack; non-negative integer. */
  seq?: number;
  /** Optional; when present it must be `g1-bridge/1`. */
  contract?: string;
}

export type WireCommand = CommandEnvelope &
  (
    | {
        command: 'prepare';
        args: { clip: WireClip; binding: WireBinding; seed?: number; run_id?: string; clip_id?: string };
      }
    | { command: 'start'; args?: { run_id?: string } }
    | { command: 'stop'; args?: { reason?: string; outcome?: StopOutcome } }
    | { command: 'damp'; args?: { reason?: string } }
    | { command: 'hold'; args?: { reason?: string } }
    | { command: 'reset'; args: { initial_state: WireInitialState; run_id?: string } }
  );
