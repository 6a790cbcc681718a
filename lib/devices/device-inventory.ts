import { createHash } from 'node:crypto';
import { deadlineIn, type Deadline } from '../async/deadline.ts';
import type { ClusterTier } from '../cache/cluster-tier.ts';
import { makeDeferredClusterTier } from '../cache/deferred-cluster-tier.ts';
import type { InventoryAuthConfig, InventoryConfig } from '../config.ts';
import type { JamfAuth } from '../inventory/jamf-auth.ts';
import { makeJamfClient, type JamfClient } from '../inventory/jamf-client.ts';
import { UpstreamError, UpstreamFailure } from '../inventory/upstream-error.ts';
import { retryFields } from '../upstream/upstream-retry.ts';
import type { HealthLogger } from '../runtime/logger.ts';
import { resolveSecret } from '../runtime/secrets.ts';
import { buildSnapshot } from './build-snapshot.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import { deviceSnapshotCodec, type DeviceSnapshotCodec } from './device-snapshot-codec.ts';
import type { InventoryKind } from './inventory-kind.ts';

export interface DeviceInventoryDeps {
  /** The cluster tier's one line per change of health. */
  logger: HealthLogger;
  /** Called once per token Jamf refused during a read (the UpstreamAuthFailures metric). */
  onAuthFailure: () => void;
  /** Called once per retried attempt of a Jamf request (the UpstreamRetries metric). */
  onRetry?: () => void;
  /** A cluster connection shared with other inventories (the refresh's); else one is made from `config.redis`. */
  cluster?: ClusterTier;
}

/** One inventory's list in the cluster: the connection, the key its entry lives under, its format. */
export interface InventoryEntry {
  tier: ClusterTier;
  key: string;
  codec: DeviceSnapshotCodec;
}

/**
 * The cluster key of an inventory's device list (`devices:…` for the computers, `mobile-devices:…`
 * for the mobile devices, whose lists share the inventory's hash slot). Its version names the
 * value's format (the FORMAT_VERSION of its header, snapshot-index.ts, changed together), so code writing another format
 * never reads this one; its scope names the inventory (base URL and the API client or user reading
 * it), so stages or services sharing one cluster never serve each other's lists. The scope is the
 * key's hash tag, so its parts and its refresh lock share one hash slot of a Redis Cluster.
 */
const deviceListClusterKey = (config: InventoryConfig, prefix: InventoryKind['keyPrefix']): string => {
  const principal = config.auth.kind === 'oauth' ? config.auth.clientId : config.auth.username;
  return `${prefix}:v6:{${createHash('sha256').update(`${config.inventoryUrl}\n${principal}`).digest('hex').slice(0, 16)}}`;
};

/** The configured auth, with secrets resolved (SSM or inline) only when a token is requested. */
const jamfAuthOf = (auth: InventoryAuthConfig): JamfAuth =>
  auth.kind === 'oauth'
    ? { kind: 'oauth', clientId: auth.clientId, clientSecret: (signal) => resolveSecret(auth.clientSecret, signal) }
    : { kind: 'basic', username: auth.username, password: (signal) => resolveSecret(auth.password, signal) };

/**
 * Left of the Lambda's remaining time for answering once the upstream read gives up: logging the
 * failure and returning the 504 must fit in it.
 */
const DEADLINE_MARGIN_MS = 1000;

/**
 * The upstream read's deadline: the invocation's remaining time, less the margin for answering. Its
 * instant tells each retry whether a wait and one more attempt still fit.
 */
export const deadlineOf = (remainingTimeMs: () => number): Deadline => {
  const budgetMs = remainingTimeMs() - DEADLINE_MARGIN_MS;
  if (budgetMs <= 0) {
    throw new UpstreamError(UpstreamFailure.TimedOut, {
      detail: `no time left for an upstream read (${budgetMs + DEADLINE_MARGIN_MS} ms remaining)`,
    });
  }
  return deadlineIn(budgetMs);
};

/**
 * Reads the whole inventory into a snapshot within the invocation's time: all or nothing, records
 * mapped as their pages arrive. The snapshot is stamped with the time the read started, the age of
 * its oldest data. Every request-time read is this one.
 */
export const makeSnapshotReader = (deps: { inventory: JamfClient; kind: InventoryKind; now?: () => number }) => {
  const { kind } = deps;
  return async (remainingTimeMs: () => number): Promise<DeviceSnapshot> => {
    const deadline = deadlineOf(remainingTimeMs);
    const readAt = (deps.now ?? Date.now)();
    return kind.records(async (map, layout) => buildSnapshot(await deps.inventory.readInventory(deadline, map), layout, readAt));
  };
};

/**
 * The device stack of one inventory (`kind`), as the request and the refresh functions alike use it:
 * its Jamf client and the read of the whole inventory (the refresh reads the changes since a
 * snapshot with the same client: refresh-reader.ts), its cluster entry (with REDIS_URL) and
 * how long a snapshot is fresh and then servable (docs/architecture.md#get-devices).
 */
export const makeDeviceInventory = (config: InventoryConfig, deps: DeviceInventoryDeps, kind: InventoryKind) => {
  const jamf = makeJamfClient({
    baseUrl: config.inventoryUrl,
    auth: jamfAuthOf(config.auth),
    onAuthFailure: deps.onAuthFailure,
    ...(deps.onRetry === undefined ? {} : { onRetry: deps.onRetry }),
    // One warning per read that retried, whether it recovered or not: the upstream had a bad moment.
    onRetried: (summary) => deps.logger.warn('upstream retried', { upstream: 'jamf', inventory: kind.name, ...retryFields(summary) }),
    inventory: kind.endpoint,
  });
  const tier = deps.cluster ?? (config.redis && makeDeferredClusterTier({ redis: config.redis, logger: deps.logger }));
  const entry: InventoryEntry | undefined = tier && {
    tier,
    key: deviceListClusterKey(config, kind.keyPrefix),
    codec: deviceSnapshotCodec,
  };
  const ttlMs = config.cacheTtlSeconds * 1000;
  return {
    kind,
    entry,
    /** How long a snapshot is fresh after its read. */
    ttlMs,
    /** How long it may be served after its read (stale while a refresh brings a newer one); the cluster keeps it this long. */
    servableMs: ttlMs + config.cacheStaleSeconds * 1000,
    /** The request-time read: the whole inventory within the invocation's time. */
    readSnapshot: makeSnapshotReader({ inventory: jamf, kind }),
    /** Its Jamf client, for the refresh's read (refresh-reader.ts), which only the refresh bundles. */
    jamf,
  };
};
