import { INVENTORY_PATHS, LAST_CONTACT_FIELD, MOBILE_INVENTORY_PATHS } from './jamf-versions.ts';

/**
 * One of Jamf Pro's inventories, read the same way (token, pages, sort by id, re-reads): where it is,
 * which sections, the field its records are sorted and identified by, and its change filter.
 */
export interface JamfInventoryEndpoint {
  /** Newest first: the paths of the Jamf Pro versions this service reads (makeVersionedEndpoint). */
  readonly paths: readonly [string, ...string[]];
  readonly sections: readonly string[];
  readonly idField: string;
  /** RSQL for the records changed at or after `instant` (ISO 8601 UTC), as `path` names their dates. */
  readonly changedFilter: (path: string, instant: string) => string;
}

/** Records last in contact, or last reporting their inventory, at or after `instant` (`,` is RSQL's or). */
const changedFilter = (path: string, instant: string): string =>
  `${LAST_CONTACT_FIELD[path as (typeof INVENTORY_PATHS)[number]]}=ge=${instant},general.reportDate=ge=${instant}`;

export const COMPUTERS_INVENTORY: JamfInventoryEndpoint = {
  paths: INVENTORY_PATHS,
  sections: ['GENERAL', 'HARDWARE', 'OPERATING_SYSTEM', 'USER_AND_LOCATION'],
  idField: 'id',
  changedFilter,
};

/** iPhones, iPads and Apple TVs. */
export const MOBILE_DEVICES_INVENTORY: JamfInventoryEndpoint = {
  paths: MOBILE_INVENTORY_PATHS,
  sections: ['GENERAL', 'HARDWARE', 'USER_AND_LOCATION'],
  idField: 'mobileDeviceId',
  // Last reporting their inventory: the one date a mobile device's record has.
  changedFilter: (_path, instant) => `general.lastInventoryUpdateDate=ge=${instant}`,
};
