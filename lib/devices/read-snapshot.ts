import { deadlineIn, type Deadline } from '../async/deadline.ts';
import type { JamfClient } from '../inventory/jamf-client.ts';
import { UpstreamError, UpstreamFailure } from '../inventory/upstream-error.ts';
import { buildSnapshot } from './build-snapshot.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import type { InventoryKind } from './inventory-kind.ts';
import { mergeBase, mergeSnapshot, planMerge } from './merge-snapshot.ts';

/**
 * Left of the Lambda's remaining time for answering once the upstream read gives up: logging the
 * failure and returning the 504 must fit in it.
 */
const DEADLINE_MARGIN_MS = 1000;

/**
 * How far before the previous read began an incremental one asks for changes: Jamf's clock and
 * ours may differ, and a record dated just before that read may have been stored after it.
 */
const CHANGED_SINCE_MARGIN_MS = 60_000;

/**
 * The upstream read's deadline: the invocation's remaining time, less the margin for answering. Its
 * instant tells each retry whether a wait and one more attempt still fit.
 */
const deadlineOf = (remainingTimeMs: () => number): Deadline => {
  const budgetMs = remainingTimeMs() - DEADLINE_MARGIN_MS;
  if (budgetMs <= 0) {
    throw new UpstreamError(UpstreamFailure.TimedOut, {
      detail: `no time left for an upstream read (${budgetMs + DEADLINE_MARGIN_MS} ms remaining)`,
    });
  }
  return deadlineIn(budgetMs);
};

/**
 * Reads the whole inventory into a snapshot within the invocation's time: all or nothing, records
 * mapped as their pages arrive. The snapshot is stamped with the time the read started, the age of
 * its oldest data. Every request-time read is this one.
 */
export const makeSnapshotReader = (deps: { inventory: JamfClient; kind: InventoryKind; now?: () => number }) => {
  const { kind } = deps;
  return async (remainingTimeMs: () => number): Promise<DeviceSnapshot> => {
    const deadline = deadlineOf(remainingTimeMs);
    const readAt = (deps.now ?? Date.now)();
    const devices = await deps.inventory.readInventory(deadline, kind.map);
    return buildSnapshot(devices, readAt, readAt, kind.layout);
  };
};

/** Why a refresh read the whole inventory rather than its changes. */
export type FullReadReason = 'no previous snapshot' | 'full read due' | 'filter refused' | 'count changed';

export type RefreshRead =
  { snapshot: DeviceSnapshot; read: 'incremental' } | { snapshot: DeviceSnapshot; read: 'full'; reason: FullReadReason };

/** The entry a refresh replaces: its header, read first, and its whole snapshot, read when asked. */
export interface PreviousEntry {
  readAt: number;
  fullReadAt: number;
  load: () => Promise<DeviceSnapshot | undefined>;
}

/**
 * The scheduled refresh's read (docs/architecture.md#the-incremental-refresh): after a full read,
 * only the records Jamf dates as changed since the previous read began (less a margin), merged by id
 * into the previous snapshot's chunks (merge-snapshot.ts), which loads while Jamf answers, checked
 * against the inventory's size. A full read instead when there is no previous snapshot, when the
 * last full read is `fullReadEveryMs` old, when Jamf refuses the filter, or when the merged list's
 * size is not the inventory's (a device was removed).
 */
export const makeRefreshReader = (deps: { inventory: JamfClient; fullReadEveryMs: number; kind: InventoryKind; now?: () => number }) => {
  const now = deps.now ?? Date.now;
  const { kind } = deps;
  const readFully = makeSnapshotReader(deps);
  return async (previous: PreviousEntry | undefined, remainingTimeMs: () => number): Promise<RefreshRead> => {
    const full = async (reason: FullReadReason): Promise<RefreshRead> => ({
      snapshot: await readFully(remainingTimeMs),
      read: 'full',
      reason,
    });
    if (previous === undefined) return full('no previous snapshot');
    if (now() - previous.fullReadAt >= deps.fullReadEveryMs) return full('full read due');
    const deadline = deadlineOf(remainingTimeMs);
    const readAt = now();
    const loading = previous.load().then((snapshot) => snapshot && mergeBase(snapshot));
    const answer = await deps.inventory
      .readChanges(deadline, kind.map, previous.readAt - CHANGED_SINCE_MARGIN_MS)
      .finally(() => loading.then((base) => base?.stopWarming()));
    const base = await loading;
    // Gone or unreadable since its header was read, or older than the header the changes were asked from.
    if (base === undefined || base.previous.readAt < previous.readAt) return full('no previous snapshot');
    if (answer.kind === 'filter-refused') return full('filter refused');
    const plan = planMerge(base.previous.ids, answer.changed);
    if (plan.count !== answer.totalCount) return full('count changed');
    let snapshot: DeviceSnapshot;
    try {
      snapshot = await mergeSnapshot(base, plan, answer.changed, readAt, base.previous.fullReadAt, kind.layout);
    } catch {
      // A chunk that does not hold what its index says: nothing to merge into.
      return full('no previous snapshot');
    }
    return { snapshot, read: 'incremental' };
  };
};
