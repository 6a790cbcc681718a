import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs, type Backoff } from '../async/backoff.ts';
import { callUpstream, redactUrl, retryAfterMs, UpstreamCallError, type CallLimits, type UpstreamResponse } from './upstream-call.ts';

/**
 * The one retry of an upstream request (each Jamf token and inventory request, each SOFA feed
 * fetch): a transient answer (429, 500, 502, 503, 504, a refused or reset connection, an attempt
 * that timed out) is tried again after an exponential backoff with full jitter, never sooner than
 * the server asked (`Retry-After`, `x-ratelimit-reset`), and only while that wait and one more
 * attempt fit the deadline. Anything else, and the last transient answer, goes back to the caller
 * as it came, so a request that still fails fails exactly as it did without the retry.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  backoff: Backoff;
}

/** Four attempts, full jitter over 250 ms doubling up to 8 s. */
export const UPSTREAM_RETRY: RetryPolicy = { attempts: 4, backoff: { baseMs: 250, maxMs: 8_000, fullJitter: true } };

/** Whatever a policy says, no request is tried more often than this. */
const MAX_ATTEMPTS = 10;

const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** An attempt a retry may get past: its status and headers, or how it failed. */
export type TransientEnd = { status: number; headers: Headers } | { failure: 'timed-out' | 'refused' | 'reset' };

/** What the log calls a transient end: the status (`503`) or the failure (`timed-out`). */
const transientLabel = (end: TransientEnd): string => ('status' in end ? String(end.status) : end.failure);

/**
 * The soonest the server allows another attempt, in ms from `now`: its `Retry-After` (seconds or an
 * HTTP date) or `x-ratelimit-reset` (seconds, as Jamf's platform gateway sends it), the later of
 * the two; undefined when it names neither.
 */
export const serverWaitMs = (headers: Headers, now: number): number | undefined => {
  const retryAfter = retryAfterMs(headers.get('retry-after'), now);
  const reset = headers.get('x-ratelimit-reset')?.trim();
  const resetMs = reset !== undefined && /^\d+$/.test(reset) ? Number(reset) * 1000 : undefined;
  if (retryAfter === undefined) return resetMs;
  return resetMs === undefined ? retryAfter : Math.max(retryAfter, resetMs);
};

export interface RetryMoment {
  /** Attempts made so far (1 after the first). */
  attempt: number;
  now: number;
  /** The instant the read must be over (ms, `Date.now`'s clock). */
  deadlineAt: number;
  /** The most one more attempt may take. */
  attemptTimeoutMs: number;
}

/** Retry after `waitMs`, or stop: the attempts are used up, or the wait and one more attempt overrun the deadline. */
export type RetryDecision = { retry: true; waitMs: number } | { retry: false; why: 'attempts' | 'deadline' };

/** Whether, and when, a request that ended transiently is tried again (pure: `random` draws the jitter). */
export const decideRetry = (
  policy: RetryPolicy,
  end: TransientEnd,
  moment: RetryMoment,
  random: () => number = Math.random,
): RetryDecision => {
  if (moment.attempt >= Math.min(policy.attempts, MAX_ATTEMPTS)) return { retry: false, why: 'attempts' };
  const backoff = backoffDelayMs(policy.backoff, moment.attempt, random);
  const asked = 'headers' in end ? serverWaitMs(end.headers, moment.now) : undefined;
  const waitMs = Math.max(backoff, asked ?? 0);
  if (moment.now + waitMs + moment.attemptTimeoutMs > moment.deadlineAt) return { retry: false, why: 'deadline' };
  return { retry: true, waitMs };
};

/** What one read's retries came to: the line its caller logs, once per read. */
export interface RetrySummary {
  /** Attempts made again. */
  retries: number;
  /** Each transient answer seen, by status or failure (`503`, `timed-out`, `reset`), with its count. */
  answers: Record<string, number>;
  /** Why a request stopped while still failing; absent when every request recovered. */
  gaveUp?: 'attempts' | 'deadline';
}

