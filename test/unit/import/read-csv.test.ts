import { describe, expect, it } from 'vitest';
import { ImportInputError } from '../../../lib/import/import-input-error.ts';
import { columnMapFromHeader, REQUIRED_COLUMNS, type ColumnMap } from '../../../lib/import/chat-columns.ts';
import { readCsv, type CsvRow } from '../../../lib/import/read-csv.ts';

const HEADER = REQUIRED_COLUMNS.join(',');

async function* chunksOf(parts: readonly (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

const read = async (parts: readonly (string | Buffer)[], chunkChars?: number) => {
  const rows: CsvRow[] = [];
  let columns: ColumnMap | undefined;
  let bytes = 0;
  await readCsv(chunksOf(parts), {
    onHeader: (found) => {
      columns = found;
    },
    onRows: (batch) => {
      rows.push(...batch);
    },
    onBytes: (count) => {
      bytes = count;
    },
    ...(chunkChars === undefined ? {} : { chunkChars }),
  });
  return { rows, columns: columns!, bytes };
};

/** Splits `text` into pieces of `size` bytes, cutting multi-byte characters apart on purpose. */
const byteChunks = (text: string, size: number): Buffer[] => {
  const bytes = Buffer.from(text);
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
    expect(() => columnMapFromHeader(header)).toThrowError(
      new ImportInputError('CSV header is missing required column(s): BODY, EMAIL'),
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
    const body = '<p>"quoted", with comma\r\nand newline ünïcödé ✓</p>';
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
    await expect(read([`${HEADER}\n1,2,3,4,5,6,7,8,9,10\n1,2,3,4,5,6,7,8,9,10,11\n`])).rejects.toThrow(
      /CSV data row 2 has 11 fields but the header has 10/,
    );
  });

  it('fails rather than merge rows when LF rows follow a CRLF header', async () => {
    const rows = Array.from({ length: 3 }, (_, index) => `${index},2,3,4,5,6,7,8,9,10`).join('\n');
    await expect(read([`${HEADER}\r\n${rows}\n`])).rejects.toThrow(/mixed line endings/);
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

  it('fails a file that ends inside a quoted field', async () => {
    await expect(read([`${HEADER}\n1,2,3,4,5,"never closed,7,8,9,10\n1,2,3\n`])).rejects.toThrowError(
      /ends inside a quoted field/,
    );
  });

  it('fails a quoted field growing past the row limit instead of buffering the whole file', async () => {
    const parts = [`${HEADER}\n1,2,3,4,5,"`, ...Array.from({ length: 20 }, () => 'x'.repeat(100))];
    await expect(
      readCsv(chunksOf(parts), { onRows: () => {}, chunkChars: 10, maxRowChars: 1000 }),
    ).rejects.toThrowError(/longer than 1000 characters/);
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
    await readCsv(tracked(), {
      chunkChars: 1,
      onRows: async () => {
        events.push('rows-start');
        await new Promise((resolve) => setTimeout(resolve, 1));
        events.push('rows-end');
      },
    });
    // Every rows-start is followed by its rows-end before the next chunk is pulled.
    for (let index = 0; index < events.length; index += 1) {
      if (events[index] === 'rows-start') expect(events[index + 1]).toBe('rows-end');
    }
    expect(events.filter((event) => event === 'rows-start').length).toBeGreaterThan(1);
  });
});

describe('readCsv with long quoted fields', () => {
  it('reads a 4 MB quoted body arriving in 32 KB pieces, among ordinary rows', async () => {
    const body = `<p>${'a "quoted", line\n'.repeat(4 * 1024 * 1024 / 18)}</p>`;
    const rows = [`1,2,3,4,5,"${body.replaceAll('"', '""')}",7,8,9,10`, '1,2,3,4,5,short,7,8,9,10'];
    const text = `${HEADER}\n${rows.join('\n')}\n`;
    const parsed = await read(byteChunks(text, 32 * 1024));
    expect(parsed.rows.map((row) => row[5])).toEqual([body, 'short']);
  });
});
