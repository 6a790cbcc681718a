/**
 * How long a retry loop waits, the one backoff every retry of the bundle uses (the cluster client's
 * reconnects, the ticketing listing's pages): `baseMs` before the first retry, doubling with each
 * further one up to `maxMs`, plus a random jitter below `jitterMs`.
 */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  /** Spreads the retries of many clients that failed at the same moment; none when absent. */
  jitterMs?: number;
}

/**
 * Past 30 doublings any cap has long been reached; stopping there keeps the product finite, so a
 * zero `baseMs` never turns into NaN (0 × ∞).
 */
const MAX_DOUBLINGS = 30;

/** The wait before retry `retry` (1 for the first); `random` draws the jitter (in [0, 1)). */
export const backoffDelayMs = ({ baseMs, maxMs, jitterMs = 0 }: Backoff, retry: number, random: () => number = Math.random): number =>
  Math.min(baseMs * 2 ** Math.min(Math.max(retry - 1, 0), MAX_DOUBLINGS), maxMs) + (jitterMs > 0 ? Math.floor(random() * jitterMs) : 0);
