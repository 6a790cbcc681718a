import Papa from 'papaparse';
import { columnMapFromHeader, REQUIRED_COLUMNS, type ColumnMap } from './chat-columns.ts';
import { ImportInputError } from './import-input-error.ts';

/** A parsed data row; a short row simply has no cell (undefined) at the higher indexes. */
export type CsvRow = readonly string[];

export interface ReadCsvOptions {
  /** Called once, after the header checked out and before any row. */
  onHeader?: (columns: ColumnMap) => void;
  /** Rows in file order, a chunk's worth at a time; awaited, so a slow consumer slows the reading. */
  onRows: (rows: readonly CsvRow[]) => void | Promise<void>;
  /** Bytes consumed so far, after each input chunk. */
  onBytes?: (bytesRead: number) => void;
  /** Parse once this many characters are buffered (bigger = fewer re-parses of a split row). */
  chunkChars?: number;
  /** A row (one quoted field that never closes, typically) longer than this fails the import. */
  maxRowChars?: number;
}

const DEFAULT_CHUNK_CHARS = 32 * 1024;
const DEFAULT_MAX_ROW_CHARS = 16 << 20;
const DECODE_SLICE_BYTES = 32 * 1024;

const isEmptyLine = (row: readonly string[]): boolean => row.length === 1 && row[0] === '';

/** The line ending of the header row decides the file's (quoted newlines come later, in data). */
const detectNewline = (text: string): '\n' | '\r\n' => {
  const lf = text.indexOf('\n');
  return lf > 0 && text[lf - 1] === '\r' ? '\r\n' : '\n';
};

/**
 * Streams a UTF-8 CSV (BOM tolerated, CRLF or LF, quoted commas/quotes/newlines) through
 * papaparse's chunk parser: the text is decoded with a streaming TextDecoder (so a multi-byte character
 * split across input chunks survives), parsed a chunk at a time, and the unfinished last row is carried
 * into the next chunk. Blank lines are not rows. Throws ImportInputError for an empty input, a header
 * lacking required columns, a quoted field that never closes, or a row with more fields than the header.
 */
export const readCsv = async (input: AsyncIterable<Buffer | string>, options: ReadCsvOptions): Promise<void> => {
  const chunkChars = options.chunkChars ?? DEFAULT_CHUNK_CHARS;
  const maxRowChars = options.maxRowChars ?? DEFAULT_MAX_ROW_CHARS;
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pending = '';
  let bytesRead = 0;
  let started = false;
  let parser: Papa.Parser | undefined;
  let headerSeen = false;
  let columnCount = 0;
  let dataRowsSeen = 0;
  // Parse again only once the text has doubled since a parse that left an unfinished row: a long
  // quoted field is then re-scanned a logarithmic number of times, not once per input slice.
  let parseAt = chunkChars;

  const parseAvailable = async (final: boolean): Promise<void> => {
    parser ??= new Papa.Parser({ delimiter: ',', quoteChar: '"', newline: detectNewline(pending) });
    const results = parser.parse(pending, 0, !final) as {
      data: string[][];
      errors: { code: string; row?: number }[];
      meta: { cursor: number };
    };
    if (final) {
      if (results.errors.some((error) => error.code === 'MissingQuotes')) {
        throw new ImportInputError('CSV ends inside a quoted field (a quote is never closed)');
      }
      pending = '';
    } else {
      pending = pending.slice(results.meta.cursor);
      if (pending.length > maxRowChars) {
        throw new ImportInputError(`CSV row longer than ${maxRowChars} characters (a quote is never closed?)`);
      }
      parseAt = Math.max(chunkChars, Math.min(2 * pending.length, maxRowChars + 1));
    }
    let rows = results.data;
    if (!headerSeen) {
      let first = 0;
      while (first < rows.length && isEmptyLine(rows[first]!)) first += 1;
      if (first === rows.length) return;
      const columns = columnMapFromHeader(rows[first]!);
      headerSeen = true;
      columnCount = rows[first]!.length;
      options.onHeader?.(columns);
      rows = rows.slice(first + 1);
    }
    const dataRows = rows.some(isEmptyLine) ? rows.filter((row) => !isEmptyLine(row)) : rows;
    // More cells than the header has names for: rows ran together (a CRLF header over LF rows) or a
    // comma went unquoted. Either way cells would land under the wrong columns, so stop, naming it.
    const overlong = dataRows.findIndex((row) => row.length > columnCount);
    if (overlong >= 0) {
      throw new ImportInputError(
        `CSV data row ${dataRowsSeen + overlong + 1} has ${dataRows[overlong]!.length} fields but the header has ${columnCount} ` +
          '(rows with mixed line endings, or a comma in an unquoted field?)',
      );
    }
    dataRowsSeen += dataRows.length;
    if (dataRows.length > 0) await options.onRows(dataRows);
  };

  const consume = async (text: string): Promise<void> => {
    pending += text;
    if (!started && pending.length > 0) {
      started = true;
      if (pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
    }
    // The newline is guessed from the header row, so wait until it is complete.
    if (parser === undefined && !pending.includes('\n') && pending.length <= maxRowChars) return;
    if (pending.length >= parseAt || (parser === undefined && pending.includes('\n'))) {
      await parseAvailable(false);
    }
  };

  for await (const chunk of input) {
    if (typeof chunk === 'string') {
      bytesRead += Buffer.byteLength(chunk);
      options.onBytes?.(bytesRead);
      await consume(chunk);
      continue;
    }
    // Decoded a slice at a time: strings stay small enough to die young in V8's new space instead
    // of piling up as megabyte-sized garbage in the large-object space (sources read 1 MB chunks).
    for (let start = 0; start < chunk.length; start += DECODE_SLICE_BYTES) {
      const slice = chunk.subarray(start, start + DECODE_SLICE_BYTES);
      bytesRead += slice.length;
      options.onBytes?.(bytesRead);
      await consume(decoder.decode(slice, { stream: true }));
    }
  }
  pending += decoder.decode();
  if (!started && pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
  if (pending.length > 0) await parseAvailable(true);
  if (!headerSeen) {
    throw new ImportInputError(`CSV is empty: no header row (required columns: ${REQUIRED_COLUMNS.join(', ')})`);
  }
};
