import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideRetry, makeRetryTally, serverWaitMs, UPSTREAM_RETRY, type TransientEnd } from '../../../lib/upstream/upstream-retry.ts';

const NOW = 1_800_000_000_000;
const headers = (entries: Record<string, string> = {}) => new Headers(entries);
const status = (code: number, entries: Record<string, string> = {}): TransientEnd => ({ status: code, headers: headers(entries) });

describe('serverWaitMs', () => {
  it('reads Retry-After in seconds or as an HTTP date, and x-ratelimit-reset in seconds, the later of them', () => {
    expect(serverWaitMs(headers({ 'retry-after': '3' }), NOW)).toBe(3_000);
    expect(serverWaitMs(headers({ 'retry-after': new Date(NOW + 7_000).toUTCString() }), NOW)).toBe(7_000);
    expect(serverWaitMs(headers({ 'x-ratelimit-reset': '2' }), NOW)).toBe(2_000);
    expect(serverWaitMs(headers({ 'retry-after': '1', 'x-ratelimit-reset': '4' }), NOW)).toBe(4_000);
    expect(serverWaitMs(headers({ 'x-ratelimit-reset': 'soon' }), NOW)).toBeUndefined();
    expect(serverWaitMs(headers(), NOW)).toBeUndefined();
  });
});

describe('decideRetry', () => {
  const moment = { attempt: 1, now: NOW, deadlineAt: NOW + 60_000, attemptTimeoutMs: 10_000 };

  it('retries up to 4 attempts in all, then stops', () => {
    for (const attempt of [1, 2, 3]) expect(decideRetry(UPSTREAM_RETRY, status(503), { ...moment, attempt }).retry).toBe(true);
    expect(decideRetry(UPSTREAM_RETRY, status(503), { ...moment, attempt: 4 })).toEqual({ retry: false, why: 'attempts' });
  });

  it('never waits less than the server asked, nor past the backoff window otherwise', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 20 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.constantFrom('retry-after', 'x-ratelimit-reset'),
        (attempt, seconds, draw, header) => {
          const decision = decideRetry(UPSTREAM_RETRY, status(429, { [header]: String(seconds) }), { ...moment, attempt }, () => draw);
          expect(decision.retry).toBe(true);
          if (!decision.retry) return;
          expect(decision.waitMs).toBeGreaterThanOrEqual(seconds * 1_000);
          expect(decision.waitMs).toBeLessThan(Math.max(seconds * 1_000 + 1, 250 * 2 ** (attempt - 1)));
        },
      ),
    );
  });

  it('retries only while the wait and one more attempt fit the deadline', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30_000 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 15_000 }),
        (left, seconds, attemptTimeoutMs) => {
          const decision = decideRetry(
            UPSTREAM_RETRY,
            status(429, { 'retry-after': String(seconds) }),
            { attempt: 1, now: NOW, deadlineAt: NOW + left, attemptTimeoutMs },
            () => 0,
          );
          expect(decision.retry).toBe(seconds * 1_000 + attemptTimeoutMs <= left);
          if (!decision.retry) expect(decision.why).toBe('deadline');
        },
      ),
    );
  });

  it('waits its full-jitter backoff after a failure that names no wait', () => {
    expect(decideRetry(UPSTREAM_RETRY, { failure: 'reset' }, { ...moment, attempt: 2 }, () => 0.5)).toEqual({ retry: true, waitMs: 250 });
    expect(decideRetry(UPSTREAM_RETRY, { failure: 'timed-out' }, { ...moment, attempt: 3 }, () => 0.999)).toEqual({
      retry: true,
      waitMs: 999,
    });
  });
});

describe('makeRetryTally', () => {
  it('sums a read up once: retries, answers by status or failure, and why it gave up', () => {
    let metric = 0;
    const tally = makeRetryTally(() => (metric += 1));
    expect(tally.summary()).toBeUndefined();
    tally.noteTransient(status(503));
    tally.noteRetry();
    tally.noteTransient({ failure: 'reset' });
    tally.noteRetry();
    tally.noteTransient(status(503));
    tally.noteGaveUp('attempts');
    expect(tally.summary()).toEqual({ retries: 2, answers: { '503': 2, reset: 1 }, gaveUp: 'attempts' });
    expect(metric).toBe(2);
  });

  it('sums up a read that retried nothing because the first wait asked for could not fit its deadline', () => {
    const tally = makeRetryTally();
    tally.noteTransient(status(429));
    tally.noteGaveUp('deadline');
    expect(tally.summary()).toEqual({ retries: 0, answers: { '429': 1 }, gaveUp: 'deadline' });
  });
});
