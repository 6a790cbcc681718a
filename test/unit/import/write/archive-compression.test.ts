import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { archiveCompression, gzipInto } from '../../../../lib/import/write/archive-compression.ts';
import { makeTarWriter } from '../../../../lib/import/write/tar-writer.ts';
import { parseLocation } from '../../../../lib/storage/location.ts';

/** A sink that takes a chunk every few milliseconds and buffers little: backpressure all the way. */
const slowSink = (): { stream: Writable; bytes: () => Buffer } => {
  const parts: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      parts.push(chunk);
      setTimeout(callback, 1);
    },
  });
  return { stream, bytes: () => Buffer.concat(parts) };
};

describe('archiveCompression', () => {
  it('compresses for a .tar.gz or .tgz destination in any letter case, file or S3, and nothing else', () => {
    for (const name of ['/out/a.tar.gz', '/out/a.TGZ', 's3://bucket/exports/a.Tar.Gz', 's3://bucket/a.tgz'])
      expect(archiveCompression(parseLocation(name)), name).toBe('gzip');
    for (const name of ['/out/a.tar', '/out/a.gz', '/out/a.tar.gz.tmp', 's3://bucket/a.tgz/b', 's3://bucket/tar.gz.tar'])
      expect(archiveCompression(parseLocation(name)), name).toBe('none');
    expect(archiveCompression(undefined)).toBe('none');
  });
});

describe('gzipInto', () => {
  it('writes one gzip member, compressed in blocks, whose gunzip is what the tar writer wrote, through a slow output, and ends the output last', async () => {
    const sink = slowSink();
    const plain = new PassThrough();
    const plainParts: Buffer[] = [];
    plain.on('data', (part: Buffer) => plainParts.push(part));
    const mtime = new Date('2026-01-01T00:00:00Z');
    const gzipped = makeTarWriter(gzipInto(sink.stream), mtime);
    const tar = makeTarWriter(plain, mtime);
    for (let index = 0; index < 40; index += 1) {
      // Half random (barely compressible), half repetitive: several megabytes through a 16 KiB sink.
      const content = Buffer.concat([randomBytes(40 * 1024), Buffer.alloc(40 * 1024, index)]);
      await Promise.all([
        gzipped.addFile(`backup_tickets_${(index + 1) * 100}.json`, content),
        tar.addFile(`backup_tickets_${(index + 1) * 100}.json`, content),
      ]);
    }
    await Promise.all([gzipped.finish(), tar.finish()]);
    expect(sink.stream.writableFinished).toBe(true);
    const archive = Buffer.concat(plainParts);
    const compressed = sink.bytes();
    expect(archive.length).toBeGreaterThan(3 * 1024 * 1024);
    expect(gunzipSync(compressed).equals(archive)).toBe(true);
    // One member: a single deflate stream between the 10-byte header and the trailer of the whole's CRC-32 and length.
    expect(compressed.subarray(0, 3)).toEqual(Buffer.from([0x1f, 0x8b, 8]));
    expect(inflateRawSync(compressed.subarray(10, -8)).equals(archive)).toBe(true);
    expect(compressed.readUInt32LE(compressed.length - 8)).toBe(crc32(archive));
    expect(compressed.readUInt32LE(compressed.length - 4)).toBe(archive.length);
  });

  it('writes a valid gzip of nothing, and of an archive without entries', async () => {
    const empty = slowSink();
    await new Promise<void>((resolve, reject) => gzipInto(empty.stream).end((error?: Error | null) => (error ? reject(error) : resolve())));
    expect(gunzipSync(empty.bytes())).toEqual(Buffer.alloc(0));
    const endOnly = slowSink();
    await makeTarWriter(gzipInto(endOnly.stream)).finish();
    expect(gunzipSync(endOnly.bytes())).toEqual(Buffer.alloc(1024));
  });

  it('leaves the output neither ended nor destroyed when it is destroyed (the caller aborts the output)', async () => {
    const output = new PassThrough();
    output.resume();
    const compressed = gzipInto(output);
    compressed.write(Buffer.alloc(1024 * 1024, 7));
    compressed.destroy();
    await delay(20);
    expect(output.writableEnded).toBe(false);
    expect(output.destroyed).toBe(false);
  });

  it('fails the archive when the output fails, and when it closes before the archive is complete', async () => {
    const failing = new PassThrough();
    failing.on('error', () => undefined);
    const tar = makeTarWriter(gzipInto(failing));
    failing.destroy(new Error('upload failed'));
    // The failure reaches the archive within an entry or two (the compressor sits between them).
    const adding = (async () => {
      for (let index = 0; index < 16; index += 1) await tar.addFile(`${index}.json`, randomBytes(64 * 1024));
      await tar.finish();
    })();
    await expect(adding).rejects.toThrowError('upload failed');
    tar.abort();

    const closing = new PassThrough({ highWaterMark: 1024 });
    const pending = makeTarWriter(gzipInto(closing));
    const writing = (async () => {
      for (let index = 0; index < 64; index += 1) await pending.addFile(`${index}.json`, randomBytes(64 * 1024));
    })();
    await delay(20);
    closing.destroy();
    await expect(writing).rejects.toThrowError(/closed before the archive was complete/);
    pending.abort();
  });
});
