import { runBounded } from '../async/bounded-pool.ts';
import { compareDigitStrings } from '../values/digit-strings.ts';
import { dictionary } from './build-snapshot.ts';
import { CHUNK_DEVICES, chunkDigest, snapshotId, type DeviceSnapshot, type StoredChunk } from './device-snapshot.ts';
import { checkChunk, compress, CONCURRENT_CHUNKS, decompress, lazyText, malformed, storedOf } from './snapshot-chunks.ts';
import { renderDevice, type SnapshotLayout } from './snapshot-layout.ts';

/**
 * The incremental refresh's merge at the level of the stored chunks
 * (docs/architecture.md#the-incremental-refresh): changed devices' JSON spliced into the chunks
 * that hold them, by the index's offsets, without parsing or rendering the unchanged devices; a
 * chunk none of whose devices changed or moved keeps its compressed bytes, checksum and digest as
 * they are. What it builds is what `buildSnapshot` builds from the merged list, byte for byte.
 */
export interface MergePlan {
  readonly count: number;
  /** Where merged device p comes from: i ≥ 0 the previous snapshot's device i, −k−1 the k-th changed device. */
  readonly source: Int32Array;
}

/** The first position in `ids` (ascending) whose id is not below `id`. */
const lowerBound = (ids: readonly string[], id: string): number => {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareDigitStrings(ids[middle]!, id) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
};

/** Where each device of the merged list comes from: `changed` (ascending ids) replaces or joins `ids` (ascending). */
export const planMerge = (ids: readonly string[], changed: readonly { id: string }[]): MergePlan => {
  const at = changed.map((device) => lowerBound(ids, device.id));
  const replaced = changed.filter((device, k) => at[k]! < ids.length && compareDigitStrings(ids[at[k]!]!, device.id) === 0).length;
  const count = ids.length + changed.length - replaced;
  const source = new Int32Array(count);
  let next = 0;
  let kept = 0;
  changed.forEach((device, k) => {
    if (at[k]! < kept) throw new Error('the changed devices are not in ascending id order, each once');
    while (kept < at[k]!) source[next++] = kept++;
    if (kept < ids.length && compareDigitStrings(ids[kept]!, device.id) === 0) kept += 1;
    source[next++] = -k - 1;
  });
  while (kept < ids.length) source[next++] = kept++;
  return { count, source };
};

type Dictionary = (string | undefined)[];

/** A previous snapshot to merge into, its chunks' text decompressed ahead while Jamf answers. */
export interface MergeBase {
  readonly previous: DeviceSnapshot;
  /** Chunk `old`'s text, decompressed once (on libuv's pool) and checked against the index. */
  textOf: (old: number) => Promise<Buffer>;
  release: (old: number) => void;
  keepOnly: (needed: ReadonlyMap<number, number>) => void;
  stopWarming: () => void;
}

/** Chunks decompressed ahead at once: leaves the other core to the main thread reading Jamf's answer. */
const WARMING_CHUNKS = 2;

/**
 * `previous` made ready for a merge: its chunks decompressed ahead, in order, while the changes
 * are read (with 1 % of a fleet changed, nearly every chunk of 1,000 devices has one), until the
 * merge starts; the merge decompresses any others it needs itself.
 */
