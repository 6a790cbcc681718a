import { tmpdir } from 'node:os';
import { asError, JobError } from '../errors.ts';
import { formatLocation, LocationError, type Location } from '../storage/location.ts';
import type { OpenSink, OpenSource, PlaceOf, Sink } from '../storage/storage.ts';
import { ARCHIVE_CONTENT_TYPE, archiveCompression } from './archive-compression.ts';
import { runImportPipeline, type ImportPipelineOptions, type ImportSummary } from './import-pipeline.ts';
import type { DestinationUsers } from './resolve-users.ts';
import { checkSpillSpace, makeSpillWatch, type SpillWatch } from './spill-space.ts';

export type { DestinationUsers } from './resolve-users.ts';

export interface ImportJobDeps {
  openSource: OpenSource;
  openSink: OpenSink;
  /** Where a location really is (a file through its links); absent: as written. */
  placeOf?: PlaceOf | undefined;
  /** Absent: user resolution is disabled (no destination listing configured); the summary says so. */
  fetchDestinationUsers?: ((signal: AbortSignal | undefined) => Promise<DestinationUsers>) | undefined;
  /** Where the pipeline spills to disk (`/tmp` in Lambda). */
  tmpDir?: string | undefined;
  /** Parse rows in a worker thread (where the machine has a second core; see configured-import.ts). */
  worker?: boolean | undefined;
  /** The archive entries' mtime (default: when the archive is written); tests fix it to compare archives byte for byte. */
  mtime?: Date | undefined;
}

export interface ImportRequest {
  source: Location;
  /** Where the archive goes (gzip-compressed when it ends in `.tar.gz` or `.tgz`); may be left out of a dry run, which writes none. */
  destination?: Location | undefined;
  /** Where the rejects CSV goes (docs/import.md, "Rejects"); none when absent. */
  rejects?: Location | undefined;
  /** The whole run, summary and rejects included, without the archive. */
  dryRun?: boolean | undefined;
  /** Stay in one thread even where the job would use a worker. */
  singleThread?: boolean | undefined;
  /** Read in this many worker threads (by default: where the job uses workers, one per core beside the main thread's, at most three). */
  readThreads?: number | undefined;
  onProgress?: ImportPipelineOptions['onProgress'];
  /** The source's WHATWG encoding name (resolved from a label by source-encoding.ts); UTF-8 by default. */
  encoding?: string | undefined;
  /** Aborting stops the run wherever it is and leaves nothing at the destination (Ctrl-C, Lambda deadline). */
  signal?: AbortSignal | undefined;
}

/** One import, from a source location to a destination location. */
export type ImportJob = (request: ImportRequest) => Promise<ImportSummary>;

/** The run was stopped from outside (Ctrl-C, the Lambda deadline) and cleaned up. */
export class ImportCancelledError extends JobError {}

/**
 * Source, destination and rejects must be three different places, also in a dry run (which opens no
 * destination, but is the check of a real run). Compared where they really are (PlaceOf): a
 * destination that reaches the source's file under another name would replace it.
 */
const checkDistinct = async (locations: readonly (Location | undefined)[], placeOf: PlaceOf): Promise<void> => {
  const given = locations.filter((location): location is Location => location !== undefined);
  const places = await Promise.all(given.map((location) => placeOf(location)));
  for (const [index, location] of given.entries()) {
    const twin = given.findIndex((other, at) => at > index && places[at] === places[index]);
    if (twin === -1) continue;
    const [first, second] = [formatLocation(location), formatLocation(given[twin]!)];
    throw new LocationError(
      first === second
        ? `Source, destination and rejects must differ (${first} is given twice)`
        : `Source, destination and rejects must differ (${first} and ${second} are the same file)`,
    );
  }
};

/** Opens the sinks one after another; if one fails, those already open are aborted. */
const openSinks = async (
  openSink: OpenSink,
  locations: readonly { location: Location | undefined; contentType: string }[],
  signal: AbortSignal | undefined,
): Promise<(Sink | undefined)[]> => {
  const sinks: (Sink | undefined)[] = [];
  try {
    for (const { location, contentType } of locations)
      sinks.push(location === undefined ? undefined : await openSink(location, contentType, signal));
    return sinks;
  } catch (error) {
    await Promise.all(sinks.map((sink) => sink?.abort(error)));
    throw error;
  }
};

/**
 * The import job around the pipeline, all or nothing: the destination's user listing is read first
 * (a listing failure costs no I/O), then the source is opened and its size checked against the spill
 * space before any sink is opened (a missing or oversized source creates nothing; the spill is
 * watched against that space as it grows, spill-space.ts), and any failure
 * after the sinks exist aborts them all, so a failed run leaves nothing at the destination or the
 * rejects location. The archive and the rejects file appear together: if the second cannot be
 * committed, the first is removed again.
 */
export const makeImportJob =
  (deps: ImportJobDeps): ImportJob =>
  async ({ source, destination, rejects, dryRun = false, singleThread = false, readThreads, onProgress, signal, encoding }) => {
    if (!dryRun && destination === undefined) throw new LocationError('A destination is required (except for a dry run)');
    await checkDistinct([source, destination, rejects], deps.placeOf ?? (async (location) => formatLocation(location)));
    signal?.throwIfAborted();
    const destinationUsers = deps.fetchDestinationUsers ? await deps.fetchDestinationUsers(signal) : undefined;
    signal?.throwIfAborted();
    const { stream: input, bytes: sourceBytes } = await deps.openSource(source, signal);
    // The reading sees the source's errors through its own listener once it has begun; until then
    // (the spill space, the destinations, the pipeline's set-up) a stop destroys the source with the
    // signal's reason, which must not be an unhandled 'error' event that crashes the process.
    input.on('error', () => undefined);
    const compression = archiveCompression(destination);
    let archive: Sink | undefined;
    let rejectsSink: Sink | undefined;
    let spillWatch: SpillWatch | undefined;
    try {
      if (!dryRun) spillWatch = makeSpillWatch(await checkSpillSpace(sourceBytes, deps.tmpDir ?? tmpdir()));
      signal?.throwIfAborted();
      [archive, rejectsSink] = await openSinks(
        deps.openSink,
        [
          { location: dryRun ? undefined : destination, contentType: ARCHIVE_CONTENT_TYPE[compression] },
          { location: rejects, contentType: 'text/csv; charset=utf-8' },
        ],
        signal,
      );
    } catch (error) {
      input.destroy();
      throw error;
    }
    const sinks = [archive, rejectsSink].filter((sink): sink is Sink => sink !== undefined);
    // Failing every stream makes the pipeline reject in either of its passes.
    const stop = () => {
      const reason = asError(signal?.reason);
      input.destroy(reason);
      for (const sink of sinks) sink.stream.destroy(reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      signal?.throwIfAborted();
      const summary = await runImportPipeline({
        input,
        output: archive?.stream,
        compression,
        rejects: rejectsSink?.stream,
        destinationUsers,
        tmpDir: deps.tmpDir,
        encoding,
        // Threads asked for are threads used, whatever the machine's default.
        worker: !singleThread && (readThreads !== undefined || (deps.worker ?? false)),
        readThreads,
        spillWatch,
        mtime: deps.mtime,
        onProgress: onProgress && ((progress) => onProgress({ ...progress, sourceBytes })),
      });
      signal?.throwIfAborted();
      for (const sink of sinks) await sink.commit();
      return summary;
    } catch (error) {
      input.destroy();
      await Promise.all(sinks.map((sink) => sink.abort(error)));
      throw signal?.aborted ? asError(signal.reason) : error;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  };
