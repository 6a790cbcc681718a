import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryAssets, HEADER, importCsv } from '../../../support/chat-import.ts';
import type { ChatRow } from '../../../support/chat-import.ts';

// ---- A deliberately simple, independent reference of the import rules (docs/import.md) (BigInt for integers, Date for
// timestamps), kept apart from lib/ so a shared mistake cannot hide.

const refInt = (raw: string | undefined): string | null => {
  const text = (raw ?? '').trim();
  if (!/^[+-]?\d+$/.test(text)) return null;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value <= 2n ** 63n - 1n ? value.toString() : null;
};

const refBool = (raw: string | undefined): boolean | null =>
  ({ true: true, '1': true, false: false, '0': false })[(raw ?? '').trim().toLowerCase()] ?? null;

const refTimestamp = (raw: string | undefined): string | null => {
  const match = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|([+-])(\d\d):(\d\d))?$/.exec((raw ?? '').trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, s, fraction = '', , sign, oh, om] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  const roundTrips =
    date.getUTCFullYear() === Number(y) &&
    date.getUTCMonth() === Number(mo) - 1 &&
    date.getUTCDate() === Number(d) &&
    date.getUTCHours() === Number(h) &&
    date.getUTCMinutes() === Number(mi) &&
    date.getUTCSeconds() === Number(s);
  if (!roundTrips || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) return null;
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(oh ?? 0) * 60 + Number(om ?? 0)) * 60_000;
  const utc = new Date(date.getTime() - offsetMs);
  if (utc.getUTCFullYear() < 0 || utc.getUTCFullYear() > 9999) return null;
  return `${String(utc.getUTCFullYear()).padStart(4, '0')}${utc.toISOString().slice(-20, -5)}${fraction}Z`;
};

const refEmail = (raw: string | undefined): string | null => {
  const text = (raw ?? '').trim();
  const parts = text.split('@');
  return parts.length === 2 && parts[0] !== '' && parts[1] !== '' ? text : null;
};

interface Reference {
  tickets: Record<string, unknown>[];
  comments: Record<string, unknown>[];
  users: Record<string, unknown>[];
  matched: number;
}

const reference = (rows: readonly ChatRow[], destination: ReadonlyMap<string, string> | undefined): Reference => {
  const tickets = new Map<string, { id: string; requester: string; created_at: string }>();
  const comments = new Map<
    string,
    { id: string; ticket_id: string; author: string; public: boolean; html_body: string; created_at: string }
  >();
  const users = new Map<string, { author: string | null; name: string; email: string; id: string }>();
  for (const row of rows) {
    const t = {
      id: refInt(row.CONVERSATION_ID),
      requester: refInt(row.TICKET_REQUESTER_ID),
      created_at: refTimestamp(row.TICKET_CREATED_AT),
    };
    if (t.id !== null && t.requester !== null && t.created_at !== null && !tickets.has(t.id)) {
      tickets.set(t.id, t as { id: string; requester: string; created_at: string });
    }
    const c = {
      id: refInt(row.COMMENT_PART_ID),
      ticket_id: refInt(row.CONVERSATION_ID),
      author: refInt(row.AUTHOR_ID),
      public: refBool(row.COMMENT_PUBLIC),
      html_body: row.BODY === undefined || row.BODY === '' ? null : row.BODY,
      created_at: refTimestamp(row.COMMENT_CREATED_AT),
    };
    if (Object.values(c).every((value) => value !== null) && !comments.has(c.id!)) comments.set(c.id!, c as never);
    const author = refInt(row.AUTHOR_ID);
    const name = (row.NAME ?? '').trim();
    const email = refEmail(row.EMAIL);
    // A user's id is the destination's for its email, else AUTHOR_ID: either makes the row complete.
    const id = email === null ? undefined : (destination?.get(email.toLowerCase()) ?? author ?? undefined);
    if (id !== undefined && name !== '' && email !== null && !users.has(email.toLowerCase())) {
      users.set(email.toLowerCase(), { author, name, email, id });
    }
  }
  const firstUserOfAuthor = new Map<string, { author: string; id: string }>();
  for (const user of users.values()) {
    if (user.author !== null && !firstUserOfAuthor.has(user.author))
      firstUserOfAuthor.set(user.author, { author: user.author, id: user.id });
  }
  const remap = (id: string): string => firstUserOfAuthor.get(id)?.id ?? id;
  return {
    tickets: [...tickets.values()].map((t) => ({ id: t.id, requester_id: remap(t.requester), created_at: t.created_at })),
    comments: [...comments.values()].map((c) => ({
      id: c.id,
      ticket_id: c.ticket_id,
      author_id: remap(c.author),
      public: c.public,
      html_body: c.html_body,
      created_at: c.created_at,
    })),
    users: [...users.values()].map((u) => ({ id: u.id, name: u.name, email: u.email })),
    matched: [...users.values()].filter((u) => destination?.has(u.email.toLowerCase())).length,
  };
};

// ---- Generators: small key pools (duplicates), edge values and faults in every column.

const intCell = (pool: readonly string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...pool) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'x1', '1.5', '9223372036854775808', '-9223372036854775809', ' 0042 ', '+7', '-0') },
    { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String) },
  );
