// Writes an episode file (src/services/episode/episodeSchemas.ts): `motionbench-episode/2`
// (protobuf, zstd chunks) unless asked for the JSON format /1 (the benchmark's baseline). Frames are written as they
// arrive, in time order (reference frame k just before executed frame k), into chunks: by default
// a chunk closes when it passes 128 KiB; a flush policy (every N frames, every T ms of wall time,
// fdatasync at each chunk) bounds what a killed process can lose to the open chunk. close()
// writes the summary (indexes, statistics) Foxglove uses for random access. The caller awaits
// each call before the next; the backend's listener backpressure makes that natural. Writing goes
// through ChunkedMcapWriter (same @mcap/core record builders, explicit chunk boundaries).

import { performance } from 'node:perf_hooks';
import type { StateFrame } from '../../domain/robot/stateFrame';
import type { MotionClip } from '../../domain/motion/motionClip';
import { ChunkedMcapWriter } from './chunkedMcapWriter';
import {
  encodeCommand,
  encodeExecuted,
  encodeLiveMetrics,
  encodeReference,
  executedSchemaName,
  type MeasuredPrecision,
} from './episodeCodec';
import { EPISODE_DESCRIPTOR_SET } from './episodeProto';
import { FOXGLOVE_DESCRIPTOR_SET, FOXGLOVE_FRAME_TRANSFORMS, FOXGLOVE_SCENE_UPDATE } from './foxgloveScene';
import { SceneTracks } from './sceneTracks';
import { TRACK_PRECISION_METADATA } from './trackPrecision';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import {
  EPISODE_FORMAT,
  EPISODE_FORMAT_JSON,
  SCHEMAS,
  TOPICS,
  type JsonEpisodeTopic,
  type CommandMessage,
  type EpisodeEventType,
  type EpisodeTopic,
  type ExecutedMessage,
  type MetricsMessage,
  type ReferenceMessage,
} from './episodeSchemas';

/** Simulator data beside a frame (SimFrameExtras fits this shape). */
export interface ExecutedExtras {
  rootLinVelMps?: ArrayLike<number> | null;
  rootAngVelRadS?: ArrayLike<number> | null;
  command?: { jointTargetRad: ArrayLike<number>; kp?: ArrayLike<number>; kd?: ArrayLike<number> } | null;
  assistWrench?: ArrayLike<number> | null;
  live?: { mpjpeLMm: number | null; jointRmseRad: number | null; firstFailureFrame: number } | null;
}

/** The reference on the 50 Hz timeline (e.g. resampleClip(clip, 50)). */
export interface ReferenceFrames {
  frameCount: number;
  rateHz: number;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
}

/** The reference frames of a clip already on the contract's timeline (resampleClip(clip, 50)). */
export function referenceFramesOf(ref50: MotionClip): ReferenceFrames {
  return {
    frameCount: ref50.frameCount,
    rateHz: ref50.fps,
    rootPosM: ref50.rootPosM,
    rootQuatWxyz: ref50.rootQuatWxyz,
    jointPosRad: ref50.jointPosRad,
  };
}

/** When chunks close, and whether they are synced to disk. */
export interface FlushPolicy {
  /** Close a chunk after this many executed frames (default: no frame limit). */
  everyFrames?: number;
  /** Close a chunk once its first message is this many ms old (wall clock), checked as frames arrive and by a timer (default: no time limit). */
  intervalMs?: number;
  /** Close a chunk when it passes this many bytes (default 128 KiB). */
  maxChunkBytes?: number;
  /** fdatasync after every chunk (default false). */
  fsync?: boolean;
  /** writeFrames waits for the disk while more than this many bytes are queued (default 8 MiB). */
  maxBacklogBytes?: number;
}

export interface EpisodeWriterStats {
  /** Executed frames written (queued or in the file). */
  frames: number;
  /** Executed frames in closed chunks that reached the file (with fsync: the disk). */
  durableFrames: number;
  chunks: number;
  /** Bytes handed to the OS. */
  bytes: number;
  /**
   * Executed frames stored with their double-precision copy (`exact`): a 'float32' episode's
   * frames whose measured values were not all exactly float32.
   */
  exactCopies: number;
}

const arr = (a: ArrayLike<number> | null | undefined): number[] | null => (a ? Array.from(a) : null);

