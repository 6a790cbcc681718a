/**
 * How long the cluster client waits before its n-th reconnect attempt: capped exponential backoff
 * (50 ms doubling to 1 s) plus up to 100 ms of jitter, so background reconnects of many containers
 * never turn into a retry storm.
 */
export const reconnectDelayMs = (attempt: number, random: () => number = Math.random): number =>
  Math.min(50 * 2 ** Math.min(Math.max(attempt - 1, 0), 10), 1_000) + Math.floor(random() * 100);
