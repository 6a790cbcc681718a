import { randomUUID } from 'node:crypto';
import type { ClusterTier } from '../cache/cluster-tier.ts';

/** Whether a refresh took its lock, found it held by another, or could not ask the cluster. */
export type LockTaken = 'acquired' | 'held' | 'unavailable';

export interface RefreshLock {
  taken: LockTaken;
  /** Frees the lock if this holder still holds it: one that expired and was taken by another stays theirs. */
  release: () => Promise<void>;
}

/**
 * The refresh's lock in the cluster (docs/architecture.md#get-devices): `key` set to a token of
 * this holder's unless someone holds it, expiring after `ms`, so a holder that crashed never keeps
 * the refreshes out for longer. Released only by its holder.
 */
export const takeRefreshLock = async (cluster: ClusterTier, key: string, ms: number): Promise<RefreshLock> => {
  const token = randomUUID();
  const set = await cluster.setIfAbsent(key, token, ms);
  const taken: LockTaken = set === 'set' ? 'acquired' : set === 'exists' ? 'held' : 'unavailable';
  return {
    taken,
    // Not released (the cluster did not answer): the lock's own expiry frees it.
    release: async () => (taken === 'acquired' ? cluster.deleteIfEqual(key, token) : undefined),
  };
};
