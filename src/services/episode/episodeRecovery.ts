// Recovery of an episode file whose writer stopped (kill -9, power loss, disk full): the file
// has a header, schemas, channels and whole chunks, then possibly a partial chunk and no summary.
// A streaming reader (@mcap/core McapStreamReader, CRCs checked) reads it front to back in
// blocks, never holding the whole file; every complete chunk is recovered, the partial tail is
// dropped. Optionally the recovered records are rewritten beside it as a valid, indexed MCAP (with
// a "recovery" metadata record), written to a temporary name and renamed, so a crash during
// recovery never leaves a half-written copy under the final name. The original is not modified.
// Either format is read (uncompressed or zstd chunks, JSON or protobuf messages, each decoded from
// its own Schema record); the rewritten copy's chunks are zstd-compressed.

import fsp from 'node:fs/promises';
import path from 'node:path';
import { McapStreamReader } from '@mcap/core';
import { chunkCompressionReady, EPISODE_DECOMPRESS_HANDLERS } from './chunkCompression';
import { messageDecoder, type SchemaRecord } from './episodeCodec';
import { ChunkedMcapWriter, EpisodeFileError, errnoOf, syncDirectory } from './chunkedMcapWriter';
import { TOPICS } from './episodeSchemas';

export interface EpisodeRecoveryReport {
  file: string;
  /** The file exists. */
  exists: boolean;
  /** Size of the file, bytes. */
  bytes: number;
  /** The file ended with a valid footer (it was closed properly). */
  complete: boolean;
  /** Messages recovered per topic. */
  messages: Record<string, number>;
  /** Executed frames recovered (/executed/state messages). */
  executedFrames: number;
  /** Episode time of the last recovered executed frame, seconds. */
  lastExecutedTimeS: number | null;
  /** Metadata records recovered, by name. */
  metadata: Record<string, Record<string, string>>;
  /** Why reading stopped before the end of the bytes, beyond a plain truncation (e.g. a CRC mismatch). */
  error: string | null;
  /** The rewritten, indexed copy, when one was asked for and written. */
  rewrittenFile: string | null;
}

export interface RecoverOptions {
  /** Write the recovered records to this file as a valid MCAP (only when the source is incomplete). */
  rewriteTo?: string | null;
  /** Extra entries for the rewritten file's "recovery" metadata record. */
  recoveryMetadata?: Record<string, string>;
  /** Read block size, bytes (default 1 MiB). */
  blockBytes?: number;
}

type McapRecord = NonNullable<ReturnType<McapStreamReader['nextRecord']>>;

/**
 * Takes the records of the file in order: counts them into the report and, with a temporary
 * file given, replays them into a copy. Whether to rewrite is known only once we know the file
 * is incomplete; the copy is opened lazily on the first record, and deleted again if the source
 * turns out complete.
 */
class RecordRecovery {
  /** The copy, once opened. */
  w: ChunkedMcapWriter | null = null;
  private readonly schemaIds = new Map<number, number>();
  private readonly schemas = new Map<number, SchemaRecord>();
  private readonly channels = new Map<
    number,
    { topic: string; outId: number | null; decode: ((d: Uint8Array) => unknown) | null }
  >();
  private lastExecuted: { decode: (d: Uint8Array) => unknown; data: Uint8Array } | null = null;

  constructor(
    private readonly report: EpisodeRecoveryReport,
    private readonly tmp: string | null,
  ) {}

  private async writer(): Promise<ChunkedMcapWriter | null> {
    if (!this.tmp) return null;
    if (!this.w) {
      this.w = await ChunkedMcapWriter.open(this.tmp, {
        chunkSizeBytes: 1024 * 1024,
        fsync: true,
        compression: 'zstd',
      });
      this.w.start({ profile: '', library: 'motionbench (recovered)' });
    }
    return this.w;
  }

  async take(rec: McapRecord): Promise<void> {
    const w = await this.writer();
    const report = this.report;
    switch (rec.type) {
      case 'Schema':
        if (!this.schemas.has(rec.id))
          this.schemas.set(rec.id, { name: rec.name, encoding: rec.encoding, data: rec.data });
        if (!this.schemaIds.has(rec.id))
          this.schemaIds.set(
            rec.id,
            w ? w.registerSchema({ name: rec.name, encoding: rec.encoding, data: rec.data }) : rec.id,
          );
        break;
      case 'Channel':
        if (!this.channels.has(rec.id)) {
          const schemaId = rec.schemaId === 0 ? 0 : this.schemaIds.get(rec.schemaId);
          const outId =
            w && schemaId !== undefined
              ? w.registerChannel({
                  schemaId,
                  topic: rec.topic,
                  messageEncoding: rec.messageEncoding,
                  metadata: rec.metadata,
                })
              : null;
          let decode: ((d: Uint8Array) => unknown) | null = null;
          try {
            decode = messageDecoder(rec.messageEncoding, this.schemas.get(rec.schemaId) ?? null);
          } catch {
            /* an encoding we cannot decode: its messages are still copied */
          }
          this.channels.set(rec.id, { topic: rec.topic, outId, decode });
        }
        break;
      case 'Metadata':
        if (!report.metadata[rec.name]) {
          report.metadata[rec.name] = Object.fromEntries(rec.metadata);
          w?.addMetadata({ name: rec.name, metadata: rec.metadata });
        }
        break;
      case 'Message': {
        const ch = this.channels.get(rec.channelId);
        if (!ch) break;
        report.messages[ch.topic] = (report.messages[ch.topic] ?? 0) + 1;
        if (ch.topic === TOPICS.executed) {
          report.executedFrames++;
          // decoded once, after the loop: only the last one's time is reported
          if (ch.decode) this.lastExecuted = { decode: ch.decode, data: rec.data };
        }
        if (w && ch.outId !== null) w.addMessage({ ...rec, channelId: ch.outId });
        break;
      }
      default:
        break;
    }
  }