const ids = ['1', '2', '3', '9223372036854775807', '-9223372036854775808', '9007199254740993', '17', '18'];
const authors = ['100', '101', '102', '9223372036854775806', '103'];
const emails = ['ann@x.io', 'ANN@X.IO', 'bob@y.org', 'Bob@Y.org', 'carol@z.net', 'dan@intranet', 'eve@x.io'];
const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
const timestampCell = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom('1999', '2000', '2023', '2024', '0000', '9999'),
        two(13),
        two(31),
        fc.constantFrom('T', ' '),
        two(24),
        two(60),
        two(60),
        fc.constantFrom('', '.5', '.000123', '.1234567890'),
        fc.constantFrom('', 'Z', '+00:00', '+05:30', '-12:00', '+14:00', '-00:01', '+23:59'),
      )
      .map(
        (parts) =>
          parts
            .slice(0, 3)
            .join('-')
            .replace(/-(\d\d)-(\d\d)$/, '-$1-$2') +
          parts[3] +
          parts.slice(4, 7).join(':') +
          parts[7] +
          parts[8],
      ),
  },
  { weight: 1, arbitrary: fc.constantFrom('', 'never', '2024-02-30 10:00:00', '2024-05-01', ' 2024-05-01T10:00:00Z ') },
);
const bodyCell = fc.oneof(
  fc.constantFrom('', ' ', '<p>"hi", there</p>', 'line\r\nbreak', 'tab\there', 'ü✓🎉', '"', ',', '\n'),
  fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ', 'é', '<', '>', '\\', '\t'), maxLength: 30 }),
);
const rowArb: fc.Arbitrary<ChatRow> = fc.record({
  TICKET_CREATED_AT: timestampCell,
  TICKET_REQUESTER_ID: intCell(authors),
  COMMENT_PART_ID: intCell(ids),
  CONVERSATION_ID: intCell(ids),
  COMMENT_PUBLIC: fc.constantFrom('true', 'FALSE', '1', '0', ' True ', 'yes', '', '2'),
  BODY: bodyCell,
  COMMENT_CREATED_AT: timestampCell,
  AUTHOR_ID: intCell(authors),
  NAME: fc.constantFrom('Ann', ' Bob ', '', '  ', 'Zoë "Z" O\'Neil, Jr.'),
  EMAIL: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...emails) },
    { weight: 1, arbitrary: fc.constantFrom('', 'bad', '@x.io', 'a@', 'a@b@c', ' ann@x.io ') },
  ),
});

const quote = (cell: string): string => (/[",\r\n]/.test(cell) || cell !== cell.trim() ? `"${cell.replaceAll('"', '""')}"` : cell);

const csvArb = fc.record({
  rows: fc.array(rowArb, { maxLength: 260 }),
  order: fc.shuffledSubarray([...HEADER, 'EXTRA'], { minLength: HEADER.length + 1, maxLength: HEADER.length + 1 }),
  newline: fc.constantFrom('\n', '\r\n'),
  bom: fc.boolean(),
  chunkSize: fc.integer({ min: 1, max: 5000 }),
  destination: fc.option(
    fc.dictionary(fc.constantFrom(...emails.map((email) => email.toLowerCase())), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String)),
    { nil: undefined },
  ),
});

describe('runImportPipeline against a reference implementation', () => {
  let tmpDir: string;
  beforeAll(async () => {
    tmpDir = await mkdtemp(join(tmpdir(), 'run-import-property-'));
  });
  afterAll(async () => {
    await rm(tmpDir, { recursive: true, force: true });
  });

  it('writes the same assets as the reference, no array over 100, every row accounted for', async () => {
    await fc.assert(
      fc.asyncProperty(csvArb, async ({ rows, order, newline, bom, chunkSize, destination }) => {
        const text =
          (bom ? '\ufeff' : '') +
          [
            order.join(','),
            ...rows.map((row) =>
              order.map((column) => quote(column === 'EXTRA' ? 'x,"y"' : (row[column as keyof ChatRow] ?? ''))).join(','),
            ),
          ].join(newline) +
          newline;
        const bytes = Buffer.from(text);
        const chunks: Buffer[] = [];
        for (let start = 0; start < bytes.length; start += chunkSize) chunks.push(bytes.subarray(start, start + chunkSize));
        const destinationUsers = destination === undefined ? undefined : new Map(Object.entries(destination));
        const { summary, entries, all } = await importCsv(chunks, { tmpDir, ...(destinationUsers ? { destinationUsers } : {}) });
        const expected = reference(rows, destinationUsers);

        expect(all.tickets).toEqual(expected.tickets);
        expect(all.comments).toEqual(expected.comments);
        expect(all.users).toEqual(expected.users);
        expect(summary.users_matched).toBe(expected.matched);
        const longest = Math.max(expected.tickets.length, expected.comments.length, expected.users.length);
        expect(entries.map((entry) => entry.name)).toEqual(
          Array.from({ length: Math.ceil(longest / 100) }, (_, index) => `backup_tickets_${(index + 1) * 100}.json`),
        );
        for (const entry of entries) {
          const assets = entryAssets(entry.text);
          for (const list of [assets.tickets, assets.comments, assets.users]) expect(list.length).toBeLessThanOrEqual(100);
          expect(assets.organizations).toEqual([]);
        }
        expect(summary.rows).toBe(rows.length);
        for (const asset of ['tickets', 'comments', 'users'] as const) {
          const dropped = Object.values(summary.dropped[asset]).reduce((sum, count) => sum + count, 0);
          expect(summary[asset] + dropped).toBe(rows.length);
          expect(summary[asset]).toBe(expected[asset].length);
        }
      }),
      { numRuns: 60 },
    );
    expect(await readdir(tmpDir)).toEqual([]);
  });
});
