import { describe, expect, it } from 'vitest';
import { ImportInputError } from '../../../../lib/import/read/import-input-error.ts';
import { REQUIRED_COLUMNS } from '../../../../lib/import/formats/assets.ts';
import { columnMapFromHeader, type ColumnMap } from '../../../../lib/import/read/chat-columns.ts';
import { CsvRowError } from '../../../../lib/import/read/csv-faults.ts';
import type { CsvRow } from '../../../../lib/import/read/csv-state.ts';
import { makeCsvReader, type ReadCsvOptions } from '../../../../lib/import/read/read-csv.ts';
import { failureOf } from '../../../support/failure-of.ts';

/** A whole input through the reader, chunk by chunk, as the read side feeds it. */
const readCsv = async (input: AsyncIterable<Buffer | string>, options: ReadCsvOptions): Promise<void> => {
  const reader = makeCsvReader(options);
  for await (const chunk of input) await reader.push(chunk);
  await reader.end();
};

const HEADER = REQUIRED_COLUMNS.join(',');

async function* chunksOf(parts: readonly (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

const read = async (parts: readonly (string | Buffer)[], chunkChars?: number, more: { encoding?: string } = {}) => {
  const rows: CsvRow[] = [];
  const lines: number[] = [];
  let columns: ColumnMap | undefined;
  let bytes = 0;
  await readCsv(chunksOf(parts), {
    ...more,
    lineNumbers: true,
    onHeader: (shape) => {
      columns = shape.columns;
    },
    onRows: (batch, batchLines) => {
      rows.push(...batch);
      lines.push(...batchLines!);
    },
    onBytes: (count) => {
      bytes = count;
    },
    ...(chunkChars === undefined ? {} : { chunkChars }),
  });
  return { rows, lines, columns: columns!, bytes };
};

/** Splits `text` (or bytes) into pieces of `size` bytes, cutting multi-byte characters apart on purpose. */
const byteChunks = (text: string | Buffer, size: number): Buffer[] => {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const pieces: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += size) pieces.push(bytes.subarray(start, start + size));
  return pieces;
};

describe('columnMapFromHeader', () => {
  it('maps required columns in any order and ignores extra ones', () => {
    const columns = columnMapFromHeader(['EXTRA', ...[...REQUIRED_COLUMNS].reverse(), 'OTHER']);
    expect(columns.EMAIL).toBe(1);
    expect(columns.TICKET_CREATED_AT).toBe(10);
  });

  it('names every missing column in the error', () => {
    const header = REQUIRED_COLUMNS.filter((column) => column !== 'BODY' && column !== 'EMAIL');
    expect(() => columnMapFromHeader(header)).toThrowError(new ImportInputError('CSV header is missing required column(s): BODY, EMAIL'));
  });

  it.each([
    [
      "a spreadsheet's sep= line before the header",
      ['sep=', ''],
      '; the first line is a spreadsheet\'s "sep=," line, not the header: remove it',
    ],
    [
      'names separated by semicolons',
      [REQUIRED_COLUMNS.join(';')],
      '; the header\'s names are separated by ";": the import reads comma-separated values',
    ],
    [
      'names separated by tabs',
      [REQUIRED_COLUMNS.join('\t')],
      "; the header's names are separated by tabs: the import reads comma-separated values",
    ],
  ])('says why a header matches nothing when it is %s', (_case, header, hint) => {
    expect(() => columnMapFromHeader(header)).toThrowError(
      new ImportInputError(`CSV header is missing required column(s): ${REQUIRED_COLUMNS.join(', ')}${hint}`),
    );
  });

  it('says which missing columns the header has in another case (names match case-sensitively)', () => {
    const header = REQUIRED_COLUMNS.map((column) => (column === 'BODY' ? 'body' : column === 'EMAIL' ? ' Email ' : column));
    expect(() => columnMapFromHeader(header)).toThrowError(
      new ImportInputError(
        'CSV header is missing required column(s): BODY, EMAIL; the header has "body", "Email": column names must be upper case as listed',
      ),
    );
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ])('says a UTF-16 file without a byte-order mark, read as UTF-8, is probably UTF-16 (%s lines)', async (_label, newline) => {
    const bytes = Buffer.from(`${HEADER}${newline}1,2,3,4,5,6,7,8,9,10${newline}`, 'utf16le');
    await expect(readCsv(chunksOf(byteChunks(bytes, 7)), { onRows: () => {} })).rejects.toThrowError(
      /^CSV header is missing required column\(s\): .*; the header holds NUL characters, as UTF-16 text read as UTF-8 does: name its encoding with --encoding/,
    );
  });

  it.each([
    ['utf16le', 0xff, 0xfe, 'utf-16le'],
    ['utf16be', 0xfe, 0xff, 'utf-16be'],
  ] as const)('says a file starting with a UTF-16 byte-order mark (%s), read as UTF-8, is UTF-16', async (_label, first, second, name) => {
    const bytes = Buffer.concat([Buffer.from([first, second]), Buffer.from(`${HEADER}\n`, 'utf16le')]);
    await expect(readCsv(chunksOf([bytes]), { onRows: () => {} })).rejects.toThrowError(
      `CSV starts with a UTF-16 byte-order mark but is read as UTF-8: name its encoding with --encoding (command line) or "encoding" (event): ${name}`,
    );
  });

  it('says a header read with NUL characters is probably UTF-16, naming the option', () => {
    const header = Buffer.from(`${REQUIRED_COLUMNS.join(',')}`, 'utf16le')
      .toString('utf8')
      .split(',');
    expect(() => columnMapFromHeader(header)).toThrowError(
      `CSV header is missing required column(s): ${REQUIRED_COLUMNS.join(', ')}; the header holds NUL characters, as UTF-16 text read as UTF-8 does: name its encoding with --encoding (command line) or "encoding" (event): utf-16le or utf-16be`,
    );
  });

  it('tolerates whitespace around header names', () => {
    const columns = columnMapFromHeader(REQUIRED_COLUMNS.map((column) => ` ${column} `));
    expect(columns.NAME).toBe(REQUIRED_COLUMNS.indexOf('NAME'));
  });
});

describe('readCsv', () => {
  it('reads rows as arrays indexed by the column map', async () => {
    const { rows, columns } = await read([`X,${HEADER}\nextra,a,b,c,d,e,f,g,h,i,j\n`]);
    expect(rows).toEqual([['extra', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']]);
    expect(rows[0]![columns.EMAIL]).toBe('j');
  });

  it('strips a UTF-8 BOM before the header', async () => {
    const { columns } = await read([`\ufeff${HEADER}\n1,2,3,4,5,6,7,8,9,10\n`]);
    expect(columns.TICKET_CREATED_AT).toBe(0);
  });

  it('strips a BOM split across the first chunks', async () => {
    const bytes = Buffer.from(`\ufeff${HEADER}\n1,2,3,4,5,6,7,8,9,10\n`);
    const { rows, columns } = await read([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)]);
    expect(columns.TICKET_CREATED_AT).toBe(0);
    expect(rows).toHaveLength(1);
  });

  it('reads CRLF files without leaving carriage returns in the last column', async () => {
    const { rows } = await read([`${HEADER}\r\n1,2,3,4,5,6,7,8,9,a@b.c\r\n1,2,3,4,5,6,7,8,9,d@e.f\r\n`]);
    expect(rows.map((row) => row[9])).toEqual(['a@b.c', 'd@e.f']);
  });

  it('keeps quoted commas, doubled quotes and newlines (LF and CRLF) inside a field', async () => {
    const body = 'a, "b"\nc\r\nd';
    const { rows } = await read([`${HEADER}\r\n1,2,3,4,5,"${body.replaceAll('"', '""')}",7,8,9,10\r\n`]);
    expect(rows[0]![5]).toBe(body);
  });

  it('carries a row split across chunks, in the middle of a quoted field and of a CRLF', async () => {
    const body = '<p>"quoted", with comma\r\nand newline ünïcödé ✓ 🎉</p>';
    const line = `1,2,3,4,5,"${body.replaceAll('"', '""')}",7,8,9,10\r\n`;
    const text = `${HEADER}\r\n${line.repeat(50)}`;
    for (const size of [1, 3, 7, 64, 1000]) {
      const { rows } = await read(byteChunks(text, size), 16);
      expect(rows).toHaveLength(50);
      expect(rows.every((row) => row[5] === body && row[9] === '10')).toBe(true);
    }
  });

  it('reads a last row without a trailing newline', async () => {
    const { rows } = await read([`${HEADER}\n1,2,3,4,5,6,7,8,9,10`]);
    expect(rows).toHaveLength(1);
  });

  it('skips blank lines, including the one a trailing newline leaves', async () => {
    const { rows } = await read([`${HEADER}\n\n1,2,3,4,5,6,7,8,9,10\n\n\n`]);
    expect(rows).toHaveLength(1);
  });

  it('keeps short rows short (their missing cells are undefined)', async () => {
    const { rows } = await read([`${HEADER}\n1,2,3\n`]);
    expect(rows[0]).toEqual(['1', '2', '3']);
    expect(rows[0]![9]).toBeUndefined();
  });

  it('fails naming the row when a row has more fields than the header (an unquoted comma)', async () => {
    await expect(read([`${HEADER}\n1,2,3,4,5,6,7,8,9,10\n1,2,3,4,5,6,7,8,9,10,11\n`])).rejects.toThrowError(
      new CsvRowError(2, 3, 'has 11 fields but the header has 10 (rows with mixed line endings, or a comma in an unquoted field?)'),
    );
  });

  it.each([1, 9, 4096])(
    'names the line of a row with too many fields after quoted newlines and blank lines (pieces of %i bytes)',
    async (size) => {
      // Data row 3 starts on line 7: row 1's BODY spans two lines, a blank line follows it, row 2's BODY spans two more.
      const text = `${HEADER}\n1,2,3,4,5,"two\nlines",7,8,9,10\n\n1,2,3,4,5,"x\ny",7,8,9,10\n1,2,3,4,5,6,7,8,9,10,11,12\n1,2,3\n`;
      const error = await failureOf(readCsv(chunksOf(byteChunks(text, size)), { onRows: () => undefined, chunkChars: 16 }));
      expect(error).toEqual(
        new CsvRowError(3, 7, 'has 12 fields but the header has 10 (rows with mixed line endings, or a comma in an unquoted field?)'),
      );
    },
  );

  it('names mixed line endings when an LF row under a CRLF header ends in a quoted field', async () => {
    const rows = Array.from({ length: 3 }, (_, index) => `${index},2,3,4,5,6,7,8,9,"ten"`).join('\n');
    await expect(read([`${HEADER}\r\n${rows}\n`])).rejects.toThrowError(
      /^CSV data row 1 \(line 2\) has a quoted field with more text after its closing quote .*; or rows with mixed line endings \(LF rows under a CRLF header\)$/,
    );
  });

  it('fails rather than merge rows when LF rows follow a CRLF header', async () => {
    const rows = Array.from({ length: 3 }, (_, index) => `${index},2,3,4,5,6,7,8,9,10`).join('\n');
    await expect(read([`${HEADER}\r\n${rows}\n`])).rejects.toThrow(/mixed line endings/);
  });

  it.each([1, 5, 4096])('refuses lines that end in CR alone rather than read no rows (pieces of %i bytes)', async (size) => {
    const text = `${HEADER},EXTRA\r${'1,2,3,4,5,6,7,8,9,10,x\r'.repeat(3)}`;
    const delivered: CsvRow[] = [];
    const error = await failureOf(readCsv(chunksOf(byteChunks(text, size)), { onRows: (rows) => void delivered.push(...rows) }));
    expect(error).toBeInstanceOf(ImportInputError);
    expect(error?.message).toBe(
      'CSV lines end in CR alone (classic Mac OS line endings): save or convert the file with LF or CRLF line endings',
    );
    expect(delivered).toEqual([]);
  });

  it('reads a bare CR inside a data row of an LF file as data', async () => {
    const { rows } = await read(byteChunks(`${HEADER}\n1,2,3,4,5,"a\rb",7,8,9,10\n`, 3));
    expect(rows).toHaveLength(1);
    expect(rows[0]![5]).toBe('a\rb');
  });

  it('reads a header-only file as no rows', async () => {
    const { rows } = await read([`${HEADER}\n`]);
    expect(rows).toEqual([]);
  });

  it('reports the bytes consumed', async () => {
    const text = `${HEADER}\n1,2,3,4,5,é,7,8,9,10\n`;
    const { bytes } = await read(byteChunks(text, 5));
    expect(bytes).toBe(Buffer.byteLength(text));
  });

  it('fails an empty file, naming the required columns', async () => {
    await expect(read([])).rejects.toThrowError(/CSV is empty: no header row .*TICKET_CREATED_AT/);
    await expect(read(['\n\n'])).rejects.toBeInstanceOf(ImportInputError);
  });

  it('fails a missing column before delivering a single row', async () => {
    const header = REQUIRED_COLUMNS.filter((column) => column !== 'AUTHOR_ID').join(',');
    const delivered: CsvRow[] = [];
    await expect(
      readCsv(chunksOf([`${header}\n1,2,3,4,5,6,7,8,9\n`]), { onRows: (rows) => void delivered.push(...rows) }),
    ).rejects.toThrowError('CSV header is missing required column(s): AUTHOR_ID');
    expect(delivered).toEqual([]);
  });

  it.each([1, 9, 4096])(
    'fails a file that ends inside a quoted field, naming the row and line where it opens (pieces of %i bytes)',
    async (size) => {
      const text = `${HEADER}\n1,2,3,4,5,"two\nlines",7,8,9,10\n1,2,3,4,5,"never closed,7,8,9,10\n1,2,3\n`;
      await expect(read(byteChunks(text, size))).rejects.toThrowError(
        new CsvRowError(2, 4, 'starts a quoted field that never closes: the file ends inside it'),
      );
    },
  );

  describe('a quoted field with more text after its closing quote', () => {
    // The third data row starts on line 6: the first row's BODY holds a quoted newline, a blank line follows it.
    const rows = [
      `1,2,3,4,5,"two\nlines",7,8,9,10`,
      '',
      '1,2,3,4,5,ok,7,8,9,10',
      `1,2,3,4,5,"Hello" she said,7,8,9,10`,
      '1,2,3,4,5,"Bye",7,8,9,10',
      '1,2,3,4,5,ok,7,8,9,10',
    ];
    const text = `${HEADER}\n${rows.join('\n')}\n`;

    it.each([1, 7, 64, text.length])('fails naming its data row and line, never merging rows (pieces of %i bytes)', async (size) => {
      const delivered: CsvRow[] = [];
      const error = await failureOf(
        readCsv(chunksOf(byteChunks(text, size)), { onRows: (batch) => void delivered.push(...batch), chunkChars: 16 }),
      );
      expect(error).toBeInstanceOf(CsvRowError);
      expect(error?.message).toBe(
        'CSV data row 3 (line 6) has a quoted field with more text after its closing quote (a quote inside a quoted field is written twice: "")',
      );
      expect(delivered.every((row) => row.length === 10 && !row[5]!.includes('Hello'))).toBe(true);
    });

    it('fails on quotes inside a quoted field that are not doubled', async () => {
      await expect(read([`${HEADER}\n1,2,3,4,5,"abc"de"f",7,8,9,10\n`])).rejects.toThrowError('CSV data row 1 (line 2) has a quoted field');
    });

    it('fails in the header, naming it', async () => {
      await expect(read([`"TICKET_CREATED_AT"x,${HEADER}\n`])).rejects.toThrowError(
        'CSV header (line 1) has a quoted field with more text after its closing quote',
      );
    });

    it('leaves the first fault to the field-count check when a row before it has too many fields', async () => {
      await expect(read([`${HEADER}\n1,2,3,4,5,6,7,8,9,10,11\n1,2,3,4,5,"a"b,7,8,9,10\n`])).rejects.toThrowError(
        /^CSV data row 1 \(line 2\) has 11 fields/,
      );
    });

    it('keeps doubled quotes and spaces inside quotes as data', async () => {
      const { rows: read1 } = await read([`${HEADER}\n1,2,3,4,5,"say ""hi"" ",7,8,9,10\n`]);
      expect(read1[0]![5]).toBe('say "hi" ');
    });
  });

  it('fails a quoted field growing past the row limit instead of buffering the whole file', async () => {
    const parts = [`${HEADER}\n1,2,3,4,5,"a\nb",7,8,9,10\n\n1,2,3,4,5,"`, ...Array.from({ length: 20 }, () => 'x'.repeat(100))];
    await expect(readCsv(chunksOf(parts), { onRows: () => {}, chunkChars: 10, maxRowChars: 1000 })).rejects.toThrowError(
      'CSV data row 2 (line 5) is longer than 1000 characters, the most one row may hold (a quote that never closes?)',
    );
  });

  describe("the header's width", () => {
    /** The required columns, then extra ones up to `columns` in all. */
    const wideHeader = (columns: number): string =>
      [...REQUIRED_COLUMNS, ...Array.from({ length: columns - REQUIRED_COLUMNS.length }, (_unused, n) => `EXTRA_${n}`)].join(',');
    const row = Array.from({ length: 10 }, (_unused, n) => String(n + 1)).join(',');

    it('reads a header of exactly 1000 columns', async () => {
      const { rows, columns } = await read(byteChunks(`${wideHeader(1000)}\n${row}\n`, 4096));
      expect(rows).toHaveLength(1);
      expect(columns.EMAIL).toBe(9);
    });

    it.each([1, 97, 65_536])('fails a header of 1001 columns naming the count, before any row (pieces of %i bytes)', async (size) => {
      const delivered: CsvRow[] = [];
      const error = await failureOf(
        readCsv(chunksOf(byteChunks(`\uFEFF\n${wideHeader(1001)}\r\n${row}\r\n`, size)), {
          onRows: (rows) => void delivered.push(...rows),
        }),
      );
      expect(error).toBeInstanceOf(ImportInputError);
      expect(error?.message).toBe('CSV header has 1001 columns; an import reads at most 1000');
      expect(delivered).toEqual([]);
    });

    it('counts commas inside quoted names (doubled quotes too) as text, as the parser does', async () => {
      const quoted = `"${Array.from({ length: 1500 }, () => 'a,""b""').join(',')}"`;
      const { rows } = await read([`${quoted},${HEADER}\n${'x,'}${row}\n`]);
      expect(rows).toEqual([['x', ...row.split(',')]]);
    });

    it('fails a header too wide that ends the file without a line end', async () => {
      await expect(read([wideHeader(1200)])).rejects.toThrowError('CSV header has 1200 columns; an import reads at most 1000');
    });

    it('counts a header of two million columns to its end without holding it', async () => {
      const header = Buffer.from(`${'c,'.repeat(2_000_000 - 1)}c\n${row}\n`);
      await expect(read(byteChunks(header, 64 * 1024))).rejects.toThrowError(
        'CSV header has 2000000 columns; an import reads at most 1000',
      );
    });

    it('stops reading a header too wide that goes on past the row limit, naming the count so far', async () => {
      let pulled = 0;
      async function* endless(): AsyncGenerator<Buffer> {
        for (let piece = 0; piece < 1000; piece += 1) {
          pulled += 1;
          yield Buffer.from('c,'.repeat(8 * 1024));
        }
      }
      const error = await failureOf(readCsv(endless(), { onRows: () => {}, maxRowChars: 100_000 }));
      expect(error?.message).toMatch(/^CSV header has more than \d+ columns in its first \d+ characters; an import reads at most 1000$/);
      const [, columns, characters] = /more than (\d+) columns in its first (\d+)/.exec(error!.message)!.map(Number);
      expect(characters).toBeGreaterThan(100_000);
      expect(columns).toBe(characters! / 2 + 1);
      expect(pulled).toBeLessThanOrEqual(8);
    });
  });

  it('waits for an asynchronous consumer before reading on', async () => {
    const events: string[] = [];
    const text = `${HEADER}\n${'1,2,3,4,5,6,7,8,9,10\n'.repeat(10)}`;
    async function* tracked(): AsyncGenerator<Buffer> {
      for (const piece of byteChunks(text, 50)) {
        events.push('chunk');
        yield piece;
      }
    }
    // Each batch is consumed only when the test lets it finish.
    const consuming: (() => void)[] = [];
    let done = false;
    const reading = readCsv(tracked(), {
      chunkChars: 1,
      onRows: () => {
        events.push('rows-start');
        return new Promise<void>((resolve) =>
          consuming.push(() => {
            events.push('rows-end');
            resolve();
          }),
        );
      },
    }).finally(() => {
      done = true;
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    for (let batch = 0; !done && batch < 100; batch += 1) {
      await settle();
      const finish = consuming.shift();
      if (finish === undefined) break;
      // While the consumer works on its batch, the reader pulls nothing more.
      expect(events.at(-1)).toBe('rows-start');
      finish();
    }
    await reading;
    // Every rows-start is followed by its rows-end before the next chunk is pulled.
    for (let index = 0; index < events.length; index += 1) {
      if (events[index] === 'rows-start') expect(events[index + 1]).toBe('rows-end');
    }
    expect(events.filter((event) => event === 'rows-start').length).toBeGreaterThan(1);
  });
});

describe('readCsv with long quoted fields', () => {
  it('reads a 4 MB quoted body arriving in 32 KB pieces, among ordinary rows', async () => {
    const body = `<p>${'a "quoted", line\n'.repeat((4 * 1024 * 1024) / 18)}</p>`;
    const rows = [`1,2,3,4,5,"${body.replaceAll('"', '""')}",7,8,9,10`, '1,2,3,4,5,short,7,8,9,10'];
    const text = `${HEADER}\n${rows.join('\n')}\n`;
    const parsed = await read(byteChunks(text, 32 * 1024));
    expect(parsed.rows.map((row) => row[5])).toEqual([body, 'short']);
  });
});

describe('readCsv line numbers', () => {
  it('gives each row the line it starts on, counting quoted newlines, blank lines and CRLF', async () => {
    const text = `${HEADER}\r\n1,2,3,4,5,"a\r\nb\r\nc",7,8,9,10\r\n\r\n1,2,3,4,5,6,7,8,9,10\r\n"x\ny",2,3,4,5,6,7,8,9,10\r\n1,2\r\n`;
    for (const size of [1, 5, 4096]) {
      const { lines, rows } = await read(byteChunks(text, size), 8);
      expect(rows).toHaveLength(4);
      expect(lines).toEqual([2, 6, 7, 9]);
    }
  });

  it('counts blank lines before the header', async () => {
    const { lines } = await read([`\n\n${HEADER}\n1,2,3,4,5,6,7,8,9,10\n`]);
    expect(lines).toEqual([4]);
  });
});

describe('readCsv encodings', () => {
  const HEADER_BYTES = Buffer.byteLength(`${HEADER}\n`);
  const windows1252 = Buffer.concat([
    Buffer.from(`${HEADER}\n1,2,3,4,5,"<p>caf`),
    Buffer.from([0xe9, 0x20, 0x80]),
    Buffer.from(`</p>",7,8,Ren`),
    Buffer.from([0xe9]),
    Buffer.from(',x\n'),
  ]);

  it('fails bytes that are not UTF-8, naming the line and byte offset and the --encoding option', async () => {
    const error = await failureOf(read([windows1252]));
    expect(error).toBeInstanceOf(ImportInputError);
    const offset = HEADER_BYTES + '1,2,3,4,5,"<p>caf'.length;
    expect(error?.message).toBe(
      `CSV is not valid UTF-8: undecodable bytes on line 2, at byte offset ${offset} (from 0); ` +
        'name the file\'s encoding with --encoding (command line) or "encoding" (event), e.g. windows-1252',
    );
  });

  it('decodes windows-1252 when told to, for every byte of it', async () => {
    const { rows } = await read([windows1252], undefined, { encoding: 'windows-1252' });
    expect(rows[0]![5]).toBe('<p>café €</p>');
    expect(rows[0]![8]).toBe('René');
  });

  it('reads UTF-16LE with its byte-order mark, split at odd byte counts', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`${HEADER}\r\n1,2,3,4,5,"Zoë ✓ 🎉\r\nx",7,8,Zoë,z@x\r\n`, 'utf16le'),
    ]);
    const { rows, columns } = await read(byteChunks(bytes, 1), undefined, {
      encoding: 'utf-16le',
    });
    expect(columns.TICKET_CREATED_AT).toBe(0);
    expect(rows).toEqual([['1', '2', '3', '4', '5', 'Zoë ✓ 🎉\r\nx', '7', '8', 'Zoë', 'z@x']]);
    const odd = await read(byteChunks(bytes, 7), undefined, { encoding: 'utf-16le' });
    expect(odd.rows).toEqual(rows);
  });

  it('names a stray byte deep in the input by its line and offset, however the input is cut', async () => {
    const line = '1,2,3,4,5,"ü✓🎉 multi-byte, and a\nquoted newline",7,8,9,10\n';
    const good = Buffer.from(`${HEADER}\n${line.repeat(12_000)}`); // ≈ 700 KB
    const at = good.length - 1000;
    // A line starts at `at`'s line: count the line feeds before it.
    const broken = Buffer.concat([good.subarray(0, at), Buffer.from([0xff]), good.subarray(at)]);
    const expectedLine = 1 + good.subarray(0, at).filter((byte) => byte === 10).length;
    for (const size of [1000, 65_537]) {
      const error = await failureOf(read(byteChunks(broken, size)));
      expect(error?.message).toContain(`on line ${expectedLine}, at byte offset ${at} (from 0)`);
    }
  });

  it('fails a file that ends in the middle of a UTF-8 character, naming where it starts', async () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\n1,2,3,4,5,6,7,8,9,x`), Buffer.from([0xe2, 0x82])]);
    const error = await failureOf(read([bytes.subarray(0, bytes.length - 1), bytes.subarray(bytes.length - 1)]));
    expect(error?.message).toContain(`on line 2, at byte offset ${bytes.length - 2} (from 0)`);
  });

  it('counts the lines of the last chunk once when the file ends in the middle of a character', async () => {
    const rowsText = '1,2,3,4,5,6,7,8,9,x\n'.repeat(3);
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\n`), Buffer.from(`${rowsText}1,2,3,4,5,6,7,8,9,`), Buffer.from([0xe2, 0x82])]);
    const error = await failureOf(read([bytes]));
    expect(error?.message).toContain(`on line 5, at byte offset ${bytes.length - 2} (from 0)`);
  });

  it("locates a bad end of the file when the caller refills each chunk's memory once the next is asked for", async () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\n1,2,3,4,5,6,7,8,9,x\n1,2,3,4,5,6,7,8,9,`), Buffer.from([0xe2, 0x82])]);
    const memory = Buffer.alloc(bytes.length);
    async function* refilled(): AsyncGenerator<Buffer> {
      for (let at = 0; at < bytes.length; at += 16) {
        const end = Math.min(bytes.length, at + 16);
        bytes.copy(memory, 0, at, end);
        yield memory.subarray(0, end - at);
      }
      memory.fill(0x41);
    }
    const error = await failureOf(readCsv(refilled(), { onHeader: () => {}, onRows: () => {} }));
    expect(error?.message).toContain(`on line 3, at byte offset ${bytes.length - 2} (from 0)`);
  });

  it('names an overlong or surrogate UTF-8 sequence at its first byte', async () => {
    for (const bad of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
    ]) {
      const bytes = Buffer.concat([Buffer.from(`${HEADER}\n1,2,3,4,5,é`), Buffer.from(bad), Buffer.from(',7,8,9,10\n')]);
      const error = await failureOf(read([bytes]));
      expect(error?.message).toContain(`at byte offset ${HEADER_BYTES + '1,2,3,4,5,é'.length + 1} (from 0)`);
    }
  });

  it('names the byte a single-byte encoding has no character for', async () => {
    // windows-1253 leaves 0xAA undefined.
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\n1,2,3,4,5,`), Buffer.from([0xe1, 0xaa]), Buffer.from(',7,8,9,10\n')]);
    const error = await failureOf(read([bytes], undefined, { encoding: 'windows-1253' }));
    expect(error?.message).toBe(
      `CSV is not valid windows-1253: undecodable bytes on line 2, at byte offset ${HEADER_BYTES + 11} (from 0); ` +
        'name the file\'s encoding with --encoding (command line) or "encoding" (event), e.g. windows-1252',
    );
  });
});
