import type { JamfClient } from '../inventory/jamf-client.ts';
import { UpstreamError, UpstreamFailure } from '../inventory/upstream-error.ts';
import { buildSnapshot, type DeviceSnapshot } from './device-snapshot.ts';
import { mapInventoryRecord } from './map-inventory-record.ts';

/**
 * Left of the Lambda's remaining time for answering once the upstream read gives up: logging the
 * failure and returning the 504 must fit in it.
 */
const DEADLINE_MARGIN_MS = 1000;

/**
 * Reads the whole inventory into a snapshot within the invocation's time: all or nothing, records
 * mapped as their pages arrive. The snapshot is stamped with the time the read started, the age of
 * its oldest data.
 */
export const makeSnapshotReader =
  (deps: { inventory: JamfClient; now?: () => number }) =>
  async (remainingTimeMs: () => number): Promise<DeviceSnapshot> => {
    const budgetMs = remainingTimeMs() - DEADLINE_MARGIN_MS;
    if (budgetMs <= 0) {
      throw new UpstreamError(UpstreamFailure.TimedOut, { detail: `no time left for an upstream read (${budgetMs + DEADLINE_MARGIN_MS} ms remaining)` });
    }
    const readAt = (deps.now ?? Date.now)();
    const devices = await deps.inventory.readInventory(AbortSignal.timeout(budgetMs), mapInventoryRecord);
    return buildSnapshot(devices, readAt);
  };
