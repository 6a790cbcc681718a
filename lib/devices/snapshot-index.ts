import { crc32 } from 'node:zlib';
import { snapshotId, type DeviceSnapshot, type StoredChunk } from './device-snapshot.ts';
import { lazyText, malformed } from './snapshot-chunks.ts';

/**
 * What a reader of a snapshot's cluster value meets before any chunk: the JSON header line (the
 * format version, the stamp, and the compressed index's size and checksum), then the index itself
 * (docs/architecture.md#the-snapshots-cluster-format).
 */

/** Changed together with the version in the cluster key (device-inventory.ts). */
const FORMAT_VERSION = 6;
/** Longer than any header written here: the cluster tier reads this much to learn a value's stamp. */
export const STAMP_BYTES = 512;
const NEWLINE = 0x0a;

export interface SnapshotHeader {
  n: number;
  readAt: number;
  fullReadAt: number;
  id: string;
  /** The compressed index's bytes, its bytes raw, and the raw index's CRC-32. */
  index: number;
  indexRaw: number;
  crc32: number;
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export const headerLine = (header: SnapshotHeader): Buffer => Buffer.from(`${JSON.stringify({ v: FORMAT_VERSION, ...header })}\n`, 'utf8');

/** The header at the start of `bytes` and where the index begins; undefined for another format or no header. */
export const headerOf = (bytes: Buffer): { header: SnapshotHeader; end: number } | undefined => {
  const newline = bytes.subarray(0, STAMP_BYTES).indexOf(NEWLINE);
  if (newline < 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8', 0, newline));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { v, n, readAt, fullReadAt, id, index, indexRaw, crc32: checksum } = parsed as Record<string, unknown>;
  if (
    v !== FORMAT_VERSION ||
    !count(n) ||
    !count(readAt) ||
    !count(fullReadAt) ||
    typeof id !== 'string' ||
    !count(index) ||
    !count(indexRaw) ||
    !count(checksum)
  )
    return undefined;
  return { header: { n, readAt, fullReadAt, id, index, indexRaw, crc32: checksum }, end: newline + 1 };
};

/**
 * A snapshot's index as the cluster stores it (before compression): the chunk table (each chunk's
 * bytes, text length, CRC-32 and SHA-256), the columns as their bytes in memory (little-endian, as
 * on every Lambda architecture), the ids as ASCII digits between commas (split faster than JSON
 * parses them), then a JSON dictionary of values. The layout, and why:
 * docs/architecture.md#the-snapshots-cluster-format.
 */
const DIGEST_BYTES = 32;
const CHUNK_ENTRY = 12 + DIGEST_BYTES;

const align = (offset: number, to: number): number => Math.ceil(offset / to) * to;

/** A typed array's bytes, as they are in memory. */
const bytesOf = (column: Uint32Array | Int8Array | Float64Array): Buffer =>
  Buffer.from(column.buffer, column.byteOffset, column.byteLength);

/** A copy of `length` elements at `at`: copied into a fresh (so aligned) buffer, then viewed. */
const columnOf = <T>(
  payload: Buffer,
  at: number,
  length: number,
  Column: new (buffer: ArrayBuffer) => T & { BYTES_PER_ELEMENT: number },
  size: number,
): T => {
  const copy = new Uint8Array(length * size);
  copy.set(payload.subarray(at, at + length * size));
  return new Column(copy.buffer);
};

/** Where the index's parts begin, for `n` devices in `chunks` chunks. */
const layoutOf = (n: number, chunks: number) => {
  const columnsAt = 8 + CHUNK_ENTRY * chunks;
  const flagsAt = columnsAt + 4 * (n + 1) + 24 * n;
  const lastContactAt = align(flagsAt + 2 * n, 8);
  const idsAt = lastContactAt + 8 * n;
  return { columnsAt, flagsAt, lastContactAt, idsAt };
};

export const encodeIndex = (snapshot: DeviceSnapshot, chunks: readonly StoredChunk[]): Buffer => {
  const { count: n } = snapshot;
  const ids = Buffer.from(snapshot.ids.join(','), 'latin1');
  const dictionary = Buffer.from(
    JSON.stringify({
      osVersions: snapshot.osVersions,
      responses: snapshot.responses,
      osNames: snapshot.osNames,
      models: snapshot.models,
      boards: snapshot.boards,
    }),
    'utf8',
  );
  const { columnsAt, lastContactAt, idsAt } = layoutOf(n, chunks.length);
  const dictionaryAt = idsAt + 4 + ids.length;
  const index = Buffer.alloc(dictionaryAt + 4 + dictionary.length);
  index.writeUInt32LE(snapshot.text.chunkDevices, 0);
  index.writeUInt32LE(chunks.length, 4);
  chunks.forEach((chunk, at) => {
    const entry = 8 + CHUNK_ENTRY * at;
    index.writeUInt32LE(chunk.bytes.length, entry);
    index.writeUInt32LE(chunk.rawBytes, entry + 4);
    index.writeUInt32LE(chunk.crc32, entry + 8);
    snapshot.text.digests[at]!.copy(index, entry + 12);
  });
  let at = columnsAt;
  for (const column of [
    snapshot.starts,
    snapshot.flagAt,
    snapshot.osVersionKey,
    snapshot.responseKey,
    snapshot.osNameKey,
    snapshot.modelKey,
    snapshot.boardKey,
    snapshot.managed,
    snapshot.supervised,
  ]) {
    at += bytesOf(column).copy(index, at);
  }
  bytesOf(snapshot.lastContact).copy(index, lastContactAt);
  index.writeUInt32LE(ids.length, idsAt);
  ids.copy(index, idsAt + 4);
  index.writeUInt32LE(dictionary.length, dictionaryAt);
  dictionary.copy(index, dictionaryAt + 4);
  return index;
};

const textList = (value: unknown, name: string): (string | undefined)[] => {
  if (!Array.isArray(value) || value.length === 0 || value[0] !== null) throw malformed(`${name} is not a dictionary`);
  return value.map((entry, index) => {
    if (index === 0) return undefined;
    if (typeof entry !== 'string') throw malformed(`${name}[${index}] is not text`);
    return entry;
  });
};

/** Ids of digits, one comma between two: one test of the whole text rather than one per id. */
const IDS = /^(?:\d+(?:,\d+)*)?$/;

/** The snapshot, or undefined where a chunk's bytes are not as written (corrupted or cut short). */
export const decodeIndex = (index: Buffer, header: SnapshotHeader, chunkBytes: Buffer): DeviceSnapshot | undefined => {
  const { n } = header;
  if (index.length < 8) throw malformed('no chunk table');
  const chunkDevices = index.readUInt32LE(0);
  const chunkCount = index.readUInt32LE(4);
  if (chunkDevices === 0 || chunkCount !== Math.ceil(n / chunkDevices)) throw malformed('chunk table does not cover the devices');
  const { columnsAt, flagsAt, lastContactAt, idsAt } = layoutOf(n, chunkCount);
  if (index.length < idsAt + 4) throw malformed('shorter than its columns');
  const idsBytes = index.readUInt32LE(idsAt);
  const dictionaryAt = idsAt + 4 + idsBytes;
  if (index.length < dictionaryAt + 4) throw malformed('shorter than its ids');
  const dictionaryBytes = index.readUInt32LE(dictionaryAt);
  if (index.length !== dictionaryAt + 4 + dictionaryBytes) throw malformed('length does not add up');
  let at = columnsAt;
  const [starts, flagAt, osVersionKey, responseKey, osNameKey, modelKey, boardKey] = [n + 1, n, n, n, n, n, n].map((length) => {
    const column = columnOf(index, at, length, Uint32Array, 4);
    at += 4 * length;
    return column;
  }) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const managed = columnOf(index, flagsAt, n, Int8Array, 1);
  const supervised = columnOf(index, flagsAt + n, n, Int8Array, 1);
  const lastContact = columnOf(index, lastContactAt, n, Float64Array, 8);
  const dictionary = JSON.parse(index.toString('utf8', dictionaryAt + 4)) as Record<string, unknown>;
  const idsText = index.toString('latin1', idsAt + 4, dictionaryAt);
  const ids = n === 0 && idsText === '' ? [] : idsText.split(',');
  if (ids.length !== n || !IDS.test(idsText)) throw malformed('ids');
  const osVersions = textList(dictionary.osVersions, 'osVersions');
  const responses = textList(dictionary.responses, 'responses');
  const osNames = textList(dictionary.osNames, 'osNames');
  const models = textList(dictionary.models, 'models');
  const boards = textList(dictionary.boards, 'boards');
  // Every chunk's bytes are as written and as long as its devices' text; every device lies in its
  // chunk with its flag inside it, and every key names an entry: a value that decodes is one this
  // code can serve without a bounds error.
  const chunks: (StoredChunk | undefined)[] = [];
  const digests: Buffer[] = [];
  let chunkAt = 0;
  for (let chunk = 0; chunk < chunkCount; chunk += 1) {
    const entry = 8 + CHUNK_ENTRY * chunk;
    const bytes = index.readUInt32LE(entry);
    const rawBytes = index.readUInt32LE(entry + 4);
    const checksum = index.readUInt32LE(entry + 8);
    const slice = chunkBytes.subarray(chunkAt, chunkAt + bytes);
    if (slice.length !== bytes || crc32(slice) !== checksum) return undefined;
    if (rawBytes !== starts[Math.min(n, (chunk + 1) * chunkDevices)]! - starts[chunk * chunkDevices]!)
      throw malformed(`chunk ${chunk} does not hold its devices`);
    chunks.push({ bytes: slice, rawBytes, crc32: checksum });
    digests.push(Buffer.from(index.subarray(entry + 12, entry + CHUNK_ENTRY)));
    chunkAt += bytes;
  }
  if (chunkAt !== chunkBytes.length) return undefined;
  // The merge reuses an unchanged chunk's digest: the id must be the one they give.
  if (snapshotId(digests) !== header.id) throw malformed("the id is not its chunks' digests");
  if (starts[0] !== 0) throw malformed('device offsets do not start the text');
  for (let device = 0; device < n; device += 1) {
    const start = starts[device]!;
    const end = starts[device + 1]!;
    const flag = flagAt[device]!;
    if (end <= start) throw malformed(`device ${device} is not an object`);
    if (flag <= start || flag + 5 > end) throw malformed(`device ${device} has no flag`);
    if (
      osVersionKey[device]! >= osVersions.length ||
      responseKey[device]! >= responses.length ||
      osNameKey[device]! >= osNames.length ||
      modelKey[device]! >= models.length ||
      boardKey[device]! >= boards.length
    ) {
      throw malformed(`device ${device} has a key outside its dictionary`);
    }
  }
  return {
    count: n,
    readAt: header.readAt,
    fullReadAt: header.fullReadAt,
    id: header.id,
    text: lazyText(chunks, digests, chunkDevices, n, starts, flagAt),
    starts,
    flagAt,
    ids,
    osVersionKey,
    osVersions,
    responseKey,
    responses,
    managed,
    supervised,
    osNameKey,
    osNames,
    modelKey,
    models,
    boardKey,
    boards,
    lastContact,
  };
};
