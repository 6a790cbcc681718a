import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatCsvChunks } from '../../../../demo/chat-export.ts';
import { ImportInputError } from '../../../../lib/import/read/import-input-error.ts';
import type { RunAsk } from '../../../../lib/import/job/run-plan.ts';
import { chatCsv, fullRow, HEADER, importCsv, withoutMtimes, runPlannedPipeline } from '../../../support/chat-import.ts';
import { failureOf } from '../../../support/failure-of.ts';

let tmpDir: string;
beforeEach(async () => {
  tmpDir = await mkdtemp(join(tmpdir(), 'import-worker-'));
});
afterEach(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

describe('the read side in a worker thread', () => {
  it('writes the same archive, rejects and summary as one thread, byte for byte', async () => {
    // Conversations with quoted newlines, quotes and commas in every body, and 5 % faulty rows.
    const csv = [...chatCsvChunks({ rows: 12_000, seed: 11, faultRate: 0.05 })].map((chunk) => Buffer.from(chunk));
    // Two of the generator's customers are held by the destination: their references are remapped.
    const destinationUsers = new Map([
      ['hana.oneil.307@example.com', '9223372036854775000'],
      ['eve.müller.700@example.com', '77'],
    ]);
    const single = await importCsv(csv, { tmpDir, rejects: true, destinationUsers, worker: false });
    const threaded = await importCsv(csv, { tmpDir, rejects: true, destinationUsers, worker: true });
    expect(single.summary.rows).toBe(12_000);
    expect(single.summary.batches).toBeGreaterThan(10);
    expect(single.summary.users_matched).toBe(2);
    expect(Object.values(single.summary.dropped.comments).every((count) => count > 0)).toBe(true);
    expect(threaded.summary).toEqual(single.summary);
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
    expect(threaded.rejectsCsv).toBe(single.rejectsCsv);
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it('reads a source arriving in tiny pieces (a multi-byte character split between them) like one thread', async () => {
    const bytes = Buffer.from(chatCsv(Array.from({ length: 300 }, (_unused, n) => fullRow(n + 1, { BODY: `ü✓🎉 "${n}",\n` }))));
    const pieces = Array.from({ length: Math.ceil(bytes.length / 7) }, (_unused, index) => bytes.subarray(index * 7, index * 7 + 7));
    const single = await importCsv(pieces, { tmpDir, worker: false });
    const threaded = await importCsv(pieces, { tmpDir, worker: true });
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
  });

  it.each([
    ['a row with more fields than the header', `${chatCsv([fullRow(1), fullRow(2)])}1,2,3,4,5,6,7,8,9,10,11\n`],
    ['a quote that never closes', `${chatCsv([fullRow(1)])}2024-05-01T10:00:00Z,1,2,3,true,"never closed,x\n`],
    [
      'bytes that are not UTF-8',
      Buffer.concat([Buffer.from(chatCsv(Array.from({ length: 3000 }, (_unused, n) => fullRow(n + 1)))), Buffer.from([0xff, 0x0a])]),
    ],
    ['a missing column', chatCsv([fullRow(1)], { columns: HEADER.filter((column) => column !== 'EMAIL') })],
  ])('fails on %s with the same error as one thread, leaving nothing behind', async (_label, csv) => {
    const run = async (worker: boolean) => {
      const output = new PassThrough();
      let written = 0;
      output.on('data', (chunk: Buffer) => (written += chunk.length));
      const rejects = new PassThrough();
      rejects.resume();
      const error = await failureOf(runPlannedPipeline({ input: Readable.from([csv]), output, rejects, tmpDir, worker }));
      expect(written).toBe(0);
      expect(output.writableEnded).toBe(false);
      expect(rejects.writableEnded).toBe(false);
      expect(await readdir(tmpDir)).toEqual([]);
      return error;
    };
    const single = await run(false);
    const threaded = await run(true);
    expect(single).toBeInstanceOf(ImportInputError);
    expect(threaded).toBeInstanceOf(ImportInputError);
    expect(threaded?.message).toBe(single?.message);
  });

  it.each([1, 2])("fails with the source's own error when the source breaks, and stops its threads (%i of them)", async (readThreads) => {
    const input = new Readable({
      read() {
        this.push(chatCsv(Array.from({ length: 500 }, (_unused, n) => fullRow(n + 1))));
        this.destroy(new Error('source connection reset'));
      },
    });
    const error = await failureOf(
      runPlannedPipeline({ input, output: new PassThrough(), tmpDir, worker: true, readThreads, segmentBytes: 4096 }),
    );
    expect(error?.message).toBe('source connection reset');
    expect(await readdir(tmpDir)).toEqual([]);
  });
});

describe('the read side in several worker threads, the source cut between rows', () => {
  // Small segments, so a few megabytes are cut hundreds of times.
  const CUT = { segmentBytes: 16 * 1024 };
  const destinationUsers = new Map([
    ['hana.oneil.307@example.com', '9223372036854775000'],
    ['eve.müller.700@example.com', '77'],
  ]);
  // Conversations with quoted newlines, quotes and commas in every body, 5 % faulty rows, CRLF rows.
  const generated = [...chatCsvChunks({ rows: 12_000, seed: 11, faultRate: 0.05 })].join('');
  /** The source in pieces of `size` bytes (a cut then falls anywhere in a piece, or on its edge). */
  const inPieces = (csv: string, size: number): Buffer[] => {
    const bytes = Buffer.from(csv);
    return Array.from({ length: Math.ceil(bytes.length / size) }, (_unused, index) => bytes.subarray(index * size, (index + 1) * size));
  };

  it.each([
    ['two threads, CRLF rows in 64 KiB pieces', generated, 2, 64 * 1024],
    ['three threads, CRLF rows in 1,000-byte pieces', generated, 3, 1000],
    ['two threads, LF rows (a quoted newline looks like a row end) in one piece', generated.replaceAll('\r\n', '\n'), 2, 1 << 30],
  ])('writes the same archive, rejects and summary as one thread with %s', async (_label, csv, readThreads, pieceBytes) => {
    const pieces = inPieces(csv, pieceBytes);
    const single = await importCsv(pieces, { tmpDir, rejects: true, destinationUsers, worker: false });
    const threaded = await importCsv(pieces, { tmpDir, rejects: true, destinationUsers, worker: true, readThreads, ...CUT });
    expect(single.summary.rows).toBe(12_000);
    expect(Buffer.byteLength(csv)).toBeGreaterThan(100 * CUT.segmentBytes);
    expect(threaded.summary).toEqual(single.summary);
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
    expect(threaded.rejectsCsv).toBe(single.rejectsCsv);
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it.each([
    ['ends in the source', 1 << 30],
    ['arrives in 4 KiB pieces', 4096],
  ])('reads rows like one thread after a stray quote threw the cuts off (the source %s)', async (_label, pieceBytes) => {
    // A quote inside an unquoted NAME is data to the parser but flips quote parity: from there on the
    // cuts land on newlines inside quoted bodies, and the segments after must be joined back.
    const lf = generated.replaceAll('\r\n', '\n');
    const strayAt = lf.indexOf(',Hana ', lf.length * 0.6);
    const csv = `${lf.slice(0, strayAt)},Ha"na ${lf.slice(strayAt + ',Hana '.length)}`;
    const pieces = inPieces(csv, pieceBytes);
    const single = await importCsv(pieces, { tmpDir, rejects: true, worker: false });
    const threaded = await importCsv(pieces, { tmpDir, rejects: true, worker: true, readThreads: 2, ...CUT });
    // Every row still there: the quote was data, yet it counts for quote parity.
    expect(single.summary.rows).toBe(12_000);
    expect(threaded.summary).toEqual(single.summary);
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
    expect(threaded.rejectsCsv).toBe(single.rejectsCsv);
  });

  it('reads a source arriving a byte at a time, a stray quote among them, like one thread', async () => {
    const lf = [...chatCsvChunks({ rows: 700, seed: 3, faultRate: 0.05 })].join('').replaceAll('\r\n', '\n');
    const strayAt = lf.indexOf(',Hana ', lf.length * 0.3);
    const csv = `${lf.slice(0, strayAt)},Ha"na ${lf.slice(strayAt + ',Hana '.length)}`;
    // After the join the pieces pile up by the hundred thousand before a handover.
    const pieces = inPieces(csv, 1);
    expect(pieces.length).toBeGreaterThan(200_000);
    const single = await importCsv(pieces, { tmpDir, rejects: true, worker: false });
    const threaded = await importCsv(pieces, { tmpDir, rejects: true, worker: true, readThreads: 3, segmentBytes: 4096 });
    expect(single.summary.rows).toBe(700);
    expect(threaded.summary).toEqual(single.summary);
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
    expect(threaded.rejectsCsv).toBe(single.rejectsCsv);
  });

  const goodRows = chatCsv(Array.from({ length: 4000 }, (_unused, n) => fullRow(n + 1, { BODY: `<p>a "quoted"\nline ${n}</p>` })));
  it.each([
    ['a row with more fields than the header', `${goodRows}1,2,3,4,5,6,7,8,9,10,11\n${chatCsv([fullRow(9999)]).split('\n')[1]}\n`],
    ['a quote that never closes', `${goodRows}2024-05-01T10:00:00Z,1,2,3,true,"never closed,x\n`],
    [
      'a quoted field with text after its closing quote',
      `${goodRows}${chatCsv([fullRow(9999, { BODY: 'x' })])
        .split('\n')[1]!
        .replace(',x,', ',"Hello" she said,')}\n${chatCsv([fullRow(9998)]).split('\n')[1]}\n`,
    ],
    [
      'bytes that are not UTF-8',
      Buffer.concat([Buffer.from(goodRows), Buffer.from('2024-05-01T10:00:00Z,1,2,3,true,caf'), Buffer.from([0xe9, 0x0a])]),
    ],
  ])('fails on %s far into the file with the same error as one thread', async (_label, csv) => {
    const run = async (threads: RunAsk) => {
      const output = new PassThrough();
      const error = await failureOf(runPlannedPipeline({ input: Readable.from([csv]), output, tmpDir, ...threads }));
      expect(await readdir(tmpDir)).toEqual([]);
      return error;
    };
    const single = await run({ worker: false });
    const threaded = await run({ worker: true, readThreads: 2, ...CUT });
    expect(Buffer.byteLength(csv)).toBeGreaterThan(10 * CUT.segmentBytes);
    expect(single).toBeInstanceOf(ImportInputError);
    expect(threaded).toBeInstanceOf(ImportInputError);
    expect(threaded?.message).toBe(single?.message);
  });

  it('reads a source it cannot cut by its bytes (UTF-16) in one thread of several, like one thread', async () => {
    const csv = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(goodRows, 'utf16le')]);
    const single = await importCsv(csv, { tmpDir, encoding: 'utf-16le', worker: false });
    const threaded = await importCsv(csv, { tmpDir, encoding: 'utf-16le', worker: true, readThreads: 2, ...CUT });
    expect(single.summary.rows).toBe(4000);
    expect(withoutMtimes(threaded.archive).equals(withoutMtimes(single.archive))).toBe(true);
  });
});
