import type Papa from 'papaparse';
import type { ColumnMap } from './chat-columns.ts';
import { HeaderWidth } from './header-width.ts';
import { LineCounter } from './line-count.ts';
import { DEFAULT_ENCODING, strictDecoder, type StrictDecoder } from './source-encoding.ts';

// The CSV parser's explicit state: everything csv-parser.ts's steps know between one piece of input and the next.

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

/** Where in the file a parser's input starts, when it is a later part of the file (read-dispatcher.ts). */
export interface CsvStart {
  /** Bytes of the file before it. */
  byte: number;
  /** The line it starts on (from 1). */
  line: number;
  /** The header, read from the file's first part. */
  shape: CsvShape;
}

export interface CsvParserOptions {
  /** The input is a part of the file starting here, after the header, at the start of a row; absent: the whole file. */
  start?: CsvStart | undefined;
  /** Also give the 1-based line of the file where each row starts (quoted newlines count). */
  lineNumbers?: boolean | undefined;
  /** A WHATWG encoding name (source-encoding.ts resolves labels); UTF-8 by default. */
  encoding?: string | undefined;
  /** Parse once this many characters are buffered (bigger = fewer re-parses of a split row). */
  chunkChars?: number | undefined;
  /**
   * A row still unfinished when it holds more than this fails the import (one quoted field that never
   * closes, typically). Checked as text arrives, so a row that ends within the slice that took it
   * past the limit is taken: the bound is on memory, not an exact row length.
   */
  maxRowChars?: number | undefined;
}

/** What one step gave: the header's shape if it was read in this step, then the data rows completed, in file order. */
export interface CsvStep {
  header: CsvShape | undefined;
  rows: CsvRow[];
  /** Each row's first line, when lines are counted. */
  lines: number[] | undefined;
}

/** Everything the parser knows between steps. */
export interface CsvParserState {
  readonly start: CsvStart | undefined;
  readonly lineNumbers: boolean;
  readonly encoding: string;
  readonly chunkChars: number;
  readonly maxRowChars: number;
  readonly decoder: StrictDecoder;
  /** Line feeds in all the text decoded so far: an undecodable byte is named by its line. */
  readonly fileLines: LineCounter;
  /** The header's width, counted as it arrives, so a header too wide is never held (absent for a later part). */
  readonly headerWidth: HeaderWidth | undefined;
  /** The line the next parsed row starts on (kept only when lines are counted). */
  nextLine: number;
  /** The slice decoded before the last (its last bytes only, between steps), and the last: to locate undecodable bytes. */
  previousSlice: Uint8Array | undefined;
  lastSlice: Uint8Array | undefined;
  lastSliceOffset: number;
  /** Line feeds in the text before the last slice: an undecodable byte's line counts from there. */
  lineFeedsBeforeSlice: number;
  /** The parser's own copy of the last slice, so no view of the caller's memory outlives a step. */
  sliceCopy: Buffer | undefined;
  /** Decoded text not parsed yet (the unfinished last row, and what came after it). */
  pending: string;
  bytesRead: number;
  /** Text arrived (a later part of the file starts with a row: a U+FEFF there is data, not a byte order mark). */
  started: boolean;
  parser: Papa.Parser | undefined;
  newline: CsvShape['newline'] | undefined;
  headerSeen: boolean;
  columnCount: number;
  dataRowsSeen: number;
  /** The header's field count as the parse under way began (undefined: the header is among its rows). */
  headerFieldsBefore: number | undefined;
  /**
   * Parse again only once the text has doubled since a parse that left an unfinished row: a long
   * quoted field is then re-scanned a logarithmic number of times, not once per input slice.
   */
  parseAt: number;
}

const DEFAULT_CHUNK_CHARS = 32 * 1024;
const DEFAULT_MAX_ROW_CHARS = 16 << 20;
/**
 * Bytes are decoded a slice at a time: strings stay small enough to die young in V8's new space
 * instead of piling up as megabyte-sized garbage in the large-object space (sources read 1 MB chunks).
 */
export const DECODE_SLICE_BYTES = 32 * 1024;
/** What a UTF-8 character begun in the previous slice can have left there. */
export const CARRIED_BYTES = 3;

/** The state of a parser before any input. */
export const startCsv = (options: CsvParserOptions = {}): CsvParserState => {
  const { start } = options;
  const encoding = options.encoding ?? DEFAULT_ENCODING;
  const maxRowChars = options.maxRowChars ?? DEFAULT_MAX_ROW_CHARS;
  const chunkChars = options.chunkChars ?? DEFAULT_CHUNK_CHARS;
  return {
    start,
    lineNumbers: options.lineNumbers ?? false,
    encoding,
    chunkChars,
    maxRowChars,
    decoder: strictDecoder(encoding),
    fileLines: new LineCounter(start?.line),
    headerWidth: start === undefined ? new HeaderWidth(maxRowChars) : undefined,
    nextLine: start?.line ?? 1,
    previousSlice: undefined,
    lastSlice: undefined,
    lastSliceOffset: 0,
    lineFeedsBeforeSlice: 0,
    sliceCopy: undefined,
    pending: '',
    bytesRead: start?.byte ?? 0,
    started: start !== undefined,
    parser: undefined,
    newline: undefined,
    headerSeen: start !== undefined,
    columnCount: start?.shape.columnCount ?? 0,
    dataRowsSeen: 0,
    headerFieldsBefore: undefined,
    parseAt: chunkChars,
  };
};
