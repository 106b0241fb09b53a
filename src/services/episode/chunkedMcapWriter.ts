// An MCAP writer with explicit chunk boundaries and durable flushes, for recordings that must
// survive a kill -9 (DESIGN §7). @mcap/core's McapWriter closes a chunk only when it outgrows its
// size and offers no flush; this writer is built from the same library's record and chunk
// builders (so the bytes follow the same code paths Foxglove reads) and adds:
//
// - `flushChunk()`: close the open chunk now (the caller's policy: every N frames, every 0.5 s);
// - optional fdatasync after each chunk (the chunk is on disk, not only in the page cache);
// - schemas and channels written at registration, outside chunks, so every chunk of a truncated
//   file can be decoded on its own;
// - pipelined I/O: building records is synchronous, bytes go to the file through one ordered
//   queue of positional writes; `backlogBytes` lets callers apply backpressure;
// - a running sha256 and size of everything written (the file hash stored with the episode);
// - optional zstd compression of each chunk (chunkCompression.ts), so a killed writer still
//   leaves whole compressed chunks a reader decompresses on their own.
//
// A failed write (disk full, read-only, I/O error) is kept as `failure` and rethrown as an
// EpisodeFileError naming the file by every later call; nothing after it is written.

import { createHash, type Hash } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { McapChunkBuilder, McapRecordBuilder, Opcode } from '@mcap/core';
import type { McapTypes } from '@mcap/core';
import { chunkCompressionReady, compressChunkRecords } from './chunkCompression';

type Schema = McapTypes.Schema;
type Channel = McapTypes.Channel;
type Message = McapTypes.Message;
type Header = McapTypes.Header;
type Metadata = McapTypes.Metadata;
type ChunkIndex = McapTypes.ChunkIndex;
type MetadataIndex = McapTypes.MetadataIndex;
type SummaryOffset = McapTypes.SummaryOffset;

/** A failed operation on an episode file, with the errno code when the OS gave one. */
export class EpisodeFileError extends Error {
  override readonly name = 'EpisodeFileError';
  constructor(
    readonly file: string,
    /** errno code (ENOSPC, EFBIG, EACCES, EROFS, EEXIST, ENOTDIR, …) or 'EINVAL' for misuse. */
    readonly code: string,
    readonly action: string,
    options?: { cause?: unknown },
  ) {
    super(`${action} ${file}: ${describeErrno(code)} (${code})`, options);
  }
}

export function describeErrno(code: string): string {
  switch (code) {
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EFBIG':
      return 'file too large (the disk or the process file-size limit is exhausted)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied (the folder or file is read-only for this user)';
    case 'EROFS':
      return 'the file system is read-only';
    case 'EEXIST':
      return 'the file already exists (an episode file is never overwritten)';
    case 'ENOENT':
      return 'no such file or folder';
    case 'ENOTDIR':
      return 'a path component is not a folder';
    case 'EISDIR':
      return 'the path is a folder';
    case 'EIO':
      return 'input/output error';
    case 'EINVAL':
      return 'the file is already closed';
    default:
      return 'the operation failed';
  }
}

export const errnoOf = (err: unknown): string => (err as NodeJS.ErrnoException)?.code ?? 'EIO';

export interface ChunkedMcapWriterOptions {
  /** Close a chunk automatically once it holds more than this many bytes (default 1 MiB). */
  chunkSizeBytes?: number;
  /** fdatasync after every chunk and at the end (default false: the page cache survives a killed process, not a power loss). */
  fsync?: boolean;
  /** Refuse to overwrite an existing file (default false). */
  exclusive?: boolean;
  /** Chunk compression: 'zstd' or '' (none, the default). */
  compression?: 'zstd' | '';
}

interface Pending {
  buf: Uint8Array;
  pos: number;
  /** Message counts per channel that become durable when this write (and its fsync) completes. */
  mark: Map<number, number> | null;
}

