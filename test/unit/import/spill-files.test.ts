import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commentJson, ticketJson } from '../../../lib/import/json-writer.ts';
import { pushRemappable, remappableLine, SpillReader, SpillWriter } from '../../../lib/import/spill-files.ts';

const render = (line: string, remap: (reference: string) => string): string => {
  const parts: Buffer[] = [];
  pushRemappable(Buffer.from(line), remap, parts);
  return Buffer.concat(parts).toString();
};

describe('spill files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spill-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips many records, multi-byte text included, and reads them back a batch at a time', async () => {
    const path = join(dir, 'records.jsonl');
    const writer = new SpillWriter(path);
    const lines = Array.from({ length: 5000 }, (_, index) => JSON.stringify({ n: index, text: `ü✓🎉 ${'x'.repeat(index % 300)}` }));
    for (const [index, line] of lines.entries()) {
      writer.append(line);
      if (index % 500 === 0) await writer.flush();
    }
    await writer.close();
    const reader = new SpillReader(path);
    const batches: Buffer[][] = [];
    for (let guard = 0; guard < 100; guard += 1) {
      const batch = await reader.read(100);
      if (batch.length === 0) break;
      batches.push(batch);
    }
    reader.destroy();
    expect(batches).toHaveLength(50);
    expect(batches.every((batch) => batch.length === 100)).toBe(true);
    expect(batches.flat().map((line) => line.toString())).toEqual(lines);
  });

  it('reads an empty spill file as no records', async () => {
    const path = join(dir, 'empty.jsonl');
    const writer = new SpillWriter(path);
    await writer.close();
    const reader = new SpillReader(path);
    expect(await reader.read(100)).toEqual([]);
    reader.destroy();
  });

  it('rebuilds a record with its reference remapped, even when its body holds tabs and newlines', () => {
    const comment = { id: '1', ticket_id: '2', author_id: '3', public: true, html_body: 'a\tb\nc', created_at: '2024-01-01T00:00:00Z' };
    const line = remappableLine(commentJson(comment));
    expect(line).not.toContain('\n');
    expect(render(line, (reference) => (reference === '3' ? '9223372036854775807' : reference))).toBe(
      '{"id":1,"ticket_id":2,"author_id":9223372036854775807,"public":true,"html_body":"a\\tb\\nc","created_at":"2024-01-01T00:00:00Z"}',
    );
    const ticket = remappableLine(ticketJson({ id: '5', requester_id: '6', created_at: '2024-01-01T00:00:00Z' }));
    expect(render(ticket, (reference) => reference)).toBe('{"id":5,"requester_id":6,"created_at":"2024-01-01T00:00:00Z"}');
  });

  it('refuses to overwrite an existing spill file', async () => {
    const path = join(dir, 'taken.jsonl');
    const first = new SpillWriter(path);
    await first.close();
    const second = new SpillWriter(path);
    second.append('x');
    await expect(second.close()).rejects.toThrowError(/EEXIST/);
  });
});
