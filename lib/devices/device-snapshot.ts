import { createHash } from 'node:crypto';
import type { LatestDecision, LatestReference } from '../latest-os/latest-reference.ts';
import type { InventoryDevice } from './map-inventory-record.ts';

/**
 * The whole inventory as served: every device rendered once as its response JSON, with its
 * `os_is_latest` literal left to be decided per reference, plus the columns the query filters on.
 * Pages and filters are cut from it without an upstream call and without serializing the list again:
 * a page is the join of its devices' rendered JSON. This is what both cache tiers hold.
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
  /** A hash of the devices: equal for equal inventories, whichever container read them. */
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

/**
 * The devices' JSON in chunks: device i is in chunk ⌊i / chunkDevices⌋, which begins at
 * `starts[chunk · chunkDevices]` of the whole text. A snapshot read from the cluster decodes a chunk
 * the first time a page needs it (docs/architecture.md#values-in-parts).
 */
export interface SnapshotText {
  readonly chunkDevices: number;
  chunk: (index: number) => string;
}

const FLAG_KEY = '"os_is_latest":';
const FLAG_UNDECIDED = 'false';

/** What a snapshot's columns hold of one device, whichever inventory it is from. */
export interface DeviceColumns {
  osVersion: string | undefined;
  response: string | undefined;
  /** Compared case-insensitively: kept lower-cased. */
  category: string | undefined;
  model: string | undefined;
  /** Not served: read by the latest-OS decision (a Mac's board id). */
  board: string | undefined;
  /** ISO 8601, as served. */
  time: string | undefined;
  managed: boolean | undefined;
  supervised: boolean | undefined;
}

/**
 * How an inventory's devices become a snapshot: the served JSON (`os_is_latest` written `false`,
 * right after `os_rapid_security_response`) and the columns. One per inventory kind (inventory-kind.ts).
 */
export interface SnapshotLayout<D> {
  shape: (device: D) => object;
  columns: (device: D) => DeviceColumns;
}

/**
 * One fixed shape in the documented order (docs/api.md), `os_is_latest` right after `os_build`.
 * Fields without a value are undefined, which JSON.stringify leaves out: the body never carries null.
 */
const responseShape = (device: InventoryDevice) => ({
  id: device.id,
  udid: device.udid,
  name: device.name,
  serial_number: device.serial_number,
  model: device.model,
  model_identifier: device.model_identifier,
  os_name: device.os_name,
  os_version: device.os_version,
  os_build: device.os_build,
  os_rapid_security_response: device.os_rapid_security_response,
  os_is_latest: false,
  last_contact_at: device.last_contact_at,
  last_inventory_at: device.last_inventory_at,
  username: device.username,
  email: device.email,
  supervised: device.supervised,
  managed: device.managed,
});

/** A computer's snapshot: its `os_name` is the category, its last contact the time. */
export const COMPUTER_LAYOUT: SnapshotLayout<InventoryDevice> = {
  shape: responseShape,
  columns: (device) => ({
    osVersion: device.os_version,
    response: device.os_rapid_security_response,
    category: device.os_name,
    model: device.model_identifier,
    board: device.board_id,
    time: device.last_contact_at,
    managed: device.managed,
    supervised: device.supervised,
  }),
};

/** Interns values into a dictionary whose entry 0 stands for "none". */
const dictionary = <T>() => {
  const keys = new Map<T, number>();
  const values: (T | undefined)[] = [undefined];
  return {
    values,
    keyOf: (value: T | undefined): number => {
      if (value === undefined) return 0;
      let key = keys.get(value);
      if (key === undefined) {
        key = values.length;
        keys.set(value, key);
        values.push(value);
      }
      return key;
    },
  };
};

const tristate = (value: boolean | undefined): number => (value === undefined ? -1 : value ? 1 : 0);

