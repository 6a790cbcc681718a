import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { AssetDeduper } from './asset-rules.ts';
import { BATCH_SIZE, entryCount, entryName } from './batches.ts';
import { entryBytes, writeComment, writeTicket, writeUser } from './json-writer.ts';
import { readCsv } from './read-csv.ts';
import type { ColumnMap } from './chat-columns.ts';
import { UserResolver } from './resolve-users.ts';
import { DEFAULT_ENCODING } from './source-encoding.ts';
import { SpillReader, SpillWriter } from './spill-files.ts';
import { makeTarWriter } from './tar-writer.ts';
import type { TarWriter } from './tar-writer.ts';

export interface ImportProgress {
  rows: number;
  bytesRead: number;
}

export interface ImportPipelineOptions {
  input: Readable; // the CSV bytes (UTF-8 unless `encoding` says otherwise, BOM tolerated)
  output: Writable; // the TAR goes here; the pipeline ends it on success
  /** lower-cased email → destination user id as exact decimal text; undefined = resolution disabled */
  destinationUsers?: ReadonlyMap<string, string>;
  tmpDir?: string; // for spill files (default os.tmpdir()); always cleaned up
  /** The source's WHATWG encoding name (see source-encoding.ts); UTF-8 by default. */
  encoding?: string;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportSummary {
  rows: number;
  tickets: number;
  comments: number;
  users: number;
  batches: number;
  users_matched: number;
  user_resolution: 'destination' | 'disabled';
  /** The encoding the source was read in. */
  encoding: string;
  dropped: { tickets: Record<string, number>; comments: Record<string, number>; users: Record<string, number> };
}

/** Progress is reported every this many rows, and once when the CSV has been read. */
const PROGRESS_EVERY_ROWS = 10_000;

interface Spills<T> {
  tickets: T;
  comments: T;
  users: T;
}

/**
 * The import pipeline: CSV → TAR of JSON batches, in two passes so memory does not grow with the input:
 * 1. stream the CSV once, keep only the dedupe keys and the AUTHOR_ID → destination id decisions,
 *    and spill each asset's winning records to its own temp file;
 * 2. read the three spill files in step, 100 records at a time, remap references, and write entry n.
 * Nothing reaches `output` before pass 2, so a bad header fails with `output` untouched. On failure
 * `output` is not ended and `input` is not destroyed (both belong to the caller); temp files are
 * always removed.
 */
export const runImportPipeline = async (options: ImportPipelineOptions): Promise<ImportSummary> => {
  const workDir = await mkdtemp(join(options.tmpDir ?? tmpdir(), 'ticket-import-'));
  const resolver = new UserResolver(options.destinationUsers);
  const deduper = new AssetDeduper(resolver.enabled ? resolver.holds : undefined);
  const counts = { rows: 0, tickets: 0, comments: 0, users: 0 };
  let writers: Spills<SpillWriter> | undefined;
  const readers: SpillReader[] = [];
  let tar: TarWriter | undefined;
  const paths: Spills<string> = {
    tickets: join(workDir, 'tickets.spill'),
    comments: join(workDir, 'comments.spill'),
    users: join(workDir, 'users.spill'),
  };
  try {
    const spill: Spills<SpillWriter> = {
      tickets: new SpillWriter(paths.tickets),
      comments: new SpillWriter(paths.comments),
      users: new SpillWriter(paths.users),
    };
    writers = spill;
    let columns: ColumnMap | undefined;
    let bytesRead = 0;
    let reportedRows = 0;
    await readCsv(options.input.iterator({ destroyOnReturn: false }), {
      encoding: options.encoding,
      onHeader: (found) => {
        columns = found;
      },
      onBytes: (bytes) => {
        bytesRead = bytes;
      },
      onRows: async (rows) => {
        const map = columns!;
        for (const row of rows) {
          const { ticket, comment, user } = deduper.takeRow(row, map);
          if (ticket !== null) {
            writeTicket(spill.tickets, ticket);
            counts.tickets += 1;
          }
          if (comment !== null) {
            writeComment(spill.comments, comment);
            counts.comments += 1;
          }
          if (user !== null) {
            writeUser(spill.users, resolver.resolve(user));
            counts.users += 1;
          }
        }
        counts.rows += rows.length;
        if (counts.rows - reportedRows >= PROGRESS_EVERY_ROWS) {
          reportedRows = counts.rows;
          options.onProgress?.({ rows: counts.rows, bytesRead });
        }
        await Promise.all([spill.tickets.flush(), spill.comments.flush(), spill.users.flush()]);
      },
    });
    await Promise.all([spill.tickets.close(), spill.comments.close(), spill.users.close()]);
    writers = undefined;
    options.onProgress?.({ rows: counts.rows, bytesRead });

    const opened = (path: string): SpillReader => {
      const reader = new SpillReader(path);
      readers.push(reader);
      return reader;
    };
    const read: Spills<SpillReader> = { tickets: opened(paths.tickets), comments: opened(paths.comments), users: opened(paths.users) };
    const archive = makeTarWriter(options.output);
    tar = archive;
    // Without a remapped author (always so without a destination) records are copied unread.
    const remap = resolver.remapsAny ? (reference: string): string => resolver.remap(reference) : undefined;
    const batches = entryCount([counts.tickets, counts.comments, counts.users]);
    // Entry n+1 is read and built while entry n is still being written (one entry ahead at most).
    let writing: Promise<void> = Promise.resolve();
    for (let index = 0; index < batches; index += 1) {
      const entry = entryBytes(read.tickets.load(BATCH_SIZE), read.comments.load(BATCH_SIZE), read.users.load(BATCH_SIZE), remap);
      await writing;
      writing = archive.addFile(entryName(index), entry);
    }
    await writing;
    await archive.finish();
    tar = undefined;

    return {
      ...counts,
      batches,
      users_matched: resolver.matched,
      user_resolution: resolver.enabled ? 'destination' : 'disabled',
      encoding: options.encoding ?? DEFAULT_ENCODING,
      dropped: deduper.dropped,
    };
  } catch (error) {
    tar?.abort();
    throw error;
  } finally {
    if (writers !== undefined) for (const writer of Object.values(writers)) writer.destroy();
    for (const reader of readers) reader.close();
    await rm(workDir, { recursive: true, force: true });
  }
};
