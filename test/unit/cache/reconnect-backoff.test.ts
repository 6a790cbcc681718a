import { describe, expect, it } from 'vitest';
import { reconnectDelayMs } from '../../../lib/cache/reconnect-backoff.ts';

describe('reconnect backoff', () => {
  it('grows exponentially from 50 ms and is capped at one second plus jitter', () => {
    const noJitter = () => 0;
    expect([1, 2, 3, 4, 5, 6].map((attempt) => reconnectDelayMs(attempt, noJitter))).toEqual([50, 100, 200, 400, 800, 1_000]);
    expect(reconnectDelayMs(1_000, noJitter)).toBe(1_000);
    expect(reconnectDelayMs(3, () => 0.999)).toBe(299);
  });
});
