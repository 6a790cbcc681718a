import { isPlainObject } from '../plain-object.ts';
import { inventoryIdOf } from './record-id.ts';
import { isLatest, parseVersion } from './version.ts';

/**
 * A device as read from the inventory, before the latest-OS decision (docs/api.md). This is what
 * the cache stores, so a changed `LATEST_OS_VERSION` never serves stale flags. Keys appear in the
 * documented order (docs/api.md); a field without a value is absent, never null.
 */
export interface InventoryDevice {
  id: string;
  udid?: string;
  name?: string;
  serial_number?: string;
  model?: string;
  model_identifier?: string;
  os_name?: string;
  os_version?: string;
  os_build?: string;
  last_contact_at?: string;
  last_inventory_at?: string;
  username?: string;
  email?: string;
  supervised?: boolean;
  managed?: boolean;
}

/** The response shape: an inventory device plus `os_is_latest`, always present, right after `os_build`. */
export type Device = InventoryDevice & { os_is_latest: boolean };

type Section = Record<string, unknown>;

const sectionOf = (value: unknown): Section | undefined => (isPlainObject(value) ? value : undefined);

// Empty or blank text carries no value; upstream sends it for unset fields.
const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

const flag = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);

/**
 * Maps one Jamf Pro computers-inventory record (v3) to an InventoryDevice. Returns undefined for a
 * record without a usable id: it could be neither ordered nor deduplicated. Values of the wrong type
 * are treated like absent ones; unknown fields and null sections are ignored.
 */
export const mapInventoryRecord = (record: unknown): InventoryDevice | undefined => {
  const id = inventoryIdOf(record);
  if (id === undefined) return undefined;
  const root = record as Section;
  const general = sectionOf(root.general);
  const hardware = sectionOf(root.hardware);
  const os = sectionOf(root.operatingSystem);
  const user = sectionOf(root.userAndLocation);
  const device: Record<string, string | boolean> = { id };
  const put = (key: keyof InventoryDevice, value: string | boolean | undefined): void => {
    if (value !== undefined) device[key] = value;
  };
  put('udid', text(root.udid));
  put('name', text(general?.name));
  put('serial_number', text(hardware?.serialNumber));
  put('model', text(hardware?.model));
  put('model_identifier', text(hardware?.modelIdentifier));
  put('os_name', text(os?.name));
  put('os_version', text(os?.version));
  put('os_build', text(os?.build));
  put('last_contact_at', text(general?.lastContactTime) ?? text(general?.lastContact));
  put('last_inventory_at', text(general?.reportDate));
  put('username', text(user?.username));
  put('email', text(user?.email));
  put('supervised', flag(general?.supervised));
  put('managed', flag(sectionOf(general?.remoteManagement)?.managed));
  return device as unknown as InventoryDevice;
};

/**
 * One fixed shape in the documented order, `os_is_latest` after `os_build`. Fields without a value
 * are undefined here, which JSON.stringify leaves out, so the body never carries null; the fixed
 * shape is also what keeps rendering 10,000 devices cheap.
 */
const flagged = (device: InventoryDevice, latest: boolean) => ({
  id: device.id,
  udid: device.udid,
  name: device.name,
  serial_number: device.serial_number,
  model: device.model,
  model_identifier: device.model_identifier,
  os_name: device.os_name,
  os_version: device.os_version,
  os_build: device.os_build,
  os_is_latest: latest,
  last_contact_at: device.last_contact_at,
  last_inventory_at: device.last_inventory_at,
  username: device.username,
  email: device.email,
  supervised: device.supervised,
  managed: device.managed,
});

/** Adds `os_is_latest` right after `os_build`'s position (whether or not `os_build` is present). */
export const withLatestFlag = (device: InventoryDevice, reference: string | readonly string[]): Device => {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flagged(device, isLatest(device.os_version, reference)))) {
    if (value !== undefined) result[key] = value;
  }
  return result as unknown as Device;
};

/** The GET /devices body: every device flagged against one reference, serialized once. */
export const renderDeviceList = (devices: readonly InventoryDevice[], reference: string): string => {
  // Parsed once for the whole list; an unparsable reference stays text and makes no device latest.
  const parsed = parseVersion(reference) ?? reference;
  // A fleet runs a handful of distinct versions: decide each once.
  const decided = new Map<string | undefined, boolean>();
  const latestFor = (version: string | undefined): boolean => {
    let latest = decided.get(version);
    if (latest === undefined) {
      latest = isLatest(version, parsed);
      decided.set(version, latest);
    }
    return latest;
  };
  return JSON.stringify(devices.map((device) => flagged(device, latestFor(device.os_version))));
};