  /** Episode time of the last executed frame taken, when it decodes. */
  lastExecutedTimeS(): number | null {
    if (!this.lastExecuted) return null;
    try {
      const t = (this.lastExecuted.decode(this.lastExecuted.data) as { timeS?: unknown }).timeS;
      if (typeof t === 'number') return t;
    } catch {
      /* a message that does not decode still counts as recovered bytes */
    }
    return null;
  }
}

/**
 * Reads the file front to back in blocks into the recovery; stops at bytes that do not parse
 * (a torn write in the middle, a CRC mismatch), keeping what came before. Whether the file ended
 * with a valid footer.
 */
async function readRecords(
  fh: fsp.FileHandle,
  report: EpisodeRecoveryReport,
  recovery: RecordRecovery,
  blockBytes: number,
): Promise<boolean> {
  const reader = new McapStreamReader({ validateCrcs: true, decompressHandlers: EPISODE_DECOMPRESS_HANDLERS });
  const block = new Uint8Array(blockBytes);
  let offset = 0;
  let stopped = false;
  while (!stopped && offset < report.bytes) {
    const { bytesRead } = await fh.read(block, 0, block.length, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
    reader.append(block.subarray(0, bytesRead));
    try {
      for (let rec; (rec = reader.nextRecord());) await recovery.take(rec);
    } catch (err) {
      report.error = (err as Error).message;
      stopped = true;
    }
    await recovery.w?.throttle(8 * 1024 * 1024);
  }
  return !stopped && reader.done();
}

/** Deletes the copy of a complete file, or closes the copy of an incomplete one under its final name. */
async function finishCopy(
  w: ChunkedMcapWriter,
  tmp: string,
  rewriteTo: string,
  file: string,
  report: EpisodeRecoveryReport,
  recoveryMetadata: Record<string, string> | undefined,
): Promise<void> {
  if (report.complete) {
    await w.abandon({ dropOpenChunk: true });
    await fsp.rm(tmp, { force: true });
    return;
  }
  w.addMetadata({
    name: 'recovery',
    metadata: new Map(
      Object.entries({
        source_file: path.basename(file),
        source_bytes: String(report.bytes),
        recovered_executed_frames: String(report.executedFrames),
        stopped_by: report.error ?? 'end of the readable data (truncated file)',
        ...(recoveryMetadata ?? {}),
      }),
    ),
  });
  await w.end();
  await fsp.rename(tmp, rewriteTo);
  await syncDirectory(path.dirname(rewriteTo));
  report.rewrittenFile = rewriteTo;
}

export async function recoverEpisodeFile(file: string, options: RecoverOptions = {}): Promise<EpisodeRecoveryReport> {
  const report: EpisodeRecoveryReport = {
    file,
    exists: false,
    bytes: 0,
    complete: false,
    messages: {},
    executedFrames: 0,
    lastExecutedTimeS: null,
    metadata: {},
    error: null,
    rewrittenFile: null,
  };
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(file, 'r');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return report;
    throw new EpisodeFileError(file, errnoOf(err), 'cannot read the episode file', { cause: err });
  }
  report.exists = true;
  const tmp = options.rewriteTo ? `${options.rewriteTo}.tmp-${process.pid}` : null;
  const recovery = new RecordRecovery(report, tmp);
  try {
    report.bytes = (await fh.stat()).size;
    await chunkCompressionReady();
    const complete = await readRecords(fh, report, recovery, options.blockBytes ?? 1024 * 1024);
    const lastTimeS = recovery.lastExecutedTimeS();
    if (lastTimeS !== null) report.lastExecutedTimeS = lastTimeS;
    report.complete = complete;
    if (recovery.w) await finishCopy(recovery.w, tmp!, options.rewriteTo!, file, report, options.recoveryMetadata);
    return report;
  } catch (err) {
    if (recovery.w) {
      await recovery.w.abandon({ dropOpenChunk: true });
      await fsp.rm(tmp!, { force: true }).catch(() => undefined);
    }
    throw err;
  } finally {
    await fh.close();
  }
}
