import { formatLocation, LocationError, parseLocation, sameLocation, type Location } from '../storage/location.ts';
import type { OpenSink, OpenSource } from '../storage/storage.ts';
import { runImport, type ImportSummary, type RunImportOptions } from './run-import.ts';

export interface ImportJobDeps {
  openSource: OpenSource;
  openSink: OpenSink;
  /** Absent: user resolution is disabled (no TICKETING_URL); the summary says so. */
  fetchDestinationUsers?: () => Promise<ReadonlyMap<string, string>>;
  /** Where the pipeline spills to disk (`/tmp` in Lambda). */
  tmpDir?: string;
}

export interface ImportJobRun {
  source: Location;
  destination: Location;
  onProgress?: RunImportOptions['onProgress'];
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
  run: async ({ source, destination, onProgress }) => {
    if (sameLocation(source, destination)) {
      throw new LocationError(`Source and destination are the same (${formatLocation(source)})`);
    }
    const destinationUsers = deps.fetchDestinationUsers ? await deps.fetchDestinationUsers() : undefined;
    const input = await deps.openSource(source);
    let sink;
    try {
      sink = await deps.openSink(destination);
    } catch (error) {
      input.destroy();
      throw error;
    }
    try {
      const summary = await runImport({
        input,
        output: sink.stream,
        ...(destinationUsers === undefined ? {} : { destinationUsers }),
        ...(deps.tmpDir === undefined ? {} : { tmpDir: deps.tmpDir }),
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      await sink.commit();
      return summary;
    } catch (error) {
      input.destroy();
      await sink.abort(error);
      throw error;
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
