import { constants, crc32, type ZstdOptions, zstdCompressSync, zstdDecompress, zstdDecompressSync } from 'node:zlib';
import type { ClusterCodec } from '../cache/tiered-cache.ts';
import { deviceText, type DeviceSnapshot, type SnapshotText } from './device-snapshot.ts';

/**
 * How a device snapshot travels through the cluster tier: a JSON header line, the zstd-compressed
 * index (chunk table, columns, dictionaries), then the rendered devices in zstd chunks of
 * `CHUNK_DEVICES`, each decompressed only when a page first needs it. The byte layout, and why:
 * docs/architecture.md#the-snapshots-cluster-format.
 */
/** Changed together with the version in the cluster key (cluster-key.ts). */
const FORMAT_VERSION = 5;
/** zstd's fastest level: the rendered JSON repeats keys and values, so even this shrinks it ~5×. */
const ZSTD_LEVEL = 1;
/** Devices per chunk: a page of 1,000 touches one or two (about 420 KB of JSON, 90 KB compressed). */
const CHUNK_DEVICES = 1_000;
/** Longer than any header written here: the cluster tier reads this much to learn a value's stamp. */
const STAMP_BYTES = 512;
const NEWLINE = 0x0a;
const LEFT_BRACE = 123;
const RIGHT_BRACE = 125;

interface Header {
  n: number;
  readAt: number;
  fullReadAt: number;
  id: string;
  index: number;
  indexRaw: number;
  crc32: number;
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

const headerOf = (bytes: Buffer): { header: Header; end: number } | undefined => {
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

const align = (offset: number, to: number): number => Math.ceil(offset / to) * to;
// Wrapped on first use: node:zlib then loads with the first snapshot, not at every function's init.
const decompress = (bytes: Buffer, options: ZstdOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => zstdDecompress(bytes, options, (error, result) => (error ? reject(error) : resolve(result))));
const compress = (bytes: Buffer): Buffer => zstdCompressSync(bytes, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });

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
  const columnsAt = 8 + 12 * chunks;
  const flagsAt = columnsAt + 4 * (n + 1) + 24 * n;
  const lastContactAt = align(flagsAt + 2 * n, 8);
  const dictionaryAt = lastContactAt + 8 * n;
  return { columnsAt, flagsAt, lastContactAt, dictionaryAt };
};

interface Chunk {
  bytes: Buffer;
  rawBytes: number;
}

