import Papa from 'papaparse';
import { PassThrough, Readable, type Writable } from 'node:stream';
import { extract } from 'tar-stream';
import { expect } from 'vitest';
import { runImportPipeline, type ImportPipelineOptions, type ImportSummary } from '../../lib/import/job/import-pipeline.ts';
import { planRun, type RunAsk } from '../../lib/import/job/run-plan.ts';
import { REQUIRED_COLUMNS, type RequiredColumn } from '../../lib/import/formats/assets.ts';

/**
 * The import tests' one harness: chat-export CSVs built from rows, the archive read back, and the
 * pipeline run into memory. The columns are the pipeline's own REQUIRED_COLUMNS.
 */
export const HEADER = REQUIRED_COLUMNS;

/** Cells by column; a column missing from a row is an empty cell. */
export type ChatRow = Partial<Record<RequiredColumn, string>>;

const quote = (cell: string): string => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

export const csvLine = (cells: readonly string[], newline = '\n'): string => `${cells.map(quote).join(',')}${newline}`;

/** A CSV of `rows` under a header of `columns` (default: every required column). */
export const chatCsv = (rows: readonly ChatRow[], options: { columns?: readonly string[]; newline?: string } = {}): string => {
  const { columns = HEADER, newline = '\n' } = options;
  return (
    csvLine(columns, newline) +
    rows
      .map((row) =>
        csvLine(
          columns.map((column) => row[column as RequiredColumn] ?? ''),
          newline,
        ),
      )
      .join('')
  );
};

/** A row complete for all three assets, each asset keyed apart by `n`; `overrides` change single cells. */
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

/** Row n of a conversation-shaped export: conversation n÷3 (three comments each), author n mod 7. */
export const chatRow = (n: number): Required<ChatRow> => ({
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

/**
 * A CSV stream of `rows` chatRow rows; with `failAfterBytes` it errors once that much has been
 * produced, like a source connection dropping mid-transfer.
 */
export const chatCsvStream = (rows: number, failAfterBytes?: number): Readable =>
  Readable.from(
    (function* () {
      let produced = 0;
      yield csvLine(HEADER);
      for (let n = 0; n < rows; n += 1) {
        const line = csvLine(HEADER.map((column) => chatRow(n)[column]));
        produced += Buffer.byteLength(line);
        if (failAfterBytes !== undefined && produced > failAfterBytes) throw new Error('source connection reset');
        yield line;
      }
    })(),
  );

/** JSON.parse keeping every number as its exact source text (ids may exceed 2^53). */
export const parseLossless = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? context!.source : value));

export interface EntryAssets {
  tickets: Record<string, unknown>[];
  comments: Record<string, unknown>[];
  users: Record<string, unknown>[];
  organizations: unknown[];
}

export interface ArchiveEntry {
  name: string;
  type: string;
  /** The entry's raw text, for checks JSON.parse would blur (ids above 2^53). */
  text: string;
  /** The entry parsed when read (numbers as doubles); `json.data.tickets.data` holds the tickets. */
  json: {
    data: {
      tickets: {
        data: Record<string, unknown>[];
        comments: Record<string, unknown>[];
        users: Record<string, unknown>[];
        organizations: unknown[];
      };
    };
  };
}

/** Reads a tar back with tar-stream's extract. */
export const readArchive = async (tar: Uint8Array): Promise<ArchiveEntry[]> => {
  const entries: ArchiveEntry[] = [];
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      entries.push({
        name: entry.header.name,
        type: entry.header.type ?? 'file',
        text,
        get json() {
          return JSON.parse(text) as ArchiveEntry['json'];
        },
      });
    }
  })();
  reader.end(Buffer.from(tar));
  await done;
  return entries;
};

/** The assets of one entry, numbers kept exact, checking the envelope `{"data":{"tickets":{"data":…}}}` on the way. */
export const entryAssets = (text: string): EntryAssets => {
  const parsed = parseLossless(text) as { data: { tickets: { data: []; comments: []; users: []; organizations: [] } } };
  const inner = parsed.data.tickets;
  return { tickets: inner.data, comments: inner.comments, users: inner.users, organizations: inner.organizations };
};

