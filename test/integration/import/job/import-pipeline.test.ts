import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobError } from '../../../../lib/errors.ts';
import { ImportInputError } from '../../../../lib/import/read/import-input-error.ts';
import { makeSpillWatch } from '../../../../lib/import/job/spill-space.ts';
import type { ImportProgress, ImportSummary } from '../../../../lib/import/job/import-pipeline.ts';
import { chatCsv, fullRow, HEADER, importCsv, parseLossless, readArchive, runPlannedPipeline } from '../../../support/chat-import.ts';

const droppedTotal = (counts: Record<string, number>): number => Object.values(counts).reduce((sum, count) => sum + count, 0);

const expectEveryRowAccounted = (summary: ImportSummary): void => {
  expect(summary.tickets + droppedTotal(summary.dropped.tickets)).toBe(summary.rows);
  expect(summary.comments + droppedTotal(summary.dropped.comments)).toBe(summary.rows);
  expect(summary.users + droppedTotal(summary.dropped.users)).toBe(summary.rows);
};

describe('runImportPipeline', () => {
  let tmpDir: string;
  beforeEach(async () => {
    tmpDir = await mkdtemp(join(tmpdir(), 'run-import-test-'));
  });
  afterEach(async () => {
    await rm(tmpDir, { recursive: true, force: true });
  });

  it('writes ids above 2^53 byte-exact and the int64 extremes as bare JSON integers', async () => {
    const csv = chatCsv([
      fullRow(1, { CONVERSATION_ID: '9223372036854775807', COMMENT_PART_ID: '-9223372036854775808', AUTHOR_ID: '9007199254740993' }),
    ]);
    const { entries, all } = await importCsv(csv, { tmpDir });
    expect(entries[0]!.text).toContain('"tickets":{"data":[{"id":9223372036854775807,');
    expect(entries[0]!.text).toContain(
      '"comments":[{"id":-9223372036854775808,"ticket_id":9223372036854775807,"author_id":9007199254740993,',
    );
    expect(all.users[0]!.id).toBe('9007199254740993');
  });

  it('drops an id one past the int64 range from every asset that needs it', async () => {
    const { summary, all } = await importCsv(chatCsv([fullRow(1, { CONVERSATION_ID: '9223372036854775808' })]), { tmpDir });
    expect(all.tickets).toEqual([]);
    expect(all.comments).toEqual([]);
    expect(all.users).toHaveLength(1);
    expect(summary.dropped.tickets.invalid_field).toBe(1);
    expect(summary.dropped.comments.invalid_field).toBe(1);
  });

  it('writes each entry in the exact envelope with keys in the documented order', async () => {
    const csv = chatCsv([
      fullRow(1, {
        TICKET_CREATED_AT: '2024-01-01 00:30:00+01:00',
        COMMENT_PUBLIC: '0',
        BODY: '<p class="a">x, "y"\r\nz\\ é</p>',
        COMMENT_CREATED_AT: '2024-02-29T23:59:59.000123-00:01',
        NAME: ' Ann ',
        EMAIL: ' Ann@Example.com ',
      }),
    ]);
    const { entries } = await importCsv(csv, { tmpDir });
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json']);
    expect(entries[0]!.text).toBe(
      '{"data":{"tickets":{"data":[{"id":501,"requester_id":1001,"created_at":"2023-12-31T23:30:00Z"}],' +
        '"comments":[{"id":1,"ticket_id":501,"author_id":2001,"public":false,' +
        '"html_body":"<p class=\\"a\\">x, \\"y\\"\\r\\nz\\\\ é</p>","created_at":"2024-03-01T00:00:59.000123Z"}],' +
        '"users":[{"id":2001,"name":"Ann","email":"Ann@Example.com"}],"organizations":[]}}}',
    );
  });

  it('keeps the BODY byte for byte through the archive', async () => {
    const body = '  <div>\n\t"quotes" , commas ,\r\n emoji 🎉 and \u2028 separators\u0001</div>  ';
    const { all } = await importCsv(chatCsv([fullRow(1, { BODY: body })], { newline: '\r\n' }), { tmpDir });
    expect(all.comments[0]!.html_body).toBe(body);
  });

  it('lets the first complete row per key win when an earlier row for the key is incomplete', async () => {
    const csv = chatCsv([
      fullRow(1, { TICKET_CREATED_AT: 'garbage', COMMENT_PUBLIC: '', NAME: '' }),
      fullRow(1, { TICKET_REQUESTER_ID: '77', BODY: 'winner', NAME: 'Winner' }),
      fullRow(1, { TICKET_REQUESTER_ID: '88', BODY: 'late', NAME: 'Late' }),
    ]);
    const { summary, all } = await importCsv(csv, { tmpDir });
    expect(all.tickets).toEqual([{ id: '501', requester_id: '77', created_at: '2024-05-01T10:00:00Z' }]);
    expect(all.comments.map((comment) => comment.html_body)).toEqual(['winner']);
    expect(all.users.map((user) => user.name)).toEqual(['Winner']);
    expect(summary.dropped.tickets).toEqual({ missing_field: 0, invalid_field: 1, duplicate: 1 });
    expect(summary.dropped.comments).toEqual({ missing_field: 1, invalid_field: 0, duplicate: 1 });
    expect(summary.dropped.users).toEqual({ missing_field: 1, bad_email: 0, invalid_field: 0, duplicate: 1 });
    expectEveryRowAccounted(summary);
  });

  it('treats emails differing only in case as one user', async () => {
    const csv = chatCsv([fullRow(1, { EMAIL: 'Ann@Example.com' }), fullRow(2, { EMAIL: 'ann@example.COM' })]);
    const { summary, all } = await importCsv(csv, { tmpDir });
    expect(all.users).toEqual([{ id: '2001', name: 'User 1', email: 'Ann@Example.com' }]);
    expect(summary.dropped.users.duplicate).toBe(1);
  });

  it('treats emails differing only in case beyond ASCII as one user (final sigma, sharp s), also against the destination', async () => {
    const csv = chatCsv([
      fullRow(1, { EMAIL: 'ΣΑΣ@x.gr' }),
      fullRow(2, { EMAIL: 'σασ@x.gr' }),
      fullRow(3, { EMAIL: 'STRASSE@x.de' }),
      fullRow(4, { EMAIL: 'Straße@x.de' }),
    ]);
    const { summary, all, rejectsCsv } = await importCsv(csv, { tmpDir, rejects: true, destinationUsers: new Map([['σας@x.gr', '900']]) });
    expect(all.users).toEqual([
      { id: '900', name: 'User 1', email: 'ΣΑΣ@x.gr' },
      { id: '2003', name: 'User 3', email: 'STRASSE@x.de' },
    ]);
    expect(summary).toMatchObject({ users_matched: 1, dropped: { users: { duplicate: 2 } } });
    expect(rejectsCsv.split('\n').filter((line) => line.includes(',duplicate,'))).toEqual([
      '2,3,user,duplicate,,σας@x.gr',
      '4,5,user,duplicate,,strasse@x.de',
    ]);
  });

  it('remaps comment authors and ticket requesters to destination ids, also for rows before the user row', async () => {
    const csv = chatCsv([
      fullRow(1, { TICKET_REQUESTER_ID: '42', AUTHOR_ID: '42', EMAIL: '' }),
      fullRow(2, { TICKET_REQUESTER_ID: '7', AUTHOR_ID: '7', EMAIL: 'other@x.io' }),
      fullRow(3, { TICKET_REQUESTER_ID: '9', AUTHOR_ID: '42', EMAIL: 'Held@X.io' }),
    ]);
    const { summary, all } = await importCsv(csv, {
      tmpDir,
      destinationUsers: new Map([['held@x.io', '9223372036854775001']]),
    });
    expect(all.comments.map((comment) => comment.author_id)).toEqual(['9223372036854775001', '7', '9223372036854775001']);
    expect(all.tickets.map((ticket) => ticket.requester_id)).toEqual(['9223372036854775001', '7', '9']);
    expect(all.users).toEqual([
      { id: '7', name: 'User 2', email: 'other@x.io' },
      { id: '9223372036854775001', name: 'User 3', email: 'Held@X.io' },
    ]);
    expect(summary.users_matched).toBe(1);
    expect(summary.user_resolution).toBe('destination');
  });

  it('remaps an author under two emails by the first email only', async () => {
    const csv = chatCsv([
      fullRow(1, { AUTHOR_ID: '5', TICKET_REQUESTER_ID: '5', EMAIL: 'first@x.io' }),
      fullRow(2, { AUTHOR_ID: '5', TICKET_REQUESTER_ID: '5', EMAIL: 'second@x.io' }),
    ]);
    const { summary, all } = await importCsv(csv, { tmpDir, destinationUsers: new Map([['second@x.io', '900']]) });
    expect(all.users.map((user) => user.id)).toEqual(['5', '900']);
    expect(all.comments.map((comment) => comment.author_id)).toEqual(['5', '5']);
    expect(all.tickets.map((ticket) => ticket.requester_id)).toEqual(['5', '5']);
    expect(summary.users_matched).toBe(1);
  });

  it('takes a user row without AUTHOR_ID when the destination holds its email, and remaps nothing through it', async () => {
    const csv = chatCsv([
      fullRow(1, { AUTHOR_ID: '', NAME: 'Ann', EMAIL: 'ann@x.io' }),
      fullRow(2, { AUTHOR_ID: '5', TICKET_REQUESTER_ID: '5', NAME: 'Ann 2', EMAIL: 'ANN@x.io' }),
      fullRow(3, { AUTHOR_ID: 'not-a-number', NAME: 'Bob', EMAIL: 'bob@x.io' }),
      fullRow(4, { AUTHOR_ID: '', NAME: 'Carol', EMAIL: 'carol@x.io' }),
    ]);
    const { summary, all } = await importCsv(csv, {
      tmpDir,
      destinationUsers: new Map([
        ['ann@x.io', '900'],
        ['bob@x.io', '901'],
      ]),
    });
    expect(all.users).toEqual([
      { id: '900', name: 'Ann', email: 'ann@x.io' },
      { id: '901', name: 'Bob', email: 'bob@x.io' },
    ]);
    // The winning Ann row has no AUTHOR_ID, so author 5 keeps its own id in references.
    expect(all.tickets.map((ticket) => ticket.requester_id)).toContain('5');
    expect(all.comments.map((comment) => comment.author_id)).not.toContain('900');
    expect(summary.users_matched).toBe(2);
    expect(summary.dropped.users).toEqual({ missing_field: 1, bad_email: 0, invalid_field: 0, duplicate: 1 });
    expectEveryRowAccounted(summary);
  });

  it('refuses a user row without AUTHOR_ID when resolution is disabled', async () => {
    const { summary, all } = await importCsv(chatCsv([fullRow(1, { AUTHOR_ID: '', EMAIL: 'ann@x.io' })]), { tmpDir });
    expect(all.users).toEqual([]);
    expect(summary.dropped.users.missing_field).toBe(1);
  });

  it('says resolution was disabled when no destination users are given', async () => {
    const { summary } = await importCsv(chatCsv([fullRow(1)]), { tmpDir });
    expect(summary.user_resolution).toBe('disabled');
    expect(summary.users_matched).toBe(0);
  });

  it('reads BOM, CRLF, quoted newlines/commas/quotes, extra and reordered columns', async () => {
    const columns = ['EXTRA', ...[...HEADER].reverse(), 'MORE'];
    const body = 'line1\r\nline2, "quoted"';
    const row = fullRow(1, { BODY: body });
    const cell = (column: string): string => {
      const value = column === 'EXTRA' || column === 'MORE' ? 'ignored, "x"' : (row[column as keyof typeof row] ?? '');
      return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
    };
    const csv = `\ufeff${columns.join(',')}\r\n${columns.map(cell).join(',')}\r\n`;
    const { summary, all } = await importCsv(csv, { tmpDir });
    expect(summary.rows).toBe(1);
    expect(all.comments[0]!.html_body).toBe(body);
    expect(all.users[0]).toEqual({ id: '2001', name: 'User 1', email: 'user1@example.com' });
  });

  it('fails a missing column naming it, writes nothing and leaves the output open', async () => {
    const header = HEADER.filter((column) => column !== 'COMMENT_PUBLIC' && column !== 'NAME');
    const output = new PassThrough();
    let written = 0;
    output.on('data', (chunk: Buffer) => {
      written += chunk.length;
    });
    const run = runPlannedPipeline({ input: Readable.from([`${header.join(',')}\n1,2,3\n`]), output, tmpDir });
    await expect(run).rejects.toThrowError(new ImportInputError('CSV header is missing required column(s): COMMENT_PUBLIC, NAME'));
    expect(written).toBe(0);
    expect(output.writableEnded).toBe(false);
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it('fails an empty file as having no header', async () => {
    await expect(importCsv('', { tmpDir })).rejects.toBeInstanceOf(ImportInputError);
  });

  it('writes an empty but valid tar for a header-only file', async () => {
    const { summary, archive, entries, ended } = await importCsv(`${HEADER.join(',')}\n`, { tmpDir });
    expect(entries).toEqual([]);
    expect(archive.length).toBe(1024);
    expect(archive.every((byte) => byte === 0)).toBe(true);
    expect(ended).toBe(true);
    expect(summary).toMatchObject({ rows: 0, tickets: 0, comments: 0, users: 0, batches: 0 });
  });

  it('writes no entry when rows exist but no asset takes any', async () => {
    const { summary, entries } = await importCsv(chatCsv([{ BODY: 'only a body' }]), { tmpDir });
    expect(entries).toEqual([]);
    expect(summary.rows).toBe(1);
    expectEveryRowAccounted(summary);
  });

  it.each([
    [100, ['backup_tickets_100.json']],
    [101, ['backup_tickets_100.json', 'backup_tickets_200.json']],
    [200, ['backup_tickets_100.json', 'backup_tickets_200.json']],
  ])('cuts %i objects into entries %j', async (count, names) => {
    const rows = Array.from({ length: count }, (_, index) => fullRow(index + 1));
    const { summary, entries, all } = await importCsv(chatCsv(rows), { tmpDir });
    expect(entries.map((entry) => entry.name)).toEqual(names);
    expect(entries.every((entry) => entry.type === 'file')).toBe(true);
    expect(summary.batches).toBe(names.length);
    expect(all.comments.map((comment) => comment.id)).toEqual(rows.map((row) => row.COMMENT_PART_ID));
    const last = parseLossless(entries.at(-1)!.text) as { data: { tickets: { data: unknown[] } } };
    expect(last.data.tickets.data).toHaveLength(count - (names.length - 1) * 100);
  });

  it('fills an entry with empty arrays where an asset has no slice', async () => {
    // 150 comments, 120 tickets, only 3 users.
    const rows = Array.from({ length: 150 }, (_, index) =>
      fullRow(index + 1, {
        CONVERSATION_ID: String(Math.min(index, 119)),
        EMAIL: `u${index % 3}@x.io`,
      }),
    );
    const { entries } = await importCsv(chatCsv(rows), { tmpDir });
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json', 'backup_tickets_200.json']);
    const second = parseLossless(entries[1]!.text) as {
      data: { tickets: { data: unknown[]; comments: unknown[]; users: unknown[]; organizations: unknown[] } };
    };
    expect(second.data.tickets.data).toHaveLength(20);
    expect(second.data.tickets.comments).toHaveLength(50);
    expect(second.data.tickets.users).toEqual([]);
    expect(second.data.tickets.organizations).toEqual([]);
  });

  it('accounts for every row in dropped, for every asset', async () => {
    const csv = chatCsv([
      fullRow(1),
      fullRow(1),
      fullRow(2, { EMAIL: 'bad' }),
      fullRow(3, { AUTHOR_ID: 'x' }),
      fullRow(4, { COMMENT_PUBLIC: 'maybe', TICKET_CREATED_AT: '' }),
      {},
      { NAME: 'only' },
    ]);
    const { summary } = await importCsv(csv, { tmpDir });
    expect(summary.rows).toBe(7);
    expectEveryRowAccounted(summary);
    expect(summary.dropped.users).toEqual({ missing_field: 2, bad_email: 1, invalid_field: 1, duplicate: 1 });
  });

  it('reports progress with rows and bytes read', async () => {
    const csv = chatCsv(Array.from({ length: 30 }, (_, index) => fullRow(index + 1)));
    const progress: ImportProgress[] = [];
    await importCsv(csv, { tmpDir, onProgress: (update) => progress.push(update) });
    expect(progress.at(-1)).toEqual({ rows: 30, bytesRead: Buffer.byteLength(csv) });
  });

  it('removes its temp files after success and after failure', async () => {
    await importCsv(chatCsv([fullRow(1)]), { tmpDir });
    expect(await readdir(tmpDir)).toEqual([]);
    const failing = new Readable({
      read() {
        this.push(`${HEADER.join(',')}\n`);
        this.destroy(new Error('source broke'));
      },
    });
    await expect(runPlannedPipeline({ input: failing, output: new PassThrough(), tmpDir })).rejects.toThrowError('source broke');
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it('rejects without ending the output when the output fails mid-archive, and cleans up', async () => {
    const rows = Array.from({ length: 450 }, (_, index) => fullRow(index + 1, { BODY: 'x'.repeat(2000) }));
    let chunks = 0;
    const output = new Writable({
      highWaterMark: 1024,
      write(_chunk, _encoding, callback) {
        chunks += 1;
        callback(chunks > 3 ? new Error('disk full') : null);
      },
    });
    output.on('error', () => {});
    await expect(runPlannedPipeline({ input: Readable.from([chatCsv(rows)]), output, tmpDir })).rejects.toThrowError('disk full');
    expect(output.writableEnded).toBe(false);
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it.each([false, true])(
    'stops early, ending no output and leaving no temp files, once the spill outgrows its room (worker %s)',
    async (worker) => {
      // Short all-new rows spill about three times their size.
      const csv = Buffer.from(
        chatCsv(Array.from({ length: 40_000 }, (_unused, n) => fullRow(n + 1, { BODY: 'x', NAME: 'A', EMAIL: `${n}@x` }))),
      );
      const output = new PassThrough();
      const progress: ImportProgress[] = [];
      const freeBytes = 600_000;
      const error = await runPlannedPipeline({
        input: Readable.from([csv]),
        output,
        tmpDir,
        worker,
        spillWatch: makeSpillWatch({ tmpDir, freeBytes, sourceBytes: csv.length }),
        onProgress: (seen) => void progress.push(seen),
      }).then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
      expect(error).toBeInstanceOf(JobError);
      expect(error?.message).toMatch(new RegExp(`^The spill files filled the 1 MB free in ${tmpDir} after \\d+ MB of the source`));
      expect(csv.length).toBeGreaterThan(5 * freeBytes);
      expect(output.writableEnded).toBe(false);
      expect(output.read()).toBeNull();
      expect(await readdir(tmpDir)).toEqual([]);
      expect(progress.every((seen) => seen.bytesRead < csv.length)).toBe(true);
    },
  );

  it('does not destroy the input it was given when it fails', async () => {
    const input = Readable.from([`${HEADER.slice(1).join(',')}\n`, 'more,data\n']);
    await expect(runPlannedPipeline({ input, output: new PassThrough(), tmpDir })).rejects.toBeInstanceOf(ImportInputError);
    expect(input.destroyed).toBe(false);
    input.destroy();
  });

  it('respects a slow output: holds back instead of buffering the archive, and writes everything in order', async () => {
    // ≈ 2.4 MB of archive, ≈ 300 KB per entry.
    const rows = Array.from({ length: 800 }, (_, index) => fullRow(index + 1, { BODY: 'x'.repeat(3000) }));
    const received: Buffer[] = [];
    let maxBuffered = 0;
    const output = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk);
        maxBuffered = Math.max(maxBuffered, output.writableLength);
        setImmediate(callback);
      },
    });
    const summary = await runPlannedPipeline({ input: Readable.from([chatCsv(rows)]), output, tmpDir });
    expect(summary.batches).toBe(8);
    expect(output.writableFinished).toBe(true);
    const entries = await readArchive(Buffer.concat(received));
    expect(entries.map((entry) => entry.name)).toEqual(Array.from({ length: 8 }, (_, index) => `backup_tickets_${(index + 1) * 100}.json`));
    expect(Buffer.concat(received).length).toBeGreaterThan(2_000_000);
    // At most about one entry waits in the output's buffer, never the whole archive.
    expect(maxBuffered).toBeLessThan(700_000);
  });
});
