import type { Readable, Writable } from 'node:stream';
import { JobError } from '../errors.ts';
import type { Location } from './location.ts';

/**
 * Where an archive (or a rejects file) is written. Nothing is visible at the destination until
 * `commit` resolves; `abort` removes every trace (temporary file, multipart upload, a just-completed
 * object) and never throws — also after `commit`, which it undoes: a run writing two files commits
 * both or neither.
 */
export interface Sink {
  /** Ended by the writer on success; never ended when the run fails. */
  stream: Writable;
  commit(): Promise<void>;
  abort(reason: unknown): Promise<void>;
}

/** A source opened for reading, with its size where the location tells it (not for a pipe). */
export interface Source {
  stream: Readable;
  bytes: number | undefined;
}

/** Opens a source; `signal` stops a request that has not answered (a run's deadline). */
export type OpenSource = (location: Location, signal?: AbortSignal) => Promise<Source>;
/**
 * Opens a sink for content of `contentType` (stored with an S3 object; a file has none); `signal`
 * stops a request that has not answered, now or when the sink commits (a run's deadline).
 */
export type OpenSink = (location: Location, contentType: string, signal?: AbortSignal) => Promise<Sink>;

/**
 * Where a location really is, as text: two locations with the same place are one (a file under any
 * of its names is one place). Never fails: what cannot be resolved is its own place.
 */
export type PlaceOf = (location: Location) => Promise<string>;

/** Reading or writing a location failed (after it was opened, or for a reason other than a bad name). */
export class StorageError extends JobError {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}