const encodeIndex = (snapshot: DeviceSnapshot, chunks: readonly Chunk[]): Buffer => {
  const { count: n } = snapshot;
  const dictionary = Buffer.from(
    JSON.stringify({
      ids: snapshot.ids,
      osVersions: snapshot.osVersions,
      responses: snapshot.responses,
      osNames: snapshot.osNames,
      models: snapshot.models,
      boards: snapshot.boards,
    }),
    'utf8',
  );
  const { columnsAt, lastContactAt, dictionaryAt } = layoutOf(n, chunks.length);
  const index = Buffer.alloc(dictionaryAt + 4 + dictionary.length);
  index.writeUInt32LE(CHUNK_DEVICES, 0);
  index.writeUInt32LE(chunks.length, 4);
  chunks.forEach((chunk, at) => {
    index.writeUInt32LE(chunk.bytes.length, 8 + 12 * at);
    index.writeUInt32LE(chunk.rawBytes, 12 + 12 * at);
    index.writeUInt32LE(crc32(chunk.bytes), 16 + 12 * at);
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
  index.writeUInt32LE(dictionary.length, dictionaryAt);
  dictionary.copy(index, dictionaryAt + 4);
  return index;
};

const malformed = (detail: string): Error => new Error(`device snapshot is malformed: ${detail}`);

const textList = (value: unknown, name: string): (string | undefined)[] => {
  if (!Array.isArray(value) || value.length === 0 || value[0] !== null) throw malformed(`${name} is not a dictionary`);
  return value.map((entry, index) => {
    if (index === 0) return undefined;
    if (typeof entry !== 'string') throw malformed(`${name}[${index}] is not text`);
    return entry;
  });
};

/**
 * The chunks' text, decompressed on first use. Their bytes were checked at decode; a chunk whose
 * devices are not what the index says is a fault of the writer, thrown at the page that meets it.
 */
const lazyText = (
  chunks: (Chunk | undefined)[],
  chunkDevices: number,
  n: number,
  starts: Uint32Array,
  flagAt: Uint32Array,
): SnapshotText => {
  const decoded: (string | undefined)[] = [];
  return {
    chunkDevices,
    chunk: (at) => {
      const kept = decoded[at];
      if (kept !== undefined) return kept;
      const chunk = chunks[at];
      if (chunk === undefined) throw malformed(`no chunk ${at}`);
      const raw = zstdDecompressSync(chunk.bytes, { maxOutputLength: Math.max(chunk.rawBytes, 1) });
      if (raw.length !== chunk.rawBytes) throw malformed(`chunk ${at} is not its length`);
      const json = raw.toString('latin1');
      const base = starts[at * chunkDevices]!;
      for (let index = at * chunkDevices; index < Math.min(n, (at + 1) * chunkDevices); index += 1) {
        const start = starts[index]! - base;
        const end = starts[index + 1]! - base;
        if (json.charCodeAt(start) !== LEFT_BRACE || json.charCodeAt(end - 1) !== RIGHT_BRACE)
          throw malformed(`device ${index} is not an object`);
        if (!json.startsWith('false', flagAt[index]! - base)) throw malformed(`device ${index} has no flag`);
      }
      decoded[at] = json;
      // The compressed bytes are no longer needed once their text is held.
      chunks[at] = undefined;
      return json;
    },
  };
};

/** The snapshot, or undefined where a chunk's bytes are not as written (corrupted or cut short). */
const decodeIndex = (index: Buffer, header: Header, chunkBytes: Buffer): DeviceSnapshot | undefined => {
  const { n } = header;
  if (index.length < 8) throw malformed('no chunk table');
  const chunkDevices = index.readUInt32LE(0);
  const chunkCount = index.readUInt32LE(4);
  if (chunkDevices === 0 || chunkCount !== Math.ceil(n / chunkDevices)) throw malformed('chunk table does not cover the devices');
  const { columnsAt, flagsAt, lastContactAt, dictionaryAt } = layoutOf(n, chunkCount);
  if (index.length < dictionaryAt + 4) throw malformed('shorter than its columns');
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
  const { ids } = dictionary;
  if (!Array.isArray(ids) || ids.length !== n || !ids.every((id) => typeof id === 'string' && /^\d+$/.test(id))) throw malformed('ids');
  const osVersions = textList(dictionary.osVersions, 'osVersions');
  const responses = textList(dictionary.responses, 'responses');
  const osNames = textList(dictionary.osNames, 'osNames');
  const models = textList(dictionary.models, 'models');
  const boards = textList(dictionary.boards, 'boards');
  // Every chunk's bytes are as written and as long as its devices' text; every device lies in its
  // chunk with its flag inside it, and every key names an entry: a value that decodes is one this
  // code can serve without a bounds error.
  const chunks: (Chunk | undefined)[] = [];
  let chunkAt = 0;
  for (let chunk = 0; chunk < chunkCount; chunk += 1) {
    const bytes = index.readUInt32LE(8 + 12 * chunk);
    const rawBytes = index.readUInt32LE(12 + 12 * chunk);
    const checksum = index.readUInt32LE(16 + 12 * chunk);
    const slice = chunkBytes.subarray(chunkAt, chunkAt + bytes);
    if (slice.length !== bytes || crc32(slice) !== checksum) return undefined;
    if (rawBytes !== starts[Math.min(n, (chunk + 1) * chunkDevices)]! - starts[chunk * chunkDevices]!)
      throw malformed(`chunk ${chunk} does not hold its devices`);
    chunks.push({ bytes: slice, rawBytes });
    chunkAt += bytes;
  }
  if (chunkAt !== chunkBytes.length) return undefined;
  if (starts[0] !== 0) throw malformed('device offsets do not start the text');
  for (let index = 0; index < n; index += 1) {
    const start = starts[index]!;
    const end = starts[index + 1]!;
    const flag = flagAt[index]!;
    if (end <= start) throw malformed(`device ${index} is not an object`);
    if (flag <= start || flag + 5 > end) throw malformed(`device ${index} has no flag`);
    if (
      osVersionKey[index]! >= osVersions.length ||
      responseKey[index]! >= responses.length ||
      osNameKey[index]! >= osNames.length ||
      modelKey[index]! >= models.length ||
      boardKey[index]! >= boards.length
    ) {
      throw malformed(`device ${index} has a key outside its dictionary`);
    }
  }
  return {
    count: n,
    readAt: header.readAt,
    fullReadAt: header.fullReadAt,
    id: header.id,
    text: lazyText(chunks, chunkDevices, n, starts, flagAt),
    starts,
    flagAt,
    ids: ids as string[],
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

/**
 * Devices `from`…`to` as the snapshot holds them, and after the last device whatever text follows
 * it: the reader checks the offsets against the text.
 */
const chunkText = (snapshot: DeviceSnapshot, from: number, to: number): string => {
  const text = deviceText(snapshot, from, to);
  if (to < snapshot.count || to === 0) return text;
  const last = Math.floor((to - 1) / snapshot.text.chunkDevices);
  return text + snapshot.text.chunk(last).slice(snapshot.starts[to]! - snapshot.starts[last * snapshot.text.chunkDevices]!);
};

export const deviceSnapshotCodec: ClusterCodec<DeviceSnapshot> = {
  stampBytes: STAMP_BYTES,
  encode: (snapshot) => {
    const chunks: Chunk[] = [];
    for (let from = 0; from < snapshot.count; from += CHUNK_DEVICES) {
      // ASCII by construction (buildSnapshot escapes the rest): one byte per character.
      const raw = Buffer.from(chunkText(snapshot, from, Math.min(snapshot.count, from + CHUNK_DEVICES)), 'latin1');
      chunks.push({ bytes: compress(raw), rawBytes: raw.length });
    }
    const index = encodeIndex(snapshot, chunks);
    const compressedIndex = compress(index);
    const header = JSON.stringify({
      v: FORMAT_VERSION,
      n: snapshot.count,
      readAt: snapshot.readAt,
      fullReadAt: snapshot.fullReadAt,
      id: snapshot.id,
      index: compressedIndex.length,
      indexRaw: index.length,
      crc32: crc32(index),
    });
    return Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), compressedIndex, ...chunks.map((chunk) => chunk.bytes)]);
  },
  stampOf: (prefix) => {
    const found = headerOf(prefix);
    return found === undefined ? undefined : { readAt: found.header.readAt, id: found.header.id };
  },
  decode: async (bytes) => {
    const found = headerOf(bytes);
    if (found === undefined) return undefined;
    const { header, end } = found;
    let index: Buffer;
    try {
      index = await decompress(bytes.subarray(end, end + header.index), { maxOutputLength: Math.max(header.indexRaw, 1) });
    } catch {
      return undefined;
    }
    if (index.length !== header.indexRaw || crc32(index) !== header.crc32) return undefined;
    return decodeIndex(index, header, bytes.subarray(end + header.index));
  },
};
