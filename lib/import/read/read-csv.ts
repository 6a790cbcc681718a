import Papa from 'papaparse';
import { REQUIRED_COLUMNS } from '../formats/assets.ts';
import { columnMapFromHeader, type ColumnMap } from './chat-columns.ts';
import { HeaderWidth } from './header-width.ts';
import { ImportInputError } from './import-input-error.ts';
import { countLineFeeds, LineCounter } from './line-count.ts';
import { DEFAULT_ENCODING, ENCODING_OPTION, locateInvalidBytes, strictDecoder } from './source-encoding.ts';

/** A parsed data row; a short row simply has no cell (undefined) at the higher indexes. */
export type CsvRow = readonly string[];

/** What the header row says about every row after it. */
export interface CsvShape {
  columns: ColumnMap;
  /** Fields in the header: a data row may have fewer, never more. */
  columnCount: number;
  /** The header row's line ending, which every row ends in (quoted newlines aside). */
  newline: '\n' | '\r\n';
}

/** Where in the file a reader's input starts, when it is a later part of the file (read-dispatcher.ts). */
export interface CsvStart {
  /** Bytes of the file before it. */
  byte: number;
  /** The line it starts on (from 1). */
  line: number;
  /** The header, read from the file's first part. */
  shape: CsvShape;
}

export interface ReadCsvOptions {
  /** Called once, after the header checked out and before any row. */
  onHeader?: (shape: CsvShape) => void;
  /** The input is a part of the file starting here, after the header, at the start of a row; absent: the whole file. */
  start?: CsvStart | undefined;
  /** Rows in file order, a chunk's worth at a time; awaited, so a slow consumer slows the reading. */
  onRows: (rows: readonly CsvRow[], lines: readonly number[] | undefined) => void | Promise<void>;
  /** Also hand `onRows` the 1-based line of the file where each row starts (quoted newlines count). */
  lineNumbers?: boolean;
  /** A WHATWG encoding name (source-encoding.ts resolves labels); UTF-8 by default. */
  encoding?: string | undefined;
  /** Bytes consumed so far, after each input chunk. */
  onBytes?: (bytesRead: number) => void;
  /** Parse once this many characters are buffered (bigger = fewer re-parses of a split row). */
  chunkChars?: number;
  /**
   * A row still unfinished when it holds more than this fails the import (one quoted field that never
   * closes, typically). Checked as text arrives, so a row that ends within the slice that took it
   * past the limit is taken: the bound is on memory, not an exact row length.
   */
  maxRowChars?: number;
}

/**
 * Malformed CSV at a row, named by the row's number among the data rows and the line it starts on,
 * so that it can be found in a large file: a quoted field with more text after its closing quote
 * (`"Hello" she said`: papaparse would read on to the next quote that ends a field, taking the rows
 * between into this cell), a quoted field that never closes, a row past the length limit, a row with
 * more fields than the header.
 */
export class CsvRowError extends ImportInputError {
  /** The row's number among the data rows (from 1). */
  readonly dataRow: number;
  /** The line of the file the row starts on (from 1). */
  readonly line: number;
  /** What is wrong with it, completing "CSV data row N (line L) …". */
  readonly problem: string;

  constructor(dataRow: number, line: number, problem: string) {
    super(`CSV data row ${dataRow} (line ${line}) ${problem}`);
    this.dataRow = dataRow;
    this.line = line;
    this.problem = problem;
  }
}

const MALFORMED_QUOTE = 'has a quoted field with more text after its closing quote (a quote inside a quoted field is written twice: "")';
const UNCLOSED_QUOTE = 'starts a quoted field that never closes: the file ends inside it';

/** Reads a CSV a pushed chunk at a time (see makeCsvReader); `atRowStart` lets a caller end it early between rows. */
export interface CsvReader {
  push(chunk: Buffer | string): Promise<void>;
  /** Parses what was pushed so far: true when it ended exactly at the end of a row (nothing left over). */
  atRowStart(): Promise<boolean>;
  /** No more input: parses the rest (a quote left open fails here), and checks there was a header. */
  end(): Promise<void>;
}

const DEFAULT_CHUNK_CHARS = 32 * 1024;
const DEFAULT_MAX_ROW_CHARS = 16 << 20;
const DECODE_SLICE_BYTES = 32 * 1024;

const isEmptyLine = (row: readonly string[]): boolean => row.length === 1 && row[0] === '';

