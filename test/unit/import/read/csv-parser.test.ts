import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REQUIRED_COLUMNS } from '../../../../lib/import/formats/assets.ts';
import { CsvRowError } from '../../../../lib/import/read/csv-faults.ts';
import { endCsv, pushCsv, settleCsv } from '../../../../lib/import/read/csv-parser.ts';
import { startCsv, type CsvParserOptions, type CsvRow, type CsvShape } from '../../../../lib/import/read/csv-state.ts';
import { MAX_COLUMNS } from '../../../../lib/import/read/header-width.ts';

const HEADER = REQUIRED_COLUMNS.join(',');

interface Parsed {
  header: CsvShape | undefined;
  rows: CsvRow[];
  lines: number[];
}

/** Steps the parser over `pieces`, then ends it: everything it gave, in order. */
const parse = (pieces: readonly (Uint8Array | string)[], options: CsvParserOptions = {}): Parsed => {
  const state = startCsv({ lineNumbers: true, ...options });
  const parsed: Parsed = { header: undefined, rows: [], lines: [] };
  const take = (step: ReturnType<typeof pushCsv>): void => {
    if (step.header !== undefined) parsed.header = step.header;
    parsed.rows.push(...step.rows);
    parsed.lines.push(...(step.lines ?? []));
  };
  for (const piece of pieces) take(pushCsv(state, piece));
  take(endCsv(state));
  return parsed;
};

/** `bytes` cut at `cuts` (positions, any order, repeats allowed). */
const cutAt = (bytes: Buffer, cuts: readonly number[]): Buffer[] => {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, to));
    from = to;
  }
  return pieces;
};

/** A cell a chat export may hold: plain, or quoted with commas, quotes, newlines and characters of several bytes. */
const cell = fc.oneof(
  fc.stringMatching(/^[a-z0-9 @.]{0,8}$/),
  fc.array(fc.constantFrom('a', ',', '""', '\n', '\r\n', 'é', '€', '😀', ' '), { maxLength: 8 }).map((parts) => `"${parts.join('')}"`),
);
const row = fc.array(cell, { minLength: 1, maxLength: REQUIRED_COLUMNS.length }).map((cells) => cells.join(','));
const csv = fc
  .tuple(fc.array(row, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.boolean())
  .map(([rows, newline, bom, lastNewline]) => {
    const text = [HEADER, ...rows].join(newline) + (lastNewline ? newline : '');
    return Buffer.from(bom ? `\uFEFF${text}` : text);
  });

describe('the CSV parser, a step at a time', () => {
  it('gives the header and rows with their lines from its steps, holding no I/O', () => {
    const state = startCsv({ lineNumbers: true });
    const first = pushCsv(state, Buffer.from(`${HEADER}\n1,"two\nlines"\n`));
    expect(first.header?.columnCount).toBe(REQUIRED_COLUMNS.length);
    expect(first.header?.newline).toBe('\n');
    expect(first.rows).toEqual([['1', 'two\nlines']]);
    expect(first.lines).toEqual([2]);
    expect(pushCsv(state, Buffer.from('3,fo')).rows).toEqual([]);
    const settled = settleCsv(state);
    expect(settled.atRowStart).toBe(false);
    expect(pushCsv(state, '\n').rows).toEqual([]);
    expect(settleCsv(state)).toEqual({ header: undefined, rows: [['3', 'fo']], lines: [4], atRowStart: true });
    expect(endCsv(state).rows).toEqual([]);
    expect(state.bytesRead).toBe(Buffer.byteLength(`${HEADER}\n1,"two\nlines"\n3,fo\n`));
  });

  it('gives the same header, rows and lines however the input is cut', () => {
    fc.assert(
      fc.property(csv, fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (bytes, cuts, chunkChars) => {
        const whole = parse([bytes]);
        expect(parse(cutAt(bytes, cuts), { chunkChars })).toEqual(whole);
      }),
    );
  });

  it('refuses a header of more than 1,000 columns however it is cut, keeping no text past the bound', () => {
    const header = [...REQUIRED_COLUMNS, ...Array.from({ length: MAX_COLUMNS }, (_unused, n) => `EXTRA_${n}`)].join(',');
    const bytes = Buffer.from(`${header}\n1,2\n`);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
        const state = startCsv();
        let error: unknown;
        try {
          for (const piece of cutAt(bytes, cuts)) {
            pushCsv(state, piece);
            // Once the count is past the bound, the header's text is no longer kept.
            if (state.headerWidth!.tooWide) expect(state.pending).toBe('');
          }
          endCsv(state);
        } catch (caught) {
          error = caught;
        }
        expect((error as Error).message).toBe(
          `CSV header has ${REQUIRED_COLUMNS.length + MAX_COLUMNS} columns; an import reads at most 1000`,
        );
        expect(state.parser).toBeUndefined();
      }),
    );
  });

  it('names a row with more fields than the header by its data row and line, however the input is cut', () => {
    const bytes = Buffer.from(`${HEADER}\n1\n"a\nb"\n${'x,'.repeat(REQUIRED_COLUMNS.length)}x\n`);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (cuts) => {
        expect(() => parse(cutAt(bytes, cuts))).toThrowError(CsvRowError);
        expect(() => parse(cutAt(bytes, cuts))).toThrowError(/^CSV data row 3 \(line 5\) has 11 fields but the header has 10/);
      }),
    );
  });

  it('keeps no view of a pushed chunk: the caller may fill its memory again', () => {
    const state = startCsv({ lineNumbers: true });
    const memory = Buffer.from(`${HEADER}\n1,2\n`);
    pushCsv(state, memory);
    memory.fill(0xff);
    pushCsv(state, Buffer.from([0xc3]));
    expect(() => endCsv(state)).toThrowError(/undecodable bytes on line 3, at byte offset/);
  });
});
