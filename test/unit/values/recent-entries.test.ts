import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentEntries } from '../../../lib/values/recent-entries.ts';

describe('RecentEntries', () => {
  it('lets the least recently used entry go first, a read counting as a use', () => {
    const kept = new RecentEntries<string, number>(2);
    kept.set('a', 1);
    kept.set('b', 2);
    expect(kept.get('a')).toBe(1);
    kept.set('c', 3);
    expect([kept.has('a'), kept.has('b'), kept.has('c')]).toEqual([true, false, true]);
    kept.set('a', 10);
    kept.set('d', 4);
    expect([kept.get('a'), kept.has('c'), kept.get('d')]).toEqual([10, false, 4]);
  });

  it('never holds more than its capacity, and always the last entry set', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 12 })), { maxLength: 60 }),
        (capacity, steps) => {
          const kept = new RecentEntries<number, number>(capacity);
          for (const [write, key] of steps) {
            if (write) {
              kept.set(key, key * 2);
              expect(kept.get(key)).toBe(key * 2);
            } else {
              const value = kept.get(key);
              if (value !== undefined) expect(value).toBe(key * 2);
            }
            expect(kept.size).toBeLessThanOrEqual(capacity);
          }
        },
      ),
    );
  });
});