/**
 * The first of `rows` with more fields than the header (of `headerFields` fields, or when undefined
 * the first row that is not blank), or -1.
 */
const firstTooWideRow = (rows: readonly (readonly string[])[], headerFields: number | undefined): number => {
  let fields = headerFields;
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    if (isEmptyLine(row)) continue;
    if (fields === undefined) fields = row.length;
    else if (row.length > fields) return index;
  }
  return -1;
};

interface ParseError {
  code: string;
  row?: number;
}

/**
 * The first parsed row (its index among `rowsParsed`) holding a closing quote followed by more text,
 * or -1. An unfinished last row (not `final`) is parsed again once more text came, and counts then.
 */
const malformedQuoteRow = (errors: readonly ParseError[], rowsParsed: number, final: boolean): number => {
  let first = -1;
  for (const error of errors) {
    if (error.code !== 'InvalidQuotes' || error.row === undefined || (!final && error.row >= rowsParsed)) continue;
    if (first === -1 || error.row < first) first = error.row;
  }
  return first;
};

/**
 * Lines ending in CR alone (the classic Mac OS convention, which Excel still offers as "CSV
 * (Macintosh)") would read as one endless header row and no data: refused, naming the cure. Seen in
 * the header row, before its first LF; a CR last in the text so far may still be followed by an LF
 * (or end a header-only file). A NUL before it is UTF-16 read as one byte a character (its CR LF
 * reads CR NUL LF): the header check says that, naming the option.
 */
const refuseBareCarriageReturns = (text: string): void => {
  const lf = text.indexOf('\n');
  const cr = text.indexOf('\r');
  if (cr === -1 || (lf === -1 ? cr === text.length - 1 : cr >= lf - 1)) return;
  if (text.lastIndexOf('\u0000', cr) !== -1) return;
  throw new ImportInputError(
    'CSV lines end in CR alone (classic Mac OS line endings): save or convert the file with LF or CRLF line endings',
  );
};

/** The line ending of the header row decides the file's (quoted newlines come later, in data). */
const detectNewline = (text: string): '\n' | '\r\n' => {
  const lf = text.indexOf('\n');
  return lf > 0 && text[lf - 1] === '\r' ? '\r\n' : '\n';
};

const encodingName = (encoding: string): string => (encoding === DEFAULT_ENCODING ? 'UTF-8' : encoding);

/** Lines a parsed row spans: its own, plus one per line feed inside its (quoted) cells. */
const linesOf = (row: readonly string[]): number => {
  let lines = 1;
  for (const cell of row) if (cell.includes('\n')) lines += countLineFeeds(cell);
  return lines;
};

/**
 * Reads a CSV pushed to it a chunk at a time, decoded strictly, through papaparse's chunk parser
 * (docs/architecture.md, "Reading the CSV"); throws ImportInputError (CsvRowError for a row) on what cannot be imported.
 */
