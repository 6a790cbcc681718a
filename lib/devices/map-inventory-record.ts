import { inventoryIdOf } from './record-id.ts';
import { isLatest, parseVersion } from './version.ts';

/**
 * A device as read from the inventory, before the latest-OS decision (CONTRACT §2). This is what
 * the cache stores, so a changed `LATEST_OS_VERSION` never serves stale flags. Keys appear in the
 * contract's order; a field without a value is absent, never null.
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

const sectionOf = (value: unknown): Section | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Section) : undefined;

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
  const candidate: Record<string, string | boolean | undefined> = {
    id,
    udid: text(root.udid),
    name: text(general?.name),
    serial_number: text(hardware?.serialNumber),
    model: text(hardware?.model),
    model_identifier: text(hardware?.modelIdentifier),
    os_name: text(os?.name),
    os_version: text(os?.version),
    os_build: text(os?.build),
    last_contact_at: text(general?.lastContactTime) ?? text(general?.lastContact),
    last_inventory_at: text(general?.reportDate),
    username: text(user?.username),
    email: text(user?.email),
    supervised: flag(general?.supervised),
    managed: flag(sectionOf(general?.remoteManagement)?.managed),
  };
  const device: Record<string, string | boolean> = {};
  for (const [key, value] of Object.entries(candidate)) {
    if (value !== undefined) device[key] = value;
  }
  return device as unknown as InventoryDevice;
};

/** Adds `os_is_latest` right after `os_build`'s position (whether or not `os_build` is present). */
export const withLatestFlag = (device: InventoryDevice, reference: string | readonly string[]): Device => {
  const { last_contact_at, last_inventory_at, username, email, supervised, managed, ...head } = device;
  const tail = { last_contact_at, last_inventory_at, username, email, supervised, managed };
  const result: Record<string, unknown> = { ...head, os_is_latest: isLatest(device.os_version, reference) };
  for (const [key, value] of Object.entries(tail)) {
    if (value !== undefined) result[key] = value;
  }
  return result as unknown as Device;
};

/** The GET /devices body: every device flagged against one reference, serialized once. */
export const renderDeviceList = (devices: readonly InventoryDevice[], reference: string): string => {
  // Parsed once for the whole list; an unparsable reference stays text and makes no device latest.
  const parsed = parseVersion(reference) ?? reference;
  return JSON.stringify(devices.map((device) => withLatestFlag(device, parsed)));
};
