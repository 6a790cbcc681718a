import { PassThrough, Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { runImport } from '../../../lib/import/run-import.ts';
import type { ImportSummary, RunImportOptions } from '../../../lib/import/run-import.ts';

export const HEADER = [
  'TICKET_CREATED_AT',
  'TICKET_REQUESTER_ID',
  'COMMENT_PART_ID',
  'CONVERSATION_ID',
  'COMMENT_PUBLIC',
  'BODY',
  'COMMENT_CREATED_AT',
  'AUTHOR_ID',
  'NAME',
  'EMAIL',
] as const;

export type ChatRow = Partial<Record<(typeof HEADER)[number], string>>;

const quote = (cell: string): string => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/** A CSV in the standard column order; cells missing from a row are empty. */
export const chatCsv = (rows: readonly ChatRow[], newline = '\n'): string =>
  [HEADER.join(','), ...rows.map((row) => HEADER.map((column) => quote(row[column] ?? '')).join(','))].join(newline) +
  newline;

/** A row complete for all three assets; `overrides` change single cells. */
export const fullRow = (n: number, overrides: ChatRow = {}): ChatRow => ({
  TICKET_CREATED_AT: '2024-05-01T10:00:00Z',
  TICKET_REQUESTER_ID: String(1000 + n),
  COMMENT_PART_ID: String(n),
  CONVERSATION_ID: String(500 + n),
  COMMENT_PUBLIC: 'true',
  BODY: `<p>comment ${n}</p>`,
  COMMENT_CREATED_AT: '2024-05-01T10:05:00Z',
  AUTHOR_ID: String(2000 + n),
  NAME: `User ${n}`,
  EMAIL: `user${n}@example.com`,
  ...overrides,
});

/** JSON.parse keeping every number as its exact source text (ids may exceed 2^53). */
export const parseLossless = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' ? context!.source : value,
  );

export interface ArchiveEntry {
  name: string;
  type: string;
  text: string;
}

/** Reads a tar back with tar-stream's extract. */
export const readTar = async (archive: Buffer): Promise<ArchiveEntry[]> => {
  const entries: ArchiveEntry[] = [];
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (part: unknown) => parts.push(part as Buffer));
      stream.on('end', () => {
        entries.push({ name: header.name, type: header.type ?? 'file', text: Buffer.concat(parts).toString('utf8') });
        next();
      });
    });
    reader.on('finish', () => resolve());
    reader.on('error', reject);
  });
  reader.end(archive);
  await done;
  return entries;
};

export interface EntryAssets {
  tickets: Record<string, unknown>[];
  comments: Record<string, unknown>[];
  users: Record<string, unknown>[];
  organizations: unknown[];
}

/** The assets of one entry, checking the envelope `{"data":{"tickets":{"data":…}}}` on the way. */
export const entryAssets = (text: string): EntryAssets => {
  const parsed = parseLossless(text) as { data: { tickets: { data: []; comments: []; users: []; organizations: [] } } };
  const inner = parsed.data.tickets;
  return { tickets: inner.data, comments: inner.comments, users: inner.users, organizations: inner.organizations };
};

export interface ImportResult {
  summary: ImportSummary;
  archive: Buffer;
  entries: ArchiveEntry[];
  /** Every entry's assets concatenated, in entry order. */
  all: EntryAssets;
  ended: boolean;
}

/** Runs the import over `csv` into memory and reads the archive back. */
export const importCsv = async (
  csv: string | Buffer | readonly (string | Buffer)[],
  options: Omit<RunImportOptions, 'input' | 'output'> = {},
): Promise<ImportResult> => {
  const output = new PassThrough();
  const parts: Buffer[] = [];
  output.on('data', (part: Buffer) => parts.push(part));
  let ended = false;
  output.on('finish', () => {
    ended = true;
  });
  const chunks = Array.isArray(csv) ? csv : [csv];
  const input = Readable.from(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
  const summary = await runImport({ ...options, input, output });
  const archive = Buffer.concat(parts);
  const entries = await readTar(archive);
  const all: EntryAssets = { tickets: [], comments: [], users: [], organizations: [] };
  for (const entry of entries) {
    const assets = entryAssets(entry.text);
    all.tickets.push(...assets.tickets);
    all.comments.push(...assets.comments);
    all.users.push(...assets.users);
    all.organizations.push(...assets.organizations);
  }
  return { summary, archive, entries, all, ended };
};
