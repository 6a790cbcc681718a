import { crc32 } from 'node:zlib';
import type { ClusterCodec } from '../cache/tiered-cache.ts';
import type { DeviceSnapshot, StoredChunk } from './device-snapshot.ts';
import { compress, compressSync, decompress, storedChunks, storedChunksSync } from './snapshot-chunks.ts';
import { decodeIndex, encodeIndex, headerLine, headerOf, STAMP_BYTES, type SnapshotHeader } from './snapshot-index.ts';

/**
 * How a device snapshot travels through the cluster tier: a JSON header line and the
 * zstd-compressed index (snapshot-index.ts), then the rendered devices in zstd chunks
 * (snapshot-chunks.ts), each decompressed only when a page first needs it. The byte layout, and
 * why: docs/architecture.md#the-snapshots-cluster-format.
 */
export interface DeviceSnapshotCodec extends ClusterCodec<DeviceSnapshot> {
  /** `encode`, its chunks compressed side by side on libuv's pool and held ones reused (the refresh's). */
  encodeConcurrently: (snapshot: DeviceSnapshot) => Promise<Buffer>;
  /** The header of an encoded value from its first `stampBytes`: what the refresh asks Jamf from. */
  headerOf: (prefix: Buffer) => Pick<SnapshotHeader, 'readAt' | 'fullReadAt' | 'id'> | undefined;
}

const assemble = (snapshot: DeviceSnapshot, chunks: readonly StoredChunk[], index: Buffer, compressedIndex: Buffer): Buffer =>
  Buffer.concat([
    headerLine({
      n: snapshot.count,
      readAt: snapshot.readAt,
      fullReadAt: snapshot.fullReadAt,
      id: snapshot.id,
      index: compressedIndex.length,
      indexRaw: index.length,
      crc32: crc32(index),
    }),
    compressedIndex,
    ...chunks.map((chunk) => chunk.bytes),
  ]);

export const deviceSnapshotCodec: DeviceSnapshotCodec = {
  stampBytes: STAMP_BYTES,
  encode: (snapshot) => {
    const chunks = storedChunksSync(snapshot);
    const index = encodeIndex(snapshot, chunks);
    return assemble(snapshot, chunks, index, compressSync(index));
  },
  encodeConcurrently: async (snapshot) => {
    const chunks = await storedChunks(snapshot);
    const index = encodeIndex(snapshot, chunks);
    return assemble(snapshot, chunks, index, await compress(index));
  },
  stampOf: (prefix) => {
    const found = headerOf(prefix);
    return found === undefined ? undefined : { readAt: found.header.readAt, id: found.header.id };
  },
  headerOf: (prefix) => {
    const found = headerOf(prefix);
    return found === undefined ? undefined : { readAt: found.header.readAt, fullReadAt: found.header.fullReadAt, id: found.header.id };
  },
  decode: async (bytes) => {
    const found = headerOf(bytes);
    if (found === undefined) return undefined;
    const { header, end } = found;
    let index: Buffer;
    try {
      // Off the main thread: the index of 100,000 devices is a few MB.
      index = await decompress(bytes.subarray(end, end + header.index), header.indexRaw);
    } catch {
      return undefined;
    }
    if (index.length !== header.indexRaw || crc32(index) !== header.crc32) return undefined;
    return decodeIndex(index, header, bytes.subarray(end + header.index));
  },
};
