import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { removeAtExit } from '../../runtime/remove-at-exit.ts';
import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import type { OnBatch, ReadSideOptions } from '../read/read-side.ts';
import { readSide } from '../read/read-side.ts';
import { readSideInWorkers } from '../read/read-dispatcher.ts';
import { RejectsWriter } from '../take/rejects-file.ts';
import { SpillWriter } from '../take/spill-writer.ts';
import { TakeSide, type PerAsset } from '../take/take-side.ts';
import { gzipInto, type ArchiveCompression } from '../write/archive-compression.ts';
import { BATCH_SIZE, entryBytes, entryCount, entryName } from '../write/archive-entry.ts';
import { SpillReader } from '../write/spill-reader.ts';
import { makeTarWriter, type TarWriter } from '../write/tar-writer.ts';
import type { RunPlan } from './run-plan.ts';
import type { SpillWatch } from './spill-space.ts';

export interface ImportProgress {
  rows: number;
  bytesRead: number;
  /** The source's size where it is known (a file, an S3 object; not a pipe). */
  sourceBytes?: number | undefined;
}

/** What the pipeline reads and writes; how it runs is the plan's (run-plan.ts). */
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
  onProgress?: ((progress: ImportProgress) => void) | undefined;
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

/**
 * The import pipeline: CSV → TAR of JSON batches, in two passes so memory does not grow with the input
 * (docs/architecture.md, "The import"), as the job's `plan` says.
 * On failure neither `output` nor `rejects` is ended and `input` is not destroyed (all belong to the
 * caller); temp files are always removed.
 */
export const runImportPipeline = async (options: ImportPipelineOptions, plan: RunPlan): Promise<ImportSummary> => {
  const workDir = await mkdtemp(join(plan.tmpDir, 'ticket-import-'));
  const forget = removeAtExit(workDir);
  const output = plan.dryRun ? undefined : options.output;
  const rejects = options.rejects === undefined ? undefined : new RejectsWriter(options.rejects);
  let writers: PerAsset<SpillWriter> | undefined;
  const readers: SpillReader[] = [];
  let tar: TarWriter | undefined;
  let compressed: Writable | undefined;
  const paths: PerAsset<string> = {
    tickets: join(workDir, 'tickets.spill'),
    comments: join(workDir, 'comments.spill'),
    users: join(workDir, 'users.spill'),
  };
  try {
    const spill: PerAsset<SpillWriter> | undefined = plan.dryRun
      ? undefined
      : { tickets: new SpillWriter(paths.tickets), comments: new SpillWriter(paths.comments), users: new SpillWriter(paths.users) };
    writers = spill;
    const taken = new TakeSide(spill, rejects, options.destinationUsers !== undefined);
    const { counts, resolver } = taken;
    let bytesRead = 0;
    let reportedRows = 0;
    const onBatch: OnBatch = async (batch) => {
      taken.take(batch);
      bytesRead = batch.bytesRead;
      if (spill !== undefined) options.spillWatch?.(bytesRead, taken.spilledBytes);
      if (counts.rows - reportedRows >= PROGRESS_EVERY_ROWS) {
        reportedRows = counts.rows;
        options.onProgress?.({ rows: counts.rows, bytesRead });
      }
      await taken.flush();
    };
    const readOptions: ReadSideOptions = {
      encoding: plan.encoding,
      lineNumbers: rejects !== undefined,
      destinationUsers: options.destinationUsers,
    };
    const input = options.input.iterator({ destroyOnReturn: false });
    if (plan.readThreads === 0) await readSide(input, readOptions, onBatch);
    else await readSideInWorkers(input, { options: readOptions, threads: plan.readThreads, segmentBytes: options.segmentBytes }, onBatch);
    if (spill !== undefined) await Promise.all([spill.tickets.close(), spill.comments.close(), spill.users.close()]);
    writers = undefined;
    options.onProgress?.({ rows: counts.rows, bytesRead });

    const batches = entryCount([counts.tickets, counts.comments, counts.users]);
    if (output !== undefined) {
      const opened = (path: string): SpillReader => {
        const reader = new SpillReader(path);
        readers.push(reader);
        return reader;
      };
      const read: PerAsset<SpillReader> = { tickets: opened(paths.tickets), comments: opened(paths.comments), users: opened(paths.users) };
      if (options.compression === 'gzip') compressed = gzipInto(output);
      const archive = makeTarWriter(compressed ?? output, options.mtime);
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
      encoding: plan.encoding,
      compression: options.compression ?? 'none',
      dropped: taken.deduper.dropped,
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
