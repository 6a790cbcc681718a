import { ImportInputError } from './import-input-error.ts';
import { ENCODING_OPTION } from './source-encoding.ts';

/** The columns every chat CSV must have (any order, extra columns ignored). */
export const REQUIRED_COLUMNS = [
  'TICKET_CREATED_AT',
  'TICKET_REQUESTER_ID',
  'COMMENT_PART_ID',
  'CONVERSATION_ID',
  'COMMENT_PUBLIC',
  'BODY',
  'COMMENT_CREATED_AT',
  'AUTHOR_ID',
  'NAME',
  'EMAIL',
] as const;

export type RequiredColumn = (typeof REQUIRED_COLUMNS)[number];

/** Where each required column sits in a row array (rows stay arrays: no per-row objects). */
export type ColumnMap = Readonly<Record<RequiredColumn, number>>;

/** Maps the header to column positions; a missing required column fails naming every one missing. */
export const columnMapFromHeader = (header: readonly string[]): ColumnMap => {
  const positions = new Map<string, number>();
  header.forEach((name, index) => {
    const key = name.trim();
    // The first of two equally named columns wins, as a reader scanning left to right would take it.
    if (!positions.has(key)) positions.set(key, index);
  });
  const missing = REQUIRED_COLUMNS.filter((column) => !positions.has(column));
  if (missing.length > 0) {
    // UTF-16 read as UTF-8 decodes without an error (ASCII letters each with a NUL beside them), and
    // then only its column names come out wrong: say what the file probably is.
    const utf16 = header.some((name) => name.includes('\u0000'))
      ? `; the header holds NUL characters, as UTF-16 text read as UTF-8 does: name its encoding with ${ENCODING_OPTION}: utf-16le or utf-16be`
      : '';
    // Names are matched case-sensitively; an export that wrote them in another case gets told so.
    const otherCase = missing.flatMap((column) => {
      const found = [...positions.keys()].find((name) => name.toUpperCase() === column);
      return found === undefined ? [] : [`"${found}"`];
    });
    const caseHint = otherCase.length > 0 ? `; the header has ${otherCase.join(', ')}: column names must be upper case as listed` : '';
    throw new ImportInputError(`CSV header is missing required column(s): ${missing.join(', ')}${caseHint}${utf16}`);
  }
  return Object.fromEntries(REQUIRED_COLUMNS.map((column) => [column, positions.get(column)!])) as ColumnMap;
};
