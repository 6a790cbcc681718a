import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/errors.ts';
import { once, singleFlight } from '../../../lib/async/once.ts';

describe('once', () => {
  it('loads once and remembers a failure so every request answers the same', () => {
    let calls = 0;
    const failing = once(() => {
      calls += 1;
      throw new ConfigError('X', 'is required but not set');
    });
    expect(failing).toThrow(ConfigError);
    expect(failing).toThrow(ConfigError);
    expect(calls).toBe(1);
  });
});

describe('singleFlight', () => {
  it("runs the work once for callers that come while it runs, with the first caller's arguments", async () => {
    const calls: number[] = [];
    let release!: (value: string) => void;
    const flight = singleFlight((n: number) => {
      calls.push(n);
      return new Promise<string>((resolve) => (release = resolve));
    });
    const first = flight.run(1);
    const second = flight.run(2);
    expect(flight.running()).toBe(true);
    release('done');
    expect(await Promise.all([first, second])).toEqual(['done', 'done']);
    expect(calls).toEqual([1]);
    expect(flight.running()).toBe(false);
  });

  it('forgets a failed run: every waiter gets its error, and the next caller starts another', async () => {
    let attempt = 0;
    const flight = singleFlight(async () => {
      attempt += 1;
      if (attempt === 1) throw new Error('first fails');
      return attempt;
    });
    await expect(Promise.all([flight.run(), flight.run()])).rejects.toThrow('first fails');
    expect(await flight.run()).toBe(2);
  });
});
