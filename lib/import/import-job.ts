import { formatLocation, LocationError, parseLocation, sameLocation, type Location } from '../storage/location.ts';
import { AppError } from '../errors.ts';
import { asError, type OpenSink, type OpenSource, type Sink } from '../storage/storage.ts';
import { runImport, type ImportSummary, type RunImportOptions } from './run-import.ts';

export interface ImportJobDeps {
  openSource: OpenSource;
  openSink: OpenSink;
  /** Absent: user resolution is disabled (no TICKETING_URL); the summary says so. */
  fetchDestinationUsers?: (signal: AbortSignal | undefined) => Promise<ReadonlyMap<string, string>>;
  /** Where the pipeline spills to disk (`/tmp` in Lambda). */
  tmpDir?: string;
}

export interface ImportJobRun {
  source: Location;
  destination: Location;
  onProgress?: RunImportOptions['onProgress'];
  /** Aborting stops the run wherever it is and leaves nothing at the destination (Ctrl-C, Lambda deadline). */
  signal?: AbortSignal;
}

/** The run was stopped from outside (Ctrl-C, the Lambda deadline) and cleaned up. */
export class ImportCancelledError extends AppError {
  constructor(message: string) {
    super(503, 'Import cancelled', { logMessage: message });
  }
}

export interface ImportJob {
  run(request: ImportJobRun): Promise<ImportSummary>;
}

/**
 * One import, all or nothing: the destination's user listing is read first (a listing failure
 * costs no I/O), then the source is opened before the sink (a missing source creates nothing), and
 * any failure after the sink exists aborts it, so a failed run leaves nothing at the destination.
 */
export const makeImportJob = (deps: ImportJobDeps): ImportJob => ({
  run: async ({ source, destination, onProgress, signal }) => {
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
      const summary = await runImport({
        input,
        output: sink.stream,
        ...(destinationUsers === undefined ? {} : { destinationUsers }),
        ...(deps.tmpDir === undefined ? {} : { tmpDir: deps.tmpDir }),
        ...(onProgress === undefined ? {} : { onProgress }),
      });
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
  },
});

/** An `importTickets` event that is not `{ "source": "s3://…", "destination": "s3://…" }`. */
export class InvalidImportEventError extends LocationError {}

const s3Location = (event: Record<string, unknown>, field: 'source' | 'destination'): Location => {
  const value = event[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidImportEventError(`Invalid import event: "${field}" must be an s3://bucket/key string`);
  }
  let location: Location;
  try {
    location = parseLocation(value);
  } catch (error) {
    throw new InvalidImportEventError(`Invalid import event: "${field}": ${(error as Error).message}`);
  }
  if (location.kind !== 's3') throw new InvalidImportEventError(`Invalid import event: "${field}" must be an s3://bucket/key URL, got "${value}"`);
  return location;
};

/**
 * The Lambda event, invoked directly or by the EventBridge schedule (whose constant `input` is
 * delivered as the whole event). A Lambda only sees S3: a local path would name its own /tmp.
 */
export const parseImportEvent = (event: unknown): { source: Location; destination: Location } => {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new InvalidImportEventError('Invalid import event: expected {"source": "s3://…", "destination": "s3://…"}');
  }
  const record = event as Record<string, unknown>;
  return { source: s3Location(record, 'source'), destination: s3Location(record, 'destination') };
};

/** A signal that fires `marginMs` before `remainingMs` runs out, so a Lambda run can still clean up. */
export const deadlineSignal = (remainingMs: number | undefined, marginMs: number): { signal: AbortSignal; clear: () => void } => {
  const controller = new AbortController();
  if (remainingMs === undefined) return { signal: controller.signal, clear: () => undefined };
  const timer = setTimeout(
    () => controller.abort(new ImportCancelledError(`Import stopped ${marginMs / 1000} s before the Lambda timeout; nothing was written`)),
    Math.max(remainingMs - marginMs, 0),
  );
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
};
