import type { CacheTier } from '../cache/tiered-cache.ts';
import { RecentEntries } from '../values/recent-entries.ts';
import { deviceListEtag, filterKey, filterMatches, nextPageLink, selectPage, type DeviceQuery, type QueryKind } from './device-query.ts';
import { decideLatest, type DeviceReferences, type LatestDecisions } from './decide-latest.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import { renderDevices } from './render-devices.ts';

/** What a lookup needs to read upstream on a miss: the time left in the invocation. */
export interface SnapshotRequest {
  remainingTimeMs: () => number;
}

/** Where snapshots come from: the cache tiers in front of the inventory. */
export interface SnapshotSource {
  get: (request: SnapshotRequest) => Promise<{ value: DeviceSnapshot; tier: CacheTier }>;
}

/** One GET /devices answer, before its body is rendered (a 304 needs none). */
export interface DevicePage {
  tier: CacheTier;
  etag: string;
  /** Matching devices on every page. */
  total: number;
  /** The `Link` header of the next page, when one follows. */
  next: string | undefined;
  /** Renders the body; the HTTP layer keeps what it rendered by ETag (lib/http/response-encoding.ts). */
  body: () => string;
}

/** Filters whose matching devices are kept per snapshot and reference (4 bytes a matching device). */
const FILTERS_KEPT = 16;

/**
 * GET /devices (or GET /mobile-devices: `query` names its filters and route) over the snapshot the
 * cache tiers hold: each device's latest-OS decision against its system's reference (once per
 * snapshot and references), the filters and page of the query, and the body as the join of
 * its devices' rendered JSON: no upstream call and no serialization of the whole list per request.
 */
export const makeDeviceList = (deps: {
  snapshots: SnapshotSource;
  /** The latest-OS references of the list's systems; a fetch they start fits in the request's time. */
  references: (request: SnapshotRequest) => Promise<DeviceReferences>;
  /** The list's own filters and route (the inventory kind's). */
  query: QueryKind;
}) => {
  const kind = deps.query;
  // What is decided once per snapshot and reference: every device's decision, and each filter's matches.
  let decided:
    | {
        snapshot: DeviceSnapshot;
        referenceKey: string;
        decisions: LatestDecisions;
        matches: RecentEntries<string, Uint32Array | undefined>;
      }
    | undefined;

  const decisionsFor = (snapshot: DeviceSnapshot, references: DeviceReferences) => {
    if (decided?.snapshot !== snapshot || decided.referenceKey !== references.key) {
      decided = {
        snapshot,
        referenceKey: references.key,
        decisions: decideLatest(snapshot, references),
        matches: new RecentEntries(FILTERS_KEPT),
      };
    }
    return decided;
  };

  const matchesOf = (snapshot: DeviceSnapshot, decisions: NonNullable<typeof decided>, query: DeviceQuery): Uint32Array | undefined => {
    const key = filterKey(query, kind);
    if (decisions.matches.has(key)) return decisions.matches.get(key);
    return decisions.matches.set(key, filterMatches(snapshot, decisions.decisions.flags, query, kind));
  };

  return async (query: DeviceQuery, request: SnapshotRequest): Promise<DevicePage> => {
    // Side by side: a feed fetched once per TTL never adds its time to an inventory read.
    const [{ value: snapshot, tier }, references] = await Promise.all([deps.snapshots.get(request), deps.references(request)]);
    const decisions = decisionsFor(snapshot, references);
    const selection = selectPage(snapshot, matchesOf(snapshot, decisions, query), query);
    const etag = deviceListEtag(snapshot.id, references.key, query, kind);
    return {
      tier,
      etag,
      total: selection.total,
      next: selection.nextAfter === undefined ? undefined : nextPageLink(query, selection.nextAfter, kind),
      body: () => renderDevices(snapshot, decisions.decisions, selection.indexes),
    };
  };
};
