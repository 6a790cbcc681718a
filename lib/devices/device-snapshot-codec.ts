import { promisify } from 'node:util';
import { constants, crc32, zstdCompressSync, zstdDecompress } from 'node:zlib';
import type { ClusterCodec } from '../cache/tiered-cache.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';

/**
 * How a device snapshot travels through the cluster tier: a JSON header line
 * `{"v":3,"n":<devices>,"readAt":<ms>,"id":"<hash>","bytes":<payload bytes>,"crc32":<of the payload>}`
 * and the payload, zstd-compressed. The payload holds the rendered JSON (ASCII) and the columns as
 * their bytes in memory (little-endian, as on every Lambda architecture), then a JSON dictionary of
 * ids and values, so a container decodes a 100,000-device snapshot without parsing a single device,
 * and decompresses it on libuv's thread pool, leaving the event loop to other requests:
 *
 *   u32 json bytes · json (ASCII) · pad · u32 starts[n+1] · u32 flagAt[n] · u32 osVersionKey[n] ·
 *   u32 responseKey[n] · u32 osNameKey[n] · u32 modelKey[n] · i8 managed[n] · i8 supervised[n] · pad ·
 *   f64 lastContact[n] · u32 dictionary bytes ·
 *   {"ids":[…],"osVersions":[…],"responses":[…],"osNames":[…],"models":[…]}
 *
 * Another format version reads as a miss; the length and checksum reject a truncated or corrupted
 * value before anything is built, and the structure is checked as it is read.
 */
const FORMAT_VERSION = 3;
/** zstd's fastest level: the rendered JSON repeats keys and values, so even this shrinks it ~6×. */
const ZSTD_LEVEL = 1;
/** Longer than any header written here: the cluster tier reads this much to learn a value's stamp. */
const STAMP_BYTES = 512;
const NEWLINE = 0x0a;

interface Header {
  n: number;
  readAt: number;
  id: string;
  bytes: number;
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
  const { v, n, readAt, id, bytes: size, crc32: checksum } = parsed as Record<string, unknown>;
  if (v !== FORMAT_VERSION || !count(n) || !count(readAt) || typeof id !== 'string' || !count(size) || !count(checksum)) return undefined;
  return { header: { n, readAt, id, bytes: size, crc32: checksum }, end: newline + 1 };
};

const align = (offset: number, to: number): number => Math.ceil(offset / to) * to;
const decompress = promisify(zstdDecompress);

/** A typed array's bytes, as they are in memory. */
const bytesOf = (column: Uint32Array | Int8Array | Float64Array): Buffer => Buffer.from(column.buffer, column.byteOffset, column.byteLength);

/** A copy of `length` elements at `at`: copied into a fresh (so aligned) buffer, then viewed. */
const columnOf = <T>(payload: Buffer, at: number, length: number, Column: new (buffer: ArrayBuffer) => T & { BYTES_PER_ELEMENT: number }, size: number): T => {
  const copy = new Uint8Array(length * size);
  copy.set(payload.subarray(at, at + length * size));
  return new Column(copy.buffer);
};

