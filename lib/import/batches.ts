/**
 * The archive's batches (docs/import.md): each asset is cut into consecutive slices of 100; entry n holds the n-th
 * slice of each (empty where an asset has none) and there are as many entries as the longest asset
 * needs — none when every asset is empty.
 */
export const BATCH_SIZE = 100;

/** Name of the entry at zero-based `index`: backup_tickets_100.json, backup_tickets_200.json, … */
export const entryName = (index: number): string => `backup_tickets_${(index + 1) * BATCH_SIZE}.json`;

export const entryCount = (assetSizes: readonly number[]): number => Math.ceil(Math.max(0, ...assetSizes) / BATCH_SIZE);
