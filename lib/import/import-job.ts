import { JobError } from '../errors.ts';
import { formatLocation, LocationError, sameLocation, type Location } from '../storage/location.ts';
import { asError, type OpenSink, type OpenSource, type Sink } from '../storage/storage.ts';
import { runImportPipeline, type ImportPipelineOptions, type ImportSummary } from './import-pipeline.ts';

/** Lower-cased email → the destination's user id (exact decimal text). */
export type DestinationUsers = ReadonlyMap<string, string>;

export interface ImportJobDeps {
  openSource: OpenSource;
  openSink: OpenSink;
  /** Absent: user resolution is disabled (no destination listing configured); the summary says so. */
  fetchDestinationUsers?: ((signal: AbortSignal | undefined) => Promise<DestinationUsers>) | undefined;
  /** Where the pipeline spills to disk (`/tmp` in Lambda). */
  tmpDir?: string | undefined;
}

export interface ImportRequest {
  source: Location;
  destination: Location;
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
 * The import job around the pipeline, all or nothing: the destination's user listing is read first
 * (a listing failure costs no I/O), then the source is opened before the sink (a missing source
 * creates nothing), and any failure after the sink exists aborts it, so a failed run leaves nothing
 * at the destination.
 */
export const makeImportJob =
  (deps: ImportJobDeps): ImportJob =>
  async ({ source, destination, onProgress, signal, encoding }) => {
    if (sameLocation(source, destination)) {
      throw new LocationError(`Source and destination are the same (${formatLocation(source)})`);
    }
    signal?.throwIfAborted();
    const destinationUsers = deps.fetchDestinationUsers ? await deps.fetchDestinationUsers(signal) : undefined;
    signal?.throwIfAborted();
    const input = await deps.openSource(source);
    let sink: Sink;
    try {
      signal?.throwIfAborted();
      sink = await deps.openSink(destination);
    } catch (error) {
      input.destroy();
      throw error;
    }
    // Failing both streams makes the pipeline reject in either of its passes.
    const stop = () => {
      const reason = asError(signal?.reason);
      input.destroy(reason);
      sink.stream.destroy(reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      signal?.throwIfAborted();
      const summary = await runImportPipeline({ input, output: sink.stream, destinationUsers, tmpDir: deps.tmpDir, onProgress, encoding });
      signal?.throwIfAborted();
      await sink.commit();
      return summary;
    } catch (error) {
      input.destroy();
      await sink.abort(error);
      throw signal?.aborted ? asError(signal.reason) : error;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  };
