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
 * The cluster key; its version names the value's format, so code writing another format never
 * reads this one. The value holds the devices BEFORE the latest-OS decision.
 */
export const DEVICES_CLUSTER_KEY = 'devices:v1';

export interface CachedDeviceListSourceOptions {
  readDevices: (request: DeviceListRequest) => Promise<InventoryDevice[]>;
  latestOsVersion: string;
  ttlSeconds: number;
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
    const { value, tier } = await cache.get(DEVICES_CLUSTER_KEY, request);
    return { json: value, tier };
  };
};
