import type { ClusterTier } from '../cache/cluster-tier.ts';
import type { DeviceSnapshotCodec } from './device-snapshot-codec.ts';
import type { FullReadReason, PreviousEntry, RefreshRead } from './refresh-reader.ts';
import { takeRefreshLock } from './refresh-lock.ts';

export type RefreshOutcome =
  | { outcome: 'refreshed'; devices: number; durationMs: number; read: 'full' | 'incremental'; fullReadReason?: FullReadReason }
  /** Another refresh of the same inventory holds the lock: nothing to do. */
  | { outcome: 'skipped'; durationMs: number }
  | { outcome: 'failed'; durationMs: number; error: unknown };

export interface DevicesRefreshDeps {
  /** A full read, or the changes merged into `previous` (the entry this refresh replaces, if any). */
  readSnapshot: (previous: PreviousEntry | undefined, remainingTimeMs: () => number) => Promise<RefreshRead>;
  cluster: ClusterTier;
  codec: DeviceSnapshotCodec;
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
 * replaces: refresh-reader.ts) and writes the cluster entry every container serves from. One refresh
 * at a time per inventory (a lock in the cluster, with an expiry: refresh-lock.ts); a refresh that
 * fails writes nothing, so the previous entry keeps being served within its stale window.
 */
export const makeDevicesRefresh = (deps: DevicesRefreshDeps) => {
  const now = deps.now ?? Date.now;
  const lockKey = `${deps.key}:refresh-lock`;
  return async (remainingTimeMs: () => number): Promise<RefreshOutcome> => {
    const started = now();
    const lock = await takeRefreshLock(deps.cluster, lockKey, deps.lockMs);
    if (lock.taken === 'held') return { outcome: 'skipped', durationMs: now() - started };
    if (lock.taken === 'unavailable')
      return {
        outcome: 'failed',
        durationMs: now() - started,
        error: new Error('the cluster did not take the refresh lock (unreachable, or refusing writes)'),
      };
    try {
      // The header alone says what to ask Jamf; the whole entry is read, if needed, while Jamf
      // answers. A cluster that cannot answer reads as no previous entry: the read is then a full one.
      const header = await deps.cluster.peek(deps.key, deps.codec.stampBytes, deps.codec.headerOf);
      const previous: PreviousEntry | undefined = header && {
        readAt: header.readAt,
        fullReadAt: header.fullReadAt,
        load: async () => (await deps.cluster.read(deps.key, deps.codec.decode))?.value,
      };
      const read = await deps.readSnapshot(previous, remainingTimeMs);
      const { snapshot } = read;
      const bytes = await deps.codec.encodeConcurrently(snapshot);
      const stored = await deps.cluster.write(deps.key, bytes, snapshot.readAt + deps.servableMs - now());
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
      await lock.release();
    }
  };
};
