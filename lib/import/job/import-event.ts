import { JobError } from '../../errors.ts';
import { parseLocation, quoteLocation, type Location } from '../../storage/location.ts';
import { deadlineWith } from '../../async/deadline.ts';
import { ImportCancelledError } from './import-job.ts';
import { resolveEncoding } from '../read/source-encoding.ts';

/**
 * An `importTickets` event that is not `{ "source": "s3://…", "destination": "s3://…" }` with the
 * optional `"rejects": "s3://…"`, `"dry_run": true|false` and `"encoding": "<label>"`. A JobError of
 * its own, not a LocationError: most of what it refuses (an unknown key, `dry_run`, `encoding`, the
 * event's shape) is no location.
 */
class InvalidImportEventError extends JobError {}

const s3Location = (event: Record<string, unknown>, field: 'source' | 'destination' | 'rejects'): Location => {
  const value = event[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidImportEventError(`Invalid import event: "${field}" must be an s3://bucket/key string`);
  }
  // Only s3:// here: another scheme or a path is refused as such, before the location's own rules
  // (which speak of file paths, the command line's other kind).
  if (!/^s3:/i.test(value.trimStart())) {
    throw new InvalidImportEventError(`Invalid import event: "${field}" must be an s3://bucket/key URL, got ${quoteLocation(value)}`);
  }
  try {
    return parseLocation(value);
  } catch (error) {
    throw new InvalidImportEventError(`Invalid import event: "${field}": ${(error as Error).message}`);
  }
};

/** The optional `"encoding"`: a WHATWG label, as its canonical name. */
const encodingOf = (event: Record<string, unknown>): string | undefined => {
  const value = event.encoding;
  if (value === undefined) return undefined;
  const encoding = typeof value === 'string' ? resolveEncoding(value) : undefined;
  if (encoding === undefined) {
    throw new InvalidImportEventError(
      `Invalid import event: "encoding" must be a WHATWG encoding label such as "utf-8", "windows-1252" or "utf-16le", got ${JSON.stringify(value)}`,
    );
  }
  return encoding;
};

/** The keys an event may have. */
const EVENT_KEYS = new Set(['source', 'destination', 'rejects', 'dry_run', 'encoding']);

export interface ImportEvent {
  source: Location;
  /** Absent only in a dry run. */
  destination: Location | undefined;
  rejects: Location | undefined;
  dryRun: boolean;
  encoding: string | undefined;
}

/**
 * The importTickets Lambda's event, invoked directly or by the EventBridge schedule (whose constant
 * `input` is delivered as the whole event). A Lambda only sees S3: a local path would name its own /tmp.
 */
export const parseImportEvent = (event: unknown): ImportEvent => {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new InvalidImportEventError('Invalid import event: expected {"source": "s3://…", "destination": "s3://…"}');
  }
  const record = event as Record<string, unknown>;
  // A misspelt key ("dryRun", "reject") would otherwise be ignored and a real run start in its place.
  const unknown = Object.keys(record).filter((key) => !EVENT_KEYS.has(key));
  if (unknown.length > 0) {
    throw new InvalidImportEventError(
      `Invalid import event: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(key)).join(', ')} (expected ${[...EVENT_KEYS].map((key) => `"${key}"`).join(', ')})`,
    );
  }
  const dryRun = record.dry_run === undefined ? false : record.dry_run;
  if (typeof dryRun !== 'boolean')
    throw new InvalidImportEventError(`Invalid import event: "dry_run" must be true or false, got ${JSON.stringify(dryRun)}`);
  return {
    source: s3Location(record, 'source'),
    // A dry run writes no archive, so it needs no destination (one given is checked all the same).
    destination: dryRun && record.destination === undefined ? undefined : s3Location(record, 'destination'),
    rejects: record.rejects === undefined ? undefined : s3Location(record, 'rejects'),
    dryRun,
    encoding: encodingOf(record),
  };
};

/**
 * A signal that fires `marginMs` before the Lambda's remaining time runs out, so a run still has the
 * time to abort its multipart upload and leave nothing behind. `clear` must be called when the run ends.
 */
export const importDeadline = (remainingMs: number, marginMs: number): { signal: AbortSignal; clear: () => void } =>
  deadlineWith(
    remainingMs - marginMs,
    () => new ImportCancelledError(`Import stopped ${marginMs / 1000} s before the Lambda timeout; nothing was written`),
  );
