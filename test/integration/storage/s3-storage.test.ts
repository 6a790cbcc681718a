import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocationError } from '../../../lib/storage/location.ts';
import { openS3Sink, openS3Source } from '../../../lib/storage/s3-storage.ts';
import { StorageError } from '../../../lib/storage/storage.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { freePort } from '../../support/free-port.ts';
import { recordCommands } from '../../support/s3-commands.ts';
import {
  crc32Base64,
  isCompleteMultipartUpload,
  isUploadPart,
  S3_INTERNAL_ERROR,
  startS3FaultProxy,
  type S3FaultProxy,
} from '../../support/s3-fault-proxy.ts';

const BUCKET = 'storage-test';
const MiB = 1024 * 1024;
const PART = 5 * MiB;

let server: S3Server;
let client: S3Client;
let sent: string[];
const clients: S3Client[] = [];

beforeAll(async () => {
  server = await startS3Server();
  await createBucket({ endpoint: server.endpoint, bucket: BUCKET });
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => {
  for (const each of clients.splice(0)) each.destroy();
});

const freshClient = () => {
  client = localS3Client(server.endpoint);
  sent = recordCommands(client);
  clients.push(client);
  return client;
};

/** `count` MiB of deterministic bytes, then optionally an error. */
const megabytes = (count: number, failAfter?: number) =>
  Readable.from(
    (function* () {
      for (let index = 0; index < count; index += 1) {
        if (failAfter !== undefined && index === failAfter) throw new Error('source broke mid-stream');
        yield Buffer.alloc(MiB, index % 251);
      }
    })(),
  );

const exists = async (key: string) =>
  client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    (error: { name?: string }) => (error.name === 'NotFound' ? false : Promise.reject(error)),
  );

const TAR = 'application/x-tar';

describe('openS3Source', () => {
  it('streams an object written by the sink back byte for byte', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'round/trip.bin' }, TAR, { partSizeBytes: PART });
    await pipeline(megabytes(12), sink.stream);
    await sink.commit();
    const body = await buffer((await openS3Source(client, { bucket: BUCKET, key: 'round/trip.bin' })).stream);
    expect(body.length).toBe(12 * MiB);
    expect(body.equals(await buffer(megabytes(12)))).toBe(true);
    expect(sent.filter((name) => name === 'UploadPartCommand')).toHaveLength(3);
    expect(sent).toContain('CompleteMultipartUploadCommand');
  });

  it('fails with a LocationError for a missing key', async () => {
    freshClient();
    await expect(openS3Source(client, { bucket: BUCKET, key: 'missing.csv' })).rejects.toThrow(
      new LocationError(`Source object s3://${BUCKET}/missing.csv does not exist`),
    );
  });

  it('fails with a LocationError for a missing bucket', async () => {
    freshClient();
    await expect(openS3Source(client, { bucket: 'no-such-bucket', key: 'a.csv' })).rejects.toThrow(LocationError);
  });

  it('says why a request could not be made (a refused connection), reading the source and starting an upload', async () => {
    // A loopback port nobody listens on any more.
    const unreachable = localS3Client(`http://127.0.0.1:${await freePort()}`);
    clients.push(unreachable);
    await expect(openS3Source(unreachable, { bucket: BUCKET, key: 'a.csv' })).rejects.toThrow(
      expect.objectContaining({
        name: 'StorageError',
        message: expect.stringMatching(new RegExp(`^Could not read source object s3://${BUCKET}/a\\.csv \\(.*ECONNREFUSED`)),
      }),
    );
    await expect(openS3Sink(unreachable, { bucket: BUCKET, key: 'out.tar' }, TAR)).rejects.toThrow(
      expect.objectContaining({
        name: 'StorageError',
        message: expect.stringMatching(new RegExp(`^Could not start the upload to s3://${BUCKET}/out\\.tar \\(.*ECONNREFUSED`)),
      }),
    );
  });

  describe('over a network that fails', () => {
    let proxy: S3FaultProxy;
    beforeAll(async () => {
      proxy = await startS3FaultProxy(server.endpoint);
      const writer = localS3Client(server.endpoint);
      await writer.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'network/source.csv', Body: Buffer.alloc(4 * MiB, 97) }));
      writer.destroy();
    });
    afterAll(async () => {
      await proxy.close();
    });
    const throughProxy = () => {
      const proxied = localS3Client(proxy.endpoint);
      clients.push(proxied);
      return proxied;
    };

    it('names the object when the connection breaks while its body is read', async () => {
      proxy.decide(() => ({ cutAfterBytes: MiB }));
      const source = await openS3Source(throughProxy(), { bucket: BUCKET, key: 'network/source.csv' });
      expect(source.bytes).toBe(4 * MiB);
      const failure = await buffer(source.stream).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StorageError);
      expect((failure as Error).message).toMatch(new RegExp(`^Reading source object s3://${BUCKET}/network/source\\.csv failed \\(`));
    });

    it('keeps a body that breaks before anyone reads it for its reader, without crashing the process', async () => {
      proxy.decide(() => ({ cutAfterBytes: 64 * 1024 }));
      const source = await openS3Source(throughProxy(), { bucket: BUCKET, key: 'network/source.csv' });
      // The run is still opening its destinations: nobody reads yet while the connection breaks.
      await delay(300);
      const failure = await buffer(source.stream).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StorageError);
      expect((failure as Error).message).toMatch(/^Reading source object s3:\/\/storage-test\/network\/source\.csv failed/);
    });

    it('gives up a request that does not answer as soon as the signal aborts, with its reason', async () => {
      proxy.decide(() => 'hang');
      const deadline = new AbortController();
      const opening = openS3Source(throughProxy(), { bucket: BUCKET, key: 'network/source.csv' }, deadline.signal).catch(
        (error: unknown) => error,
      );
      await delay(200);
      const reason = new Error('deadline');
      deadline.abort(reason);
      expect(await opening).toBe(reason);
    });

    it('aborts an upload whose part never answers, cancelling it, without waiting for it', async () => {
      proxy.decide((request) => (request.method === 'PUT' && request.query.has('partNumber') ? 'hang' : 'pass'));
      const sink = await openS3Sink(throughProxy(), { bucket: BUCKET, key: 'network/hung.tar' }, TAR, {
        partSizeBytes: PART,
        queueSize: 1,
      });
      const writing = pipeline(megabytes(30), sink.stream).catch((error: unknown) => error);
      for (let wait = 0; wait < 100 && !proxy.requests.some((request) => request.query.has('partNumber')); wait += 1) await delay(20);
      const started = performance.now();
      await sink.abort(new Error('deadline'));
      // Bounded by the clean-up limit rather than by the hung part (which would never end).
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(await writing).toBeInstanceOf(Error);
      expect(proxy.requests.some((request) => request.method === 'DELETE' && request.query.has('uploadId'))).toBe(true);
      expect(await exists('network/hung.tar')).toBe(false);
    });
  });
});

