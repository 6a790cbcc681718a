import type { LatestOsSystem } from '../latest-os/latest-os-feed.ts';
import { COMPUTERS_INVENTORY, MOBILE_DEVICES_INVENTORY, type JamfInventoryEndpoint } from '../inventory/jamf-endpoints.ts';
import type { RecordMapper } from '../inventory/record-id.ts';
import { COMPUTER_QUERY, MOBILE_QUERY, type QueryKind } from './device-query.ts';
import { COMPUTER_LAYOUT, type SnapshotLayout } from './snapshot-layout.ts';
import { mapInventoryRecord } from './map-inventory-record.ts';
import { mapMobileRecord, MOBILE_LAYOUT } from './map-mobile-record.ts';

/** What the device stack (snapshot, codec, query, tiers, refresh) is handed, whatever the device. */
export interface ServedDevice {
  id: string;
}

/**
 * Where Jamf Pro's two inventories differ on the one device stack: the Jamf endpoint, the mapping
 * of its records, the snapshot's JSON and columns, the query's own filters and route, the cluster
 * key, and the latest-OS reference (which feed, and which devices it decides).
 */
export interface InventoryKind {
  /** As the refresh's log line names it. */
  readonly name: 'computers' | 'mobile_devices';
  readonly endpoint: JamfInventoryEndpoint;
  /**
   * The kind's records: how Jamf's records map to its devices and how those are laid out in a
   * snapshot, handed together to `use` (their device type is the kind's own, so neither can be
   * paired with the other kind's).
   */
  readonly records: <R>(use: <D extends ServedDevice>(map: RecordMapper<D>, layout: SnapshotLayout<D>) => R) => R;
  readonly query: QueryKind;
  /** The cluster key's prefix (device-inventory.ts). */
  readonly keyPrefix: 'devices' | 'mobile-devices';
  /**
   * Which system's reference decides a device, by its lower-cased category (an iPhone's `ios`: iOS,
   * an Apple TV's `tvos`: tvOS); undefined: none does (not latest, no compliance fields).
   */
  readonly systemOf: (category: string | undefined) => LatestOsSystem | undefined;
}

/** iPhones and iPads against iOS, Apple TVs against tvOS; watchOS and Unknown devices against nothing. */
const mobileSystemOf = (category: string | undefined): LatestOsSystem | undefined =>
  category === 'ios' ? 'iOS' : category === 'tvos' ? 'tvOS' : undefined;

export const COMPUTERS: InventoryKind = {
  name: 'computers',
  endpoint: COMPUTERS_INVENTORY,
  records: (use) => use(mapInventoryRecord, COMPUTER_LAYOUT),
  query: COMPUTER_QUERY,
  keyPrefix: 'devices',
  systemOf: () => 'macOS',
};

/**
 * iPhones, iPads and Apple TVs: `iOS` devices (iPhones and iPads) are decided against the iOS
 * reference, `tvOS` ones against the tvOS reference, when one is configured (systemOf).
 */
export const MOBILE_DEVICES: InventoryKind = {
  name: 'mobile_devices',
  endpoint: MOBILE_DEVICES_INVENTORY,
  records: (use) => use(mapMobileRecord, MOBILE_LAYOUT),
  query: MOBILE_QUERY,
  keyPrefix: 'mobile-devices',
  systemOf: mobileSystemOf,
};