const NON_ASCII = /[\u0080-\uffff]/g;
/** The JSON with every character beyond ASCII as its `\u` escape: the same value to any JSON reader. */
const asciiJson = (json: string): string =>
  json.replace(NON_ASCII, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The snapshot of `devices` (ascending ids, each once: as the inventory client returns them), laid out as `layout` says. */
export const buildSnapshot = <D extends { id: string } = InventoryDevice>(
  devices: readonly D[],
  readAt: number,
  fullReadAt = readAt,
  layout: SnapshotLayout<D> = COMPUTER_LAYOUT as unknown as SnapshotLayout<D>,
): DeviceSnapshot => {
  const count = devices.length;
  const starts = new Uint32Array(count + 1);
  const flagAt = new Uint32Array(count);
  const osVersionKey = new Uint32Array(count);
  const responseKey = new Uint32Array(count);
  const osNameKey = new Uint32Array(count);
  const modelKey = new Uint32Array(count);
  const boardKey = new Uint32Array(count);
  const managed = new Int8Array(count);
  const supervised = new Int8Array(count);
  const lastContact = new Float64Array(count);
  const versions = dictionary<string>();
  const responses = dictionary<string>();
  const osNames = dictionary<string>();
  const models = dictionary<string>();
  const boards = dictionary<string>();
  const parts: string[] = [];
  let length = 0;
  devices.forEach((device, index) => {
    const json = asciiJson(JSON.stringify(layout.shape(device)));
    const columns = layout.columns(device);
    // JSON.stringify escapes every quote inside strings, so the key occurs only as the key itself.
    const flag = json.indexOf(FLAG_KEY) + FLAG_KEY.length;
    starts[index] = length;
    flagAt[index] = length + flag;
    parts.push(json);
    length += json.length;
    osVersionKey[index] = versions.keyOf(columns.osVersion);
    responseKey[index] = responses.keyOf(columns.response);
    osNameKey[index] = osNames.keyOf(columns.category?.toLowerCase());
    modelKey[index] = models.keyOf(columns.model?.toLowerCase());
    boardKey[index] = boards.keyOf(columns.board);
    managed[index] = tristate(columns.managed);
    supervised[index] = tristate(columns.supervised);
    lastContact[index] = columns.time === undefined ? Number.NaN : Date.parse(columns.time);
  });
  starts[count] = length;
  const json = parts.join('');
  return {
    count,
    readAt,
    fullReadAt,
    id: createHash('sha256').update(json).digest('base64url').slice(0, 22),
    text: { chunkDevices: Math.max(count, 1), chunk: () => json },
    starts,
    flagAt,
    ids: devices.map((device) => device.id),
    osVersionKey,
    osVersions: versions.values,
    responseKey,
    responses: responses.values,
    managed,
    supervised,
    osNameKey,
    osNames: osNames.values,
    modelKey,
    models: models.values,
    boardKey,
    boards: boards.values,
    lastContact,
  };
};

/**
 * The devices `snapshot` was built from, as `buildSnapshot` took them: each device's JSON read back
 * without its undecided flag, and its board id, which is not served, from the columns. Every chunk
 * of a snapshot read from the cluster is decoded. `buildSnapshot` of them gives the same text and id.
 */
export const snapshotDevices = <D extends { id: string } = InventoryDevice>(snapshot: DeviceSnapshot): D[] => {
  const { text, starts, count } = snapshot;
  const devices: D[] = [];
  for (let chunkIndex = 0; chunkIndex * text.chunkDevices < count; chunkIndex += 1) {
    const json = text.chunk(chunkIndex);
    const from = chunkIndex * text.chunkDevices;
    const base = starts[from]!;
    for (let index = from; index < Math.min(count, from + text.chunkDevices); index += 1) {
      const { os_is_latest: _flag, ...device } = JSON.parse(
        json.slice(starts[index]! - base, starts[index + 1]! - base),
      ) as InventoryDevice & { os_is_latest: boolean };
      const board = snapshot.boards[snapshot.boardKey[index]!];
      if (board !== undefined) device.board_id = board;
      devices.push(device as unknown as D);
    }
  }
  return devices;
};

/** Every device's latest-OS decision against one reference. */
export interface LatestDecisions {
  /** 1: `os_is_latest` true, 0: false. */
  readonly flags: Uint8Array;
  /** Device i's `os_latest_version` as an index into `fragments`. */
  readonly referenceOf: Uint32Array;
  /** What follows the device's flag literal: `,"os_latest_version":"…"`, or nothing (entry 0). */
  readonly fragments: readonly string[];
}

const LATEST_VERSION_KEY = ',"os_latest_version":';

/**
 * Every device's `os_is_latest` and `os_latest_version` against `reference`, one decision per
 * distinct version, response level, category and (for a feed) board and model: a fleet runs a few
 * hundred. A device whose category `decides` refuses (a mobile device that is not `iOS`) is not
 * latest and has no `os_latest_version`.
 */
export const decideLatest = (
  snapshot: DeviceSnapshot,
  reference: LatestReference,
  decides?: (category: string | undefined) => boolean,
): LatestDecisions => {
  const flags = new Uint8Array(snapshot.count);
  const referenceOf = new Uint32Array(snapshot.count);
  const fragments = [''];
  const fragmentOf = new Map<string, number>();
  const decided = new Map<string, { flag: number; fragment: number }>();
  const decide = (index: number): { flag: number; fragment: number } => {
    const version = snapshot.osVersionKey[index]!;
    const response = snapshot.responseKey[index]!;
    const board = reference.perDevice ? snapshot.boardKey[index]! : 0;
    const model = reference.perDevice ? snapshot.modelKey[index]! : 0;
    const category = decides === undefined ? 0 : snapshot.osNameKey[index]!;
    const slot = `${version},${response},${board},${model},${category}`;
    let known = decided.get(slot);
    if (known === undefined) {
      const decision: LatestDecision =
        decides?.(snapshot.osNames[category]) === false
          ? { latest: false, reference: undefined }
          : reference.decide({
              osVersion: snapshot.osVersions[version],
              response: snapshot.responses[response],
              boardId: snapshot.boards[board],
              modelIdentifier: snapshot.models[model],
            });
      let fragment = 0;
      if (decision.reference !== undefined) {
        fragment = fragmentOf.get(decision.reference) ?? fragments.length;
        if (fragment === fragments.length) {
          fragments.push(`${LATEST_VERSION_KEY}${JSON.stringify(decision.reference)}`);
          fragmentOf.set(decision.reference, fragment);
        }
      }
      known = { flag: decision.latest ? 1 : 0, fragment };
      decided.set(slot, known);
    }
    return known;
  };
  for (let index = 0; index < snapshot.count; index += 1) {
    const { flag, fragment } = decide(index);
    flags[index] = flag;
    referenceOf[index] = fragment;
  }
  return { flags, referenceOf, fragments };
};

/** The JSON array of the devices at `indexes` (ascending), each with its decision from `decisions`. */
export const renderDevices = (snapshot: DeviceSnapshot, decisions: LatestDecisions, indexes: ArrayLike<number>): string => {
  const { text, starts, flagAt } = snapshot;
  const { flags, referenceOf, fragments } = decisions;
  let chunkIndex = -1;
  let json = '';
  let base = 0;
  // Appended piece by piece (V8 builds a rope, flattened once when the body is sent): measured
  // faster than collecting the pieces for a join, and no intermediate string per device.
  let body = '[';
  for (let position = 0; position < indexes.length; position += 1) {
    const index = indexes[position]!;
    const inChunk = Math.floor(index / text.chunkDevices);
    if (inChunk !== chunkIndex) {
      chunkIndex = inChunk;
      json = text.chunk(inChunk);
      base = starts[inChunk * text.chunkDevices]!;
    }
    if (position > 0) body += ',';
    const fragment = referenceOf[index]!;
    if (flags[index] === 1 || fragment !== 0) {
      // The flag literal, then the reference it was decided against, in the documented order.
      const flag = flagAt[index]! - base;
      body += json.slice(starts[index]! - base, flag);
      body += flags[index] === 1 ? 'true' : FLAG_UNDECIDED;
      body += fragments[fragment]!;
      body += json.slice(flag + FLAG_UNDECIDED.length, starts[index + 1]! - base);
    } else {
      body += json.slice(starts[index]! - base, starts[index + 1]! - base);
    }
  }
  return `${body}]`;
};

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
