import { isPlainObject } from '../values/plain-object.ts';

/**
 * A device as read from the inventory, before the latest-OS decision (docs/api.md), which depends
 * on a reference the inventory knows nothing of. Keys appear in the
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
  os_rapid_security_response?: string;
  last_contact_at?: string;
  last_inventory_at?: string;
  username?: string;
  email?: string;
  supervised?: boolean;
  managed?: boolean;
  /** `operatingSystem.softwareUpdateDeviceId`, the Mac's board id: read for the latest-OS decision, not served. */
  board_id?: string;
}

export type Section = Record<string, unknown>;

export const sectionOf = (value: unknown): Section | undefined => (isPlainObject(value) ? value : undefined);

// Empty or blank text carries no value; upstream sends it for unset fields.
export const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

export const flag = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);

/**
 * Maps one Jamf Pro computers-inventory record (v3/v4) to an InventoryDevice, with the `id` the
 * client parsed (a record without a usable one never reaches here: it could be neither ordered nor
 * deduplicated). Values of the wrong type are treated like absent ones; unknown fields and null
 * sections are ignored.
 */
export const mapInventoryRecord = (root: Section, id: string): InventoryDevice => {
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
  put('os_rapid_security_response', text(os?.rapidSecurityResponse));
  put('last_contact_at', text(general?.lastContactTime) ?? text(general?.lastContact));
  put('last_inventory_at', text(general?.reportDate));
  put('username', text(user?.username));
  put('email', text(user?.email));
  put('supervised', flag(general?.supervised));
  put('managed', flag(sectionOf(general?.remoteManagement)?.managed));
  put('board_id', text(os?.softwareUpdateDeviceId));
  return device as unknown as InventoryDevice;
};
