import { flag, sectionOf, text, type Section } from './map-inventory-record.ts';
import type { SnapshotLayout } from './snapshot-layout.ts';

/**
 * A mobile device (iPhone, iPad, Apple TV) as read from Jamf Pro's mobile device inventory, before
 * the latest-OS decision. Keys in the documented order (docs/api.md); a field without a value is
 * absent, never null.
 */
export interface MobileDevice {
  id: string;
  /** `iOS` (iPhones and iPads), `tvOS`, `watchOS` or `Unknown`, as Jamf writes it. */
  device_type?: string;
  udid?: string;
  name?: string;
  serial_number?: string;
  model?: string;
  model_identifier?: string;
  os_version?: string;
  os_build?: string;
  os_rapid_security_response?: string;
  last_inventory_at?: string;
  username?: string;
  email?: string;
  managed?: boolean;
  supervised?: boolean;
}

/**
 * Maps one Jamf Pro mobile device detail record (`/api/v2/mobile-devices/detail`) to a MobileDevice.
 * with the `mobileDeviceId` the client parsed. A device Jamf could not type has no
 * `general` section at all: it keeps what the other sections say. Values of the wrong type count
 * as absent.
 */
export const mapMobileRecord = (root: Section, id: string): MobileDevice => {
  const general = sectionOf(root.general);
  const hardware = sectionOf(root.hardware);
  const user = sectionOf(root.userAndLocation);
  const device: Record<string, string | boolean> = { id };
  const put = (key: keyof MobileDevice, value: string | boolean | undefined): void => {
    if (value !== undefined) device[key] = value;
  };
  put('device_type', text(root.deviceType));
  put('udid', text(general?.udid));
  put('name', text(general?.displayName));
  put('serial_number', text(hardware?.serialNumber));
  put('model', text(hardware?.model));
  put('model_identifier', text(hardware?.modelIdentifier));
  put('os_version', text(general?.osVersion));
  put('os_build', text(general?.osBuild));
  put('os_rapid_security_response', text(general?.osRapidSecurityResponse));
  put('last_inventory_at', text(general?.lastInventoryUpdateDate));
  put('username', text(user?.username));
  put('email', text(user?.emailAddress));
  put('managed', flag(general?.managed));
  put('supervised', flag(general?.supervised));
  return device as unknown as MobileDevice;
};

/**
 * One fixed shape in the documented order (docs/api.md): `os_is_latest` right after
 * `os_rapid_security_response`, as on computers. Undefined fields are left out of the JSON.
 */
const responseShape = (device: MobileDevice) => ({
  id: device.id,
  device_type: device.device_type,
  udid: device.udid,
  name: device.name,
  serial_number: device.serial_number,
  model: device.model,
  model_identifier: device.model_identifier,
  os_version: device.os_version,
  os_build: device.os_build,
  os_rapid_security_response: device.os_rapid_security_response,
  os_is_latest: false,
  last_inventory_at: device.last_inventory_at,
  username: device.username,
  email: device.email,
  managed: device.managed,
  supervised: device.supervised,
});

/** A mobile device's snapshot: its `device_type` is the category, its last inventory update the time; no board. */
export const MOBILE_LAYOUT: SnapshotLayout<MobileDevice> = {
  shape: responseShape,
  columns: (device) => ({
    osVersion: device.os_version,
    response: device.os_rapid_security_response,
    category: device.device_type,
    model: device.model_identifier,
    board: undefined,
    time: device.last_inventory_at,
    managed: device.managed,
    supervised: device.supervised,
  }),
};
