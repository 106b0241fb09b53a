// The episode file: an MCAP file Foxglove opens directly. Log and publish times are nanoseconds
// since the Unix epoch (episode start in wall-clock time + the frame's time on the episode clock).
// Two formats, both read by episodeReader.ts:
//
//   `motionbench-episode/2` (the format written by default): the high-rate topics in protobuf, their
//     schemas stored in the file as a FileDescriptorSet (episodeProto.ts), chunks compressed with
//     zstd (chunkCompression.ts); /events and the final /metrics stay JSON (a few messages).
//   `motionbench-episode/1`: every channel JSON (messageEncoding "json", JSON Schema), chunks
//     uncompressed. Still written on request (the benchmark's baseline) and read forever.
//
// Topics
//   /reference        the reference on the 50 Hz common timeline, one message per frame
//   /executed/state   the executed StateFrames (the simulator's at 50 Hz, with its root
//                     velocities; a robot's at its stream rate, 500 Hz): /2 uses
//                     motionbench.StateFrame (double) for simulator episodes and
//                     motionbench.RobotState (measured joints and IMU in float32, as the G1
//                     publishes them) for real-robot episodes
//   /commands         the command of each control step at a recorded frame: joint targets,
//                     effective PD gains, root-assist wrench
//   /events           episode_start, hard_failure, stop_requested, problem, episode_end, and the
//                     trace store's refusal, human_reset, intervention, recovery, … (EPISODE_EVENT_TYPES)
//   /metrics          the final readings ("final"); in /1 also the live readings per frame ("live")
//   /metrics/live     (/2) the live readings per frame, motionbench.LiveMetrics
//   /exec/transforms, /ref/transforms, /exec/scene, /ref/scene
//                     (/2, when the recorder has the robot's model) what Foxglove's 3D panel
//                     draws: foxglove.FrameTransforms and foxglove.SceneUpdate (sceneTracks.ts)
// Metadata records: "episode" (what ran; `format` names the format) and "result" (how it ended,
// trajectory_sha256).

import { TRACE_EVENT_KINDS } from '../../domain/trace/records';

/** The JSON format (every channel JSON, uncompressed chunks). */
export const EPISODE_FORMAT_JSON = 'motionbench-episode/1';
/** The compact format: protobuf high-rate topics, zstd chunks (what the recorder writes). */
export const EPISODE_FORMAT = 'motionbench-episode/2';

/**
 * Event types on /events. The trace store (src/services/trace) records the same kinds in
 * campaign.sqlite; refusal and human_reset always carry a reason (DESIGN §6).
 */
export const EPISODE_EVENT_TYPES = TRACE_EVENT_KINDS;

export const TOPICS = {
  reference: '/reference',
  executed: '/executed/state',
  /** The robot's state after the clip's end, while the console watches whether it stays up (real trials). */
  afterClip: '/executed/after_clip',
  commands: '/commands',
  events: '/events',
  metrics: '/metrics',
  metricsLive: '/metrics/live',
  execTransforms: '/exec/transforms',
  refTransforms: '/ref/transforms',
  execScene: '/exec/scene',
  refScene: '/ref/scene',
} as const;

export type EpisodeTopic = (typeof TOPICS)[keyof typeof TOPICS];
/** The topics of `motionbench-episode/1` (no /metrics/live: live readings went on /metrics; no 3D tracks). */
export type JsonEpisodeTopic =
  | typeof TOPICS.reference
  | typeof TOPICS.executed
  | typeof TOPICS.afterClip
  | typeof TOPICS.commands
  | typeof TOPICS.events
  | typeof TOPICS.metrics;

const num = { type: 'number' } as const;
const numOrNull = { type: ['number', 'null'] } as const;
const vec = (n: number, description?: string) => ({
  type: 'array',
  items: num,
  minItems: n,
  maxItems: n,
  ...(description ? { description } : {}),
});
const vecOrNull = (n: number, description?: string) => ({
  type: ['array', 'null'],
  items: num,
  minItems: n,
  maxItems: n,
  ...(description ? { description } : {}),
});
const J = 29;

const obj = (title: string, properties: Record<string, unknown>, required: string[]) => ({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title,
  type: 'object',
  properties,
  required,
});

