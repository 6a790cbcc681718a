import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../../lib/async/backoff.ts';

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
