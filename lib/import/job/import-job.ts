import { asError, JobError } from '../../errors.ts';
import { formatLocation, LocationError, type Location } from '../../storage/location.ts';
import type { OpenSink, OpenSource, PlaceOf, Sink } from '../../storage/storage.ts';
import { ARCHIVE_CONTENT_TYPE, archiveCompression } from '../write/archive-compression.ts';
import { runImportPipeline, type ImportPipelineOptions, type ImportSummary } from './import-pipeline.ts';
import { planRun, type RunAsk } from './run-plan.ts';
import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import { checkSpillSpace, makeSpillWatch, type SpillWatch } from './spill-space.ts';
import type { ImportFence } from '../../config.ts';
import { checkImportFence } from './import-fence.ts';

export interface ImportJobDeps {
  openSource: OpenSource;
  openSink: OpenSink;
  /** Where a location really is (a file through its links); absent: as written. */
  placeOf?: PlaceOf | undefined;
  /** Absent: user resolution is disabled (no destination listing configured); the summary says so. */
  fetchDestinationUsers?: ((signal: AbortSignal | undefined) => Promise<DestinationUsers>) | undefined;
  /** Where the pipeline spills to disk (default: the system's temporary directory, `/tmp` in Lambda). */
  tmpDir?: string | undefined;
  /** Whether rows are parsed in worker threads unless a run asks otherwise (run-plan.ts). */
  worker?: RunAsk['worker'];
  /** The archive entries' mtime (default: when the archive is written); tests fix it to compare archives byte for byte. */
  mtime?: Date | undefined;
  /** Where a run may read and write (IMPORT_BUCKET); absent: anywhere. */
  fence?: ImportFence | undefined;
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
  /** Read in this many worker threads (by default: run-plan.ts). */
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

/** The import job around the pipeline, all or nothing (docs/architecture.md, "The job: all or nothing"). */
export const makeImportJob =
  (deps: ImportJobDeps): ImportJob =>
  async ({ source, destination, rejects, dryRun = false, singleThread = false, readThreads, onProgress, signal, encoding }) => {
    if (!dryRun && destination === undefined) throw new LocationError('A destination is required (except for a dry run)');
    if (deps.fence !== undefined) checkImportFence(deps.fence, { source, destination, rejects });
    await checkDistinct([source, destination, rejects], deps.placeOf ?? (async (location) => formatLocation(location)));
    signal?.throwIfAborted();
    const destinationUsers = deps.fetchDestinationUsers ? await deps.fetchDestinationUsers(signal) : undefined;
    signal?.throwIfAborted();
    const { stream: input, bytes: sourceBytes } = await deps.openSource(source, signal);
    // The reading sees the source's errors through its own listener once it has begun; until then
    // (the spill space, the destinations, the pipeline's set-up) a stop destroys the source with the
    // signal's reason, which must not be an unhandled 'error' event that crashes the process.
    input.on('error', () => undefined);
    const plan = planRun({ worker: deps.worker, singleThread, readThreads, tmpDir: deps.tmpDir, encoding }, dryRun);
    const compression = archiveCompression(destination);
    let archive: Sink | undefined;
    let rejectsSink: Sink | undefined;
    let spillWatch: SpillWatch | undefined;
    try {
      if (!plan.dryRun) spillWatch = makeSpillWatch(await checkSpillSpace(sourceBytes, plan.tmpDir));
      signal?.throwIfAborted();
      [archive, rejectsSink] = await openSinks(
        deps.openSink,
        [
          { location: plan.dryRun ? undefined : destination, contentType: ARCHIVE_CONTENT_TYPE[compression] },
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
      const summary = await runImportPipeline(
        {
          input,
          output: archive?.stream,
          compression,
          rejects: rejectsSink?.stream,
          destinationUsers,
          spillWatch,
          mtime: deps.mtime,
          onProgress: onProgress && ((progress) => onProgress({ ...progress, sourceBytes })),
        },
        plan,
      );
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
