import { Readable } from 'node:stream';
import { extract } from 'tar-stream';

/** Chat-export CSV fixtures and a TAR reader for the import integration tests. */
export const COLUMNS = [
  'CONVERSATION_ID',
  'TICKET_CREATED_AT',
  'TICKET_REQUESTER_ID',
  'COMMENT_PART_ID',
  'COMMENT_PUBLIC',
  'BODY',
  'COMMENT_CREATED_AT',
  'AUTHOR_ID',
  'NAME',
  'EMAIL',
] as const;

export type Column = (typeof COLUMNS)[number];
export type ChatRow = Record<Column, string>;

const quote = (cell: string): string => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/** Row n: conversation n÷3 (three comments each), author n mod 7 (seven distinct people). */
export const chatRow = (n: number): ChatRow => ({
  CONVERSATION_ID: String(10_000 + Math.floor(n / 3)),
  TICKET_CREATED_AT: '2026-11-01 09:00:00',
  TICKET_REQUESTER_ID: String(900 + (n % 7)),
  COMMENT_PART_ID: String(50_000 + n),
  COMMENT_PUBLIC: n % 2 === 0 ? 'TRUE' : '0',
  BODY: `<p>Hello, "world" ${n}</p>\nsecond line`,
  COMMENT_CREATED_AT: '2026-11-01T09:05:00.250+01:00',
  AUTHOR_ID: String(900 + (n % 7)),
  NAME: ` Person ${n % 7} `,
  EMAIL: `Person.${n % 7}@Example.com`,
});

export const csvLine = (cells: readonly string[]): string => `${cells.map(quote).join(',')}\n`;

export const chatCsv = (rows: readonly ChatRow[], columns: readonly Column[] = COLUMNS): string =>
  csvLine(columns) + rows.map((row) => csvLine(columns.map((column) => row[column]))).join('');

/**
 * A CSV stream of `rows` rows; with `failAfterBytes` it errors once that much has been produced,
 * like a source connection dropping mid-transfer.
 */
export const chatCsvStream = (rows: number, failAfterBytes?: number): Readable =>
  Readable.from(
    (function* () {
      let produced = 0;
      yield csvLine(COLUMNS);
      for (let n = 0; n < rows; n += 1) {
        const line = csvLine(COLUMNS.map((column) => chatRow(n)[column]));
        produced += Buffer.byteLength(line);
        if (failAfterBytes !== undefined && produced > failAfterBytes) throw new Error('source connection reset');
        yield line;
      }
    })(),
  );

export interface ArchiveEntry {
  name: string;
  json: {
    /** `tickets.data` holds the tickets (CONTRACT §5's entry layout). */
    data: { tickets: { data: Record<string, unknown>[]; comments: Record<string, unknown>[]; users: Record<string, unknown>[]; organizations: unknown[] } };
  };
  /** The entry's raw text, for checks JSON.parse would blur (ids above 2^53). */
  text: string;
}

export const readArchive = async (tar: Uint8Array): Promise<ArchiveEntry[]> => {
  const entries: ArchiveEntry[] = [];
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      entries.push({ name: entry.header.name, json: JSON.parse(text) as ArchiveEntry['json'], text });
    }
  })();
  reader.end(Buffer.from(tar));
  await done;
  return entries;
};
