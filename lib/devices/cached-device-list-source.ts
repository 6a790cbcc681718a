import type { ClusterTier } from '../cache/cluster-tier.ts';
import { DEFAULT_MEMORY_ENTRIES, makeMemoryTier, type MemoryTier } from '../cache/memory-tier.ts';
import { makeTieredCache, type ClusterCodec } from '../cache/tiered-cache.ts';
import type { DeviceListRequest, DeviceListSource } from './device-list-source.ts';
import { renderDeviceList, type InventoryDevice } from './map-inventory-record.ts';

/**
 * The cluster key and format version. The cluster holds the devices BEFORE the latest-OS decision,
 * so containers with another LATEST_OS_VERSION share it and never see stale flags; a change of
 * this format changes the key, so old and new code never read each other's entries.
 */
export const DEVICES_CLUSTER_KEY = 'devices:v1';
const FORMAT_VERSION = 1;

export interface CachedDeviceListSourceOptions {
  readDevices: (request: DeviceListRequest) => Promise<InventoryDevice[]>;
  latestOsVersion: string;
  ttlSeconds: number;
  /** The shared tier; without it (no REDIS_URL) only this container's memory caches. */
  cluster?: ClusterTier | undefined;
  /** Holds the final response body per reference, so a memory hit does no work at all. */
  memory?: MemoryTier<string> | undefined;
}

const STRING_FIELDS = new Set([
  'udid', 'name', 'serial_number', 'model', 'model_identifier', 'os_name', 'os_version', 'os_build',
  'last_contact_at', 'last_inventory_at', 'username', 'email',
]);
const BOOLEAN_FIELDS = new Set(['supervised', 'managed']);

const isInventoryDevice = (value: unknown): value is InventoryDevice => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (typeof record.id !== 'string' || !/^\d+$/.test(record.id)) return false;
  for (const key in record) {
    if (key === 'id') continue;
    const field = record[key];
    if (STRING_FIELDS.has(key) ? typeof field !== 'string' : !BOOLEAN_FIELDS.has(key) || typeof field !== 'boolean') return false;
  }
  return true;
};

/** The cluster value: `{"v":1,"devices":[…]}`, checked field by field when read back. */
export const deviceListCodec: ClusterCodec<InventoryDevice[]> = {
  encode: (devices) => JSON.stringify({ v: FORMAT_VERSION, devices }),
  decode: (text) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { v, devices } = parsed as { v?: unknown; devices?: unknown };
    if (v !== FORMAT_VERSION || !Array.isArray(devices)) return undefined;
    return devices.every(isInventoryDevice) ? devices : undefined;
  },
};

/** GET /devices through memory → cluster → upstream, reporting which tier answered. */
export const makeCachedDeviceListSource = (options: CachedDeviceListSourceOptions): DeviceListSource => {
  const { latestOsVersion } = options;
  const cache = makeTieredCache<InventoryDevice[], string, DeviceListRequest>({
    memory: options.memory ?? makeMemoryTier<string>({ maxEntries: DEFAULT_MEMORY_ENTRIES }),
    cluster: options.cluster ? { tier: options.cluster, codec: deviceListCodec } : undefined,
    ttlSeconds: options.ttlSeconds,
    load: (_key, request) => options.readDevices(request),
    present: (devices) => renderDeviceList(devices, latestOsVersion),
    memoryKey: (key) => `${key}|latest=${latestOsVersion}`,
  });
  return async (request) => {
    const { value, tier } = await cache.get(DEVICES_CLUSTER_KEY, request);
    return { json: value, tier };
  };
};
