import type { Backoff } from '../async/backoff.ts';
import { retryAfterMs } from '../upstream/upstream-call.ts';
import { TicketingListingError } from './ticketing-error.ts';

// How the listing reads pace themselves: their settings, and the rate-limit pause every page of every
// read of the job shares, within one wait budget.

/** Whole seconds as `130 s`; anything finer in ms, so a message never rounds a wait across the budget. */
export const formatWait = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${Math.ceil(ms)} ms`);

/**
 * The rate limit as the destination last described it: no request starts before `until` (ms on the
 * settings' clock). `charged` is how far the wait budget already covers, so requests waiting out
 * the same pause count it once.
 */
export interface RatePause {
  until: number;
  charged: number;
}

/** One job's listing reads: credentials, timeouts, retries and the pacing they share. */
export interface Settings {
  authorization: string;
  timeoutMs: number;
  maxRetries: number;
  backoff: Backoff;
  maxRateLimitWaitMs: number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  now: () => number;
  signal: AbortSignal;
  /**
   * How long rate limits have been waited for, and the pause in force, shared by every page of
   * every read of the listing (the budget is per job): objects, so copies of these settings (a
   * read's own abort signal) share them.
   */
  rateLimitWaited: { ms: number };
  pause: RatePause;
}

/** Extends the pause to `until` (asked at `from`), charging the budget for what it did not cover yet; throws past the budget. */
export const extendPause = (settings: Settings, from: number, until: number, overBudget: (remaining: number) => string): void => {
  const extra = until - Math.max(settings.pause.charged, from);
  if (extra > 0) {
    const remaining = settings.maxRateLimitWaitMs - settings.rateLimitWaited.ms;
    if (extra > remaining) throw new TicketingListingError(overBudget(remaining));
    settings.rateLimitWaited.ms += extra;
    settings.pause.charged = until;
  }
  settings.pause.until = Math.max(settings.pause.until, until);
};

/** `X-Rate-Limit-Remaining: 0` (or `ratelimit-remaining`) pauses new requests until the reset the response names. */
export const notePause = (headers: Headers, settings: Settings): void => {
  const remaining = [headers.get('x-rate-limit-remaining'), headers.get('ratelimit-remaining')];
  if (!remaining.some((value) => value?.trim() === '0')) return;
  const at = settings.now();
  // `ratelimit-reset` is delta-seconds, one of Retry-After's two forms: one parser reads both.
  const reset = retryAfterMs(headers.get('ratelimit-reset'), at) ?? retryAfterMs(headers.get('retry-after'), at);
  if (reset !== undefined) settings.pause.until = Math.max(settings.pause.until, at + reset);
};

/** Waits out a pause this request has not already waited for (a 429's own wait covers its pause). */
export const waitOutPause = async (shown: string, settings: Settings, waitedUntil: number): Promise<void> => {
  const now = settings.now();
  const { until } = settings.pause;
  if (until <= now || until <= waitedUntil) return;
  extendPause(
    settings,
    now,
    until,
    (remaining) =>
      `User listing ${shown} is rate limited (X-Rate-Limit-Remaining 0): its reset in ${formatWait(until - now)} exceeds the remaining ${formatWait(remaining)} of the ${formatWait(settings.maxRateLimitWaitMs)} wait budget`,
  );
  await settings.sleep(until - now, settings.signal);
};
