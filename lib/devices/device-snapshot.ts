import { createHash } from 'node:crypto';

/**
 * The whole inventory as served: every device rendered once as its response JSON, with its
 * `os_is_latest` literal left to be decided per reference, plus the columns the query filters on.
 * Pages and filters are cut from it without an upstream call and without serializing the list again:
 * a page is the join of its devices' rendered JSON. This is what both cache tiers hold. Built by
 * build-snapshot.ts, merged with changes by merge-snapshot.ts, decided and rendered by
 * decide-latest.ts.
 */
export interface DeviceSnapshot {
  readonly count: number;
  /** When the inventory was read (ms since the epoch): freshness is counted from here in every tier. */
  readonly readAt: number;
  /**
   * When the last full read of the inventory began: `readAt` for a full read, kept from the snapshot
   * it merged into for an incremental refresh (docs/architecture.md#the-incremental-refresh).
   */
  readonly fullReadAt: number;
  /** A hash of the devices (`snapshotId` of the chunks' digests): equal for equal inventories, whichever container read them. */
  readonly id: string;
  /**
   * Every device's JSON back to back, its flag written as `false` (see `flagAt`), in chunks of
   * devices. ASCII only: other characters are `\u` escapes (the same JSON text), so the text takes
   * one byte per character and travels through the cluster without UTF-8 decoding.
   */
  readonly text: SnapshotText;
  /** Where device i's JSON starts in the whole text (UTF-16 offsets); `starts[count]` is the end. */
  readonly starts: Uint32Array;
  /** Where device i's `false` flag literal starts in the whole text. */
  readonly flagAt: Uint32Array;
  /** Device ids, canonical digits, ascending. */
  readonly ids: readonly string[];
  /** Device i's `os_version` as an index into `osVersions` (0: none). */
  readonly osVersionKey: Uint32Array;
  readonly osVersions: readonly (string | undefined)[];
  /** Device i's `os_rapid_security_response` as an index into `responses` (0: none). */
  readonly responseKey: Uint32Array;
  readonly responses: readonly (string | undefined)[];
  /** `managed`, `supervised`: 1 true, 0 false, -1 absent. */
  readonly managed: Int8Array;
  readonly supervised: Int8Array;
  /**
   * Lower-cased category and `model_identifier` as indexes into their dictionaries (0: none). The
   * category is what the inventory's kind filter reads: `os_name` of a computer, `device_type` of a
   * mobile device (`SnapshotLayout`).
   */
  readonly osNameKey: Uint32Array;
  readonly osNames: readonly (string | undefined)[];
  readonly modelKey: Uint32Array;
  readonly models: readonly (string | undefined)[];
  /** The board id (`operatingSystem.softwareUpdateDeviceId`) as an index into `boards` (0: none): read by the latest-OS decision. */
  readonly boardKey: Uint32Array;
  readonly boards: readonly (string | undefined)[];
  /**
   * The time the inventory's `…_before` filter reads, in ms since the epoch (`last_contact_at`, or a
   * mobile device's `last_inventory_at`); NaN when absent or unreadable.
   */
  readonly lastContact: Float64Array;
}

/** A chunk as the cluster stores it: zstd-compressed, with its text's length and the compressed bytes' CRC-32. */
export interface StoredChunk {
  readonly bytes: Buffer;
  readonly rawBytes: number;
  readonly crc32: number;
}

/**
 * The devices' JSON in chunks of `CHUNK_DEVICES`: device i is in chunk ⌊i / chunkDevices⌋, which
 * begins at `starts[chunk · chunkDevices]` of the whole text. A snapshot read from the cluster
 * decodes a chunk the first time a page needs it (docs/architecture.md#values-in-parts).
 */
export interface SnapshotText {
  readonly chunkDevices: number;
  /** Each chunk's SHA-256: the id hashes these, so a chunk merged unchanged keeps its digest and needs no hashing. */
  readonly digests: readonly Buffer[];
  chunk: (index: number) => string;
  /** The chunk's stored form while this snapshot holds it: the refresh writes an unchanged chunk again as it is. */
  stored: (index: number) => StoredChunk | undefined;
}

/** Devices per chunk: a page of 1,000 touches one or two (about 420 KB of JSON, 90 KB compressed). */
export const CHUNK_DEVICES = 1_000;

/** The SHA-256 of one chunk's ASCII text. */
export const chunkDigest = (text: string | Buffer): Buffer =>
  createHash('sha256')
    .update(typeof text === 'string' ? Buffer.from(text, 'latin1') : text)
    .digest();

/** The snapshot's id from its chunks' digests, in order. */
export const snapshotId = (digests: readonly Buffer[]): string =>
  createHash('sha256').update(Buffer.concat(digests)).digest('base64url').slice(0, 22);

/** The JSON text of devices `from` to `to` (exclusive), back to back with their flags undecided. */
export const deviceText = (snapshot: DeviceSnapshot, from: number, to: number): string => {
  const { text, starts } = snapshot;
  let joined = '';
  for (let chunkIndex = Math.floor(from / text.chunkDevices); chunkIndex * text.chunkDevices < to; chunkIndex += 1) {
    const base = starts[chunkIndex * text.chunkDevices]!;
    const start = Math.max(from, chunkIndex * text.chunkDevices);
    const end = Math.min(to, (chunkIndex + 1) * text.chunkDevices);
    joined += text.chunk(chunkIndex).slice(starts[start]! - base, starts[end]! - base);
  }
  return joined;
};