/**
 * The retries of one read (all its requests), counted as they happen and summed up once at its
 * end; `onRetry` is called per retried attempt (the UpstreamRetries metric).
 */
export interface RetryTally {
  noteTransient: (end: TransientEnd) => void;
  noteRetry: () => void;
  noteGaveUp: (why: 'attempts' | 'deadline') => void;
  /**
   * Undefined when nothing was retried or given up on: such a read logs nothing. A read whose first
   * transient answer asked for a wait the deadline could not hold retried nothing but is summed up.
   */
  summary: () => RetrySummary | undefined;
}

export const makeRetryTally = (onRetry?: () => void): RetryTally => {
  let retries = 0;
  const answers: Record<string, number> = {};
  let gaveUp: RetrySummary['gaveUp'];
  return {
    noteTransient: (end) => {
      const label = transientLabel(end);
      answers[label] = (answers[label] ?? 0) + 1;
    },
    noteRetry: () => {
      retries += 1;
      onRetry?.();
    },
    noteGaveUp: (why) => {
      gaveUp ??= why;
    },
    summary: () =>
      retries === 0 && gaveUp !== 'deadline'
        ? undefined
        : { retries, answers: { ...answers }, ...(gaveUp === undefined ? {} : { gaveUp }) },
  };
};

export interface RetryContext {
  policy: RetryPolicy;
  deadlineAt: number;
  tally: RetryTally;
  random?: () => number;
  now?: () => number;
}

/**
 * Whether an attempt ended transiently, the one answer to it every upstream client retries on (this
 * retry, and the ticketing listing's own pacing): its transient status or failure, or undefined.
 */
export const transientEnd = (outcome: { response: UpstreamResponse } | { error: UpstreamCallError }): TransientEnd | undefined => {
  if ('response' in outcome) {
    const { status, headers } = outcome.response;
    return RETRIED_STATUSES.has(status) ? { status, headers } : undefined;
  }
  const { error } = outcome;
  if (error.failure === 'timed-out') return { failure: 'timed-out' };
  return error.failure === 'unreachable' && error.connection !== undefined ? { failure: error.connection } : undefined;
};

/**
 * `callUpstream`, tried again under `retry` while it ends transiently. Resolves with the response
 * that ended it (the last transient one included) or rejects with the failure that did.
 */
export const callUpstreamRetrying = async (
  url: string,
  init: RequestInit,
  limits: CallLimits,
  retry: RetryContext,
): Promise<UpstreamResponse> => {
  const now = retry.now ?? Date.now;
  // Each pass returns, throws, or counts an attempt: the decision stops at the policy's attempts (MAX_ATTEMPTS at most).
  for (let attempt = 1; ; attempt += 1) {
    let outcome: { response: UpstreamResponse } | { error: UpstreamCallError };
    try {
      outcome = { response: await callUpstream(url, init, limits) };
    } catch (error) {
      if (!(error instanceof UpstreamCallError)) throw error;
      outcome = { error };
    }
    const end = transientEnd(outcome);
    if (end === undefined) {
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    }
    retry.tally.noteTransient(end);
    const decision = decideRetry(
      retry.policy,
      end,
      { attempt, now: now(), deadlineAt: retry.deadlineAt, attemptTimeoutMs: limits.timeoutMs },
      retry.random,
    );
    if (!decision.retry) {
      retry.tally.noteGaveUp(decision.why);
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    }
    retry.tally.noteRetry();
    try {
      await delay(decision.waitMs, undefined, limits.signal === undefined ? {} : { signal: limits.signal });
    } catch (cause) {
      throw new UpstreamCallError('aborted', `${redactUrl(url)} was abandoned while waiting to retry`, cause);
    }
  }
};

/** A summary as the log line's fields (snake_case, as every line of the service). */
export const retryFields = (summary: RetrySummary): Record<string, unknown> => ({
  retries: summary.retries,
  answers: summary.answers,
  ...(summary.gaveUp === undefined ? { outcome: 'recovered' } : { outcome: 'gave up', gave_up: summary.gaveUp }),
});
