import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { removeAtExit } from '../runtime/remove-at-exit.ts';
import { gzipInto, type ArchiveCompression } from './archive-compression.ts';
import { AssetDeduper, type Asset } from './asset-rules.ts';
import { BATCH_SIZE, entryCount, entryName } from './batches.ts';
import { entryBytes, recordIdText } from './json-writer.ts';
import { readSide, type OnBatch, type ReadSideOptions } from './read-side.ts';
import { readSideInWorkers } from './read-side-workers.ts';
import { RejectsWriter, type RejectedAsset } from './rejects-file.ts';
import { UserResolver, type DestinationUsers } from './resolve-users.ts';
import type { VerdictVisitor } from './row-verdicts.ts';
import { visitVerdicts } from './row-verdicts.ts';
import { DEFAULT_ENCODING } from './source-encoding.ts';
import { SpillReader, SpillWriter } from './spill-files.ts';
import type { SpillWatch } from './spill-space.ts';
import { makeTarWriter } from './tar-writer.ts';
import type { TarWriter } from './tar-writer.ts';

export interface ImportProgress {
  rows: number;
  bytesRead: number;
  /** The source's size where it is known (a file, an S3 object; not a pipe). */
  sourceBytes?: number | undefined;
}

export interface ImportPipelineOptions {
  input: Readable; // the CSV bytes (UTF-8 unless `encoding` says otherwise, BOM tolerated)
  /** The TAR goes here; the pipeline ends it on success. Absent: a dry run, no spill and no archive. */
  output?: Writable | undefined;
  /** `gzip`: the TAR is gzip-compressed on its way to `output` (archive-compression.ts). Also what the summary says in a dry run. */
  compression?: ArchiveCompression | undefined;
  /** The rejects CSV goes here (rejects-file.ts); the pipeline ends it on success. */
  rejects?: Writable | undefined;
  /** email key (email-key.ts) → destination user id as exact decimal text; undefined = resolution disabled */
  destinationUsers?: DestinationUsers | undefined;
  tmpDir?: string | undefined; // for spill files (default os.tmpdir()); always cleaned up
  onProgress?: ((progress: ImportProgress) => void) | undefined;
  /** The source's WHATWG encoding name (see source-encoding.ts); UTF-8 by default. */
  encoding?: string | undefined;
  /** Parse and judge rows in worker threads while this one takes them (read-side-workers.ts). */
  worker?: boolean | undefined;
  /** With `worker`: how many threads (by default one per core beside this one's, one to three). */
  readThreads?: number | undefined;
  /** With more than one reading thread: the source is cut between rows about this often (2 MiB by default). */
  segmentBytes?: number | undefined;
  /** Told the spill's size after each batch (spill-space.ts makeSpillWatch); throws to stop the run. */
  spillWatch?: SpillWatch | undefined;
  /** The entries' mtime (default: when the archive is written). */
  mtime?: Date | undefined;
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
  /** `gzip` for a `.tar.gz` or `.tgz` destination, else `none`. */
  compression: ArchiveCompression;
  dropped: { tickets: Record<string, number>; comments: Record<string, number>; users: Record<string, number> };
}

/** Progress is reported every this many rows, and once when the CSV has been read. */
const PROGRESS_EVERY_ROWS = 10_000;

interface Spills<T> {
  tickets: T;
  comments: T;
  users: T;
}

const REJECTED: Record<Asset, RejectedAsset> = { tickets: 'ticket', comments: 'comment', users: 'user' };

/**
 * The import pipeline: CSV → TAR of JSON batches, in two passes so memory does not grow with the input:
 * 1. stream the CSV once: the read side (read-side.ts) parses and judges every row on its own, in a
 *    worker thread or in this one; the take side here decides in file order which complete records
 *    win (keeping only the dedupe keys and the AUTHOR_ID → destination id decisions), spills each
 *    asset's winners to its own temp file and writes the rejects;
 * 2. read the three spill files in step, 100 records at a time, remap references, and write entry n.
 * Nothing reaches `output` before pass 2, so a bad header or bad bytes fail with `output` untouched.
 * On failure neither `output` nor `rejects` is ended and `input` is not destroyed (all belong to the
 * caller); temp files are always removed.
 */
