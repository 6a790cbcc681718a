import Papa from 'papaparse';
import { REQUIRED_COLUMNS } from '../formats/assets.ts';
import { columnMapFromHeader } from './chat-columns.ts';
import {
  CsvRowError,
  firstTooWideRow,
  isEmptyLine,
  MALFORMED_QUOTE,
  malformedQuoteRow,
  refuseBareCarriageReturns,
  UNCLOSED_QUOTE,
  type ParseError,
} from './csv-faults.ts';
import { CARRIED_BYTES, DECODE_SLICE_BYTES, type CsvParserState, type CsvStep } from './csv-state.ts';
import { ImportInputError } from './import-input-error.ts';
import { countLineFeeds } from './line-count.ts';
import { DEFAULT_ENCODING, ENCODING_OPTION, locateInvalidBytes } from './source-encoding.ts';

// The CSV parser as a step function over an explicit state (csv-state.ts): input in, rows out, no I/O
// and no callbacks (docs/architecture.md, "Reading the CSV"); read-csv.ts feeds it from a stream.

const noRows = (): CsvStep => ({ header: undefined, rows: [], lines: undefined });

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
 * The error for `rows[index]` (parsed from `text`), named by its data row and line: counted here,
 * as only a failing run needs them. Undefined when an earlier row has more fields than the header,
 * the first fault, which the field-count check names.
 */
