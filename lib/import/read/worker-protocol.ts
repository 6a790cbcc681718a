import { asError } from '../../errors.ts';
import { ImportInputError } from './import-input-error.ts';
import type { CsvShape, CsvStart } from './csv-state.ts';
import { CsvRowError } from './csv-faults.ts';
import type { ReadSideOptions } from './read-side.ts';
import type { VerdictBatch } from '../formats/verdict-batch.ts';

// The messages between the main thread (read-thread.ts, read-dispatcher.ts) and its reading threads
// (read-worker.ts), and how their contents cross (docs/architecture.md, "The import's threads"): each
// side imports this module, never the other's.

/** What a thread is started with to be a reading thread (read-worker.ts checks it). */
export const READ_WORKER_ROLE = 'ticket-import-read-side';

/** What a reading thread is started with. */
export interface ReadWorkerData {
  options: ReadSideOptions;
  /** Batches it may have handed over untaken. */
  maxBatches: number;
}

/** What a row's error says, crossing threads as plain data. */
type RowFault = Pick<CsvRowError, 'dataRow' | 'line' | 'problem'>;

/** An error as it crosses threads; a row count is numbered on when it is raised. */
export interface Failure {
  name: string;
  message: string;
  rowFault?: RowFault | undefined;
}

/** Main thread → reading thread: segments' bytes, and batch memory given back. */
export type ToWorker =
  | { type: 'segment'; segment: number; start: CsvStart | undefined }
  | { type: 'bytes'; segment: number; data: Uint8Array }
  | { type: 'end'; segment: number; last: boolean }
  | { type: 'drop'; after: number }
  | { type: 'taken'; buffers: ArrayBuffer[] };

/** Reading thread → main thread: the header, batches, source memory given back, and how each segment ended. */
export type FromWorker =
  | { type: 'header'; shape: CsvShape }
  | { type: 'consumed'; buffer: ArrayBuffer }
  | { type: 'batch'; segment: number; batch: VerdictBatch }
  | { type: 'done'; segment: number }
  | { type: 'open'; segment: number }
  | { type: 'failed'; segment: number; failure: Failure };

/** A transferred buffer arrives as a plain Uint8Array. */
export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The memory of a batch's four buffers (each its own: VerdictWriter.take), to transfer. */
export const batchMemory = (batch: VerdictBatch): ArrayBuffer[] =>
  [batch.verdicts, batch.tickets, batch.comments, batch.users].map((bytes) => bytes.buffer as ArrayBuffer);

/** A batch as it arrived, its buffers Buffers again. */
export const arrivedBatch = (batch: VerdictBatch): VerdictBatch => ({
  ...batch,
  verdicts: asBuffer(batch.verdicts),
  tickets: asBuffer(batch.tickets),
  comments: asBuffer(batch.comments),
  users: asBuffer(batch.users),
});

export const failureOf = (error: unknown): Failure => {
  const { name, message } = asError(error);
  if (error instanceof CsvRowError)
    return { name, message, rowFault: { dataRow: error.dataRow, line: error.line, problem: error.problem } };
  return { name, message };
};

/** The same error on the main thread, its data row counted from the file's first (`rowsBefore` precede the segment). */
export const rebuild = (failure: Failure, rowsBefore: number): Error => {
  const { rowFault } = failure;
  // Its line is the file's already: a segment's reader counts lines from the segment's first.
  if (rowFault !== undefined) return new CsvRowError(rowsBefore + rowFault.dataRow, rowFault.line, rowFault.problem);
  if (failure.name === ImportInputError.name) return new ImportInputError(failure.message);
  const error = new Error(failure.message);
  error.name = failure.name;
  return error;
};
