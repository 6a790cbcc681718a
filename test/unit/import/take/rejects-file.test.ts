import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RejectsWriter } from '../../../../lib/import/take/rejects-file.ts';

/** The rejects file's header line (docs/import.md, "Rejects"). */
const REJECTS_HEADER = 'row,line,asset,reason,column,value\n';

/** RFC 4180 quoting of a value, written out independently of the writer. */
const csvValue = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

describe('RejectsWriter', () => {
  it('writes the header and one line per reject, quoting only values that need it, over many blocks into a PassThrough', async () => {
    // An S3 upload reads from a PassThrough that keeps the very buffers it is given.
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    const writer = new RejectsWriter(output);
    const values = ['plain', 'with, comma', 'say "hi"', 'two\nlines', 'crlf\r\nend', '', 'ünïcödé'];
    const expected = [REJECTS_HEADER];
    // About 3 MB of lines: a dozen of the writer's blocks.
    for (let row = 1; row <= 12_000; row += 1) {
      const value = `${values[row % values.length]!}${'x'.repeat(row % 400)}`;
      const bytes = Buffer.from(value);
      writer.add({
        row,
        line: row * 2,
        asset: 'comment',
        reason: 'invalid_field',
        column: 'COMMENT_CREATED_AT',
        data: bytes,
        start: 0,
        end: bytes.length,
      });
      expected.push(`${row},${row * 2},comment,invalid_field,COMMENT_CREATED_AT,${csvValue(value)}\n`);
      if (row % 500 === 0) {
        await writer.flush();
        await new Promise(setImmediate);
      }
    }
    await writer.finish();
    expect(output.writableFinished).toBe(true);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(expected.join(''));
  });

  it('writes the header alone when nothing was rejected', async () => {
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new RejectsWriter(output).finish();
    expect(Buffer.concat(chunks).toString('utf8')).toBe('row,line,asset,reason,column,value\n');
  });
});
