// Reads an episode file back (src/services/episode/episodeSchemas.ts), either format: JSON
// (`motionbench-episode/1`) or protobuf with zstd chunks (`/2`), each channel decoded from its
// own Schema record (episodeCodec.ts). Uses the streaming reader over the whole file, so an
// interrupted file (no summary, e.g. after a kill -9) still yields every complete chunk;
// `complete` says whether the file ended with a valid footer.

import { McapStreamReader } from '@mcap/core';
import { copySensorReadings, createStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import { InputError } from '../../domain/problems';
import { TrajectoryHasher } from '../../domain/sim/trajectoryHash';
import { readBoundedFileAsync } from '../files/boundedRead';
import { chunkCompressionReady, EPISODE_DECOMPRESS_HANDLERS } from './chunkCompression';
import { messageDecoder, type SchemaRecord } from './episodeCodec';
import {
  TOPICS,
  type CommandMessage,
  type EventMessage,
  type ExecutedMessage,
  type MetricsMessage,
  type ReferenceMessage,
} from './episodeSchemas';

export interface EpisodeChannelInfo {
  topic: string;
  schemaName: string;
  schemaEncoding: string;
  messageEncoding: string;
  messageCount: number;
}

export interface EpisodeFile {
  file: string;
  /** The file ended with a valid footer (the writer closed it). */
  complete: boolean;
  metadata: Record<string, Record<string, string>>;
  channels: EpisodeChannelInfo[];
  reference: ReferenceMessage[];
  executed: ExecutedMessage[];
  /** The robot's state after the clip's end (/executed/after_clip; real trials), by time. */
  afterClip: ExecutedMessage[];
  commands: CommandMessage[];
  events: EventMessage[];
  metrics: MetricsMessage[];
  /** Log times (ns since the epoch) of the first and last message. */
  startNs: bigint | null;
  endNs: bigint | null;
}

/** The topics an EpisodeFile holds. */
const READ_TOPICS: ReadonlySet<string> = new Set([
  TOPICS.reference,
  TOPICS.executed,
  TOPICS.afterClip,
  TOPICS.commands,
  TOPICS.events,
  TOPICS.metrics,
  TOPICS.metricsLive,
]);

export async function readEpisodeFile(file: string): Promise<EpisodeFile> {
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFileAsync(file, 'episode');
  } catch (err) {
    throw new InputError(
      { file },
      `cannot read the episode file (${err instanceof InputError ? err.reason : ((err as NodeJS.ErrnoException).code ?? (err as Error).message)})`,
    );
  }
  await chunkCompressionReady();
  const reader = new McapStreamReader({ validateCrcs: true, decompressHandlers: EPISODE_DECOMPRESS_HANDLERS });
  reader.append(bytes);
  const schemas = new Map<number, SchemaRecord>();
  const channels = new Map<number, EpisodeChannelInfo>();
  const decoders = new Map<number, (data: Uint8Array) => unknown>();
  const out: EpisodeFile = {
    file,
    complete: false,
    metadata: {},
    channels: [],
    reference: [],
    executed: [],
    afterClip: [],
    commands: [],
    events: [],
    metrics: [],
    startNs: null,
    endNs: null,
  };
  try {
    for (let rec; (rec = reader.nextRecord());) {
      switch (rec.type) {
        // (the summary section repeats schemas and channels: keep the first of each)
        case 'Schema':
          if (!schemas.has(rec.id)) schemas.set(rec.id, { name: rec.name, encoding: rec.encoding, data: rec.data });
          break;
        case 'Channel': {
          if (channels.has(rec.id)) break;
          const s = schemas.get(rec.schemaId);
          // decoders only for what an EpisodeFile holds (the 3D tracks are Foxglove's to decode)
          if (READ_TOPICS.has(rec.topic))
            try {
              decoders.set(rec.id, messageDecoder(rec.messageEncoding, s ?? null));
            } catch (err) {
              throw new InputError({ file, key: rec.topic }, (err as Error).message);
            }
          channels.set(rec.id, {
            topic: rec.topic,
            schemaName: s?.name ?? '',
            schemaEncoding: s?.encoding ?? '',
            messageEncoding: rec.messageEncoding,
            messageCount: 0,
          });
          break;
        }
        case 'Metadata':
          out.metadata[rec.name] = Object.fromEntries(rec.metadata);
          break;
        case 'Message': {
          const ch = channels.get(rec.channelId);
          if (!ch) break;
          ch.messageCount++;
          if (out.startNs === null || rec.logTime < out.startNs) out.startNs = rec.logTime;
          if (out.endNs === null || rec.logTime > out.endNs) out.endNs = rec.logTime;
          const decode = decoders.get(rec.channelId);
          if (!decode) break; // not a topic an EpisodeFile holds
          let msg: unknown;
          try {
            msg = decode(rec.data);
          } catch (err) {
            throw new InputError(
              { file, key: `${ch.topic}[${ch.messageCount - 1}]` },
              `cannot be decoded (${(err as Error).message})`,
            );
          }
          switch (ch.topic) {
            case TOPICS.reference:
              out.reference.push(msg as ReferenceMessage);
              break;
            case TOPICS.executed:
              out.executed.push(msg as ExecutedMessage);
              break;
            case TOPICS.afterClip:
              out.afterClip.push(msg as ExecutedMessage);
              break;
            case TOPICS.commands:
              out.commands.push(msg as CommandMessage);
              break;
            case TOPICS.events:
              out.events.push(msg as EventMessage);
              break;
            case TOPICS.metrics:
            case TOPICS.metricsLive:
              out.metrics.push(msg as MetricsMessage);
              break;
          }
          break;
        }
        default:
          break;
      }
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    // A truncated tail (interrupted write): keep what was read.
    if (reader.done()) throw new InputError({ file }, `not a valid MCAP episode file (${(err as Error).message})`);
  }
  out.complete = reader.done();
  out.channels = [...channels.values()];
  if (out.channels.length === 0) throw new InputError({ file }, 'not an MCAP episode file (no channels)');
  const byTime = (a: { timeS: number }, b: { timeS: number }) => a.timeS - b.timeS;
  out.reference.sort(byTime);
  out.executed.sort(byTime);
  out.afterClip.sort(byTime);
  return out;
}

/** The executed frames as StateFrames. */
export function executedStateFrames(ep: EpisodeFile): StateFrame[] {
  return ep.executed.map((m) => {
    const f = createStateFrame(m.rootPosM !== null);
    f.timeS = m.timeS;
    f.tick = m.tick;
    f.referenceFrame = m.referenceFrame;
    if (m.rootPosM && f.rootPosM) f.rootPosM.set(m.rootPosM);
    f.rootQuatWxyz = m.rootQuatWxyz ? Float64Array.from(m.rootQuatWxyz) : null;
    copySensorReadings(m, f);
    f.contacts = m.contacts ? m.contacts.map((c) => ({ ...c })) : null;
    return f;
  });
}

/**
 * trajectory_sha256 recomputed from the file's executed frames (layout in
 * src/domain/sim/trajectoryHash.ts); null when the frames lack root pose or velocities.
 */
export function trajectorySha256OfEpisode(ep: EpisodeFile): string | null {
  const J = ep.executed[0]?.jointPosRad.length ?? 29;
  const h = new TrajectoryHasher(J);
  for (const m of ep.executed) {
    if (!m.rootPosM || !m.rootQuatWxyz || !m.rootLinVelMps || !m.rootAngVelRadS) return null;
    h.add({
      timeS: m.timeS,
      rootPosM: m.rootPosM,
      rootQuatWxyz: m.rootQuatWxyz,
      jointPosRad: m.jointPosRad,
      rootLinVelMps: m.rootLinVelMps,
      rootAngVelRadS: m.rootAngVelRadS,
      jointVelRadS: m.jointVelRadS,
    });
  }
  return h.digestHex();
}
