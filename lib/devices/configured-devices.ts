import { createHash } from 'node:crypto';
import { makeRedisClusterTier } from '../cache/cluster-tier.ts';
import type { TierHealthLogger } from '../cache/tier-health.ts';
import { makeTieredCache } from '../cache/tiered-cache.ts';
import type { DevicesConfig, InventoryConfig, RefreshConfig } from '../config.ts';
import { makeJamfClientFromConfig } from '../inventory/jamf-client-from-config.ts';
import { makeLatestOsSource } from '../latest-os/latest-os-feed.ts';
import { makeDeviceList, type SnapshotRequest } from './device-list.ts';
import { deviceSnapshotCodec } from './device-snapshot-codec.ts';
import { makeSnapshotReader } from './read-snapshot.ts';
import { makeDevicesRefresh } from './refresh-devices.ts';

/**
 * The cluster key of an inventory's device list: its version names the value's format, so code
 * writing another format never reads this one, and its scope names the inventory (base URL and the
 * API client or user reading it), so stages or services sharing one cluster never serve each
 * other's lists.
 */
const clusterKeyOf = (config: InventoryConfig): string => {
  const principal = config.auth.kind === 'oauth' ? config.auth.clientId : config.auth.username;
  return `devices:v3:${createHash('sha256').update(`${config.inventoryUrl}\n${principal}`).digest('hex').slice(0, 16)}`;
};

/** The refresh writes ~7 MB for 100,000 devices: it may wait for the cluster longer than a request may. */
const REFRESH_COMMAND_TIMEOUT_MS = 10_000;
/** Lambda stops a function after 15 minutes at most: a lock older than that belongs to a crashed refresh. */
const REFRESH_LOCK_MS = 15 * 60 * 1000;

export interface DevicesDeps {
  /** The cluster tier's and the latest-OS feed's one line per change of health. */
  logger: TierHealthLogger;
  /** Called once per token Jamf refused during a read (the UpstreamAuthFailures metric). */
  onAuthFailure: () => void;
}

/** GET /devices as the configuration describes it: Jamf behind the memory and (with REDIS_URL) cluster tiers. */
export const makeConfiguredDeviceList = (config: DevicesConfig, deps: DevicesDeps) => {
  const readSnapshot = makeSnapshotReader({ inventory: makeJamfClientFromConfig(config, deps.onAuthFailure) });
  const cluster = config.redisUrl === undefined ? undefined : makeRedisClusterTier({ url: config.redisUrl, logger: deps.logger });
  const snapshots = makeTieredCache({
    cluster: cluster && { tier: cluster, codec: deviceSnapshotCodec, key: clusterKeyOf(config) },
    ttlMs: config.cacheTtlSeconds * 1000,
    staleMs: config.cacheStaleSeconds * 1000,
    load: (request: SnapshotRequest) => readSnapshot(request.remainingTimeMs),
  });
  const reference = makeLatestOsSource({
    feedUrl: config.latestOs.feed?.url,
    fallbackVersion: config.latestOs.version,
    ttlMs: (config.latestOs.feed?.ttlSeconds ?? 0) * 1000,
    logger: deps.logger,
  });
  return makeDeviceList({ snapshots, reference });
};

/** The scheduled refresh of the same inventory into the same cluster entry. */
export const makeConfiguredRefresh = (config: RefreshConfig, deps: DevicesDeps) =>
  makeDevicesRefresh({
    readSnapshot: makeSnapshotReader({ inventory: makeJamfClientFromConfig(config, deps.onAuthFailure) }),
    cluster: makeRedisClusterTier({ url: config.redisUrl, logger: deps.logger, commandTimeoutMs: REFRESH_COMMAND_TIMEOUT_MS }),
    codec: deviceSnapshotCodec,
    key: clusterKeyOf(config),
    servableMs: (config.cacheTtlSeconds + config.cacheStaleSeconds) * 1000,
    lockMs: REFRESH_LOCK_MS,
  });
