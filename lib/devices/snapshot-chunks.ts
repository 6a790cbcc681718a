import { constants, crc32, type ZstdOptions, zstdCompress, zstdCompressSync, zstdDecompress, zstdDecompressSync } from 'node:zlib';
import { runBounded } from '../async/bounded-pool.ts';
import type { DeviceSnapshot, SnapshotText, StoredChunk } from './device-snapshot.ts';
import { FLAG_UNDECIDED } from './snapshot-layout.ts';

/**
 * A snapshot's chunks as the cluster stores them: each device chunk zstd-compressed on its own
 * (docs/architecture.md#the-snapshots-cluster-format), compressed and decompressed on libuv's
 * thread pool where a caller can wait, and a decoded snapshot's text decompressed on first use.
 */
/** zstd's fastest level: the rendered JSON repeats keys and values, so even this shrinks it ~5×. */
const ZSTD_LEVEL = 1;
/** The size pledged, as the one-shot compression writes it: a chunk compressed on the pool is then the same bytes. */
const zstdOptions = (bytes: Buffer): ZstdOptions => ({
  params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL },
  pledgedSrcSize: bytes.length,
  // One output buffer for a chunk, not node's 16 KiB: each filled one is a trip back to the main thread.
  chunkSize: Math.max(bytes.length, MIN_CHUNK_SIZE),
});
/** zlib's smallest output buffer. */
const MIN_CHUNK_SIZE = 64;
/** Chunks compressed at once: libuv's pool has 4 threads, and each chunk is a few hundred KB. */
export const CONCURRENT_CHUNKS = 4;
const LEFT_BRACE = 123;
const RIGHT_BRACE = 125;

export const malformed = (detail: string): Error => new Error(`device snapshot is malformed: ${detail}`);

export const compressSync = (bytes: Buffer): Buffer => zstdCompressSync(bytes, zstdOptions(bytes));

export const compress = (bytes: Buffer): Promise<Buffer> =>
  new Promise((resolve, reject) => zstdCompress(bytes, zstdOptions(bytes), (error, result) => (error ? reject(error) : resolve(result))));

export const decompress = (bytes: Buffer, rawBytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    zstdDecompress(bytes, { maxOutputLength: Math.max(rawBytes, 1), chunkSize: Math.max(rawBytes, MIN_CHUNK_SIZE) }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );

/** A chunk's text as stored: compressed, its length and the compressed bytes' checksum. */
export const storedOf = (raw: Buffer, bytes: Buffer): StoredChunk => ({ bytes, rawBytes: raw.length, crc32: crc32(bytes) });

const chunkCount = (snapshot: DeviceSnapshot): number => Math.ceil(snapshot.count / snapshot.text.chunkDevices);

/** Every chunk of `snapshot` stored: held ones as they are, the others compressed here (the request path's encode). */
export const storedChunksSync = (snapshot: DeviceSnapshot): StoredChunk[] =>
  Array.from({ length: chunkCount(snapshot) }, (_, index) => {
    const held = snapshot.text.stored(index);
    if (held !== undefined) return held;
    // ASCII by construction (build-snapshot.ts escapes the rest): one byte per character.
    const raw = Buffer.from(snapshot.text.chunk(index), 'latin1');
    return storedOf(raw, compressSync(raw));
  });

/** The same, the chunks not held compressed side by side on libuv's pool (the refresh's encode). */
export const storedChunks = async (snapshot: DeviceSnapshot): Promise<StoredChunk[]> => {
  const tasks = Array.from({ length: chunkCount(snapshot) }, (_, index) => async (): Promise<StoredChunk> => {
    const held = snapshot.text.stored(index);
    if (held !== undefined) return held;
    const raw = Buffer.from(snapshot.text.chunk(index), 'latin1');
    return storedOf(raw, await compress(raw));
  });
  return runBounded(tasks, CONCURRENT_CHUNKS, new AbortController());
};

/**
 * Throws unless chunk `at`'s text holds its devices as the offsets say: each an object with its
 * undecided flag inside it. A chunk that fails is a fault of the writer, met where it is read.
 */
export const checkChunk = (
  json: Buffer | string,
  at: number,
  chunkDevices: number,
  count: number,
  starts: Uint32Array,
  flagAt: Uint32Array,
) => {
  const code = typeof json === 'string' ? (offset: number) => json.charCodeAt(offset) : (offset: number) => json[offset];
  const base = starts[at * chunkDevices]!;
  for (let index = at * chunkDevices; index < Math.min(count, (at + 1) * chunkDevices); index += 1) {
    const start = starts[index]! - base;
    const end = starts[index + 1]! - base;
    if (code(start) !== LEFT_BRACE || code(end - 1) !== RIGHT_BRACE) throw malformed(`device ${index} is not an object`);
    const flag = flagAt[index]! - base;
    for (let offset = 0; offset < FLAG_UNDECIDED.length; offset += 1) {
      if (code(flag + offset) !== FLAG_UNDECIDED.charCodeAt(offset)) throw malformed(`device ${index} has no flag`);
    }
  }
};

/**
 * The chunks' text, decompressed on first use (their bytes were checked when read). The stored
 * bytes are let go once their text is held, so a serving container keeps one copy of a chunk.
 */
export const lazyText = (
  chunks: (StoredChunk | undefined)[],
  digests: readonly Buffer[],
  chunkDevices: number,
  count: number,
  starts: Uint32Array,
  flagAt: Uint32Array,
): SnapshotText => {
  const decoded: (string | undefined)[] = [];
  return {
    chunkDevices,
    digests,
    stored: (at) => chunks[at],
    chunk: (at) => {
      const kept = decoded[at];
      if (kept !== undefined) return kept;
      const chunk = chunks[at];
      if (chunk === undefined) throw malformed(`no chunk ${at}`);
      const raw = zstdDecompressSync(chunk.bytes, { maxOutputLength: Math.max(chunk.rawBytes, 1) });
      if (raw.length !== chunk.rawBytes) throw malformed(`chunk ${at} is not its length`);
      const json = raw.toString('latin1');
      checkChunk(json, at, chunkDevices, count, starts, flagAt);
      decoded[at] = json;
      chunks[at] = undefined;
      return json;
    },
  };
};
