import fc from 'fast-check';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { cutsApplyTo, RowCuts } from '../../../../lib/import/read/row-cuts.ts';

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** Every cut RowCuts finds in `text` fed in pieces of `pieceBytes`, as offsets in the whole text. */
const cutsIn = (text: string, newline: '\n' | '\r\n', pieceBytes: number): number[] => {
  const cuts = new RowCuts();
  const all = bytes(text);
  const found: number[] = [];
  for (let start = 0; start < all.length; start += pieceBytes) {
    let piece = all.subarray(start, start + pieceBytes);
    let offset = start;
    for (let cut = cuts.cut(piece, newline); cut !== -1; cut = cuts.cut(piece, newline)) {
      found.push(offset + cut);
      piece = piece.subarray(cut);
      offset += cut;
    }
  }
  return found;
};

describe('cutting a CSV between rows by its bytes', () => {
  it('cuts after each newline outside quotes, never inside a quoted field', () => {
    const text = 'a,b\n1,"x\ny"\n2,"say ""hi""\n"\n';
    expect(cutsIn(text, '\n', text.length)).toEqual([4, 12, 28]);
  });

  it('cuts a CRLF file only after CR LF, a CR in the piece before counting', () => {
    const text = 'a,b\r\n1,x\ny\r\n2,3\r\n';
    expect(cutsIn(text, '\r\n', text.length)).toEqual([5, 12, 17]);
    expect(cutsIn(text, '\r\n', 1)).toEqual([5, 12, 17]);
    expect(cutsIn(text, '\r\n', 4)).toEqual([5, 12, 17]);
  });

  it('counts the line feeds followed, cut or not, so a part knows its first line', () => {
    const cuts = new RowCuts();
    cuts.follow(bytes('h\n"a\nb"\n'));
    expect(cuts.lineFeeds).toBe(3);
    expect(cuts.cut(bytes('x\ny'), '\n')).toBe(2);
    expect(cuts.lineFeeds).toBe(4);
    expect(cuts.cut(bytes('y'), '\n')).toBe(-1);
    expect(cuts.lineFeeds).toBe(4);
  });

  it('cuts any well-formed CSV, fed in any pieces, after every row and nowhere else', () => {
    const cell = fc.stringMatching(/^[a-z",\n ]{0,6}$/).map((value) => (/[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value));
    const rows = fc.array(
      fc.array(cell, { minLength: 1, maxLength: 3 }).map((cells) => `${cells.join(',')}\n`),
      { minLength: 1, maxLength: 20 },
    );
    fc.assert(
      fc.property(rows, fc.integer({ min: 1, max: 40 }), (lines, pieceBytes) => {
        const text = lines.join('');
        const rowEnds = lines.map((_line, index) => lines.slice(0, index + 1).join('').length);
        expect(cutsIn(text, '\n', pieceBytes)).toEqual(rowEnds);
        // …and each part reads as its own rows.
        const parse = (part: string): string[][] => Papa.parse<string[]>(part, { newline: '\n' }).data.slice(0, -1);
        expect(lines.flatMap(parse)).toEqual(parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('follows quote parity over any bytes, however they are split and aligned', () => {
    const text = fc.array(fc.constantFrom('"', 'a', ',', '\n', 'é'), { maxLength: 200 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        text,
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 6 }),
        fc.integer({ min: 0, max: 3 }),
        (content, splits, shift) => {
          // A buffer starting `shift` bytes into its memory, so words fall anywhere.
          const memory = Buffer.alloc(shift + Buffer.byteLength(content));
          memory.write(content, shift);
          const all = memory.subarray(shift);
          const cuts = new RowCuts();
          let from = 0;
          for (const split of [...splits].sort((a, b) => a - b)) {
            const to = Math.min(split, all.length);
            if (to > from) cuts.follow(all.subarray(from, to));
            from = Math.max(from, to);
          }
          cuts.follow(all.subarray(from));
          const quotes = content.split('"').length - 1;
          // Outside quotes, a newline is a cut at once; inside, there is none.
          expect(cuts.cut(bytes('\n'), '\n')).toBe(quotes % 2 === 0 ? 1 : -1);
          expect(cuts.lineFeeds).toBe(content.split('\n').length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('applies to UTF-8 and single-byte encodings only', () => {
    expect(cutsApplyTo('utf-8')).toBe(true);
    expect(cutsApplyTo('windows-1252')).toBe(true);
    expect(cutsApplyTo('iso-8859-15')).toBe(true);
    expect(cutsApplyTo('utf-16le')).toBe(false);
    expect(cutsApplyTo('shift_jis')).toBe(false);
    expect(cutsApplyTo('iso-2022-jp')).toBe(false);
  });
});