export const runImportPipeline = async (options: ImportPipelineOptions): Promise<ImportSummary> => {
  const workDir = await mkdtemp(join(options.tmpDir ?? tmpdir(), 'ticket-import-'));
  const forget = removeAtExit(workDir);
  const resolver = new UserResolver(options.destinationUsers !== undefined);
  const deduper = new AssetDeduper();
  const counts = { rows: 0, tickets: 0, comments: 0, users: 0 };
  const dryRun = options.output === undefined;
  const rejects = options.rejects === undefined ? undefined : new RejectsWriter(options.rejects);
  let writers: Spills<SpillWriter> | undefined;
  const readers: SpillReader[] = [];
  let tar: TarWriter | undefined;
  let compressed: Writable | undefined;
  const paths: Spills<string> = {
    tickets: join(workDir, 'tickets.spill'),
    comments: join(workDir, 'comments.spill'),
    users: join(workDir, 'users.spill'),
  };
  try {
    const spill: Spills<SpillWriter> | undefined = dryRun
      ? undefined
      : { tickets: new SpillWriter(paths.tickets), comments: new SpillWriter(paths.comments), users: new SpillWriter(paths.users) };
    writers = spill;
    let row = 0;
    let line = 0;
    const taker: VerdictVisitor = {
      row: (number, startLine) => {
        row = number;
        line = startLine;
      },
      idCandidate: (asset, high, low, records, start, end) => {
        if (asset === 'tickets' ? deduper.takeTicket(high, low) : deduper.takeComment(high, low)) {
          spill?.[asset].append(records, start, end);
          counts[asset] += 1;
        } else if (rejects !== undefined) {
          const key = Buffer.from(recordIdText(records, start), 'latin1');
          rejects.add(row, line, REJECTED[asset], 'duplicate', '', key, 0, key.length);
        }
      },
      userCandidate: (emailKey, authorId, destinationId, records, start, end) => {
        if (deduper.takeUser(emailKey)) {
          resolver.take(authorId, destinationId);
          spill?.users.append(records, start, end);
          counts.users += 1;
        } else if (rejects !== undefined) {
          const key = Buffer.from(emailKey);
          rejects.add(row, line, 'user', 'duplicate', '', key, 0, key.length);
        }
      },
      repeat: (asset, key, start, end) => {
        deduper.repeat(asset);
        rejects?.add(row, line, REJECTED[asset], 'duplicate', '', key, start, end);
      },
      fault: (asset, reason, column, verdicts, start, end) => {
        deduper.refuse(asset, reason);
        rejects?.add(row, line, REJECTED[asset], reason, column, verdicts, start, end);
      },
    };
    let bytesRead = 0;
    let reportedRows = 0;
    const onBatch: OnBatch = async (batch) => {
      visitVerdicts(batch, taker);
      counts.rows += batch.rows;
      bytesRead = batch.bytesRead;
      if (spill !== undefined) options.spillWatch?.(bytesRead, spill.tickets.bytes + spill.comments.bytes + spill.users.bytes);
      if (counts.rows - reportedRows >= PROGRESS_EVERY_ROWS) {
        reportedRows = counts.rows;
        options.onProgress?.({ rows: counts.rows, bytesRead });
      }
      await Promise.all([spill?.tickets.flush(), spill?.comments.flush(), spill?.users.flush(), rejects?.flush()]);
    };
    const readOptions: ReadSideOptions = {
      encoding: options.encoding,
      lineNumbers: rejects !== undefined,
      destinationUsers: options.destinationUsers,
      threads: options.readThreads,
      segmentBytes: options.segmentBytes,
    };
    const read = options.worker ? readSideInWorkers : readSide;
    await read(options.input.iterator({ destroyOnReturn: false }), readOptions, onBatch);
    if (spill !== undefined) await Promise.all([spill.tickets.close(), spill.comments.close(), spill.users.close()]);
    writers = undefined;
    options.onProgress?.({ rows: counts.rows, bytesRead });

    const batches = entryCount([counts.tickets, counts.comments, counts.users]);
    if (options.output !== undefined) {
      const opened = (path: string): SpillReader => {
        const reader = new SpillReader(path);
        readers.push(reader);
        return reader;
      };
      const read: Spills<SpillReader> = { tickets: opened(paths.tickets), comments: opened(paths.comments), users: opened(paths.users) };
      if (options.compression === 'gzip') compressed = gzipInto(options.output);
      const archive = makeTarWriter(compressed ?? options.output, options.mtime);
      tar = archive;
      // Without a remapped author (always so without a destination) records are copied unread.
      const remap = resolver.remapsAny ? (reference: string): string => resolver.remap(reference) : undefined;
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
      compressed = undefined;
    }
    await rejects?.finish();

    return {
      ...counts,
      batches,
      users_matched: resolver.matched,
      user_resolution: resolver.enabled ? 'destination' : 'disabled',
      encoding: options.encoding ?? DEFAULT_ENCODING,
      compression: options.compression ?? 'none',
      dropped: deduper.dropped,
    };
  } catch (error) {
    tar?.abort();
    // Frees the compressor; `output` itself is the caller's to abort.
    compressed?.destroy();
    throw error;
  } finally {
    if (writers !== undefined) for (const writer of Object.values(writers)) writer.destroy();
    for (const reader of readers) reader.close();
    await rm(workDir, { recursive: true, force: true });
    forget();
  }
};