export interface PipelineResult {
  summary: ImportSummary;
  archive: Buffer;
  entries: ArchiveEntry[];
  /** Every entry's assets concatenated, in entry order. */
  all: EntryAssets;
  ended: boolean;
  /** The rejects file as written (empty unless asked for with `rejects: true`). */
  rejectsCsv: string;
}

/** A writable that keeps what it is given. */
export const collector = (): { stream: Writable; bytes: () => Buffer; ended: () => boolean } => {
  const stream = new PassThrough();
  const parts: Buffer[] = [];
  let ended = false;
  stream.on('data', (part: Buffer) => parts.push(part));
  stream.on('finish', () => {
    ended = true;
  });
  return { stream, bytes: () => Buffer.concat(parts), ended: () => ended };
};

/** The pipeline as a test runs it on its own: planned from `options`' asks, as the job plans a run (a dry run without output). */
export const runPlannedPipeline = (options: ImportPipelineOptions & RunAsk): Promise<ImportSummary> =>
  runImportPipeline(options, planRun(options, options.output === undefined));

/** Runs the import pipeline over `csv` into memory (spilling to `tmpDir`) and reads the archive back. */
export const importCsv = async (
  csv: string | Buffer | readonly (string | Buffer)[],
  options: Omit<ImportPipelineOptions, 'input' | 'output' | 'rejects'> & RunAsk & { rejects?: boolean; dryRun?: boolean } = {},
): Promise<PipelineResult> => {
  const { rejects: withRejects = false, dryRun = false, ...rest } = options;
  const output = collector();
  const rejects = collector();
  const chunks = Array.isArray(csv) ? csv : [csv];
  const input = Readable.from(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
  const summary = await runPlannedPipeline({
    ...rest,
    input,
    output: dryRun ? undefined : output.stream,
    rejects: withRejects ? rejects.stream : undefined,
  });
  const archive = output.bytes();
  const entries = await readArchive(archive);
  const all: EntryAssets = { tickets: [], comments: [], users: [], organizations: [] };
  for (const entry of entries) {
    const assets = entryAssets(entry.text);
    all.tickets.push(...assets.tickets);
    all.comments.push(...assets.comments);
    all.users.push(...assets.users);
    all.organizations.push(...assets.organizations);
  }
  return { summary, archive, entries, all, ended: output.ended(), rejectsCsv: rejects.bytes().toString('utf8') };
};

/** One line of the rejects file, its fields as text. */
export interface RejectLine {
  row: string;
  line: string;
  asset: string;
  reason: string;
  column: string;
  value: string;
}

/** Parses a rejects file (checking its header) with papaparse, independently of the writer. */
export const parseRejects = (text: string): RejectLine[] => {
  const parsed = Papa.parse<RejectLine>(text, { header: true, skipEmptyLines: true, newline: '\n' });
  expect(parsed.meta.fields).toEqual(['row', 'line', 'asset', 'reason', 'column', 'value']);
  expect(parsed.errors).toEqual([]);
  return parsed.data;
};

/** Counts of rejects lines per asset and reason, in the shape of the summary's `dropped`. */
export const rejectCounts = (lines: readonly RejectLine[]): ImportSummary['dropped'] => {
  const counts: ImportSummary['dropped'] = { tickets: {}, comments: {}, users: {} };
  for (const line of lines) {
    const asset = `${line.asset}s` as keyof ImportSummary['dropped'];
    counts[asset][line.reason] = (counts[asset][line.reason] ?? 0) + 1;
  }
  return counts;
};

/** `dropped` without its zero counts, to compare with rejectCounts. */
export const nonZero = (dropped: ImportSummary['dropped']): ImportSummary['dropped'] => {
  const strip = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
  return { tickets: strip(dropped.tickets), comments: strip(dropped.comments), users: strip(dropped.users) };
};

/** A tar with every header's mtime (and so its checksum) blanked: two runs' archives compare byte for byte. */
export const withoutMtimes = (tar: Buffer): Buffer => {
  const copy = Buffer.from(tar);
  // Bounded by the archive's length: each step moves past one header and its padded content.
  for (let at = 0; at + 512 <= copy.length && copy[at] !== 0;) {
    const size = Number.parseInt(
      copy
        .toString('latin1', at + 124, at + 136)
        .replace(/\0.*$/, '')
        .trim(),
      8,
    );
    copy.fill(0x20, at + 136, at + 156); // mtime and checksum
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return copy;
};
