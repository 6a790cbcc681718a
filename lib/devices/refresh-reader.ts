import type { JamfClient } from '../inventory/jamf-client.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import type { InventoryKind } from './inventory-kind.ts';
import { mergeBase, mergeSnapshot, planMerge } from './merge-snapshot.ts';
import { deadlineOf, makeSnapshotReader } from './device-inventory.ts';

/**
 * How far before the previous read began an incremental one asks for changes: Jamf's clock and
 * ours may differ, and a record dated just before that read may have been stored after it.
 */
const CHANGED_SINCE_MARGIN_MS = 60_000;

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
    return kind.records(async (map, layout) => {
      const loading = previous.load().then((snapshot) => snapshot && mergeBase(snapshot));
      const answer = await deps.inventory
        .readChanges(deadline, map, previous.readAt - CHANGED_SINCE_MARGIN_MS)
        .finally(() => loading.then((base) => base?.stopWarming()));
      const base = await loading;
      // Gone or unreadable since its header was read, or older than the header the changes were asked from.
      if (base === undefined || base.previous.readAt < previous.readAt) return full('no previous snapshot');
      if (answer.kind === 'filter-refused') return full('filter refused');
      const plan = planMerge(base.previous.ids, answer.changed);
      if (plan.count !== answer.totalCount) return full('count changed');
      let snapshot: DeviceSnapshot;
      try {
        snapshot = await mergeSnapshot(base, plan, answer.changed, readAt, base.previous.fullReadAt, layout);
      } catch {
        // A chunk that does not hold what its index says: nothing to merge into.
        return full('no previous snapshot');
      }
      return { snapshot, read: 'incremental' };
    });
  };
};
