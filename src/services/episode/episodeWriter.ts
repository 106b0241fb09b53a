// Writes an episode file (src/services/episode/episodeSchemas.ts) with @mcap/core. Frames are
// written as they arrive, in time order (reference frame k just before executed frame k), into
// small chunks (128 KiB) so a killed process loses at most the last chunk; close() writes the
// summary (indexes, statistics) Foxglove uses for random access. The caller awaits each call
// before the next (McapWriter's rule); the backend's listener backpressure makes that natural.

import fs from 'node:fs/promises';
import { McapWriter, type IWritable } from '@mcap/core';
import type { StateFrame } from '../../domain/backend/stateFrame';
import { EPISODE_FORMAT, SCHEMAS, TOPICS, type CommandMessage, type EpisodeEventType, type EpisodeTopic, type ExecutedMessage, type MetricsMessage, type ReferenceMessage } from './episodeSchemas';

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

class FileWritable implements IWritable {
  private pos = 0n;
  constructor(private readonly fh: fs.FileHandle) {}
  async write(buffer: Uint8Array): Promise<void> {
    let off = 0;
    while (off < buffer.length) {
      const { bytesWritten } = await this.fh.write(buffer, off, buffer.length - off);
      off += bytesWritten;
    }
    this.pos += BigInt(buffer.length);
  }
  position(): bigint {
    return this.pos;
  }
}

const arr = (a: ArrayLike<number> | null | undefined): number[] | null => (a ? Array.from(a) : null);
const encoder = new TextEncoder();

export interface EpisodeWriterOptions {
  /** Wall-clock start of the episode, ms since the epoch (default: now). */
  startMs?: number;
  /** Metadata record "episode": what ran (values are stringified). */
  episode: Record<string, string | number | boolean | null>;
  /** The reference, written frame by frame alongside the executed state. */
  reference?: ReferenceFrames | null;
}

