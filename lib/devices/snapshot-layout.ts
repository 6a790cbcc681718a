import type { InventoryDevice } from './map-inventory-record.ts';

/** The flag's key and its undecided literal (rendering replaces it), as every device's JSON holds them. */
const FLAG_KEY = '"os_is_latest":';
export const FLAG_UNDECIDED = 'false';

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

const NON_ASCII = /[\u0080-\uffff]/g;
/** The JSON with every character beyond ASCII as its `\u` escape: the same value to any JSON reader. */
const asciiJson = (json: string): string =>
  json.replace(NON_ASCII, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

const tristate = (value: boolean | undefined): number => (value === undefined ? -1 : value ? 1 : 0);

/** One device as a snapshot holds it: its JSON, where its flag literal starts in it, its column values. */
export interface RenderedDevice {
  json: string;
  flag: number;
  osVersion: string | undefined;
  response: string | undefined;
  category: string | undefined;
  model: string | undefined;
  board: string | undefined;
  managed: number;
  supervised: number;
  time: number;
}

/** `device` as `layout` renders it: the one place a build and a merge turn a device into text and columns. */
export const renderDevice = <D>(device: D, layout: SnapshotLayout<D>): RenderedDevice => {
  const json = asciiJson(JSON.stringify(layout.shape(device)));
  const columns = layout.columns(device);
  return {
    json,
    // JSON.stringify escapes every quote inside strings, so the key occurs only as the key itself.
    flag: json.indexOf(FLAG_KEY) + FLAG_KEY.length,
    osVersion: columns.osVersion,
    response: columns.response,
    category: columns.category?.toLowerCase(),
    model: columns.model?.toLowerCase(),
    board: columns.board,
    managed: tristate(columns.managed),
    supervised: tristate(columns.supervised),
    time: columns.time === undefined ? Number.NaN : Date.parse(columns.time),
  };
};
