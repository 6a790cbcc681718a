import { mapInventoryRecord } from '../../lib/devices/map-inventory-record.ts';
import { mapMobileRecord } from '../../lib/devices/map-mobile-record.ts';
import { COMPUTERS_INVENTORY, MOBILE_DEVICES_INVENTORY } from '../../lib/inventory/jamf-endpoints.ts';
import { mapIdentified } from '../../lib/inventory/record-id.ts';

/** One computers-inventory record as the Jamf client maps it: undefined without a usable id. */
export const mapComputer = (record: unknown) => mapIdentified(record, COMPUTERS_INVENTORY.idField, mapInventoryRecord)?.value;

/** One mobile device record as the Jamf client maps it: undefined without a usable `mobileDeviceId`. */
export const mapMobile = (record: unknown) => mapIdentified(record, MOBILE_DEVICES_INVENTORY.idField, mapMobileRecord)?.value;
