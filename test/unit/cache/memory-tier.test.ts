import { describe, expect, it } from 'vitest';
import { makeMemoryTier } from '../../../lib/cache/memory-tier.ts';

const clock = (start = 1_000) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe('memory tier', () => {
  it('returns a value until its TTL has passed and nothing from then on', () => {
    const time = clock();
    const memory = makeMemoryTier<string>({ maxEntries: 4, now: time.now });
    memory.set('a', 'body', 1_000);
    time.advance(999);
    expect(memory.get('a')).toBe('body');
    time.advance(1);
    expect(memory.get('a')).toBeUndefined();
    expect(memory.size()).toBe(0);
  });

  it('keeps each entry on its own expiry', () => {
    const time = clock();
    const memory = makeMemoryTier<string>({ maxEntries: 4, now: time.now });
    memory.set('short', 's', 100);
    memory.set('long', 'l', 10_000);
    time.advance(500);
    expect(memory.get('short')).toBeUndefined();
    expect(memory.get('long')).toBe('l');
  });

  it('never holds more than maxEntries, evicting the least recently used entry', () => {
    const time = clock();
    const memory = makeMemoryTier<number>({ maxEntries: 3, now: time.now });
    memory.set('a', 1, 60_000);
    memory.set('b', 2, 60_000);
    memory.set('c', 3, 60_000);
    expect(memory.get('a')).toBe(1); // now b is the least recently used
    memory.set('d', 4, 60_000);
    expect(memory.size()).toBe(3);
    expect(memory.get('b')).toBeUndefined();
    expect([memory.get('a'), memory.get('c'), memory.get('d')]).toEqual([1, 3, 4]);
  });

  it('drops expired entries before evicting live ones when full', () => {
    const time = clock();
    const memory = makeMemoryTier<number>({ maxEntries: 2, now: time.now });
    memory.set('live', 1, 60_000);
    memory.set('stale', 2, 10);
    time.advance(20);
    memory.set('new', 3, 60_000);
    expect(memory.get('live')).toBe(1);
    expect(memory.get('new')).toBe(3);
  });

  it('replaces a value and its expiry when a key is set again', () => {
    const time = clock();
    const memory = makeMemoryTier<string>({ maxEntries: 2, now: time.now });
    memory.set('a', 'old', 100);
    memory.set('a', 'new', 1_000);
    time.advance(500);
    expect(memory.get('a')).toBe('new');
    expect(memory.size()).toBe(1);
  });

  it('stores nothing for a zero or negative TTL and removes what the key held', () => {
    const memory = makeMemoryTier<string>({ maxEntries: 2 });
    memory.set('a', 'kept', 60_000);
    memory.set('a', 'gone', 0);
    expect(memory.get('a')).toBeUndefined();
    memory.set('b', 'gone', -5);
    expect(memory.size()).toBe(0);
  });

  it('forgets a deleted key', () => {
    const memory = makeMemoryTier<string>({ maxEntries: 2 });
    memory.set('a', 'x', 60_000);
    memory.delete('a');
    expect(memory.get('a')).toBeUndefined();
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => makeMemoryTier({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => makeMemoryTier({ maxEntries: 1.5 })).toThrow(RangeError);
  });
});