export class ChunkedMcapWriter {
  private readonly rw = new McapRecordBuilder();
  private readonly chunk = new McapChunkBuilder({ useMessageIndex: true });
  private readonly schemas = new Map<number, Schema>();
  private readonly channels = new Map<number, Channel>();
  private readonly chunkIndexes: ChunkIndex[] = [];
  private readonly metadataIndexes: MetadataIndex[] = [];
  private readonly counts = new Map<number, number>();
  private readonly durable = new Map<number, number>();
  private readonly hash: Hash = createHash('sha256');
  private nextSchemaId = 1;
  private nextChannelId = 0;
  private pos = 0;
  private dataCrc = 0;
  private chunkCount = 0;
  private messageCount = 0n;
  private startTime: bigint | null = null;
  private endTime: bigint | null = null;
  private chain: Promise<void> = Promise.resolve();
  private backlog = 0;
  private written = 0;
  private ended = false;
  private closed = false;
  private _failure: EpisodeFileError | null = null;
  private readonly chunkSizeBytes: number;
  private readonly fsync: boolean;
  private readonly compression: 'zstd' | '';
  private chunkOpenedAt = 0;

  private constructor(
    readonly file: string,
    private readonly fh: fsp.FileHandle,
    options: ChunkedMcapWriterOptions,
  ) {
    this.chunkSizeBytes = options.chunkSizeBytes ?? 1024 * 1024;
    this.fsync = options.fsync ?? false;
    this.compression = options.compression ?? '';
  }

