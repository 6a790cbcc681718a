import { makeRedisClusterTier } from '../cache/cluster-tier.ts';
import { makeTieredCache } from '../cache/tiered-cache.ts';
import type { DevicesConfig } from '../config.ts';
import type { HealthLogger } from '../runtime/health-logger.ts';
import { makeJamfClientFromConfig } from '../inventory/jamf-client-from-config.ts';
import { makeLatestOsSource } from '../latest-os/latest-os-feed.ts';
import { makeDeviceList, type SnapshotRequest } from './device-list.ts';
import { deviceListClusterKey } from './cluster-key.ts';
import { deviceSnapshotCodec } from './device-snapshot-codec.ts';
import { COMPUTERS, type InventoryKind } from './inventory-kind.ts';
import { makeSnapshotReader } from './read-snapshot.ts';

export interface DevicesDeps {
  /** The cluster tier's and the latest-OS feed's one line per change of health. */
  logger: HealthLogger;
  /** Called once per token Jamf refused during a read (the UpstreamAuthFailures metric). */
  onAuthFailure: () => void;
}

/**
 * GET /devices (or, with the mobile devices' kind, GET /mobile-devices) as the configuration
 * describes it: Jamf behind the memory and (with REDIS_URL) cluster tiers.
 */
export const makeConfiguredDeviceList = (config: DevicesConfig, deps: DevicesDeps, kind: InventoryKind = COMPUTERS) => {
  const readSnapshot = makeSnapshotReader({ inventory: makeJamfClientFromConfig(config, deps.onAuthFailure, kind.endpoint), kind });
  const cluster = config.redis === undefined ? undefined : makeRedisClusterTier({ redis: config.redis, logger: deps.logger });
  const snapshots = makeTieredCache({
    cluster: cluster && { tier: cluster, codec: deviceSnapshotCodec, key: deviceListClusterKey(config, kind.keyPrefix) },
    ttlMs: config.cacheTtlSeconds * 1000,
    staleMs: config.cacheStaleSeconds * 1000,
    load: (request: SnapshotRequest) => readSnapshot(request.remainingTimeMs),
  });
  const reference = makeLatestOsSource({
    feedUrl: config.latestOs.feed?.url,
    fallbackVersion: config.latestOs.version,
    ttlMs: (config.latestOs.feed?.ttlSeconds ?? 0) * 1000,
    system: kind.system,
    logger: deps.logger,
  });
  return makeDeviceList({ snapshots, reference, query: kind.query, decides: kind.decides });
};