export const mergeBase = (previous: DeviceSnapshot): MergeBase => {
  const chunkDevices = previous.text.chunkDevices;
  const texts = new Map<number, Promise<Buffer>>();
  const load = async (old: number): Promise<Buffer> => {
    const held = previous.text.stored(old);
    const raw = held === undefined ? Buffer.from(previous.text.chunk(old), 'latin1') : await decompress(held.bytes, held.rawBytes);
    const end = Math.min(previous.count, (old + 1) * chunkDevices);
    if (raw.length !== previous.starts[end]! - previous.starts[old * chunkDevices]!) throw malformed(`chunk ${old} is not its length`);
    checkChunk(raw, old, chunkDevices, previous.count, previous.starts, previous.flagAt);
    return raw;
  };
  const textOf = (old: number): Promise<Buffer> => {
    let text = texts.get(old);
    if (text === undefined) {
      text = load(old);
      texts.set(old, text);
    }
    return text;
  };
  let warming = true;
  let next = 0;
  const chunks = Math.ceil(previous.count / chunkDevices);
  const warm = async (): Promise<void> => {
    while (warming && next < chunks) {
      // A chunk that fails here fails again, and is reported, where the merge needs it.
      await textOf(next++).catch(() => undefined);
    }
  };
  for (let worker = 0; worker < WARMING_CHUNKS; worker += 1) void warm();
  return {
    previous,
    textOf,
    release: (old) => texts.delete(old),
    keepOnly: (needed) => {
      for (const old of texts.keys()) if (!needed.has(old)) texts.delete(old);
    },
    stopWarming: () => {
      warming = false;
    },
  };
};

/** Renumbers `keys` in order of first use, as a build interns them, and gives the dictionary in that order. */
const canonical = (keys: Uint32Array, values: readonly (string | undefined)[]): (string | undefined)[] => {
  const renumber = new Int32Array(values.length).fill(-1);
  renumber[0] = 0;
  const ordered: (string | undefined)[] = [undefined];
  for (let index = 0; index < keys.length; index += 1) {
    let key = renumber[keys[index]!]!;
    if (key < 0) {
      key = ordered.length;
      renumber[keys[index]!] = key;
      ordered.push(values[keys[index]!]);
    }
    keys[index] = key;
  }
  return ordered;
};

/**
 * `previous` with `changed` merged in as `plan` places them, stamped `readAt`. Only the chunks
 * whose devices changed or moved are decompressed (on libuv's pool), spliced and compressed again,
 * a few side by side; a new id below the highest moves every chunk after it, which are then
 * spliced from the previous chunks in the same way. Throws when a previous chunk is not what its
 * index says.
 */