/** A frame as the JSON episode (motionbench-episode/1) stores it on its executed topic. */
export const executedJsonMessage = (f: StateFrame, x: ExecutedExtras | null): ExecutedMessage => ({
  timeS: f.timeS,
  tick: f.tick,
  referenceFrame: f.referenceFrame,
  rootPosM: arr(f.rootPosM),
  rootQuatWxyz: arr(f.rootQuatWxyz),
  jointPosRad: Array.from(f.jointPosRad),
  jointVelRadS: Array.from(f.jointVelRadS),
  jointTauNm: Array.from(f.jointTauNm),
  imu: {
    quatWxyz: Array.from(f.imu.quatWxyz),
    gyroRadS: Array.from(f.imu.gyroRadS),
    accelMS2: Array.from(f.imu.accelMS2),
  },
  contacts: f.contacts ? f.contacts.map((c) => ({ body: c.body, other: c.other, forceN: c.forceN })) : null,
  rootLinVelMps: arr(x?.rootLinVelMps),
  rootAngVelRadS: arr(x?.rootAngVelRadS),
});
const encoder = new TextEncoder();

export interface EpisodeWriterOptions {
  /** Wall-clock start of the episode, ms since the epoch (default: now). */
  startMs?: number;
  /** Chunking and durability (default: 128 KiB chunks, no fsync). */
  flush?: FlushPolicy;
  /** Refuse to replace an existing file (default false). */
  exclusive?: boolean;
  /** Metadata record "episode": what ran (values are stringified). */
  episode: Record<string, string | number | boolean | null>;
  /** The reference, written frame by frame alongside the executed state. */
  reference?: ReferenceFrames | null;
  /** 'protobuf' (default): `motionbench-episode/2`; 'json': `motionbench-episode/1`. */
  encoding?: 'protobuf' | 'json';
  /**
   * How a protobuf episode stores the measured joints and IMU (default 'float64'): 'float32' for
   * a real robot's lowstate, which a G1 publishes in float32 (a frame that is not exactly float32
   * keeps a double copy; nothing is lost).
   */
  measuredPrecision?: MeasuredPrecision;
  /**
   * The robot's model: a protobuf episode then carries the 3D tracks Foxglove draws (both
   * transform trees, at the precision trackPrecision.ts states, and the geometry, sceneTracks.ts).
   * Without it the episode has none.
   */
  robot?: RobotProfile | null;
}

/** A channel: its id and how its messages are encoded. */
interface Channel {
  id: number;
  json: boolean;
  schemaId: number;
}

export class EpisodeWriter {
  private readonly channels = new Map<EpisodeTopic, Channel>();
  private exactCopies = 0;
  private scene: SceneTracks | null = null;
  private readonly seq = new Map<EpisodeTopic, number>();
  private readonly startNs: bigint;
  private refWritten = 0;
  private framesWritten = 0;
  private framesInChunk = 0;
  private closed = false;
  private closedWith: { bytes: number; sha256: string } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly everyFrames: number;
  private readonly intervalMs: number;
  private readonly maxBacklog: number;

  private constructor(
    readonly file: string,
    private readonly mcap: ChunkedMcapWriter,
    private readonly reference: ReferenceFrames | null,
    startMs: number,
    policy: FlushPolicy,
    private readonly encoding: 'protobuf' | 'json',
    private readonly precision: MeasuredPrecision,
  ) {
    this.startNs = BigInt(Math.round(startMs)) * 1_000_000n;
    this.everyFrames = policy.everyFrames ?? Infinity;
    this.intervalMs = policy.intervalMs ?? Infinity;
    this.maxBacklog = policy.maxBacklogBytes ?? 8 * 1024 * 1024;
    if (Number.isFinite(this.intervalMs)) {
      // A stalled stream must not keep frames in memory longer than the interval.
      this.timer = setInterval(() => this.flushIfDue(), Math.max(10, this.intervalMs / 2));
      this.timer.unref();
    }
  }