const EXECUTED_STATE_SCHEMA = {
  name: 'motionbench.StateFrame',
  schema: obj(
    'Executed state (StateFrame) at 50 Hz',
    {
      timeS: num,
      tick: { type: 'integer' },
      referenceFrame: { type: ['integer', 'null'] },
      rootPosM: vecOrNull(3, 'world, m; null without a global position'),
      rootQuatWxyz: vecOrNull(4),
      jointPosRad: vec(J),
      jointVelRadS: vec(J),
      jointTauNm: vec(J),
      imu: {
        type: 'object',
        properties: { quatWxyz: vec(4), gyroRadS: vec(3), accelMS2: vec(3) },
        required: ['quatWxyz', 'gyroRadS', 'accelMS2'],
      },
      contacts: {
        type: ['array', 'null'],
        items: {
          type: 'object',
          properties: { body: { type: 'string' }, other: { type: 'string' }, forceN: num },
          required: ['body', 'other', 'forceN'],
        },
      },
      rootLinVelMps: vecOrNull(3, 'free-joint qvel[0..3], world frame'),
      rootAngVelRadS: vecOrNull(3, 'free-joint qvel[3..6], pelvis frame'),
    },
    ['timeS', 'tick', 'jointPosRad', 'jointVelRadS', 'jointTauNm', 'imu'],
  ),
};

/** The JSON Schemas of `motionbench-episode/1`'s channels, and of /2's JSON channels (events, final metrics). */
export const SCHEMAS: Record<JsonEpisodeTopic, { name: string; schema: object }> = {
  [TOPICS.reference]: {
    name: 'motionbench.ReferenceFrame',
    schema: obj(
      'Reference frame on the 50 Hz common timeline',
      {
        timeS: num,
        frame: { type: 'integer' },
        rootPosM: vec(3, 'world, m'),
        rootQuatWxyz: vec(4),
        jointPosRad: vec(J, 'canonical G1 joint order'),
      },
      ['timeS', 'frame', 'rootPosM', 'rootQuatWxyz', 'jointPosRad'],
    ),
  },
  [TOPICS.executed]: EXECUTED_STATE_SCHEMA,
  // the same message type after the clip's end
  [TOPICS.afterClip]: EXECUTED_STATE_SCHEMA,
  [TOPICS.commands]: {
    name: 'motionbench.Command',
    schema: obj(
      'Command of the control step at a recorded frame',
      {
        timeS: num,
        frame: { type: 'integer' },
        jointTargetRad: vec(J),
        kp: vec(J, 'effective servo stiffness, N·m/rad'),
        kd: vec(J, 'effective servo damping, N·m·s/rad'),
        rootAssistWrench: {
          type: ['object', 'null'],
          properties: { forceN: vec(3, 'world'), torqueNm: vec(3, 'world') },
        },
      },
      ['timeS', 'frame', 'jointTargetRad'],
    ),
  },
  [TOPICS.events]: {
    name: 'motionbench.EpisodeEvent',
    schema: obj(
      'Episode event',
      {
        timeS: num,
        type: { type: 'string', enum: [...EPISODE_EVENT_TYPES] },
        reason: { type: 'string', description: 'why (refusals and human-gated resets always have one)' },
        message: { type: 'string' },
        data: { type: 'object' },
      },
      ['timeS', 'type', 'message'],
    ),
  },
  [TOPICS.metrics]: {
    name: 'motionbench.Metrics',
    schema: obj(
      'Live (per frame) or final mb-metrics/1 readings',
      {
        timeS: num,
        kind: { type: 'string', enum: ['live', 'final'] },
        frame: { type: 'integer' },
        mpjpeLMm: numOrNull,
        jointRmseRad: numOrNull,
        firstFailureFrame: { type: 'integer' },
        readings: { type: 'object', description: 'the `motionbench metrics --json` document (final only)' },
      },
      ['timeS', 'kind'],
    ),
  },
};

export interface ReferenceMessage {
  timeS: number;
  frame: number;
  rootPosM: number[];
  rootQuatWxyz: number[];
  jointPosRad: number[];
}

export interface ExecutedMessage {
  timeS: number;
  tick: number;
  referenceFrame: number | null;
  rootPosM: number[] | null;
  rootQuatWxyz: number[] | null;
  jointPosRad: number[];
  jointVelRadS: number[];
  jointTauNm: number[];
  imu: { quatWxyz: number[]; gyroRadS: number[]; accelMS2: number[] };
  contacts: { body: string; other: string; forceN: number }[] | null;
  rootLinVelMps?: number[] | null;
  rootAngVelRadS?: number[] | null;
}

export interface CommandMessage {
  timeS: number;
  frame: number;
  jointTargetRad: number[];
  kp?: number[];
  kd?: number[];
  rootAssistWrench?: { forceN: number[]; torqueNm: number[] } | null;
}

export type EpisodeEventType = (typeof EPISODE_EVENT_TYPES)[number];

export interface EventMessage {
  timeS: number;
  type: EpisodeEventType;
  message: string;
  reason?: string;
  data?: Record<string, unknown>;
}

export interface MetricsMessage {
  timeS: number;
  kind: 'live' | 'final';
  frame?: number;
  mpjpeLMm?: number | null;
  jointRmseRad?: number | null;
  firstFailureFrame?: number;
  readings?: Record<string, unknown>;
}
