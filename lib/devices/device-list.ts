import type { CacheTier } from '../cache/tiered-cache.ts';
import { RecentEntries } from '../values/recent-entries.ts';
import {
  deviceListEtag,
  filterKey,
  filterMatches,
  nextPageLink,
  selectPage,
  type DeviceQuery,
  type DeviceView,
  type QueryKind,
} from './device-query.ts';
import { decideLatest, decisionsAt, overdueEpoch, renderDevices, type DecisionsAt, type DeviceReferences } from './decide-latest.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import { summarizeDevices } from './device-summary.ts';

/** What a lookup needs to read upstream on a miss: the time left in the invocation. */
export interface SnapshotRequest {
  remainingTimeMs: () => number;
}

/** Where snapshots come from: the cache tiers in front of the inventory. */
export interface SnapshotSource {
  get: (request: SnapshotRequest) => Promise<{ value: DeviceSnapshot; tier: CacheTier }>;
}

/** One answer of a list route, before its body is rendered (a 304 needs none). */
export interface DeviceAnswer {
  tier: CacheTier;
  etag: string;
  /** Renders the body; the HTTP layer keeps what it rendered by ETag (lib/http/response-encoding.ts). */
  body: () => string;
}

/** One GET /devices page. */
export interface DevicePage extends DeviceAnswer {
  /** Matching devices on every page. */
  total: number;
  /** The `Link` header of the next page, when one follows. */
  next: string | undefined;
}

export interface DeviceList {
  /** GET /devices (or /mobile-devices): a page, or the whole list, of the matching devices. */
  page: (query: DeviceQuery, request: SnapshotRequest) => Promise<DevicePage>;
  /** GET /devices/summary: the matching devices counted (`limit` and `after` are the schema's to refuse). */
  summary: (query: DeviceQuery, request: SnapshotRequest) => Promise<DeviceAnswer>;
}

/** Filters whose matching devices are kept per snapshot, reference and moment (4 bytes a matching device). */
const FILTERS_KEPT = 16;

/** What is decided once per snapshot and references, and what once more when a due date passes. */
interface Decided {
  snapshot: DeviceSnapshot;
  referenceKey: string;
  /** The decisions (`at.decisions`) as they stand at the last moment asked for. */
  at: DecisionsAt;
  matches: RecentEntries<string, Uint32Array | undefined>;
}

/**
 * GET /devices (or GET /mobile-devices: `query` names its filters and route) and its summary over
 * the snapshot the cache tiers hold: each device's latest-OS decision and patch compliance against
 * its system's reference (once per snapshot and references; `os_overdue` again when a due date
 * passes, at `now`), the filters and page of the query, and the body as the join of its devices'
 * rendered JSON: no upstream call and no serialization of the whole list per request.
 */
export const makeDeviceList = (deps: {
  snapshots: SnapshotSource;
  /** The latest-OS references of the list's systems; a fetch they start fits in the request's time. */
  references: (request: SnapshotRequest) => Promise<DeviceReferences>;
  /** The list's own filters and route (the inventory kind's). */
  query: QueryKind;
  /** The moment a response is built, in ms: what `os_overdue` is decided at. */
  now: () => number;
}): DeviceList => {
  const kind = deps.query;
  let decided: Decided | undefined;

  const decidedFor = async (request: SnapshotRequest): Promise<{ tier: CacheTier; state: Decided }> => {
    // Side by side: a feed fetched once per TTL never adds its time to an inventory read.
    const [{ value: snapshot, tier }, references] = await Promise.all([deps.snapshots.get(request), deps.references(request)]);
    const now = deps.now();
    let state = decided;
    if (state?.snapshot !== snapshot || state.referenceKey !== references.key) {
      const at = decisionsAt(decideLatest(snapshot, references), now);
      state = { snapshot, referenceKey: references.key, at, matches: new RecentEntries(FILTERS_KEPT) };
    } else if (overdueEpoch(state.at.decisions, now) !== state.at.epoch) {
      // A due date passed: the overdue devices (and the filters reading them) are decided again.
      state = { ...state, at: decisionsAt(state.at.decisions, now), matches: new RecentEntries(FILTERS_KEPT) };
    }
    decided = state;
    return { tier, state };
  };

  const matchesOf = (state: Decided, query: DeviceQuery): Uint32Array | undefined => {
    const key = filterKey(query, kind);
    if (state.matches.has(key)) return state.matches.get(key);
    return state.matches.set(key, filterMatches(state.snapshot, state.at, query, kind));
  };

  const etagOf = (state: Decided, view: DeviceView, query: DeviceQuery) =>
    deviceListEtag({ snapshotId: state.snapshot.id, referenceKey: state.referenceKey, epoch: state.at.epoch }, view, query, kind);

  return {
    page: async (query, request) => {
      const { tier, state } = await decidedFor(request);
      const selection = selectPage(state.snapshot, matchesOf(state, query), query);
      return {
        tier,
        etag: etagOf(state, 'list', query),
        total: selection.total,
        next: selection.nextAfter === undefined ? undefined : nextPageLink(query, selection.nextAfter, kind),
        body: () => renderDevices(state.snapshot, state.at, selection.indexes),
      };
    },
    summary: async (query, request) => {
      const { tier, state } = await decidedFor(request);
      const matches = matchesOf(state, query);
      return {
        tier,
        etag: etagOf(state, 'summary', query),
        body: () => JSON.stringify(summarizeDevices(state.snapshot, state.at, matches)),
      };
    },
  };
};
