import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { int64Halves, ownedCopy } from '../../../../lib/import/formats/row-keys.ts';
import { Int64Set } from '../../../../lib/import/take/int64-set.ts';
import { retainedMb } from '../../../support/retained-heap.ts';

const scratch = new Int32Array(2);
/** Adds a canonical id through its halves, as the import does. */
const add = (set: Int64Set, id: string): boolean => {
  int64Halves(id, scratch);
  return set.addHalves(scratch[0]!, scratch[1]!);
};

describe('Int64Set', () => {
  it('tells new ids from repeated ones, across the whole int64 range and signs', () => {
    const set = new Int64Set(4);
    const ids = [
      '0',
      '1',
      '-1',
      '4294967296',
      '-4294967296',
      '4294967295',
      '9223372036854775807',
      '-9223372036854775808',
      '9223372036854775806',
      '999999999999999',
      '1000000000000000',
      '9007199254740993',
      '9007199254740992',
    ];
    expect(ids.map((id) => add(set, id))).toEqual(ids.map(() => true));
    expect(ids.map((id) => add(set, id))).toEqual(ids.map(() => false));
    expect(set.size).toBe(ids.length);
  });

  it('agrees with a Set<bigint> on random ids while growing well past its initial capacity', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
            fc.bigInt({ min: -50n, max: 50n }),
            // Around the 15/16-digit switch between the double fast path and the digit loop.
            fc.bigInt({ min: -(10n ** 16n) - 5n, max: 10n ** 16n + 5n }),
            fc.constantFrom(999999999999999n, 1000000000000000n, -999999999999999n, -1000000000000000n, 2n ** 53n, 2n ** 53n + 1n),
          ),
          { maxLength: 3000 },
        ),
        (values) => {
          const set = new Int64Set(2);
          const reference = new Set<bigint>();
          for (const value of values) {
            expect(add(set, value.toString())).toBe(!reference.has(value));
            reference.add(value);
          }
          expect(set.size).toBe(reference.size);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('int64Halves', () => {
  it("gives the two's-complement halves of the value", () => {
    for (const value of [0n, 1n, -1n, 2n ** 32n, -(2n ** 32n), 2n ** 63n - 1n, -(2n ** 63n), 9007199254740993n, -123456789012345678n]) {
      int64Halves(value.toString(), scratch);
      const bits = BigInt.asUintN(64, value);
      expect([scratch[0], scratch[1]]).toEqual([Number(BigInt.asIntN(32, bits >> 32n)), Number(BigInt.asIntN(32, bits & 0xffffffffn))]);
    }
  });
});

describe('ownedCopy', () => {
  it('returns an equal string', () => {
    const big = `${'x'.repeat(100_000)}needle@example.com`;
    expect(ownedCopy(big.slice(100_000))).toBe('needle@example.com');
  });

  it('keeps none of the large string its text was cut from, where a plain substring keeps it all', () => {
    const email = (parent: string): string => parent.slice(0, 20);
    // The control shows the measure sees a pinned parent: 32 substrings hold 32 MB.
    expect(retainedMb((parent) => Array.from({ length: 32 }, (_, n) => email(parent(n))))).toBeGreaterThan(24);
    const copies: string[] = [];
    expect(retainedMb((parent) => Array.from({ length: 32 }, (_, n) => (copies[n] = ownedCopy(email(parent(n))))))).toBeLessThan(8);
    expect(copies[7]).toBe('00000007@example.com');
  });
});