export const makeCsvReader = (options: ReadCsvOptions): CsvReader => {
  const chunkChars = options.chunkChars ?? DEFAULT_CHUNK_CHARS;
  const maxRowChars = options.maxRowChars ?? DEFAULT_MAX_ROW_CHARS;
  const encoding = options.encoding ?? DEFAULT_ENCODING;
  const decoder = strictDecoder(encoding);
  const { start } = options;
  // Line feeds in all the text decoded so far: an undecodable byte is named by its line.
  const fileLines = new LineCounter(start?.line);
  // The line the next parsed row starts on, kept only when the caller asked for row lines.
  let nextLine = start?.line ?? 1;
  let previousSlice: Uint8Array | undefined;
  let lastSlice: Uint8Array | undefined;
  let lastSliceOffset = 0;
  // Line feeds in the text before the last slice: an undecodable byte's line counts from there.
  let lineFeedsBeforeSlice = 0;
  let pending = '';
  let bytesRead = start?.byte ?? 0;
  // A later part of the file starts with a row: a U+FEFF there is data, not a byte order mark.
  let started = start !== undefined;
  let parser: Papa.Parser | undefined;
  let newline: CsvShape['newline'] | undefined;
  let headerSeen = start !== undefined;
  let columnCount = start?.shape.columnCount ?? 0;
  let dataRowsSeen = 0;
  // The header's field count as the parse under way began (undefined: the header is among its rows).
  let headerFieldsBefore: number | undefined;
  // Parse again only once the text has doubled since a parse that left an unfinished row: a long
  // quoted field is then re-scanned a logarithmic number of times, not once per input slice.
  let parseAt = chunkChars;
  // The header's width, counted as it arrives (a later part of the file starts after it).
  const headerWidth = start === undefined ? new HeaderWidth(maxRowChars) : undefined;

  const parseAvailable = async (final: boolean): Promise<void> => {
    headerFieldsBefore = headerSeen ? columnCount : undefined;
    if (parser === undefined && start === undefined) refuseBareCarriageReturns(pending);
    newline ??= start?.shape.newline ?? detectNewline(pending);
    parser ??= new Papa.Parser({ delimiter: ',', quoteChar: '"', newline });
    const parsed = pending;
    const results = parser.parse(parsed, 0, !final) as {
      data: string[][];
      errors: ParseError[];
      meta: { cursor: number };
    };
    const malformed = malformedQuoteRow(results.errors, results.data.length, final);
    if (malformed !== -1) {
      // Under a CRLF header, a quoted last field of an LF row closes before a bare LF, which reads as
      // text after the quote: the row runs on into the next, which is the real fault.
      const mixed = newline === '\r\n' && results.data[malformed]!.some((cell) => cell.includes('"\n'));
      const error = rowError(
        results.data,
        malformed,
        parsed,
        mixed ? `${MALFORMED_QUOTE}; or rows with mixed line endings (LF rows under a CRLF header)` : MALFORMED_QUOTE,
      );
      if (error !== undefined) throw error;
    }
    if (final) {
      // The unclosed row is the last one parsed. (Without an error here, an earlier row has more
      // fields than the header: the field-count check below names it.)
      const unclosed = results.errors.some((error) => error.code === 'MissingQuotes')
        ? rowError(results.data, results.data.length - 1, parsed, UNCLOSED_QUOTE)
        : undefined;
      if (unclosed !== undefined) throw unclosed;
      pending = '';
    } else {
      pending = pending.slice(results.meta.cursor);
      if (pending.length > maxRowChars) {
        // The unfinished row is all that is left: it starts after every row parsed.
        const overlong = rowError(
          results.data,
          results.data.length,
          parsed,
          `is longer than ${maxRowChars} characters, the most one row may hold (a quote that never closes?)`,
        );
        if (overlong !== undefined) throw overlong;
      }
      parseAt = Math.max(chunkChars, Math.min(2 * pending.length, maxRowChars + 1));
    }
    let rows = results.data;
    let lines: number[] | undefined;
    if (options.lineNumbers) {
      lines = [];
      for (const row of rows) {
        lines.push(nextLine);
        nextLine += linesOf(row);
      }
    }
    if (!headerSeen) {
      let first = 0;
      while (first < rows.length && isEmptyLine(rows[first]!)) first += 1;
      if (first === rows.length) return;
      const columns = columnMapFromHeader(rows[first]!);
      headerSeen = true;
      columnCount = rows[first]!.length;
      options.onHeader?.({ columns, columnCount, newline });
      rows = rows.slice(first + 1);
      lines = lines?.slice(first + 1);
    }
    let dataRows = rows;
    if (rows.some(isEmptyLine)) {
      dataRows = rows.filter((row) => !isEmptyLine(row));
      lines = lines?.filter((_line, index) => !isEmptyLine(rows[index]!));
    }
    // More cells than the header has names for: rows ran together (a CRLF header over LF rows) or a
    // comma went unquoted. Either way cells would land under the wrong columns, so stop, naming it.
    const tooWide = firstTooWideRow(results.data, headerFieldsBefore);
    if (tooWide !== -1) {
      const problem = `has ${results.data[tooWide]!.length} fields but the header has ${columnCount} (rows with mixed line endings, or a comma in an unquoted field?)`;
      throw rowError(results.data, tooWide, parsed, problem)!;
    }
    dataRowsSeen += dataRows.length;
    if (dataRows.length > 0) await options.onRows(dataRows, lines);
  };

  /**
   * The error for `rows[index]` (parsed from `text`), named by its data row and line: counted here,
   * as only a failing run needs them. Undefined when an earlier row has more fields than the header,
   * the first fault, which the field-count check names.
   */
  const rowError = (rows: readonly (readonly string[])[], index: number, text: string, problem: string): ImportInputError | undefined => {
    let line = fileLines.line - countLineFeeds(text);
    let dataRow = dataRowsSeen;
    let headerFields = headerFieldsBefore;
    for (let row = 0; row < index; row += 1) {
      const cells = rows[row]!;
      line += linesOf(cells);
      if (isEmptyLine(cells)) continue;
      if (headerFields === undefined) headerFields = cells.length;
      else if (cells.length > headerFields) return undefined;
      else dataRow += 1;
    }
    if (headerFields === undefined) return new ImportInputError(`CSV header (line ${line}) ${problem}`);
    return new CsvRowError(dataRow + 1, line, problem);
  };

  /** The error for the last slice's undecodable bytes, named by line and byte offset. */
  const invalidBytes = (final: boolean): ImportInputError => {
    const offset = locateInvalidBytes(encoding, previousSlice, lastSlice!, lastSliceOffset, final);
    const first = lastSlice![0];
    const second = lastSlice![1];
    if (offset === 0 && ((first === 0xff && second === 0xfe) || (first === 0xfe && second === 0xff))) {
      return new ImportInputError(
        `CSV starts with a UTF-16 byte-order mark but is read as ${encodingName(encoding)}: name its encoding with ${ENCODING_OPTION}: ` +
          (first === 0xff ? 'utf-16le' : 'utf-16be'),
      );
    }
    // Lines before the slice were counted as decoded; those in its valid part are decoded again here
    // (at the end of the file that part was decoded and counted already, so count from the slice's start).
    const before = new TextDecoder(encoding).decode(lastSlice!.subarray(0, Math.max(0, offset - lastSliceOffset)));
    const line = 1 + lineFeedsBeforeSlice + countLineFeeds(before);
    return new ImportInputError(
      `CSV is not valid ${encodingName(encoding)}: undecodable bytes on line ${line}, at byte offset ${offset} (from 0); ` +
        `name the file's encoding with ${ENCODING_OPTION}, e.g. windows-1252`,
    );
  };

  const consume = async (text: string): Promise<void> => {
    fileLines.follow(text);
    if (headerWidth !== undefined && !headerWidth.done) {
      headerWidth.follow(text);
      // Too wide: the count goes on to the header's end, without its text.
      if (headerWidth.tooWide) {
        pending = '';
        return;
      }
    }
    pending += text;
    if (!started && pending.length > 0) {
      started = true;
      if (pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
    }
    // The newline is guessed from the header row, so wait until it is complete. Lines ending in CR
    // alone never complete it: refused while waiting (the first parse checks the header it reads).
    if (parser === undefined && start === undefined && !pending.includes('\n') && pending.length <= maxRowChars) {
      refuseBareCarriageReturns(pending);
      return;
    }
    if (pending.length >= parseAt || (parser === undefined && pending.includes('\n'))) {
      await parseAvailable(false);
    }
  };

  const push = async (chunk: Buffer | string): Promise<void> => {
    if (typeof chunk === 'string') {
      bytesRead += Buffer.byteLength(chunk);
      options.onBytes?.(bytesRead);
      await consume(chunk);
      return;
    }
    // Decoded a slice at a time: strings stay small enough to die young in V8's new space instead
    // of piling up as megabyte-sized garbage in the large-object space (sources read 1 MB chunks).
    for (let start = 0; start < chunk.length; start += DECODE_SLICE_BYTES) {
      const slice = chunk.subarray(start, start + DECODE_SLICE_BYTES);
      previousSlice = lastSlice;
      lastSlice = slice;
      lastSliceOffset = bytesRead;
      lineFeedsBeforeSlice = fileLines.lineFeeds;
      bytesRead += slice.length;
      options.onBytes?.(bytesRead);
      let text: string;
      try {
        text = decoder.decode(slice, { stream: true });
      } catch {
        throw invalidBytes(false);
      }
      await consume(text);
    }
    // The caller may reuse the chunk's memory once the next one is asked for (read-worker.ts
    // does): keep a copy of the slice an undecodable end of the file would be located in.
    if (lastSlice?.buffer === chunk.buffer) lastSlice = Buffer.from(lastSlice);
  };

  const atRowStart = async (): Promise<boolean> => {
    if (pending.length > 0) await parseAvailable(false);
    return pending.length === 0;
  };

  const end = async (): Promise<void> => {
    try {
      pending += decoder.decode();
    } catch {
      throw invalidBytes(true);
    }
    headerWidth?.end();
    if (!started && pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
    if (pending.length > 0) await parseAvailable(true);
    if (!headerSeen) {
      throw new ImportInputError(`CSV is empty: no header row (required columns: ${REQUIRED_COLUMNS.join(', ')})`);
    }
  };

  return { push, atRowStart, end };
};