  /** Creates (or with `exclusive`, refuses to replace) the file; nothing is written yet. */
  static async open(file: string, options: ChunkedMcapWriterOptions = {}): Promise<ChunkedMcapWriter> {
    if (options.compression === 'zstd') await chunkCompressionReady();
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, options.exclusive ? 'wx' : 'w');
    } catch (err) {
      throw new EpisodeFileError(file, errnoOf(err), 'cannot create the episode file', { cause: err });
    }
    const w = new ChunkedMcapWriter(file, fh, options);
    if (w.fsync) await syncDirectory(path.dirname(file));
    return w;
  }

  /** The first failed write, if any. */
  get failure(): EpisodeFileError | null {
    return this._failure;
  }

  /** Bytes queued but not yet written. */
  get backlogBytes(): number {
    return this.backlog;
  }

  /** Bytes handed to the OS (and, with fsync, on disk). */
  get bytesWritten(): number {
    return this.written;
  }

  /** Logical size of the file once the queue drains. */
  get size(): number {
    return this.pos;
  }

  get chunks(): number {
    return this.chunkCount;
  }

  /** Bytes in the open chunk (not yet in the file). */
  get openChunkBytes(): number {
    return this.chunk.byteLength;
  }

  /** performance.now() when the open chunk got its first message (0: no open chunk). */
  get openChunkSince(): number {
    return this.chunk.numMessages > 0 ? this.chunkOpenedAt : 0;
  }

  /** Messages of a channel that reached the file (with fsync: the disk). */
  durableMessages(channelId: number): number {
    return this.durable.get(channelId) ?? 0;
  }

  messagesOf(channelId: number): number {
    return this.counts.get(channelId) ?? 0;
  }

  private check(): void {
    if (this._failure) throw this._failure;
    if (this.ended) throw new EpisodeFileError(this.file, 'EINVAL', 'cannot write the episode file');
  }

  private enqueue(buf: Uint8Array, dataSection: boolean, mark: Map<number, number> | null): void {
    if (buf.length === 0 && !mark) return;
    const copy = buf.slice();
    if (dataSection) this.dataCrc = zlib.crc32(copy, this.dataCrc);
    this.hash.update(copy);
    const p: Pending = { buf: copy, pos: this.pos, mark };
    this.pos += copy.length;
    this.backlog += copy.length;
    this.chain = this.chain.then(() => this.perform(p));
  }

  private async perform(p: Pending): Promise<void> {
    try {
      if (this._failure) return;
      let off = 0;
      while (off < p.buf.length) {
        const { bytesWritten } = await this.fh.write(p.buf, off, p.buf.length - off, p.pos + off);
        if (bytesWritten === 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
        off += bytesWritten;
        this.written += bytesWritten;
      }
      if (p.mark) {
        if (this.fsync) await this.fh.datasync();
        for (const [k, v] of p.mark) this.durable.set(k, v);
      }
    } catch (err) {
      this._failure ??= new EpisodeFileError(this.file, errnoOf(err), 'cannot write the episode file', { cause: err });
    } finally {
      this.backlog -= p.buf.length;
    }
  }

  private emit(dataSection: boolean, mark: Map<number, number> | null = null): void {
    this.enqueue(this.rw.buffer, dataSection, mark);
    this.rw.reset();
  }

  /** Magic and header. */
  start(header: Header): void {
    this.check();
    this.rw.writeMagic();
    this.rw.writeHeader(header);
    this.emit(true);
  }

  /** Registers a schema and writes its record at once (outside any chunk). */
  registerSchema(info: Omit<Schema, 'id'>): number {
    this.check();
    const id = this.nextSchemaId++;
    const s = { ...info, id };
    this.schemas.set(id, s);
    this.rw.writeSchema(s);
    this.emit(true);
    return id;
  }

  /** Registers a channel and writes its record at once (outside any chunk). */
  registerChannel(info: Omit<Channel, 'id'>): number {
    this.check();
    if (info.schemaId !== 0 && !this.schemas.has(info.schemaId))
      throw new RangeError(`unknown schema id ${info.schemaId}`);
    const id = this.nextChannelId++;
    const c = { ...info, id };
    this.channels.set(id, c);
    this.counts.set(id, 0);
    this.rw.writeChannel(c);
    this.emit(true);
    return id;
  }

  /** Adds a message to the open chunk; closes the chunk when it outgrows chunkSizeBytes. */
  addMessage(message: Message): void {
    this.check();
    if (!this.channels.has(message.channelId)) throw new RangeError(`unknown channel id ${message.channelId}`);
    if (this.chunk.numMessages === 0) this.chunkOpenedAt = performance.now();
    this.chunk.addMessage(message);
    this.counts.set(message.channelId, this.counts.get(message.channelId)! + 1);
    this.messageCount++;
    if (this.startTime === null || message.logTime < this.startTime) this.startTime = message.logTime;
    if (this.endTime === null || message.logTime > this.endTime) this.endTime = message.logTime;
    if (this.chunk.byteLength > this.chunkSizeBytes) this.flushChunk();
  }

  /** A metadata record, written at once (outside any chunk). */
  addMetadata(metadata: Metadata): void {
    this.check();
    const offset = BigInt(this.pos);
    const length = this.rw.writeMetadata(metadata);
    this.metadataIndexes.push({ name: metadata.name, offset, length });
    this.emit(true);
  }

  /** Closes the open chunk (if it holds messages) and queues it; returns whether one was queued. */
  flushChunk(): boolean {
    this.check();
    if (this.chunk.numMessages === 0) return false;
    const data = this.chunk.buffer;
    const records = this.compression === 'zstd' ? compressChunkRecords(data) : data;
    const chunk: McapTypes.Chunk = {
      messageStartTime: this.chunk.messageStartTime,
      messageEndTime: this.chunk.messageEndTime,
      uncompressedSize: BigInt(data.length),
      uncompressedCrc: zlib.crc32(data),
      compression: this.compression,
      records,
    };
    const chunkStartOffset = BigInt(this.pos);
    const chunkLength = this.rw.writeChunk(chunk);
    const messageIndexStart = chunkStartOffset + chunkLength;
    let messageIndexLength = 0n;
    const messageIndexOffsets = new Map<number, bigint>();
    for (const mi of this.chunk.indices) {
      messageIndexOffsets.set(mi.channelId, messageIndexStart + messageIndexLength);
      messageIndexLength += this.rw.writeMessageIndex(mi);
    }
    this.chunkIndexes.push({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      chunkStartOffset,
      chunkLength,
      messageIndexOffsets,
      messageIndexLength,
      compression: this.compression,
      compressedSize: BigInt(records.length),
      uncompressedSize: chunk.uncompressedSize,
    });
    this.chunkCount++;
    this.chunk.reset();
    this.emit(true, new Map(this.counts));
    return true;
  }

  /** Waits until everything queued is written (and synced); throws the first write failure. */
  async settle(): Promise<void> {
    await this.chain;
    if (this._failure) throw this._failure;
  }

  /** Waits while more than `maxBacklogBytes` are queued (backpressure); throws a write failure. */
  async throttle(maxBacklogBytes: number): Promise<void> {
    if (this._failure) throw this._failure;
    if (this.backlog > maxBacklogBytes) await this.settle();
  }

  /**
   * Closes the last chunk and writes DataEnd, the summary (schemas, channels, statistics,
   * metadata and chunk indexes, summary offsets) and the footer, then syncs and closes the file.
   */
  async end(): Promise<{ bytes: number; sha256: string }> {
    this.check();
    this.flushChunk();
    this.ended = true;
    try {
      this.rw.writeDataEnd({ dataSectionCrc: this.dataCrc >>> 0 });
      this.emit(true);
      const summaryStart = BigInt(this.pos);
      const offsets: SummaryOffset[] = [];
      const group = (opcode: Opcode, write: () => bigint) => {
        const groupStart = summaryStart + BigInt(this.rw.length);
        const groupLength = write();
        if (groupLength > 0n) offsets.push({ groupOpcode: opcode, groupStart, groupLength });
      };
      group(Opcode.SCHEMA, () => [...this.schemas.values()].reduce((n, s) => n + this.rw.writeSchema(s), 0n));
      group(Opcode.CHANNEL, () => [...this.channels.values()].reduce((n, c) => n + this.rw.writeChannel(c), 0n));
      group(Opcode.STATISTICS, () =>
        this.rw.writeStatistics({
          messageCount: this.messageCount,
          schemaCount: this.schemas.size,
          channelCount: this.channels.size,
          attachmentCount: 0,
          metadataCount: this.metadataIndexes.length,
          chunkCount: this.chunkCount,
          messageStartTime: this.startTime ?? 0n,
          messageEndTime: this.endTime ?? 0n,
          channelMessageCounts: new Map([...this.counts].map(([k, v]) => [k, BigInt(v)])),
        }),
      );
      group(Opcode.METADATA_INDEX, () => this.metadataIndexes.reduce((n, m) => n + this.rw.writeMetadataIndex(m), 0n));
      group(Opcode.CHUNK_INDEX, () => this.chunkIndexes.reduce((n, c) => n + this.rw.writeChunkIndex(c), 0n));
      const summaryOffsetStart = summaryStart + BigInt(this.rw.length);
      for (const o of offsets) this.rw.writeSummaryOffset(o);
      // The summary CRC covers the summary, the summary offsets and the footer up to its CRC field.
      const footerHead = new DataView(new ArrayBuffer(1 + 8 + 8 + 8));
      footerHead.setUint8(0, Opcode.FOOTER);
      footerHead.setBigUint64(1, 8n + 8n + 4n, true);
      footerHead.setBigUint64(9, summaryStart, true);
      footerHead.setBigUint64(17, summaryOffsetStart, true);
      const summaryCrc = zlib.crc32(new Uint8Array(footerHead.buffer), zlib.crc32(this.rw.buffer));
      this.rw.writeFooter({ summaryStart, summaryOffsetStart, summaryCrc });
      this.rw.writeMagic();
      this.emit(false, new Map(this.counts));
      await this.settle();
      if (this.fsync) await this.fh.sync();
      const sha256 = this.hash.digest('hex');
      return { bytes: this.pos, sha256 };
    } catch (err) {
      if (err instanceof EpisodeFileError) throw err;
      throw new EpisodeFileError(this.file, errnoOf(err), 'cannot finish the episode file', { cause: err });
    } finally {
      await this.closeHandle();
    }
  }

  /**
   * Stops without a summary: queued bytes are still written (a reader recovers every complete
   * chunk), the open chunk is written too unless `dropOpenChunk`, then the file is closed.
   * Never throws for write failures (the failure stays in `failure`).
   */
  async abandon(options: { dropOpenChunk?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    if (!this.ended && !this._failure && !options.dropOpenChunk) {
      try {
        this.flushChunk();
      } catch {
        /* recorded in failure */
      }
    }
    this.ended = true;
    await this.chain;
    if (this.fsync && !this._failure) await this.fh.datasync().catch(() => undefined);
    await this.closeHandle();
  }

  private async closeHandle(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain;
    await this.fh.close().catch(() => undefined);
  }
}

/**
 * fsync a directory so a newly created or renamed entry in it survives a power loss (no-op where
 * unsupported). Asynchronous: an fsync can take tens of ms on a busy disk, and the loop that calls
 * this also carries the safety gate.
 */
export async function syncDirectory(dir: string): Promise<void> {
  let fh: fsp.FileHandle | null = null;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch {
    /* not supported here (e.g. Windows): nothing more to do */
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