const encodePayload = (snapshot: DeviceSnapshot): Buffer => {
  const { count: n } = snapshot;
  // ASCII by construction (buildSnapshot escapes the rest): one byte per character.
  const json = Buffer.from(snapshot.json, 'latin1');
  const dictionary = Buffer.from(
    JSON.stringify({ ids: snapshot.ids, osVersions: snapshot.osVersions, responses: snapshot.responses, osNames: snapshot.osNames, models: snapshot.models }),
    'utf8',
  );
  const columnsAt = align(4 + json.length, 4);
  const flagsAt = columnsAt + 4 * (n + 1) + 20 * n;
  const lastContactAt = align(flagsAt + 2 * n, 8);
  const dictionaryAt = lastContactAt + 8 * n;
  const payload = Buffer.alloc(dictionaryAt + 4 + dictionary.length);
  payload.writeUInt32LE(json.length, 0);
  json.copy(payload, 4);
  let at = columnsAt;
  for (const column of [snapshot.starts, snapshot.flagAt, snapshot.osVersionKey, snapshot.responseKey, snapshot.osNameKey, snapshot.modelKey, snapshot.managed, snapshot.supervised]) {
    at += bytesOf(column).copy(payload, at);
  }
  bytesOf(snapshot.lastContact).copy(payload, lastContactAt);
  payload.writeUInt32LE(dictionary.length, dictionaryAt);
  dictionary.copy(payload, dictionaryAt + 4);
  return payload;
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

const decodePayload = (payload: Buffer, header: Header): DeviceSnapshot => {
  const { n } = header;
  if (payload.length < 4) throw malformed('no JSON length');
  const jsonBytes = payload.readUInt32LE(0);
  const columnsAt = align(4 + jsonBytes, 4);
  const flagsAt = columnsAt + 4 * (n + 1) + 20 * n;
  const lastContactAt = align(flagsAt + 2 * n, 8);
  const dictionaryAt = lastContactAt + 8 * n;
  if (payload.length < dictionaryAt + 4) throw malformed('shorter than its columns');
  const dictionaryBytes = payload.readUInt32LE(dictionaryAt);
  if (payload.length !== dictionaryAt + 4 + dictionaryBytes) throw malformed('length does not add up');
  const json = payload.toString('latin1', 4, 4 + jsonBytes);
  let at = columnsAt;
  const [starts, flagAt, osVersionKey, responseKey, osNameKey, modelKey] = [n + 1, n, n, n, n, n].map((length) => {
    const column = columnOf(payload, at, length, Uint32Array, 4);
    at += 4 * length;
    return column;
  }) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const managed = columnOf(payload, flagsAt, n, Int8Array, 1);
  const supervised = columnOf(payload, flagsAt + n, n, Int8Array, 1);
  const lastContact = columnOf(payload, lastContactAt, n, Float64Array, 8);
  const dictionary = JSON.parse(payload.toString('utf8', dictionaryAt + 4)) as Record<string, unknown>;
  const { ids } = dictionary;
  if (!Array.isArray(ids) || ids.length !== n || !ids.every((id) => typeof id === 'string' && /^\d+$/.test(id))) throw malformed('ids');
  const osVersions = textList(dictionary.osVersions, 'osVersions');
  const responses = textList(dictionary.responses, 'responses');
  const osNames = textList(dictionary.osNames, 'osNames');
  const models = textList(dictionary.models, 'models');
  // Every device must be a JSON object holding its flag literal where the columns say, and every key
  // must name an entry: a value that decodes is one this code can serve without a bounds error.
  if (starts[0] !== 0 || starts[n] !== json.length) throw malformed('device offsets do not cover the JSON');
  for (let index = 0; index < n; index += 1) {
    const start = starts[index]!;
    const end = starts[index + 1]!;
    const flag = flagAt[index]!;
    if (end <= start || json.charCodeAt(start) !== 123 || json.charCodeAt(end - 1) !== 125) throw malformed(`device ${index} is not an object`);
    if (flag <= start || flag + 5 > end || !json.startsWith('false', flag)) throw malformed(`device ${index} has no flag`);
    if (osVersionKey[index]! >= osVersions.length || responseKey[index]! >= responses.length || osNameKey[index]! >= osNames.length || modelKey[index]! >= models.length) {
      throw malformed(`device ${index} has a key outside its dictionary`);
    }
  }
  return {
    count: n,
    readAt: header.readAt,
    id: header.id,
    json,
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
    lastContact,
  };
};

export const deviceSnapshotCodec: ClusterCodec<DeviceSnapshot> = {
  stampBytes: STAMP_BYTES,
  encode: (snapshot) => {
    const payload = encodePayload(snapshot);
    const header = JSON.stringify({ v: FORMAT_VERSION, n: snapshot.count, readAt: snapshot.readAt, id: snapshot.id, bytes: payload.length, crc32: crc32(payload) });
    const compressed = zstdCompressSync(payload, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
    return Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), compressed]);
  },
  stampOf: (prefix) => {
    const found = headerOf(prefix);
    return found === undefined ? undefined : { readAt: found.header.readAt, id: found.header.id };
  },
  decode: async (bytes) => {
    const found = headerOf(bytes);
    if (found === undefined) return undefined;
    const { header, end } = found;
    let payload: Buffer;
    try {
      payload = await decompress(bytes.subarray(end), { maxOutputLength: Math.max(header.bytes, 1) });
    } catch {
      return undefined;
    }
    if (payload.length !== header.bytes || crc32(payload) !== header.crc32) return undefined;
    return decodePayload(payload, header);
  },
};
