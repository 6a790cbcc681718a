import { backoffDelayMs, type Backoff } from '../async/backoff.ts';

/**
 * 50 ms doubling to 1 s, plus up to 100 ms of jitter, so background reconnects of many containers
 * never turn into a retry storm.
 */
const RECONNECT_BACKOFF: Backoff = { baseMs: 50, maxMs: 1_000, jitterMs: 100 };

/** How long the cluster client waits before its n-th reconnect attempt. */
export const reconnectDelayMs = (attempt: number, random: () => number = Math.random): number =>
  backoffDelayMs(RECONNECT_BACKOFF, attempt, random);
