import { createHash } from 'node:crypto';
import type { ClusterTier } from '../cache/cluster-tier.ts';
import {
  deviceListTemplateCodec,
  prepareDeviceList,
  renderDeviceListTemplate,
  type DeviceListTemplate,
} from '../cache/device-list-template.ts';
import { DEFAULT_MEMORY_ENTRIES, makeMemoryTier, type MemoryTier } from '../cache/memory-tier.ts';
import { makeTieredCache } from '../cache/tiered-cache.ts';
import type { DeviceListRequest, DeviceListSource } from './device-list-source.ts';
import type { InventoryDevice } from './map-inventory-record.ts';

/**
 * The cluster key: its version names the value's format, so code writing another format never
 * reads this one, and its scope names the inventory (base URL and the API client or user reading
 * it), so stages or services sharing one cluster never serve each other's lists. The value holds
 * the devices BEFORE the latest-OS decision.
 */
export const devicesClusterKey = (inventory: { url: string; principal: string }): string =>
  `devices:v1:${createHash('sha256').update(`${inventory.url}\n${inventory.principal}`).digest('hex').slice(0, 16)}`;

export interface CachedDeviceListSourceOptions {
  readDevices: (request: DeviceListRequest) => Promise<InventoryDevice[]>;
  latestOsVersion: string;
  ttlSeconds: number;
  /** From `devicesClusterKey`. */
  clusterKey: string;
  /** The shared tier; without it (no REDIS_URL) only this container's memory caches. */
  cluster?: ClusterTier | undefined;
  /** Holds the final response body per reference, so a memory hit does no work at all. */
  memory?: MemoryTier<string> | undefined;
}

/** GET /devices through memory → cluster → upstream, reporting which tier answered. */
export const makeCachedDeviceListSource = (options: CachedDeviceListSourceOptions): DeviceListSource => {
  const { latestOsVersion } = options;
  const cache = makeTieredCache<DeviceListTemplate, string, DeviceListRequest>({
    memory: options.memory ?? makeMemoryTier<string>({ maxEntries: DEFAULT_MEMORY_ENTRIES }),
    cluster: options.cluster ? { tier: options.cluster, codec: deviceListTemplateCodec } : undefined,
    ttlSeconds: options.ttlSeconds,
    load: async (_key, request) => prepareDeviceList(await options.readDevices(request)),
    present: (template) => renderDeviceListTemplate(template, latestOsVersion),
    memoryKey: (key) => `${key}|latest=${latestOsVersion}`,
  });
  return async (request) => {
    const { value, tier } = await cache.get(options.clusterKey, request);
    return { json: value, tier };
  };
};