  /** Creates (truncates, or with `exclusive` refuses to replace) the file and writes the header, schemas, channels and the "episode" metadata. */
  static async create(file: string, options: EpisodeWriterOptions): Promise<EpisodeWriter> {
    const policy = options.flush ?? {};
    const encoding = options.encoding ?? 'protobuf';
    const precision = options.measuredPrecision ?? 'float64';
    const mcap = await ChunkedMcapWriter.open(file, {
      chunkSizeBytes: policy.maxChunkBytes ?? 128 * 1024,
      fsync: policy.fsync ?? false,
      exclusive: options.exclusive ?? false,
      compression: encoding === 'protobuf' ? 'zstd' : '',
    });
    const w = new EpisodeWriter(
      file,
      mcap,
      options.reference ?? null,
      options.startMs ?? Date.now(),
      policy,
      encoding,
      precision,
    );
    const format = encoding === 'protobuf' ? EPISODE_FORMAT : EPISODE_FORMAT_JSON;
    try {
      mcap.start({ profile: '', library: `motionbench (${format})` });
      const jsonChannel = (topic: JsonEpisodeTopic) => {
        const s = SCHEMAS[topic];
        const schemaId = mcap.registerSchema({
          name: s.name,
          encoding: 'jsonschema',
          data: encoder.encode(JSON.stringify(s.schema)),
        });
        const id = mcap.registerChannel({ schemaId, topic, messageEncoding: 'json', metadata: new Map() });
        w.channels.set(topic, { id, json: true, schemaId });
        w.seq.set(topic, 0);
      };
      // One Schema record per message type, each with the whole FileDescriptorSet (Foxglove and
      // @mcap/support decode a protobuf schema by its full name from the set in its own record).
      const protobufChannel = (
        topic: EpisodeTopic,
        schemaName: string,
        descriptorSet = EPISODE_DESCRIPTOR_SET,
        metadata: ReadonlyMap<string, string> = new Map(),
      ) => {
        const schemaId = mcap.registerSchema({ name: schemaName, encoding: 'protobuf', data: descriptorSet });
        const id = mcap.registerChannel({ schemaId, topic, messageEncoding: 'protobuf', metadata: new Map(metadata) });
        w.channels.set(topic, { id, json: false, schemaId });
        w.seq.set(topic, 0);
      };
      if (encoding === 'json') {
        for (const topic of [TOPICS.reference, TOPICS.executed, TOPICS.commands, TOPICS.events, TOPICS.metrics])
          jsonChannel(topic);
      } else {
        protobufChannel(TOPICS.reference, 'motionbench.ReferenceFrame');
        protobufChannel(TOPICS.executed, executedSchemaName(precision));
        protobufChannel(TOPICS.commands, 'motionbench.Command');
        protobufChannel(TOPICS.metricsLive, 'motionbench.LiveMetrics');
        jsonChannel(TOPICS.events);
        jsonChannel(TOPICS.metrics);
        if (options.robot) {
          const hasRef = w.reference !== null;
          w.scene = new SceneTracks(options.robot, hasRef);
          // the transforms channels name the grids their moving values are on (trackPrecision.ts)
          protobufChannel(
            TOPICS.execTransforms,
            FOXGLOVE_FRAME_TRANSFORMS,
            FOXGLOVE_DESCRIPTOR_SET,
            TRACK_PRECISION_METADATA,
          );
          protobufChannel(TOPICS.execScene, FOXGLOVE_SCENE_UPDATE, FOXGLOVE_DESCRIPTOR_SET);
          if (hasRef) {
            protobufChannel(
              TOPICS.refTransforms,
              FOXGLOVE_FRAME_TRANSFORMS,
              FOXGLOVE_DESCRIPTOR_SET,
              TRACK_PRECISION_METADATA,
            );
            protobufChannel(TOPICS.refScene, FOXGLOVE_SCENE_UPDATE, FOXGLOVE_DESCRIPTOR_SET);
          }
        }
      }
      mcap.addMetadata({
        name: 'episode',
        metadata: stringMap({
          format,
          ...(encoding === 'protobuf' && { measured_precision: precision }),
          ...options.episode,
        }),
      });
      if (w.scene) {
        // the geometry once, at the episode's start; each body's primitives follow its frame
        const scenes = w.scene.scenes(w.startNs);
        w.put(TOPICS.execScene, 0, scenes.exec);
        if (scenes.ref) w.put(TOPICS.refScene, 0, scenes.ref);
      }
      await mcap.settle();
      return w;
    } catch (err) {
      w.stopTimer();
      await mcap.abandon({ dropOpenChunk: true });
      throw err;
    }
  }

  private timeNs(timeS: number): bigint {
    return this.startNs + BigInt(Math.round(timeS * 1e9));
  }

  /** Adds one message: `msg` is JSON-encoded on a JSON channel; `data` is the bytes of a protobuf one. */
  private put(topic: EpisodeTopic, timeS: number, msg: object | Uint8Array): void {
    const ch = this.channels.get(topic)!;
    const t = this.timeNs(timeS);
    const sequence = this.seq.get(topic)!;
    this.seq.set(topic, sequence + 1);
    this.mcap.addMessage({
      channelId: ch.id,
      sequence,
      logTime: t,
      publishTime: t,
      data: msg instanceof Uint8Array ? msg : encoder.encode(JSON.stringify(msg)),
    });
  }

