import type { CsvShape, CsvStart } from './csv-state.ts';
import { makeCsvReader } from './read-csv.ts';
import type { DestinationUsers } from '../../ticketing/user-listing-client.ts';
import type { VerdictBatch } from '../formats/verdict-batch.ts';
import { VerdictWriter } from './row-verdicts.ts';

/** What the read side needs to know: plain data, so it can be handed to a worker thread. */
export interface ReadSideOptions {
  /** The source's WHATWG encoding name (the run's plan). */
  encoding: string;
  /** Count the line each row starts on (for the rejects file). */
  lineNumbers: boolean;
  destinationUsers?: DestinationUsers | undefined;
}

/** A batch is handed on once its verdicts and records take this much (and at the end). */
const BATCH_BYTES = 512 * 1024;

/** Takes each batch, in file order; awaited, so a slow taker slows the reading. */
export type OnBatch = (batch: VerdictBatch) => void | Promise<void>;

/** The read side over pushed chunks of the source (see readSide). */
export interface ReadSide {
  push(chunk: Buffer | string): Promise<void>;
  /** Judges every row pushed so far: true when they ended exactly at the end of a row. */
  atRowStart(): Promise<boolean>;
  /** No more input: judges the rest and hands over the last batch (maybe of no rows). */
  end(): Promise<void>;
}

export interface ReadSideParts {
  options: ReadSideOptions;
  onBatch: OnBatch;
  /** Where the input starts, when it is a later part of the file. */
  start?: CsvStart | undefined;
  /** Told the header's shape once it is read (a whole file's input only). */
  onHeader?: ((shape: CsvShape) => void) | undefined;
  /**
   * The writer to judge rows with, when the caller keeps one across parts of the file and gives its
   * batches' buffers back itself; otherwise one of its own, given each batch back once `onBatch` settled.
   */
  writer?: VerdictWriter | undefined;
}

/**
 * Pass 1's read side: the CSV's bytes → rows (read-csv.ts) → each row judged and its complete records
 * encoded (row-verdicts.ts), in batches. Nothing here depends on another row, so it can run in
 * threads of its own (read-dispatcher.ts), each over parts of the file; the last batch (maybe of
 * no rows) carries the final byte count.
 */
export const makeReadSide = (parts: ReadSideParts): ReadSide => {
  const { options, onBatch, start } = parts;
  const writer = parts.writer ?? new VerdictWriter(options.destinationUsers);
  const hand = async (batch: VerdictBatch): Promise<void> => {
    await onBatch(batch);
    if (parts.writer === undefined) writer.recycle(batch);
  };
  let shape = start?.shape;
  let bytesRead = start?.byte ?? 0;
  const reader = makeCsvReader({
    encoding: options.encoding,
    lineNumbers: options.lineNumbers,
    start,
    onHeader: (found) => {
      shape = found;
      parts.onHeader?.(found);
    },
    onBytes: (bytes) => {
      bytesRead = bytes;
    },
    onRows: async (rows, lines) => {
      const { columns } = shape!;
      for (let index = 0; index < rows.length; index += 1) writer.add(rows[index]!, lines?.[index] ?? 0, columns);
      if (writer.bytes >= BATCH_BYTES) await hand(writer.take(bytesRead));
    },
  });
  return {
    push: (chunk) => reader.push(chunk),
    atRowStart: () => reader.atRowStart(),
    end: async () => {
      await reader.end();
      await hand(writer.take(bytesRead));
    },
  };
};

/** The read side over a whole source, in this thread. */
export const readSide = async (input: AsyncIterable<Buffer | string>, options: ReadSideOptions, onBatch: OnBatch): Promise<void> => {
  const side = makeReadSide({ options, onBatch });
  for await (const chunk of input) await side.push(chunk);
  await side.end();
};
