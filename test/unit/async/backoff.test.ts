import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../../lib/async/backoff.ts';
import fc from 'fast-check';

describe('backoffDelayMs', () => {
  const noJitter = () => 0;

  it('waits baseMs before the first retry and doubles up to maxMs', () => {
    const backoff = { baseMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMs(backoff, retry))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('adds a whole number of milliseconds of jitter below jitterMs, and none without it', () => {
    expect(backoffDelayMs({ baseMs: 100, maxMs: 1_000, jitterMs: 50 }, 1, noJitter)).toBe(100);
    expect(backoffDelayMs({ baseMs: 100, maxMs: 1_000, jitterMs: 50 }, 1, () => 0.999)).toBe(149);
    expect(backoffDelayMs({ baseMs: 100, maxMs: 1_000, jitterMs: 50 }, 9, () => 0.5)).toBe(1_025);
    expect(backoffDelayMs({ baseMs: 100, maxMs: 1_000 }, 1, () => 0.999)).toBe(100);
  });

  it('stays finite for any retry, a zero baseMs included', () => {
    expect(backoffDelayMs({ baseMs: 0, maxMs: 1_000 }, 5_000)).toBe(0);
    expect(backoffDelayMs({ baseMs: 1, maxMs: 1_000 }, 5_000)).toBe(1_000);
    expect(backoffDelayMs({ baseMs: 1, maxMs: Number.MAX_SAFE_INTEGER }, 5_000)).toBe(2 ** 30);
  });
});

describe('backoffDelayMs with full jitter', () => {
  it('draws the wait in [0, step) of the capped exponential step', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (baseMs, maxMs, retry, draw) => {
          const step = Math.min(baseMs * 2 ** Math.min(retry - 1, 30), maxMs);
          const wait = backoffDelayMs({ baseMs, maxMs, fullJitter: true }, retry, () => draw);
          expect(Number.isInteger(wait)).toBe(true);
          expect(wait).toBeGreaterThanOrEqual(0);
          expect(wait).toBeLessThan(Math.max(step, 1));
        },
      ),
    );
  });

  it('spans the whole window: 0 at the lowest draw, just below the step at the highest', () => {
    const backoff = { baseMs: 250, maxMs: 8_000, fullJitter: true };
    expect(backoffDelayMs(backoff, 1, () => 0)).toBe(0);
    expect(backoffDelayMs(backoff, 1, () => 0.9999)).toBe(249);
    expect(backoffDelayMs(backoff, 3, () => 0.5)).toBe(500);
    expect(backoffDelayMs(backoff, 9, () => 0.9999)).toBe(7_999);
  });
});
