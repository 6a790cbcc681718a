import type { DeviceListRequest } from './device-list-source.ts';
import { UpstreamError, UpstreamFailure } from '../inventory/upstream-error.ts';
import { mapInventoryRecord, type InventoryDevice } from './map-inventory-record.ts';

/** The upstream inventory as read-devices needs it (the Jamf client, or anything shaped like it). */
export interface InventoryReader {
  /** Every record, each id once, ascending numeric id; rejects rather than return a partial list. */
  fetchAllPages: (deadline: AbortSignal) => Promise<unknown[]>;
}

/** Reads the whole inventory into devices, before the latest-OS decision (the cacheable form). */
export type ReadDevices = (request: DeviceListRequest) => Promise<InventoryDevice[]>;

/**
 * Left of the Lambda's remaining time for answering once the upstream read gives up: logging the
 * failure and returning the 504 must fit in it.
 */
export const DEADLINE_MARGIN_MS = 1000;

export const makeReadDevices =
  ({ inventory }: { inventory: InventoryReader }): ReadDevices =>
  async (request) => {
    const budgetMs = request.remainingTimeMs() - DEADLINE_MARGIN_MS;
    if (budgetMs <= 0) {
      throw new UpstreamError(UpstreamFailure.TimedOut, { detail: `no time left for an upstream read (${budgetMs + DEADLINE_MARGIN_MS} ms remaining)` });
    }
    const records = await inventory.fetchAllPages(AbortSignal.timeout(budgetMs));
    const devices: InventoryDevice[] = [];
    for (const record of records) {
      const device = mapInventoryRecord(record);
      if (device !== undefined) devices.push(device);
    }
    return devices;
  };
