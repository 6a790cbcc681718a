import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inventoryIdOf, sortedUniqueById } from '../../../lib/inventory/record-id.ts';

/** Records keyed as the inventory client keys them: by their usable id, the others left out. */
const dedupeAndSortById = <T>(records: readonly T[]): T[] =>
  sortedUniqueById(
    records.flatMap((record) => {
      const id = inventoryIdOf(record);
      return id === undefined ? [] : [{ id, value: record }];
    }),
  );

describe('sortedUniqueById', () => {
  it('orders ids numerically, not as text', () => {
    const records = ['10', '9', '100', '2', '1'].map((id) => ({ id }));
    expect(dedupeAndSortById(records).map((record) => record.id)).toEqual(['1', '2', '9', '10', '100']);
  });

  it('keeps the first record of a repeated id', () => {
    const records = [{ id: '2', name: 'first' }, { id: '1' }, { id: '2', name: 'second' }];
    expect(dedupeAndSortById(records)).toEqual([{ id: '1' }, { id: '2', name: 'first' }]);
  });

  it('orders ids beyond 2^53 exactly', () => {
    const records = [{ id: '9007199254740993' }, { id: '9007199254740992' }, { id: '18446744073709551616' }];
    expect(dedupeAndSortById(records).map((record) => record.id)).toEqual(['9007199254740992', '9007199254740993', '18446744073709551616']);
  });

  it('drops records without a usable id', () => {
    const records: unknown[] = [{ id: '3' }, { name: 'no id' }, null, { id: 'x' }, { id: 1 }];
    expect(dedupeAndSortById(records)).toEqual([{ id: 1 }, { id: '3' }]);
  });

  it('yields each id once in ascending order for any shuffle with repeats', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 10n ** 25n }), { maxLength: 60 }), (ids) => {
        const result = dedupeAndSortById(ids.map((id) => ({ id: String(id) }))).map((record) => BigInt(record.id));
        const expected = [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        return JSON.stringify(result.map(String)) === JSON.stringify(expected.map(String));
      }),
    );
  });
});

describe('inventoryIdOf', () => {
  it.each([
    [{ id: '42' }, '42'],
    [{ id: 42 }, '42'],
    [{ id: '' }, undefined],
    [{ id: '4 2' }, undefined],
    [{ id: 2 ** 53 }, undefined],
    [{}, undefined],
  ])('reads %j as %j', (record, expected) => {
    expect(inventoryIdOf(record)).toBe(expected);
  });
});
