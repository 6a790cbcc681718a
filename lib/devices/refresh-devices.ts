import { randomUUID } from 'node:crypto';
import type { ClusterTier } from '../cache/cluster-tier.ts';
import type { ClusterCodec } from '../cache/tiered-cache.ts';
import type { DeviceSnapshot } from './device-snapshot.ts';
import type { FullReadReason, RefreshRead } from './read-snapshot.ts';

export type RefreshOutcome =
  | { outcome: 'refreshed'; devices: number; durationMs: number; read: 'full' | 'incremental'; fullReadReason?: FullReadReason }
  /** Another refresh of the same inventory holds the lock: nothing to do. */
  | { outcome: 'skipped'; durationMs: number }
  | { outcome: 'failed'; durationMs: number; error: unknown };

export interface DevicesRefreshDeps {
  /** A full read, or the changes merged into `previous` (the entry this refresh replaces, if any). */
  readSnapshot: (previous: DeviceSnapshot | undefined, remainingTimeMs: () => number) => Promise<RefreshRead>;
  cluster: ClusterTier;
  codec: ClusterCodec<DeviceSnapshot>;
  /** The device list's cluster key; the lock is `<key>:refresh-lock`. */
  key: string;
  /** How long the cluster keeps an entry: its TTL plus the stale window. */
  servableMs: number;
  /** The lock's expiry: longer than any refresh may run, so only a crashed one leaves it to expire. */
  lockMs: number;
  now?: () => number;
}

/** The refresh could not write the new entry; the previous one stays. */
class ClusterWriteError extends Error {
  constructor() {
    super('the cluster did not store the new device list');
    this.name = 'ClusterWriteError';
  }
}

/**
 * The scheduled refresh of one inventory: reads it (whole, or the changes since the entry it
 * replaces: read-snapshot.ts) and writes the cluster entry every container serves from. One refresh
 * at a time per inventory (a lock in the cluster, with an expiry); a refresh that fails writes
 * nothing, so the previous entry keeps being served within its stale window.
 */
export const makeDevicesRefresh = (deps: DevicesRefreshDeps) => {
  const now = deps.now ?? Date.now;
  const lockKey = `${deps.key}:refresh-lock`;
  return async (remainingTimeMs: () => number): Promise<RefreshOutcome> => {
    const started = now();
    const token = randomUUID();
    const lock = await deps.cluster.acquireLock(lockKey, token, deps.lockMs);
    if (lock === 'held') return { outcome: 'skipped', durationMs: now() - started };
    if (lock === 'unavailable')
      return {
        outcome: 'failed',
        durationMs: now() - started,
        error: new Error('the cluster did not take the refresh lock (unreachable, or refusing writes)'),
      };
    try {
      // A cluster that cannot answer reads as no previous entry: the read is then a full one.
      const previous = await deps.cluster.read(deps.key, deps.codec.decode);
      const read = await deps.readSnapshot(previous?.value, remainingTimeMs);
      const { snapshot } = read;
      const stored = await deps.cluster.write(deps.key, deps.codec.encode(snapshot), snapshot.readAt + deps.servableMs - now());
      if (!stored) throw new ClusterWriteError();
      return {
        outcome: 'refreshed',
        devices: snapshot.count,
        durationMs: now() - started,
        read: read.read,
        ...(read.read === 'full' ? { fullReadReason: read.reason } : {}),
      };
    } catch (error) {
      return { outcome: 'failed', durationMs: now() - started, error };
    } finally {
      await deps.cluster.releaseLock(lockKey, token);
    }
  };
};