  private get protobuf(): boolean {
    return this.encoding === 'protobuf';
  }

  private referenceUpTo(frameInclusive: number): void {
    const r = this.reference;
    if (!r) return;
    const J = r.jointPosRad.length / r.frameCount;
    const last = Math.min(frameInclusive, r.frameCount - 1);
    for (; this.refWritten <= last; this.refWritten++) {
      const k = this.refWritten;
      const timeS = k / r.rateHz;
      const rootPosM = r.rootPosM.subarray(3 * k, 3 * k + 3);
      const rootQuatWxyz = r.rootQuatWxyz.subarray(4 * k, 4 * k + 4);
      const jointPosRad = r.jointPosRad.subarray(J * k, J * k + J);
      if (this.protobuf) {
        this.put(TOPICS.reference, timeS, encodeReference({ timeS, frame: k, rootPosM, rootQuatWxyz, jointPosRad }));
        if (this.scene)
          this.put(
            TOPICS.refTransforms,
            timeS,
            this.scene.reference(this.timeNs(timeS), rootPosM, rootQuatWxyz, jointPosRad),
          );
        continue;
      }
      const m: ReferenceMessage = {
        timeS,
        frame: k,
        rootPosM: Array.from(rootPosM),
        rootQuatWxyz: Array.from(rootQuatWxyz),
        jointPosRad: Array.from(jointPosRad),
      };
      this.put(TOPICS.reference, m.timeS, m);
    }
  }

  private flushChunk(): void {
    if (this.mcap.flushChunk()) this.framesInChunk = 0;
  }

  private flushIfDue(): void {
    if (this.closed || this.mcap.failure) return;
    const since = this.mcap.openChunkSince;
    if (since > 0 && performance.now() - since >= this.intervalMs) this.flushChunk();
  }

