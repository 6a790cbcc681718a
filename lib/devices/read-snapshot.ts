import { deadlineIn, type Deadline } from '../async/deadline.ts';
import type { JamfClient } from '../inventory/jamf-client.ts';
import { UpstreamError, UpstreamFailure } from '../inventory/upstream-error.ts';
import { buildSnapshot } from './build-snapshot.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import type { InventoryKind } from './inventory-kind.ts';

/**
 * Left of the Lambda's remaining time for answering once the upstream read gives up: logging the
 * failure and returning the 504 must fit in it.
 */
const DEADLINE_MARGIN_MS = 1000;

/**
 * The upstream read's deadline: the invocation's remaining time, less the margin for answering. Its
 * instant tells each retry whether a wait and one more attempt still fit.
 */
export const deadlineOf = (remainingTimeMs: () => number): Deadline => {
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
    return kind.records(async (map, layout) => buildSnapshot(await deps.inventory.readInventory(deadline, map), layout, readAt));
  };
};
