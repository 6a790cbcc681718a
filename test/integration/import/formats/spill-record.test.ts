import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryBytes } from '../../../../lib/import/write/archive-entry.ts';
import type { Remap } from '../../../../lib/import/write/archive-entry.ts';
import { maxUtf8Bytes } from '../../../../lib/bytes/growable-buffer.ts';
import { SpillWriter } from '../../../../lib/import/take/spill-writer.ts';
import { SpillReader } from '../../../../lib/import/write/spill-reader.ts';
import { jsonStart, recordEnd, RecordBuffer, writeComment, writeTicket, writeUser } from '../../../../lib/import/formats/spill-record.ts';
import type { SpillSlice } from '../../../../lib/import/formats/spill-record.ts';

/** The JSON texts of a slice's records, read through the record headers. */
const recordsOf = (slice: SpillSlice): string[] => {
  const records: string[] = [];
  for (let at = slice.start; at < slice.end; at = recordEnd(slice.data, at)) {
    records.push(slice.data.toString('utf8', jsonStart(at), recordEnd(slice.data, at)));
  }
  expect(records).toHaveLength(slice.count);
  return records;
};

/** Encodes records into a RecordBuffer, as the read side does, and appends them to a spill, as the take side does. */
const encoded = (write: (records: RecordBuffer) => void): Buffer => {
  const records = new RecordBuffer(16);
  write(records);
  return records.take();
};

const writeText = (writer: SpillWriter, text: string): void => {
  const records = encoded((buffer) => {
    buffer.begin(maxUtf8Bytes(text));
    buffer.utf8(text);
    buffer.end();
  });
  writer.append(records, 0, records.length);
};

const appendAll = (writer: SpillWriter, write: (records: RecordBuffer) => void): void => {
  const records = encoded(write);
  writer.append(records, 0, records.length);
};

/** Reads every record back, `count` at a time (bounded). */
const readAll = (path: string, count: number): string[][] => {
  const reader = new SpillReader(path);
  const batches: string[][] = [];
  try {
    for (let guard = 0; guard < 1000; guard += 1) {
      const slice = reader.load(count);
      if (slice.count === 0) break;
      batches.push(recordsOf(slice));
    }
  } finally {
    reader.close();
  }
  return batches;
};

const EMPTY: SpillSlice = { data: Buffer.alloc(0), start: 0, end: 0, count: 0 };

describe('spill files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spill-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips many records, multi-byte text included, and reads them back a batch at a time', async () => {
    const path = join(dir, 'records.spill');
    const writer = new SpillWriter(path);
    // ≈ 1.5 MB: records straddle the writer's blocks and the reader's reads.
    const lines = Array.from({ length: 5000 }, (_, index) => JSON.stringify({ n: index, text: `ü✓🎉 ${'x'.repeat(index % 600)}` }));
    for (const [index, line] of lines.entries()) {
      writeText(writer, line);
      if (index % 500 === 0) await writer.flush();
    }
    await writer.close();
    const batches = readAll(path, 100);
    expect(batches).toHaveLength(50);
    expect(batches.every((batch) => batch.length === 100)).toBe(true);
    expect(batches.flat()).toEqual(lines);
  });

  it('round-trips a record larger than a write block and a read buffer, between small ones', async () => {
    const path = join(dir, 'huge.spill');
    const writer = new SpillWriter(path);
    const huge = `"${'é'.repeat(1_500_000)}"`; // 3 MB of UTF-8
    const lines = ['"before"', huge, '"after"'];
    for (const line of lines) writeText(writer, line);
    await writer.close();
    expect(readAll(path, 2).flat()).toEqual(lines);
  });

  it('reads an empty spill file as no records', async () => {
    const path = join(dir, 'empty.spill');
    const writer = new SpillWriter(path);
    await writer.close();
    const reader = new SpillReader(path);
    expect(reader.load(100).count).toBe(0);
    reader.close();
  });

  it('rebuilds a record with its reference remapped, even when its body holds tabs and newlines', async () => {
    const path = join(dir, 'comments.spill');
    const writer = new SpillWriter(path);
    appendAll(writer, (records) => {
      writeComment(records, {
        id: '1',
        ticket_id: '2',
        author_id: '3',
        public: true,
        html_body: 'a\tb\nc',
        created_at: '2024-01-01T00:00:00Z',
      });
      writeComment(records, {
        id: '4',
        ticket_id: '2',
        author_id: '30',
        public: false,
        html_body: 'ü',
        created_at: '2024-01-01T00:00:00Z',
      });
    });
    await writer.close();
    const reader = new SpillReader(path);
    const comments = reader.load(100);
    const remap: Remap = (reference) => (reference === '3' ? '9223372036854775807' : reference);
    const entry = entryBytes(EMPTY, comments, EMPTY, remap).toString();
    reader.close();
    expect(entry).toBe(
      '{"data":{"tickets":{"data":[],"comments":[' +
        '{"id":1,"ticket_id":2,"author_id":9223372036854775807,"public":true,"html_body":"a\\tb\\nc","created_at":"2024-01-01T00:00:00Z"},' +
        '{"id":4,"ticket_id":2,"author_id":30,"public":false,"html_body":"ü","created_at":"2024-01-01T00:00:00Z"}' +
        '],"users":[],"organizations":[]}}}',
    );
    expect((JSON.parse(entry) as { data: { tickets: { comments: { html_body: string }[] } } }).data.tickets.comments[0]!.html_body).toBe(
      'a\tb\nc',
    );
  });

  it('spills a ticket as its final JSON and splices it with its requester remapped', async () => {
    const path = join(dir, 'tickets.spill');
    const writer = new SpillWriter(path);
    appendAll(writer, (records) => writeTicket(records, { id: '5', requester_id: '6', created_at: '2024-01-01T00:00:00Z' }));
    await writer.close();
    const reader = new SpillReader(path);
    const tickets = reader.load(100);
    expect(recordsOf(tickets)).toEqual(['{"id":5,"requester_id":6,"created_at":"2024-01-01T00:00:00Z"}']);
    expect(entryBytes(tickets, EMPTY, EMPTY, (reference) => (reference === '6' ? '-7' : reference)).toString()).toBe(
      '{"data":{"tickets":{"data":[{"id":5,"requester_id":-7,"created_at":"2024-01-01T00:00:00Z"}],"comments":[],"users":[],"organizations":[]}}}',
    );
    reader.close();
  });

  it('splices spilled users into an entry byte for byte, escaping their text exactly, ids as bare integers', async () => {
    const path = join(dir, 'users.spill');
    const writer = new SpillWriter(path);
    appendAll(writer, (records) => {
      writeUser(records, { id: '9223372036854775807', name: 'A "B" \\ C\u0000', email: 'a@b' });
      writeUser(records, { id: '6', name: 'Zoë', email: 'z@x' });
    });
    await writer.close();
    const reader = new SpillReader(path);
    const entry = entryBytes(EMPTY, EMPTY, reader.load(100), undefined).toString();
    reader.close();
    expect(entry).toBe(
      '{"data":{"tickets":{"data":[],"comments":[],"users":[' +
        '{"id":9223372036854775807,"name":"A \\"B\\" \\\\ C\\u0000","email":"a@b"},{"id":6,"name":"Zoë","email":"z@x"}' +
        '],"organizations":[]}}}',
    );
  });

  it('refuses to overwrite an existing spill file', async () => {
    const path = join(dir, 'taken.spill');
    const first = new SpillWriter(path);
    await first.close();
    const second = new SpillWriter(path);
    writeText(second, 'x');
    await expect(second.close()).rejects.toThrowError(/EEXIST/);
  });
});
