import { ImportInputError } from './import-input-error.ts';
import { ENCODING_OPTION } from './source-encoding.ts';
import { REQUIRED_COLUMNS, type RequiredColumn } from '../formats/assets.ts';

/** Where each required column sits in a row array (rows stay arrays: no per-row objects). */
export type ColumnMap = Readonly<Record<RequiredColumn, number>>;

/** Other separators spreadsheet exports use, where a comma-separated file was meant. */
const OTHER_SEPARATORS = [';', '\t', '|'] as const;

/**
 * Why a header that names no column as expected may still be an export's: a spreadsheet's `sep=`
 * first line, or names separated by something other than commas.
 */
const layoutHint = (header: readonly string[]): string => {
  // `sep=,` comes back as two cells, `sep=` and an empty one.
  const line = header.join(',').trim();
  if (header.length <= 2 && /^sep=.?$/i.test(line)) return `; the first line is a spreadsheet's "${line}" line, not the header: remove it`;
  for (const separator of OTHER_SEPARATORS) {
    const names = header.flatMap((cell) => cell.split(separator).map((name) => name.trim()));
    if (header.some((cell) => cell.includes(separator)) && REQUIRED_COLUMNS.some((column) => names.includes(column))) {
      return `; the header's names are separated by ${separator === '\t' ? 'tabs' : `"${separator}"`}: the import reads comma-separated values`;
    }
  }
  return '';
};

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
    throw new ImportInputError(`CSV header is missing required column(s): ${missing.join(', ')}${caseHint}${layoutHint(header)}${utf16}`);
  }
  return Object.fromEntries(REQUIRED_COLUMNS.map((column) => [column, positions.get(column)!])) as ColumnMap;
};
