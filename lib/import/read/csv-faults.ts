import { ImportInputError } from './import-input-error.ts';

// What the CSV parser (csv-parser.ts) refuses, and how it finds it in what papaparse gave.

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

export const MALFORMED_QUOTE =
  'has a quoted field with more text after its closing quote (a quote inside a quoted field is written twice: "")';
export const UNCLOSED_QUOTE = 'starts a quoted field that never closes: the file ends inside it';

/** A blank line, as papaparse gives it: not a row. */
export const isEmptyLine = (row: readonly string[]): boolean => row.length === 1 && row[0] === '';

/**
 * The first of `rows` with more fields than the header (of `headerFields` fields, or when undefined
 * the first row that is not blank), or -1.
 */
export const firstTooWideRow = (rows: readonly (readonly string[])[], headerFields: number | undefined): number => {
  let fields = headerFields;
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    if (isEmptyLine(row)) continue;
    if (fields === undefined) fields = row.length;
    else if (row.length > fields) return index;
  }
  return -1;
};

export interface ParseError {
  code: string;
  row?: number;
}

/**
 * The first parsed row (its index among `rowsParsed`) holding a closing quote followed by more text,
 * or -1. An unfinished last row (not `final`) is parsed again once more text came, and counts then.
 */
export const malformedQuoteRow = (errors: readonly ParseError[], rowsParsed: number, final: boolean): number => {
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
export const refuseBareCarriageReturns = (text: string): void => {
  const lf = text.indexOf('\n');
  const cr = text.indexOf('\r');
  if (cr === -1 || (lf === -1 ? cr === text.length - 1 : cr >= lf - 1)) return;
  if (text.lastIndexOf('\u0000', cr) !== -1) return;
  throw new ImportInputError(
    'CSV lines end in CR alone (classic Mac OS line endings): save or convert the file with LF or CRLF line endings',
  );
};
