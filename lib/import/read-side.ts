import type { ColumnMap } from './chat-columns.ts';
import { readCsv } from './read-csv.ts';
import type { DestinationUsers } from './resolve-users.ts';
import { VerdictWriter, type VerdictBatch } from './row-verdicts.ts';

/** What the read side needs to know: plain data, so it can be handed to a worker thread. */
export interface ReadSideOptions {
  /** The source's WHATWG encoding name; UTF-8 by default. */
  encoding?: string | undefined;
  /** Count the line each row starts on (for the rejects file). */
  lineNumbers: boolean;
  destinationUsers?: DestinationUsers | undefined;
}

/** A batch is handed on once its verdicts and records take this much (and at the end). */
const BATCH_BYTES = 512 * 1024;

/** Takes each batch, in file order; awaited, so a slow taker slows the reading. */
export type OnBatch = (batch: VerdictBatch) => void | Promise<void>;

/**
 * Pass 1's read side: the CSV's bytes → rows (read-csv.ts) → each row judged and its complete records
 * encoded (row-verdicts.ts), in batches. Nothing here depends on another row, so it can run in a
 * thread of its own (read-side-worker.ts); the last batch (maybe of no rows) carries the final byte
 * count.
 *
 * Batches are written into the buffers of earlier ones once their taker is done with them: here as
 * soon as `onBatch` settled; a caller handing in its own `writer` gives them back itself
 * (read-side-worker.ts: when the other thread sends them back).
 */
export const readSide = async (
  input: AsyncIterable<Buffer | string>,
  options: ReadSideOptions,
  onBatch: OnBatch,
  ownWriter?: VerdictWriter,
): Promise<void> => {
  const writer = ownWriter ?? new VerdictWriter(options.destinationUsers);
  const hand = async (batch: VerdictBatch): Promise<void> => {
    await onBatch(batch);
    if (ownWriter === undefined) writer.recycle(batch);
  };
  let columns: ColumnMap | undefined;
  let bytesRead = 0;
  await readCsv(input, {
    encoding: options.encoding,
    lineNumbers: options.lineNumbers,
    onHeader: (found) => {
      columns = found;
    },
    onBytes: (bytes) => {
      bytesRead = bytes;
    },
    onRows: async (rows, lines) => {
      for (let index = 0; index < rows.length; index += 1) writer.add(rows[index]!, lines?.[index] ?? 0, columns!);
      if (writer.bytes >= BATCH_BYTES) await hand(writer.take(bytesRead));
    },
  });
  await hand(writer.take(bytesRead));
};
