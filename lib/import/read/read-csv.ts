import { endCsv, pushCsv, settleCsv } from './csv-parser.ts';
import { DECODE_SLICE_BYTES, startCsv, type CsvParserOptions, type CsvRow, type CsvShape, type CsvStep } from './csv-state.ts';

export interface ReadCsvOptions extends CsvParserOptions {
  /** Called once, after the header checked out and before any row. */
  onHeader?: (shape: CsvShape) => void;
  /** Rows in file order, a slice's worth at a time; awaited, so a slow consumer slows the reading. */
  onRows: (rows: readonly CsvRow[], lines: readonly number[] | undefined) => void | Promise<void>;
  /** Bytes consumed so far, after each input slice. */
  onBytes?: (bytesRead: number) => void;
}

/** Reads a CSV a pushed chunk at a time (see makeCsvReader); `atRowStart` lets a caller end it early between rows. */
export interface CsvReader {
  push(chunk: Buffer | string): Promise<void>;
  /** Parses what was pushed so far: true when it ended exactly at the end of a row (nothing left over). */
  atRowStart(): Promise<boolean>;
  /** No more input: parses the rest (a quote left open fails here), and checks there was a header. */
  end(): Promise<void>;
}

/**
 * Reads a CSV pushed to it a chunk at a time: the parser (csv-parser.ts) fed a decoding slice at a
 * time, each slice's rows handed on and awaited before the next, so the byte count and the batches
 * follow the input closely and a slow consumer holds the reading back. Throws ImportInputError
 * (CsvRowError for a row) on what cannot be imported (docs/architecture.md, "Reading the CSV").
 */
export const makeCsvReader = (options: ReadCsvOptions): CsvReader => {
  const state = startCsv(options);
  const hand = async (step: CsvStep): Promise<void> => {
    if (step.header !== undefined) options.onHeader?.(step.header);
    if (step.rows.length > 0) await options.onRows(step.rows, step.lines);
  };
  const push = async (chunk: Buffer | string): Promise<void> => {
    if (typeof chunk === 'string') {
      const step = pushCsv(state, chunk);
      options.onBytes?.(state.bytesRead);
      await hand(step);
      return;
    }
    for (let at = 0; at < chunk.length; at += DECODE_SLICE_BYTES) {
      const step = pushCsv(state, chunk.subarray(at, at + DECODE_SLICE_BYTES));
      options.onBytes?.(state.bytesRead);
      await hand(step);
    }
  };
  return {
    push,
    atRowStart: async () => {
      const step = settleCsv(state);
      await hand(step);
      return step.atRowStart;
    },
    end: () => hand(endCsv(state)),
  };
};