export class EpisodeWriter {
  private readonly channels = new Map<EpisodeTopic, number>();
  private readonly seq = new Map<EpisodeTopic, number>();
  private readonly startNs: bigint;
  private refWritten = 0;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly fh: fs.FileHandle,
    private readonly writer: McapWriter,
    private readonly reference: ReferenceFrames | null,
    startMs: number,
  ) {
    this.startNs = BigInt(Math.round(startMs)) * 1_000_000n;
  }

  /** Creates (truncates) the file and writes the header, schemas, channels and the "episode" metadata. */
  static async create(file: string, options: EpisodeWriterOptions): Promise<EpisodeWriter> {
    const fh = await fs.open(file, 'w');
    try {
      const writer = new McapWriter({ writable: new FileWritable(fh), chunkSize: 128 * 1024 });
      const w = new EpisodeWriter(file, fh, writer, options.reference ?? null, options.startMs ?? Date.now());
      await writer.start({ profile: '', library: `motionbench (${EPISODE_FORMAT})` });
      for (const topic of Object.values(TOPICS)) {
        const s = SCHEMAS[topic];
        const schemaId = await writer.registerSchema({ name: s.name, encoding: 'jsonschema', data: encoder.encode(JSON.stringify(s.schema)) });
        const channelId = await writer.registerChannel({ schemaId, topic, messageEncoding: 'json', metadata: new Map() });
        w.channels.set(topic, channelId);
        w.seq.set(topic, 0);
      }
      await writer.addMetadata({ name: 'episode', metadata: stringMap({ format: EPISODE_FORMAT, ...options.episode }) });
      return w;
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  private timeNs(timeS: number): bigint {
    return this.startNs + BigInt(Math.round(timeS * 1e9));
  }

  private async put(topic: EpisodeTopic, timeS: number, msg: object): Promise<void> {
    const t = this.timeNs(timeS);
    const sequence = this.seq.get(topic)!;
    this.seq.set(topic, sequence + 1);
    await this.writer.addMessage({ channelId: this.channels.get(topic)!, sequence, logTime: t, publishTime: t, data: encoder.encode(JSON.stringify(msg)) });
  }

  private async referenceUpTo(frameInclusive: number): Promise<void> {
    const r = this.reference;
    if (!r) return;
    const J = r.jointPosRad.length / r.frameCount;
    const last = Math.min(frameInclusive, r.frameCount - 1);
    for (; this.refWritten <= last; this.refWritten++) {
      const k = this.refWritten;
      const m: ReferenceMessage = {
        timeS: k / r.rateHz,
        frame: k,
        rootPosM: Array.from(r.rootPosM.subarray(3 * k, 3 * k + 3)),
        rootQuatWxyz: Array.from(r.rootQuatWxyz.subarray(4 * k, 4 * k + 4)),
        jointPosRad: Array.from(r.jointPosRad.subarray(J * k, J * k + J)),
      };
      await this.put(TOPICS.reference, m.timeS, m);
    }
  }

  /** Executed frames (with the reference up to each frame, commands and live metrics when given). */
  async writeFrames(frames: readonly StateFrame[], extras?: readonly (ExecutedExtras | null | undefined)[]): Promise<void> {
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i];
      const x = extras?.[i] ?? null;
      const k = f.referenceFrame ?? f.tick;
      await this.referenceUpTo(k);
      const m: ExecutedMessage = {
        timeS: f.timeS,
        tick: f.tick,
        referenceFrame: f.referenceFrame,
        rootPosM: arr(f.rootPosM),
        rootQuatWxyz: arr(f.rootQuatWxyz),
        jointPosRad: Array.from(f.jointPosRad),
        jointVelRadS: Array.from(f.jointVelRadS),
        jointTauNm: Array.from(f.jointTauNm),
        imu: { quatWxyz: Array.from(f.imu.quatWxyz), gyroRadS: Array.from(f.imu.gyroRadS), accelMS2: Array.from(f.imu.accelMS2) },
        contacts: f.contacts ? f.contacts.map((c) => ({ body: c.body, other: c.other, forceN: c.forceN })) : null,
        rootLinVelMps: arr(x?.rootLinVelMps),
        rootAngVelRadS: arr(x?.rootAngVelRadS),
      };
      await this.put(TOPICS.executed, f.timeS, m);
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
        await this.put(TOPICS.commands, f.timeS, c);
      }
      if (x?.live) {
        const l: MetricsMessage = { timeS: f.timeS, kind: 'live', frame: k, mpjpeLMm: x.live.mpjpeLMm, jointRmseRad: x.live.jointRmseRad, firstFailureFrame: x.live.firstFailureFrame };
        await this.put(TOPICS.metrics, f.timeS, l);
      }
    }
  }

  async writeEvent(timeS: number, type: EpisodeEventType, message: string, data?: Record<string, unknown>): Promise<void> {
    await this.put(TOPICS.events, timeS, { timeS, type, message, ...(data ? { data } : {}) });
  }

  /** The final readings (the `motionbench metrics --json` document) on /metrics. */
  async writeFinalMetrics(timeS: number, readings: Record<string, unknown>): Promise<void> {
    const m: MetricsMessage = { timeS, kind: 'final', readings };
    await this.put(TOPICS.metrics, timeS, m);
  }

  /** Writes the rest of the reference, the "result" metadata and the summary, and closes the file. */
  async close(result: Record<string, string | number | boolean | null>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.reference) await this.referenceUpTo(this.reference.frameCount - 1);
      await this.writer.addMetadata({ name: 'result', metadata: stringMap(result) });
      await this.writer.end();
    } finally {
      await this.fh.close();
    }
  }

  /** Closes the file without a summary (an interrupted episode); what was written stays readable. */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }
}

function stringMap(o: Record<string, string | number | boolean | null>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(o)) m.set(k, v === null ? '' : String(v));
  return m;
}
