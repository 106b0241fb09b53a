// Independent checks of MCAP files for the trace tests: @mcap/core's indexed reader (what
// Foxglove relies on: footer → summary → chunk indexes) with @mcap/support's decompressors (the
// ones Foxglove's tools load: zstd, lz4, bz2), messages decoded from what the file stores alone —
// JSON, or protobuf through protobufjs from the FileDescriptorSet in the channel's Schema record,
// never from the program's schemas or its episode reader — and a byte-level check of the two CRCs
// the writer computes itself (data section in DataEnd, summary in the footer), recomputed here
// from the file bytes with node's zlib.crc32 — not with the writer's code.

import fs from 'node:fs';
import zlib from 'node:zlib';
import { McapIndexedReader, type IReadable, type McapTypes } from '@mcap/core';
import { loadDecompressHandlers } from '@mcap/support';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';

export interface IndexedSummary {
  topics: Record<string, number>;
  chunkCount: number;
  metadata: Record<string, Record<string, string>>;
  executed: { timeS: number; jointPosRad: number[]; tick: number }[];
  schemaCount: number;
}

/** Opens a file with @mcap/core's indexed reader (footer → summary → chunk indexes), as Foxglove does. */
export async function withIndexedMcap<T>(file: string, use: (reader: McapIndexedReader) => Promise<T>): Promise<T> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const readable: IReadable = {
      size: async () => BigInt((await fh.stat()).size),
      read: async (offset, size) => {
        const buf = new Uint8Array(Number(size));
        await fh.read(buf, 0, Number(size), Number(offset));
        return buf;
      },
    };
    return await use(
      await McapIndexedReader.Initialize({ readable, decompressHandlers: await loadDecompressHandlers() }),
    );
  } finally {
    await fh.close();
  }
}

export function readIndexed(file: string): Promise<IndexedSummary> {
  return withIndexedMcap(file, async (reader) => {
    const topics: Record<string, number> = {};
    for (const [id, n] of reader.statistics!.channelMessageCounts)
      topics[reader.channelsById.get(id)!.topic] = Number(n);
    const metadata: Record<string, Record<string, string>> = {};
    for await (const m of reader.readMetadata()) metadata[m.name] = Object.fromEntries(m.metadata);
    const executed: IndexedSummary['executed'] = [];
    const decode = channelDecoders(reader);
    for await (const m of reader.readMessages({ topics: ['/executed/state'] })) {
      // motionbench.RobotState: a frame that was not exactly float32 carries its double copy in
      // `exact` (the schema's documented contract: a reader takes `exact` when present)
      const msg = decode.get(m.channelId)!(m.data);
      executed.push((msg.exact ?? msg) as IndexedSummary['executed'][number]);
    }
    return {
      topics,
      chunkCount: reader.statistics!.chunkCount,
      metadata,
      executed,
      schemaCount: reader.schemasById.size,
    };
  });
}

/**
 * A decoder per channel, from the file alone: JSON.parse, or the protobuf type named by the
 * channel's schema, built by protobufjs from the FileDescriptorSet in that Schema record (names
 * as protobufjs gives them: camelCase; int64 as numbers; empty repeated fields as []; proto3 defaults filled).
 */
export function channelDecoders(reader: McapIndexedReader): Map<number, (data: Uint8Array) => Record<string, unknown>> {
  const out = new Map<number, (data: Uint8Array) => Record<string, unknown>>();
  for (const [id, ch] of reader.channelsById) {
    if (ch.messageEncoding === 'json') {
      out.set(id, (d) => JSON.parse(new TextDecoder().decode(d)) as Record<string, unknown>);
      continue;
    }
    const schema: McapTypes.Schema | undefined = reader.schemasById.get(ch.schemaId);
    if (ch.messageEncoding !== 'protobuf' || schema?.encoding !== 'protobuf')
      throw new Error(`channel ${ch.topic}: encoding ${ch.messageEncoding} / schema ${schema?.encoding}`);
    const root = protobuf.Root.fromDescriptor(schema.data);
    root.resolveAll();
    const type = root.lookupType(schema.name);
    // defaults: proto3 omits zeros on the wire; a reader shows them (as Foxglove does).
    out.set(id, (d) => type.toObject(type.decode(d), { longs: Number, arrays: true, defaults: true }));
  }
  return out;
}

/** Recomputes the data-section CRC (DataEnd) and the summary CRC (Footer) from the bytes. */
export function checkMcapCrcs(bytes: Uint8Array): { dataSection: boolean; summary: boolean } {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.length;
  // footer: opcode 0x02, u64 length 20, u64 summaryStart, u64 summaryOffsetStart, u32 crc; then 8 magic bytes
  const footer = n - 8 - (1 + 8 + 20);
  if (bytes[footer] !== 0x02) throw new Error('no footer record');
  const summaryStart = Number(dv.getBigUint64(footer + 9, true));
  const summaryCrc = dv.getUint32(footer + 25, true);
  const summaryOk = zlib.crc32(bytes.subarray(summaryStart, footer + 25)) === summaryCrc;
  // DataEnd (opcode 0x0f, u64 length 4, u32 crc) ends right before the summary
  const dataEnd = summaryStart - (1 + 8 + 4);
  if (bytes[dataEnd] !== 0x0f) throw new Error('no DataEnd record before the summary');
  const dataCrc = dv.getUint32(dataEnd + 9, true);
  const dataOk = zlib.crc32(bytes.subarray(0, dataEnd)) === dataCrc;
  return { dataSection: dataOk, summary: summaryOk };
}
