import { describe, expect, it } from 'vitest';
import { entryBytes, entryCount, entryName } from '../../../../lib/import/write/archive-entry.ts';

describe('batch slicing', () => {
  it.each([
    [[0, 0, 0], 0],
    [[1, 0, 0], 1],
    [[100, 3, 0], 1],
    [[101, 3, 0], 2],
    [[0, 200, 5], 2],
    [[0, 0, 201], 3],
  ])('needs as many entries as the longest asset: %j → %i', (sizes, expected) => {
    expect(entryCount(sizes)).toBe(expected);
  });

  it('names entries 100, 200, 300 …', () => {
    expect([0, 1, 2, 9].map(entryName)).toEqual([
      'backup_tickets_100.json',
      'backup_tickets_200.json',
      'backup_tickets_300.json',
      'backup_tickets_1000.json',
    ]);
  });
});

describe('entry JSON', () => {
  it('writes the envelope with empty arrays and an empty organizations list', () => {
    const empty = { data: Buffer.alloc(0), start: 0, end: 0, count: 0 };
    expect(entryBytes(empty, empty, empty, undefined).toString()).toBe(
      '{"data":{"tickets":{"data":[],"comments":[],"users":[],"organizations":[]}}}',
    );
  });
});