const rowError = (
  state: CsvParserState,
  rows: readonly (readonly string[])[],
  index: number,
  text: string,
  problem: string,
): ImportInputError | undefined => {
  let line = state.fileLines.line - countLineFeeds(text);
  let dataRow = state.dataRowsSeen;
  let headerFields = state.headerFieldsBefore;
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

/** Parses the pending text (all of it when `final`), adding the header and data rows completed to `out`. */
const parsePending = (state: CsvParserState, final: boolean, out: CsvStep): void => {
  const { start } = state;
  state.headerFieldsBefore = state.headerSeen ? state.columnCount : undefined;
  if (state.parser === undefined && start === undefined) refuseBareCarriageReturns(state.pending);
  const newline = (state.newline ??= start?.shape.newline ?? detectNewline(state.pending));
  state.parser ??= new Papa.Parser({ delimiter: ',', quoteChar: '"', newline });
  const parsed = state.pending;
  const results = state.parser.parse(parsed, 0, !final) as { data: string[][]; errors: ParseError[]; meta: { cursor: number } };
  const malformed = malformedQuoteRow(results.errors, results.data.length, final);
  if (malformed !== -1) {
    // Under a CRLF header, a quoted last field of an LF row closes before a bare LF, which reads as
    // text after the quote: the row runs on into the next, which is the real fault.
    const mixed = newline === '\r\n' && results.data[malformed]!.some((cell) => cell.includes('"\n'));
    const problem = mixed ? `${MALFORMED_QUOTE}; or rows with mixed line endings (LF rows under a CRLF header)` : MALFORMED_QUOTE;
    const error = rowError(state, results.data, malformed, parsed, problem);
    if (error !== undefined) throw error;
  }
  if (final) {
    // The unclosed row is the last one parsed. (Without an error here, an earlier row has more
    // fields than the header: the field-count check below names it.)
    const unclosed = results.errors.some((error) => error.code === 'MissingQuotes')
      ? rowError(state, results.data, results.data.length - 1, parsed, UNCLOSED_QUOTE)
      : undefined;
    if (unclosed !== undefined) throw unclosed;
    state.pending = '';
  } else {
    state.pending = state.pending.slice(results.meta.cursor);
    if (state.pending.length > state.maxRowChars) {
      // The unfinished row is all that is left: it starts after every row parsed.
      const problem = `is longer than ${state.maxRowChars} characters, the most one row may hold (a quote that never closes?)`;
      const overlong = rowError(state, results.data, results.data.length, parsed, problem);
      if (overlong !== undefined) throw overlong;
    }
    state.parseAt = Math.max(state.chunkChars, Math.min(2 * state.pending.length, state.maxRowChars + 1));
  }
  let rows = results.data;
  let lines: number[] | undefined;
  if (state.lineNumbers) {
    lines = [];
    for (const row of rows) {
      lines.push(state.nextLine);
      state.nextLine += linesOf(row);
    }
  }
  if (!state.headerSeen) {
    let first = 0;
    while (first < rows.length && isEmptyLine(rows[first]!)) first += 1;
    if (first === rows.length) return;
    const columns = columnMapFromHeader(rows[first]!);
    state.headerSeen = true;
    state.columnCount = rows[first]!.length;
    out.header = { columns, columnCount: state.columnCount, newline };
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
  const tooWide = firstTooWideRow(results.data, state.headerFieldsBefore);
  if (tooWide !== -1) {
    const problem = `has ${results.data[tooWide]!.length} fields but the header has ${state.columnCount} (rows with mixed line endings, or a comma in an unquoted field?)`;
    throw rowError(state, results.data, tooWide, parsed, problem)!;
  }
  state.dataRowsSeen += dataRows.length;
  if (dataRows.length === 0) return;
  // One parse per step is the rule (the stream wrapper pushes a slice at a time): its arrays are taken as they are.
  if (out.rows.length === 0) {
    out.rows = dataRows;
    out.lines = lines;
  } else {
    for (const row of dataRows) out.rows.push(row);
    if (lines !== undefined) for (const line of lines) out.lines!.push(line);
  }
};

/** The error for the last slice's undecodable bytes, named by line and byte offset. */
const invalidBytes = (state: CsvParserState, final: boolean): ImportInputError => {
  const { encoding, lastSliceOffset } = state;
  const lastSlice = state.lastSlice!;
  const offset = locateInvalidBytes(encoding, state.previousSlice, lastSlice, lastSliceOffset, final);
  const [first, second] = [lastSlice[0], lastSlice[1]];
  if (offset === 0 && ((first === 0xff && second === 0xfe) || (first === 0xfe && second === 0xff))) {
    return new ImportInputError(
      `CSV starts with a UTF-16 byte-order mark but is read as ${encodingName(encoding)}: name its encoding with ${ENCODING_OPTION}: ` +
        (first === 0xff ? 'utf-16le' : 'utf-16be'),
    );
  }
  // Lines before the slice were counted as decoded; those in its valid part are decoded again here
  // (at the end of the file that part was decoded and counted already, so count from the slice's start).
  const before = new TextDecoder(encoding).decode(lastSlice.subarray(0, Math.max(0, offset - lastSliceOffset)));
  const line = 1 + state.lineFeedsBeforeSlice + countLineFeeds(before);
  return new ImportInputError(
    `CSV is not valid ${encodingName(encoding)}: undecodable bytes on line ${line}, at byte offset ${offset} (from 0); ` +
      `name the file's encoding with ${ENCODING_OPTION}, e.g. windows-1252`,
  );
};

/** Takes decoded text: the header's width first, then parses once enough is pending. */
const consume = (state: CsvParserState, text: string, out: CsvStep): void => {
  state.fileLines.follow(text);
  const { headerWidth } = state;
  if (headerWidth !== undefined && !headerWidth.done) {
    headerWidth.follow(text);
    // Too wide: the count goes on to the header's end, without its text.
    if (headerWidth.tooWide) {
      state.pending = '';
      return;
    }
  }
  state.pending += text;
  if (!state.started && state.pending.length > 0) {
    state.started = true;
    if (state.pending.charCodeAt(0) === 0xfeff) state.pending = state.pending.slice(1);
  }
  const { pending } = state;
  const waiting = state.parser === undefined && state.start === undefined;
  // The newline is guessed from the header row, so wait until it is complete. Lines ending in CR
  // alone never complete it: refused while waiting (the first parse checks the header it reads).
  if (waiting && !pending.includes('\n') && pending.length <= state.maxRowChars) {
    refuseBareCarriageReturns(pending);
    return;
  }
  if (pending.length >= state.parseAt || (state.parser === undefined && pending.includes('\n'))) parsePending(state, false, out);
};

/** Keeps what locating undecodable bytes later needs in the parser's own memory: the caller may reuse its chunk. */
const ownSlices = (state: CsvParserState): void => {
  const { previousSlice, lastSlice } = state;
  if (previousSlice !== undefined)
    state.previousSlice = Buffer.from(previousSlice.subarray(Math.max(0, previousSlice.length - CARRIED_BYTES)));
  if (lastSlice === undefined || lastSlice.buffer === state.sliceCopy?.buffer) return;
  if (state.sliceCopy === undefined || state.sliceCopy.length < lastSlice.length)
    state.sliceCopy = Buffer.allocUnsafeSlow(Math.max(DECODE_SLICE_BYTES, lastSlice.length));
  state.sliceCopy.set(lastSlice);
  state.lastSlice = state.sliceCopy.subarray(0, lastSlice.length);
};

/** Takes the next piece of input (bytes in the parser's encoding, or text): gives the rows it completed. */
export const pushCsv = (state: CsvParserState, chunk: Uint8Array | string): CsvStep => {
  const out = noRows();
  if (typeof chunk === 'string') {
    state.bytesRead += Buffer.byteLength(chunk);
    consume(state, chunk, out);
    return out;
  }
  for (let at = 0; at < chunk.length; at += DECODE_SLICE_BYTES) {
    const slice = chunk.subarray(at, at + DECODE_SLICE_BYTES);
    state.previousSlice = state.lastSlice;
    state.lastSlice = slice;
    state.lastSliceOffset = state.bytesRead;
    state.lineFeedsBeforeSlice = state.fileLines.lineFeeds;
    state.bytesRead += slice.length;
    let text: string;
    try {
      text = state.decoder.decode(slice, { stream: true });
    } catch {
      throw invalidBytes(state, false);
    }
    consume(state, text, out);
  }
  ownSlices(state);
  return out;
};

/** Parses what was pushed so far: `atRowStart` when it ended exactly at the end of a row (nothing left over). */
export const settleCsv = (state: CsvParserState): CsvStep & { atRowStart: boolean } => {
  const out = noRows();
  if (state.pending.length > 0) parsePending(state, false, out);
  return { ...out, atRowStart: state.pending.length === 0 };
};

/** No more input: parses the rest (a quote left open fails here), and checks there was a header. */
export const endCsv = (state: CsvParserState): CsvStep => {
  const out = noRows();
  try {
    state.pending += state.decoder.decode();
  } catch {
    throw invalidBytes(state, true);
  }
  state.headerWidth?.end();
  if (!state.started && state.pending.charCodeAt(0) === 0xfeff) state.pending = state.pending.slice(1);
  if (state.pending.length > 0) parsePending(state, true, out);
  if (!state.headerSeen) {
    throw new ImportInputError(`CSV is empty: no header row (required columns: ${REQUIRED_COLUMNS.join(', ')})`);
  }
  return out;
};
