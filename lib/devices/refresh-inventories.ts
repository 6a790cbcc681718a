import { makeRedisClusterTier, type ClusterTier } from '../cache/cluster-tier.ts';
import type { RefreshConfig } from '../config.ts';
import { describeError } from '../errors.ts';
import type { HealthLogger } from '../runtime/logger.ts';
import { COMPUTERS, MOBILE_DEVICES, type InventoryKind } from './inventory-kind.ts';
import { makeDeviceInventory, type DeviceInventoryDeps } from './device-inventory.ts';
import { makeRefreshReader, type FullReadReason } from './refresh-reader.ts';
import { makeDevicesRefresh, type RefreshOutcome } from './refresh-devices.ts';
import { takeRefreshLock } from './refresh-lock.ts';

/** The refresh writes ~9 MB for 100,000 devices: it may wait for the cluster longer than a request may. */
const REFRESH_COMMAND_TIMEOUT_MS = 10_000;
/** Lambda stops a function after 15 minutes at most: a lock older than that belongs to a crashed refresh. */
const REFRESH_LOCK_MS = 15 * 60 * 1000;

/** Both inventories, one after the other: never more requests at Jamf at once than one read makes. */
export const REFRESHED_KINDS = [COMPUTERS, MOBILE_DEVICES] as const;

/** What one inventory's refresh did, as its log line and the run's result say it. */
export interface InventoryRefreshResult {
  outcome: RefreshOutcome['outcome'];
  devices?: number;
  read?: 'full' | 'incremental';
  full_read_reason?: FullReadReason;
  duration_ms: number;
}

export interface InventoriesRefreshResult {
  outcome: RefreshOutcome['outcome'];
  computers: InventoryRefreshResult;
  mobile_devices: InventoryRefreshResult;
  /** The failures, first to last; a run with any has failed. */
  failures: unknown[];
}

export interface InventoriesRefreshDeps {
  /** Each inventory's refresh (refresh-devices.ts), by the kind's name. */
  refreshOf: (kind: InventoryKind) => (remainingTimeMs: () => number) => Promise<RefreshOutcome>;
  /** Where the `devices refresh` lines go: one per inventory and run. */
  logger: HealthLogger & { error: (message: string, fields: Record<string, unknown>) => void };
  /** Called for an inventory whose refresh completed, with its duration (its metric). */
  onRefreshed: (kind: InventoryKind, seconds: number) => void;
  /**
   * The lock a whole run holds (SET NX PX, freed by its holder, expiring after `ms`), so a run never
   * starts while another is still reading: two runs side by side would double the requests Jamf sees.
   */
  runLock: { cluster: ClusterTier; key: string; ms: number };
}

/**
 * The scheduled refresh of both device lists, the computers' then the mobile devices', under one
 * run lock (a run held by another is skipped whole), each into its own entry, so one failing
 * leaves the other's entry as its refresh made it. One `devices refresh` line per inventory,
 * naming it (`inventory`).
 */
const makeInventoriesRefresh =
  (deps: InventoriesRefreshDeps) =>
  async (remainingTimeMs: () => number): Promise<InventoriesRefreshResult> => {
    const results: Partial<Record<InventoryKind['name'], InventoryRefreshResult>> = {};
    const failures: unknown[] = [];
    const { cluster, key, ms } = deps.runLock;
    // Unavailable: each inventory's own lock then fails its refresh, saying why.
    const run = await takeRefreshLock(cluster, key, ms);
    try {
      for (const kind of REFRESHED_KINDS) {
        const started = Date.now();
        let result: RefreshOutcome;
        try {
          result = run.taken === 'held' ? { outcome: 'skipped', durationMs: 0 } : await deps.refreshOf(kind)(remainingTimeMs);
        } catch (error) {
          result = { outcome: 'failed', durationMs: Date.now() - started, error };
        }
        const fields: InventoryRefreshResult = {
          outcome: result.outcome,
          ...(result.outcome === 'refreshed'
            ? {
                devices: result.devices,
                read: result.read,
                ...(result.fullReadReason === undefined ? {} : { full_read_reason: result.fullReadReason }),
              }
            : {}),
          duration_ms: result.durationMs,
        };
        if (result.outcome === 'failed') {
          deps.logger.error('devices refresh', { inventory: kind.name, ...fields, error: describeError(result.error) });
          failures.push(result.error);
        } else {
          deps.logger.info('devices refresh', { inventory: kind.name, ...fields });
        }
        if (result.outcome === 'refreshed') deps.onRefreshed(kind, result.durationMs / 1000);
        results[kind.name] = fields;
      }
    } finally {
      await run.release();
    }
    const refreshed = Object.values(results).some((result) => result.outcome === 'refreshed');
    return {
      outcome: failures.length > 0 ? 'failed' : refreshed ? 'refreshed' : 'skipped',
      computers: results.computers!,
      mobile_devices: results.mobile_devices!,
      failures,
    };
  };

/**
 * The scheduled refresh of every inventory as the configuration describes it: each inventory's
 * device stack (device-inventory.ts) over one cluster connection, under a run lock beside the
 * computers' list.
 */
export const makeConfiguredRefreshes = (
  config: RefreshConfig,
  deps: Omit<DeviceInventoryDeps, 'cluster'> & Pick<InventoriesRefreshDeps, 'logger' | 'onRefreshed'>,
) => {
  // One connection for every inventory of a run, its commands allowed the refresh's longer timeout.
  const cluster = makeRedisClusterTier({ redis: config.redis, logger: deps.logger, commandTimeoutMs: REFRESH_COMMAND_TIMEOUT_MS });
  const entries = REFRESHED_KINDS.map((kind) => {
    const inventory = makeDeviceInventory(config, { ...deps, cluster }, kind);
    const entry = inventory.entry!;
    const refresh = makeDevicesRefresh({
      readSnapshot: makeRefreshReader({ inventory: inventory.jamf, kind, fullReadEveryMs: config.fullRefreshSeconds * 1000 }),
      cluster,
      codec: entry.codec,
      key: entry.key,
      servableMs: inventory.servableMs,
      lockMs: REFRESH_LOCK_MS,
    });
    return { kind, key: entry.key, refresh };
  });
  const refreshes = new Map(entries.map(({ kind, refresh }) => [kind.name, refresh]));
  // Beside the computers' list, in its hash slot.
  const runLockKey = `${entries.find(({ kind }) => kind === COMPUTERS)!.key}:refresh-run`;
  return makeInventoriesRefresh({
    refreshOf: (kind) => refreshes.get(kind.name)!,
    logger: deps.logger,
    onRefreshed: deps.onRefreshed,
    runLock: { cluster, key: runLockKey, ms: REFRESH_LOCK_MS },
  });
};
