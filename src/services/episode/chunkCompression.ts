import * as zstd from '@foxglove/wasm-zstd';
import type { McapTypes } from '@mcap/core';

// Chunk compression of episode files: zstd through @foxglove/wasm-zstd, the build Foxglove's own
// MCAP tooling uses (the same library decompresses in Foxglove and Lichtblick), so a chunk we
// write is one every MCAP reader with the standard handlers opens. Level 3 (zstd's default): on a
// recorded robot episode it keeps ~4/5 of what level 19 saves at a small fraction of the time, and
// chunks are compressed on the recorder's thread at each flush (every 0.5 s).

export const EPISODE_ZSTD_LEVEL = 3;

/** Resolves once the wasm module is instantiated; every compress/decompress waits for it first. */
export async function chunkCompressionReady(): Promise<void> {
  await zstd.isLoaded;
}

/** zstd-compresses one chunk's records (call after chunkCompressionReady). */
export function compressChunkRecords(records: Uint8Array, level = EPISODE_ZSTD_LEVEL): Uint8Array {
  return zstd.compress(records, level);
}

/** The handlers @mcap/core's readers need for the compressions episode files use ('' needs none). */
export const EPISODE_DECOMPRESS_HANDLERS: McapTypes.DecompressHandlers = {
  zstd: (buffer, decompressedSize) => zstd.decompress(buffer, Number(decompressedSize)),
};
