import { makeRedisClusterTier, type ClusterTier } from '../cache/cluster-tier.ts';
import type { RefreshConfig } from '../config.ts';
import { makeJamfClientFromConfig } from '../inventory/jamf-client-from-config.ts';
import { deviceListClusterKey } from './cluster-key.ts';
import type { DevicesDeps } from './configured-devices.ts';
import { deviceSnapshotCodec } from './device-snapshot-codec.ts';
import { COMPUTERS, type InventoryKind } from './inventory-kind.ts';
import { makeRefreshReader } from './read-snapshot.ts';
import { makeDevicesRefresh } from './refresh-devices.ts';
import { makeInventoriesRefresh, REFRESHED_KINDS, type InventoriesRefreshDeps } from './refresh-inventories.ts';

/** The refresh writes ~9 MB for 100,000 devices: it may wait for the cluster longer than a request may. */
const REFRESH_COMMAND_TIMEOUT_MS = 10_000;
/** Lambda stops a function after 15 minutes at most: a lock older than that belongs to a crashed refresh. */
const REFRESH_LOCK_MS = 15 * 60 * 1000;

/** The scheduled refresh of one inventory (of `kind`) into the cluster entry its list is served from. */
const makeConfiguredRefresh = (config: RefreshConfig, deps: DevicesDeps, kind: InventoryKind, cluster: ClusterTier) =>
  makeDevicesRefresh({
    readSnapshot: makeRefreshReader({
      inventory: makeJamfClientFromConfig(config, deps.onAuthFailure, kind.endpoint),
      fullReadEveryMs: config.fullRefreshSeconds * 1000,
      kind,
    }),
    cluster,
    codec: deviceSnapshotCodec,
    key: deviceListClusterKey(config, kind.keyPrefix),
    servableMs: (config.cacheTtlSeconds + config.cacheStaleSeconds) * 1000,
    lockMs: REFRESH_LOCK_MS,
  });

/**
 * The scheduled refresh of every inventory (refresh-inventories.ts), over one cluster connection,
 * under a run lock beside the computers' list.
 */
export const makeConfiguredRefreshes = (
  config: RefreshConfig,
  deps: DevicesDeps & Pick<InventoriesRefreshDeps, 'logger' | 'onRefreshed'>,
) => {
  const cluster = makeRedisClusterTier({ redis: config.redis, logger: deps.logger, commandTimeoutMs: REFRESH_COMMAND_TIMEOUT_MS });
  const byKind = new Map(REFRESHED_KINDS.map((kind) => [kind.name, makeConfiguredRefresh(config, deps, kind, cluster)]));
  return makeInventoriesRefresh({
    refreshOf: (kind) => byKind.get(kind.name)!,
    logger: deps.logger,
    onRefreshed: deps.onRefreshed,
    runLock: { cluster, key: `${deviceListClusterKey(config, COMPUTERS.keyPrefix)}:refresh-run`, ms: REFRESH_LOCK_MS },
  });
};
