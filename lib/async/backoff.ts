/**
 * How long a retry loop waits, the one backoff every retry of the bundle uses (the cluster client's
 * reconnects, the ticketing listing's pages, the upstream calls): `baseMs` before the first retry,
 * doubling with each further one up to `maxMs`; then either a random jitter below `jitterMs` added,
 * or, with `fullJitter`, a wait drawn uniformly below that whole step.
 */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  /** Spreads the retries of many clients that failed at the same moment; none when absent. */
  jitterMs?: number;
  /**
   * "Full jitter" (AWS Architecture Blog, "Exponential Backoff and Jitter"): the wait is random in
   * [0, step), so clients throttled together spread over the whole window rather than its edge.
   */
  fullJitter?: boolean;
}

/**
 * Past 30 doublings any cap has long been reached; stopping there keeps the product finite, so a
 * zero `baseMs` never turns into NaN (0 × ∞).
 */
const MAX_DOUBLINGS = 30;

/** The wait before retry `retry` (1 for the first); `random` draws the jitter (in [0, 1)). */
export const backoffDelayMs = (
  { baseMs, maxMs, jitterMs = 0, fullJitter = false }: Backoff,
  retry: number,
  random: () => number = Math.random,
): number => {
  const step = Math.min(baseMs * 2 ** Math.min(Math.max(retry - 1, 0), MAX_DOUBLINGS), maxMs);
  if (fullJitter) return Math.floor(random() * step);
  return step + (jitterMs > 0 ? Math.floor(random() * jitterMs) : 0);
};