export const mergeSnapshot = async <D extends { id: string }>(
  base: MergeBase,
  plan: MergePlan,
  changed: readonly D[],
  readAt: number,
  fullReadAt: number,
  layout: SnapshotLayout<D>,
): Promise<DeviceSnapshot> => {
  const { previous } = base;
  base.stopWarming();
  const { count, source } = plan;
  const oldChunkDevices = previous.text.chunkDevices;
  const rendered = changed.map((device) => renderDevice(device, layout));
  const starts = new Uint32Array(count + 1);
  const flagAt = new Uint32Array(count);
  const keys = Array.from({ length: 5 }, () => new Uint32Array(count));
  const [osVersionKey, responseKey, osNameKey, modelKey, boardKey] = keys as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  const dictionaries = [previous.osVersions, previous.responses, previous.osNames, previous.models, previous.boards].map((values) =>
    dictionary<string>([...values]),
  );
  const managed = new Int8Array(count);
  const supervised = new Int8Array(count);
  const lastContact = new Float64Array(count);
  const ids = new Array<string>(count);
  let length = 0;
  for (let index = 0; index < count; index += 1) {
    const from = source[index]!;
    starts[index] = length;
    if (from >= 0) {
      const start = previous.starts[from]!;
      flagAt[index] = length + previous.flagAt[from]! - start;
      osVersionKey[index] = previous.osVersionKey[from]!;
      responseKey[index] = previous.responseKey[from]!;
      osNameKey[index] = previous.osNameKey[from]!;
      modelKey[index] = previous.modelKey[from]!;
      boardKey[index] = previous.boardKey[from]!;
      managed[index] = previous.managed[from]!;
      supervised[index] = previous.supervised[from]!;
      lastContact[index] = previous.lastContact[from]!;
      ids[index] = previous.ids[from]!;
      length += previous.starts[from + 1]! - start;
    } else {
      const device = rendered[-from - 1]!;
      flagAt[index] = length + device.flag;
      [device.osVersion, device.response, device.category, device.model, device.board].forEach((value, column) => {
        keys[column]![index] = dictionaries[column]!.keyOf(value);
      });
      managed[index] = device.managed;
      supervised[index] = device.supervised;
      lastContact[index] = device.time;
      ids[index] = changed[-from - 1]!.id;
      length += device.json.length;
    }
  }
  starts[count] = length;
  const [osVersions, responses, osNames, models, boards] = keys.map((column, at) => canonical(column, dictionaries[at]!.values)) as [
    Dictionary,
    Dictionary,
    Dictionary,
    Dictionary,
    Dictionary,
  ];

  const chunkCount = Math.ceil(count / CHUNK_DEVICES);
  const stored: (StoredChunk | undefined)[] = new Array<StoredChunk | undefined>(chunkCount);
  const digests: Buffer[] = new Array<Buffer>(chunkCount);
  /** Each changed chunk, and the first and last previous chunk its kept devices come from. */
  const dirty: { chunk: number; first: number; last: number }[] = [];
  const users = new Map<number, number>();
  for (let chunk = 0; chunk < chunkCount; chunk += 1) {
    const from = chunk * CHUNK_DEVICES;
    const to = Math.min(count, from + CHUNK_DEVICES);
    const held =
      oldChunkDevices === CHUNK_DEVICES && to === Math.min(previous.count, from + CHUNK_DEVICES) ? previous.text.stored(chunk) : undefined;
    let same = held !== undefined;
    for (let index = from; same && index < to; index += 1) same = source[index] === index;
    if (same) {
      stored[chunk] = held;
      digests[chunk] = previous.text.digests[chunk]!;
      continue;
    }
    let first = Number.POSITIVE_INFINITY;
    let last = -1;
    for (let index = from; index < to; index += 1) {
      if (source[index]! < 0) continue;
      first = Math.min(first, Math.floor(source[index]! / oldChunkDevices));
      last = Math.max(last, Math.floor(source[index]! / oldChunkDevices));
    }
    for (let old = first; old <= last; old += 1) users.set(old, (users.get(old) ?? 0) + 1);
    dirty.push({ chunk, first, last });
  }

  const splice = async ({ chunk, first, last }: (typeof dirty)[number]): Promise<void> => {
    const texts = await Promise.all(Array.from({ length: Math.max(0, last - first + 1) }, (_, offset) => base.textOf(first + offset)));
    const from = chunk * CHUNK_DEVICES;
    const to = Math.min(count, from + CHUNK_DEVICES);
    const pieces: Buffer[] = [];
    let index = from;
    while (index < to) {
      const origin = source[index]!;
      index += 1;
      if (origin < 0) {
        pieces.push(Buffer.from(rendered[-origin - 1]!.json, 'latin1'));
        continue;
      }
      // A run of kept devices, consecutive in one previous chunk: one slice of its text.
      const old = Math.floor(origin / oldChunkDevices);
      const oldEnd = Math.min(previous.count, (old + 1) * oldChunkDevices);
      let end = origin + 1;
      while (index < to && source[index] === end && end < oldEnd) {
        end += 1;
        index += 1;
      }
      const base = previous.starts[old * oldChunkDevices]!;
      pieces.push(texts[old - first]!.subarray(previous.starts[origin]! - base, previous.starts[end]! - base));
    }
    const raw = Buffer.concat(pieces, starts[to]! - starts[from]!);
    digests[chunk] = chunkDigest(raw);
    stored[chunk] = storedOf(raw, await compress(raw));
    for (let old = first; old <= last; old += 1) {
      const left = users.get(old)! - 1;
      users.set(old, left);
      if (left === 0) base.release(old);
    }
  };
  // Texts warmed while Jamf answered that no changed chunk needs.
  base.keepOnly(users);
  await runBounded(
    dirty.map((entry) => () => splice(entry)),
    CONCURRENT_CHUNKS,
    new AbortController(),
  );

  return {
    count,
    readAt,
    fullReadAt,
    id: snapshotId(digests),
    text: lazyText([...stored], digests, CHUNK_DEVICES, count, starts, flagAt),
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