  /** Executed frames (with the reference up to each frame, commands and live metrics when given). */
  async writeFrames(
    frames: readonly StateFrame[],
    extras?: readonly (ExecutedExtras | null | undefined)[],
  ): Promise<void> {
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i];
      const x = extras?.[i] ?? null;
      const k = f.referenceFrame ?? f.tick;
      // Reference frames on its own timeline: the one commanded, or (no referenceFrame, e.g. a
      // 500 Hz robot stream) the one at this frame's time.
      this.referenceUpTo(f.referenceFrame ?? (this.reference ? Math.floor(f.timeS * this.reference.rateHz + 1e-9) : 0));
      if (this.protobuf) {
        this.putProtobufFrame(f, k, x);
        this.framesWritten++;
        if (++this.framesInChunk >= this.everyFrames) this.flushChunk();
        continue;
      }
      const m = executedJsonMessage(f, x);
      this.put(TOPICS.executed, f.timeS, m);
      if (x?.command) {
        const w = x.assistWrench;
        const c: CommandMessage = {
          timeS: f.timeS,
          frame: k,
          jointTargetRad: Array.from(x.command.jointTargetRad),
          ...(x.command.kp ? { kp: Array.from(x.command.kp) } : {}),
          ...(x.command.kd ? { kd: Array.from(x.command.kd) } : {}),
          rootAssistWrench: w ? { forceN: [w[0], w[1], w[2]], torqueNm: [w[3], w[4], w[5]] } : null,
        };
        this.put(TOPICS.commands, f.timeS, c);
      }
      if (x?.live) {
        const l: MetricsMessage = {
          timeS: f.timeS,
          kind: 'live',
          frame: k,
          mpjpeLMm: x.live.mpjpeLMm,
          jointRmseRad: x.live.jointRmseRad,
          firstFailureFrame: x.live.firstFailureFrame,
        };
        this.put(TOPICS.metrics, f.timeS, l);
      }
      this.framesWritten++;
      if (++this.framesInChunk >= this.everyFrames) this.flushChunk();
    }
    this.flushIfDue();
    await this.mcap.throttle(this.maxBacklog);
  }

  /** One executed frame of a protobuf episode, with its command and live readings. */
  private putProtobufFrame(f: StateFrame, k: number, x: ExecutedExtras | null): void {
    const e = encodeExecuted(f, this.precision, x?.rootLinVelMps ?? null, x?.rootAngVelRadS ?? null);
    if (e.exact) this.exactCopies++;
    this.put(TOPICS.executed, f.timeS, e.data);
    const tf = this.scene?.executed(f, this.timeNs(f.timeS));
    if (tf) this.put(TOPICS.execTransforms, f.timeS, tf);
    if (x?.command)
      this.put(
        TOPICS.commands,
        f.timeS,
        encodeCommand({
          timeS: f.timeS,
          frame: k,
          jointTargetRad: x.command.jointTargetRad,
          ...(x.command.kp && { kp: x.command.kp }),
          ...(x.command.kd && { kd: x.command.kd }),
          assistWrench: x.assistWrench ?? null,
        }),
      );
    if (x?.live) this.put(TOPICS.metricsLive, f.timeS, encodeLiveMetrics({ timeS: f.timeS, frame: k, ...x.live }));
  }

  /**
   * The robot's state after the clip's end, timed on the episode's clock after the last executed
   * frame: on /executed/after_clip (the message type of /executed/state, on a channel of its own
   * so that nothing computed from the clip's frames — readings, trajectory hash, frame count —
   * takes them) and, with 3D tracks, on /exec/transforms, so a fall after the clip is drawn. The
   * channel is registered at the first such frame: a simulated episode has none.
   */
  async writeAfterClipFrames(frames: readonly StateFrame[]): Promise<void> {
    if (frames.length === 0) return;
    if (!this.channels.has(TOPICS.afterClip)) {
      const executed = this.channels.get(TOPICS.executed)!;
      const id = this.mcap.registerChannel({
        schemaId: executed.schemaId,
        topic: TOPICS.afterClip,
        messageEncoding: executed.json ? 'json' : 'protobuf',
        metadata: new Map(),
      });
      this.channels.set(TOPICS.afterClip, { ...executed, id });
      this.seq.set(TOPICS.afterClip, 0);
    }
    for (const f of frames) {
      if (!this.protobuf) {
        this.put(TOPICS.afterClip, f.timeS, executedJsonMessage(f, null));
        continue;
      }
      this.put(TOPICS.afterClip, f.timeS, encodeExecuted(f, this.precision, null, null).data);
      const tf = this.scene?.executed(f, this.timeNs(f.timeS));
      if (tf) this.put(TOPICS.execTransforms, f.timeS, tf);
    }
    this.flushIfDue();
    await this.mcap.throttle(this.maxBacklog);
  }

  async writeEvent(
    timeS: number,
    type: EpisodeEventType,
    message: string,
    data?: Record<string, unknown>,
    reason?: string,
  ): Promise<void> {
    this.put(TOPICS.events, timeS, { timeS, type, message, ...(reason ? { reason } : {}), ...(data ? { data } : {}) });
    await this.mcap.throttle(this.maxBacklog);
  }

  /** The final readings (the `motionbench metrics --json` document) on /metrics. */
  async writeFinalMetrics(timeS: number, readings: Record<string, unknown>): Promise<void> {
    const m: MetricsMessage = { timeS, kind: 'final', readings };
    this.put(TOPICS.metrics, timeS, m);
    await this.mcap.throttle(this.maxBacklog);
  }

  /** Closes the open chunk and waits until everything so far is in the file (with fsync: on disk). */
  async flush(): Promise<void> {
    this.flushChunk();
    await this.mcap.settle();
  }

  stats(): EpisodeWriterStats {
    return {
      frames: this.framesWritten,
      durableFrames: this.mcap.durableMessages(this.channels.get(TOPICS.executed)!.id),
      chunks: this.mcap.chunks,
      bytes: this.mcap.bytesWritten,
      exactCopies: this.exactCopies,
    };
  }

  /** The first write failure, if any (the file keeps what was written before it). */
  get failure(): Error | null {
    return this.mcap.failure;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Writes the rest of the reference, the "result" metadata and the summary, and closes the file; returns its size and sha256. */
  async close(result: Record<string, string | number | boolean | null>): Promise<{ bytes: number; sha256: string }> {
    if (this.closed) {
      if (this.closedWith) return this.closedWith;
      throw new Error(`episode file ${this.file} was abandoned, not closed`);
    }
    this.closed = true;
    this.stopTimer();
    try {
      if (this.reference) this.referenceUpTo(this.reference.frameCount - 1);
      this.mcap.flushChunk();
      this.mcap.addMetadata({ name: 'result', metadata: stringMap(result) });
      this.closedWith = await this.mcap.end();
      return this.closedWith;
    } catch (err) {
      await this.mcap.abandon({ dropOpenChunk: false });
      throw err;
    }
  }

  /** Closes the file without a summary (an interrupted episode); what was written stays readable. */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTimer();
    await this.mcap.abandon();
  }
}

function stringMap(o: Record<string, string | number | boolean | null>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(o)) m.set(k, v === null ? '' : String(v));
  return m;
}
