import { makeRedisClusterTier } from '../cache/cluster-tier.ts';
import type { RefreshConfig } from '../config.ts';
import { makeJamfClientFromConfig } from '../inventory/jamf-client-from-config.ts';
import { deviceListClusterKey } from './cluster-key.ts';
import type { DevicesDeps } from './configured-devices.ts';
import { deviceSnapshotCodec } from './device-snapshot-codec.ts';
import { COMPUTERS, type InventoryKind } from './inventory-kind.ts';
import { makeRefreshReader } from './read-snapshot.ts';
import { makeDevicesRefresh } from './refresh-devices.ts';

/** The refresh writes ~7 MB for 100,000 devices: it may wait for the cluster longer than a request may. */
const REFRESH_COMMAND_TIMEOUT_MS = 10_000;
/** Lambda stops a function after 15 minutes at most: a lock older than that belongs to a crashed refresh. */
const REFRESH_LOCK_MS = 15 * 60 * 1000;

/** The scheduled refresh of one inventory (of `kind`) into the cluster entry its list is served from. */
export const makeConfiguredRefresh = (config: RefreshConfig, deps: DevicesDeps, kind: InventoryKind = COMPUTERS) =>
  makeDevicesRefresh({
    readSnapshot: makeRefreshReader({
      inventory: makeJamfClientFromConfig(config, deps.onAuthFailure, kind.endpoint),
      fullReadEveryMs: config.fullRefreshSeconds * 1000,
      kind,
    }),
    cluster: makeRedisClusterTier({ redis: config.redis, logger: deps.logger, commandTimeoutMs: REFRESH_COMMAND_TIMEOUT_MS }),
    codec: deviceSnapshotCodec,
    key: deviceListClusterKey(config, kind.keyPrefix),
    servableMs: (config.cacheTtlSeconds + config.cacheStaleSeconds) * 1000,
    lockMs: REFRESH_LOCK_MS,
  });
