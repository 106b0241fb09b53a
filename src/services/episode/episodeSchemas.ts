// The episode file (`motionbench-episode/1`): an MCAP file Foxglove opens directly. Every
// channel is JSON-encoded (messageEncoding "json") with a JSON Schema (schema encoding
// "jsonschema"); log and publish times are nanoseconds since the Unix epoch (episode start in
// wall-clock time + the frame's time on the episode clock). Field names are those of the
// program's types (StateFrame etc.), units in the names.
//
// Topics
//   /reference        the reference on the 50 Hz common timeline, one message per frame
//   /executed/state   the executed StateFrames (50 Hz), plus the simulator's root velocities
//   /commands         the command of each control step at a recorded frame: joint targets,
//                     effective PD gains, root-assist wrench
//   /events           episode_start, hard_failure, stop_requested, problem, episode_end, and the
//                     trace store's refusal, human_reset, intervention, recovery, … (EPISODE_EVENT_TYPES)
//   /metrics          live readings per frame (kind "live") and the final readings ("final")
// Metadata records: "episode" (what ran) and "result" (how it ended, trajectory_sha256).

import { TRACE_EVENT_KINDS } from '../../domain/trace/records';

export const EPISODE_FORMAT = 'motionbench-episode/1';

/**
 * Event types on /events. The trace store (src/services/trace) records the same kinds in
 * campaign.sqlite; refusal and human_reset always carry a reason (DESIGN §6).
 */
export const EPISODE_EVENT_TYPES = TRACE_EVENT_KINDS;

export const TOPICS = {
  reference: '/reference',
  executed: '/executed/state',
  commands: '/commands',
  events: '/events',
  metrics: '/metrics',
} as const;

export type EpisodeTopic = (typeof TOPICS)[keyof typeof TOPICS];

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

export const SCHEMAS: Record<EpisodeTopic, { name: string; schema: object }> = {
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
  [TOPICS.executed]: {
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
  },
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