describe('openS3Sink', () => {
  it('shows nothing at the key once the stream has ended, until commit, and keeps the object there meanwhile', async () => {
    freshClient();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept.tar', Body: 'the archive of an earlier run' }));
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'kept.tar' }, TAR, { partSizeBytes: PART });
    await pipeline(megabytes(7), sink.stream);
    const read = async () =>
      (await buffer((await openS3Source(client, { bucket: BUCKET, key: 'kept.tar' })).stream)).toString('latin1', 0, 29);
    expect(await read()).toBe('the archive of an earlier run');
    await sink.commit();
    expect(
      (await buffer((await openS3Source(client, { bucket: BUCKET, key: 'kept.tar' })).stream)).equals(await buffer(megabytes(7))),
    ).toBe(true);
  });

  it('leaves the object an earlier run wrote when a run fails after its stream ended', async () => {
    freshClient();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'earlier.tar', Body: 'the archive of an earlier run' }));
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'earlier.tar' }, TAR, { partSizeBytes: PART });
    await pipeline(megabytes(1), sink.stream);
    await sink.abort(new Error('the rejects file failed'));
    expect((await buffer((await openS3Source(client, { bucket: BUCKET, key: 'earlier.tar' })).stream)).toString()).toBe(
      'the archive of an earlier run',
    );
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
  });

  it('writes a small object, and an empty one, with its content type', async () => {
    freshClient();
    for (const [key, bytes] of [
      ['small.csv', 'row,line\n'],
      ['empty.csv', ''],
    ] as const) {
      const sink = await openS3Sink(client, { bucket: BUCKET, key }, 'text/csv; charset=utf-8', { partSizeBytes: PART });
      sink.stream.end(Buffer.from(bytes));
      await sink.commit();
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      expect(head.ContentType).toBe('text/csv; charset=utf-8');
      expect((await buffer((await openS3Source(client, { bucket: BUCKET, key })).stream)).toString()).toBe(bytes);
    }
  });

  it('fails to open with a LocationError, before any data, when the bucket does not exist', async () => {
    freshClient();
    await expect(openS3Sink(client, { bucket: 'no-such-bucket', key: 'out.tar' }, TAR)).rejects.toThrow(
      new LocationError('Bucket no-such-bucket of s3://no-such-bucket/out.tar does not exist'),
    );
  });

  it('aborts the multipart upload when the writer fails after several parts, leaving no object', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'broken/source.tar' }, TAR, { partSizeBytes: PART });
    const failure = await pipeline(megabytes(20, 14), sink.stream).catch((error: unknown) => error);
    expect((failure as Error).message).toBe('source broke mid-stream');
    await sink.abort(failure);
    expect(sent).toContain('CreateMultipartUploadCommand');
    expect(sent).toContain('UploadPartCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await exists('broken/source.tar')).toBe(false);
  });

  it('uploads no part when aborted before the first part is full, and aborts the upload', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'early.tar' }, TAR, { partSizeBytes: PART });
    sink.stream.write(Buffer.alloc(MiB));
    await sink.abort(new Error('failed early'));
    expect(sent).toEqual(['CreateMultipartUploadCommand', 'AbortMultipartUploadCommand']);
    expect(await exists('early.tar')).toBe(false);
  });

  it("deletes the object again when aborted after commit (the run's other file failed)", async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'late.tar' }, TAR, { partSizeBytes: PART });
    await pipeline(megabytes(1), sink.stream);
    await sink.commit();
    expect(await exists('late.tar')).toBe(true);
    await sink.abort(new Error('the rejects file failed'));
    expect(await exists('late.tar')).toBe(false);
  });

  it('refuses to commit an archive the writer never ended', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'unended.tar' }, TAR, { partSizeBytes: PART });
    sink.stream.write(Buffer.alloc(10));
    await expect(sink.commit()).rejects.toThrow(StorageError);
    await sink.abort(new Error('unended'));
    expect(await exists('unended.tar')).toBe(false);
  });

  describe('with answers only S3 gives, through a proxy', () => {
    let proxy: S3FaultProxy;
    beforeAll(async () => {
      // S3 answers each part's CRC32 (the local server checks none and answers none).
      proxy = await startS3FaultProxy(server.endpoint, { partChecksums: true });
    });
    afterAll(async () => {
      await proxy.close();
    });
    beforeEach(() => {
      proxy.decide(() => 'pass');
      proxy.requests.length = 0;
    });
    /** A client through the proxy, whose commands `sent` records (`client` still reaches the server itself). */
    const throughProxy = () => {
      const proxied = localS3Client(proxy.endpoint);
      clients.push(proxied);
      sent = recordCommands(proxied);
      return proxied;
    };
    /** The parts a CompleteMultipartUpload body lists, each with the fields it gives. */
    const partsListed = (xml: string | undefined) =>
      [...(xml ?? '').matchAll(/<Part>(.*?)<\/Part>/gs)].map(([, part]) =>
        Object.fromEntries(
          [...part!.matchAll(/<(\w+)>([^<]*)<\/\1>/g)].map(([, name, value]) => [name, name === 'PartNumber' ? Number(value) : value]),
        ),
      );

    it("creates the upload for CRC32 part checksums and completes it listing each part's, as S3 requires", async () => {
      freshClient();
      // S3 answers each part's CRC32 and refuses a completion that leaves them out: the completion
      // must list, for each part, the checksum S3 answered for it.
      const sink = await openS3Sink(throughProxy(), { bucket: BUCKET, key: 'checksums.tar' }, TAR, { partSizeBytes: PART });
      await pipeline(megabytes(12), sink.stream);
      await sink.commit();
      const created = proxy.requests.filter((request) => request.method === 'POST' && request.query.has('uploads'));
      expect(created.map((request) => request.headers['x-amz-checksum-algorithm'])).toEqual(['CRC32']);
      const bytes = await buffer(megabytes(12));
      const crcOfPart = (number: number) => crc32Base64(crc32(bytes.subarray((number - 1) * PART, number * PART)));
      expect(proxy.requests.filter(isCompleteMultipartUpload).map((request) => partsListed(request.body))).toEqual([
        [1, 2, 3].map((number) => ({ PartNumber: number, ETag: expect.any(String), ChecksumCRC32: crcOfPart(number) })),
      ]);
      expect((await buffer((await openS3Source(client, { bucket: BUCKET, key: 'checksums.tar' })).stream)).equals(bytes)).toBe(true);
    });

    it('fails the writer promptly and aborts the upload when S3 rejects a part', async () => {
      freshClient();
      // S3 fails the second part with its 500 InternalError, every attempt (the SDK retries it, then gives up).
      proxy.decide((request) => (isUploadPart(request) && request.query.get('partNumber') === '2' ? { error: S3_INTERNAL_ERROR } : 'pass'));
      const sink = await openS3Sink(throughProxy(), { bucket: BUCKET, key: 'part-failure.tar' }, TAR, {
        partSizeBytes: PART,
        queueSize: 1,
      });
      let produced = 0;
      const source = Readable.from(
        (function* () {
          for (; produced < 200; produced += 1) yield Buffer.alloc(MiB, 7);
        })(),
      );
      const failure = await pipeline(source, sink.stream).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StorageError);
      expect(((failure as StorageError).cause as Error).name).toBe('InternalError');
      // The writer stopped soon after the failed part instead of draining all 200 MiB.
      expect(produced).toBeLessThan(40);
      await expect(sink.commit()).rejects.toThrow(StorageError);
      await sink.abort(failure);
      expect(sent).toContain('AbortMultipartUploadCommand');
      expect(sent).not.toContain('CompleteMultipartUploadCommand');
      expect(await exists('part-failure.tar')).toBe(false);
    });
  });
});
