import { describe, expect, it } from 'vitest';
import { entryCount, entryName, sliceFor } from '../../../lib/import/batches.ts';
import { entryBytes, entryJson, userJson } from '../../../lib/import/json-writer.ts';
import { RECORD_HEADER_BYTES } from '../../../lib/import/spill-files.ts';
import type { SpillSlice } from '../../../lib/import/spill-files.ts';

/** Records laid out as a spill file holds them (length header, no reference located). */
const spilled = (records: readonly string[]): SpillSlice => {
  const pieces = records.map((record) => {
    const json = Buffer.from(record);
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    header.writeUInt32LE(json.length, 0);
    return Buffer.concat([header, json]);
  });
  const data = Buffer.concat([Buffer.from('junk before'), ...pieces]);
  return { data, start: 11, end: data.length, count: records.length };
};

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

  it('slices consecutively and gives an empty slice past the end', () => {
    const items = Array.from({ length: 150 }, (_, index) => index);
    expect(sliceFor(items, 0)).toEqual(items.slice(0, 100));
    expect(sliceFor(items, 1)).toEqual(items.slice(100));
    expect(sliceFor(items, 2)).toEqual([]);
  });
});

describe('entry JSON', () => {
  it('writes the envelope with empty arrays and an empty organizations list', () => {
    expect(entryJson([], [], [])).toBe('{"data":{"tickets":{"data":[],"comments":[],"users":[],"organizations":[]}}}');
  });

  it('escapes user text exactly and writes the id as a bare integer', () => {
    const json = userJson({ id: '9223372036854775807', name: 'A "B" \\ C\u0000', email: 'a@b' });
    expect(json).toBe('{"id":9223372036854775807,"name":"A \\"B\\" \\\\ C\\u0000","email":"a@b"}');
  });

  it('splices spilled records into the same bytes as the record strings give', () => {
    const tickets = ['{"id":1,"requester_id":2,"created_at":"x"}', '{"id":3,"requester_id":4,"created_at":"é"}'];
    const users = ['{"id":5,"name":"Zoë","email":"z@x"}', '{"id":6,"name":"A","email":"a@x"}'];
    const bytes = entryBytes(spilled(tickets), spilled([]), spilled(users), undefined);
    expect(bytes.toString()).toBe(entryJson(tickets, [], users));
    expect(JSON.parse(bytes.toString()).data.tickets.users).toHaveLength(2);
  });
});
