import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer, text } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openFileSink, openFileSource } from '../../../lib/storage/file-storage.ts';
import { LocationError } from '../../../lib/storage/location.ts';
import { StorageError } from '../../../lib/storage/storage.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'file-storage-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const write = (stream: NodeJS.WritableStream, chunk: string) =>
  new Promise<void>((resolve, reject) => stream.write(chunk, (error) => (error ? reject(error) : resolve())));

describe('openFileSource', () => {
  it("streams a regular file's contents unchanged", async () => {
    await writeFile(join(directory, 'in.csv'), 'a,b\n1,2\n');
    expect(await text((await openFileSource(join(directory, 'in.csv'))).stream)).toBe('a,b\n1,2\n');
  });

  it('fails with a LocationError naming a missing file', async () => {
    const missing = join(directory, 'nope.csv');
    await expect(openFileSource(missing)).rejects.toThrow(new LocationError(`Source file ${missing} does not exist`));
  });

  it('refuses a directory', async () => {
    await expect(openFileSource(directory)).rejects.toThrow(/is not a regular file/);
  });

  describe('a named pipe', () => {
    const fifo = () => join(directory, 'in.csv');
    beforeEach(async () => {
      await promisify(execFile)('mkfifo', [fifo()]);
    });

    it('streams every byte its writer writes, of unknown size', async () => {
      const pieces = Array.from({ length: 48 }, (_unused, index) => Buffer.alloc(65_537, 97 + (index % 26)));
      const writing = (async () => {
        const writer = await open(fifo(), 'w');
        for (const piece of pieces) await writer.write(piece);
        await writer.close();
      })();
      const source = await openFileSource(fifo());
      const [read] = await Promise.all([buffer(source.stream), writing]);
      expect(source.bytes).toBeUndefined();
      expect(read.equals(Buffer.concat(pieces))).toBe(true);
    });

    it('stops a read waiting on a stalled writer as soon as the stream is destroyed', async () => {
      const writer = open(fifo(), 'w');
      const source = await openFileSource(fifo());
      const held = await writer;
      try {
        await held.write('a,b\n');
        const chunks = source.stream[Symbol.asyncIterator]();
        expect(String((await chunks.next()).value)).toBe('a,b\n');
        // Nothing more comes (the writer keeps the pipe open), until the reader is destroyed.
        const waiting = chunks.next();
        source.stream.destroy(new Error('stopped'));
        await expect(waiting).rejects.toThrow('stopped');
      } finally {
        await held.close();
      }
    });
  });
});

describe('openFileSink', () => {
  it('shows nothing at the destination until commit, then the complete file and no temporary', async () => {
    const destination = join(directory, 'out.tar');
    const sink = await openFileSink(destination);
    await write(sink.stream, 'first part,');
    expect(await readdir(directory)).not.toContain('out.tar');
    sink.stream.end('second part');
    await sink.commit();
    expect(await readFile(destination, 'utf8')).toBe('first part,second part');
    expect(await readdir(directory)).toEqual(['out.tar']);
  });

  it('leaves no file at all when aborted mid-write', async () => {
    const sink = await openFileSink(join(directory, 'out.tar'));
    await write(sink.stream, 'x'.repeat(100_000));
    await sink.abort(new Error('source broke'));
    expect(await readdir(directory)).toEqual([]);
  });

  it('keeps an existing destination untouched when a new run is aborted', async () => {
    const destination = join(directory, 'out.tar');
    await writeFile(destination, 'previous archive');
    const sink = await openFileSink(destination);
    await write(sink.stream, 'partial');
    await sink.abort(new Error('failed'));
    expect(await readFile(destination, 'utf8')).toBe('previous archive');
    expect(await readdir(directory)).toEqual(['out.tar']);
  });

  it('refuses to commit an archive the writer never ended', async () => {
    const sink = await openFileSink(join(directory, 'out.tar'));
    await write(sink.stream, 'partial');
    await expect(sink.commit()).rejects.toThrow(StorageError);
    await sink.abort(new Error('not ended'));
    expect(await readdir(directory)).toEqual([]);
  });

  it('fails with a LocationError when the destination directory does not exist', async () => {
    await expect(openFileSink(join(directory, 'missing', 'out.tar'))).rejects.toThrow(/Destination directory .*missing does not exist/);
  });

  it('refuses an existing directory as the destination with a LocationError, creating nothing', async () => {
    const destination = join(directory, 'archive.tar');
    await mkdir(destination);
    await expect(openFileSink(destination)).rejects.toThrow(new LocationError(`Destination ${destination} is a directory, not a file`));
    expect(await readdir(directory)).toEqual(['archive.tar']);
    expect(await readdir(destination)).toEqual([]);
  });

  it('replaces an existing destination atomically on commit', async () => {
    const destination = join(directory, 'out.tar');
    await writeFile(destination, 'old');
    const sink = await openFileSink(destination);
    sink.stream.end('new');
    await sink.commit();
    expect(await readFile(destination, 'utf8')).toBe('new');
  });
});
