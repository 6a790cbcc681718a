import type { UpstreamResponse } from '../upstream/upstream-call.ts';

// Jamf Pro's endpoints this service calls, the paths each has had across Jamf Pro versions, and the
// inventories read through them.

/**
 * OAuth client credentials: `/api/v1/oauth/token` in current Jamf Pro, `/api/oauth/token` in older
 * versions, which answer 404 at the newer path.
 */
export const OAUTH_TOKEN_PATHS = ['/api/v1/oauth/token', '/api/oauth/token'] as const;

/** The inventory: v4 since Jamf Pro 11.30 (which deprecated v3 for it), v3 before, which answers 404 at v4. */
export const INVENTORY_PATHS = ['/api/v4/computers-inventory', '/api/v3/computers-inventory'] as const;

/** The mobile devices' inventory (iPhones, iPads, Apple TVs): one path in every version this service reads. */
export const MOBILE_INVENTORY_PATHS = ['/api/v2/mobile-devices/detail'] as const;

/**
 * The last contact as each inventory version names it, for filtering (RSQL): v4 has
 * `general.lastContact` where v3 had `general.lastContactTime`; `general.reportDate` is in both.
 */
export const LAST_CONTACT_FIELD: Readonly<Record<(typeof INVENTORY_PATHS)[number], string>> = {
  '/api/v4/computers-inventory': 'general.lastContact',
  '/api/v3/computers-inventory': 'general.lastContactTime',
};

/** One request to an endpoint Jamf Pro moved between versions: where it went and what came back. */
export interface VersionedAnswer {
  path: string;
  response: UpstreamResponse;
  /** The path has answered this client before: a 404 from it is a failure, not an older version. */
  known: boolean;
  /** The newer paths that answered 404 before this one was tried (for the log). */
  notFound: readonly string[];
}

export interface VersionedEndpoint {
  /** The remembered path, or the newest while none is: the one a request goes to first. */
  first: () => string;
  /**
   * `send` on the remembered path; while none is remembered, on each path newest first, moving on
   * only when the answer is 404. What the answer means is the caller's to decide.
   */
  send: (send: (path: string) => Promise<UpstreamResponse>) => Promise<VersionedAnswer>;
  /** Remembers `path` once it has served a request: every later request goes there, and only there. */
  answered: (path: string) => void;
}

/**
 * An endpoint at one of `paths` (newest first), learnt once per client. The client lives as long as
 * the container, so the probe costs one 404 per container on an older Jamf Pro and nothing after.
 */
export const makeVersionedEndpoint = (paths: readonly [string, ...string[]]): VersionedEndpoint => {
  let remembered: string | undefined;
  return {
    first: () => remembered ?? paths[0],
    send: async (send) => {
      if (remembered !== undefined) return { path: remembered, response: await send(remembered), known: true, notFound: [] };
      const notFound: string[] = [];
      const last = paths.length - 1;
      for (let index = 0; index < last; index += 1) {
        const path = paths[index]!;
        const response = await send(path);
        if (response.status !== 404) return { path, response, known: false, notFound };
        notFound.push(path);
      }
      const path = paths[last]!;
      return { path, response: await send(path), known: false, notFound };
    },
    answered: (path) => {
      remembered = path;
    },
  };
};

/** What a label adds for the newer paths that answered 404 first: none, or each of them. */
export const afterNotFound = (notFound: readonly string[]): string =>
  notFound.length === 0 ? '' : ` (after a 404 at ${notFound.join(', ')})`;

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
