import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocationError } from '../../../lib/storage/location.ts';
import { openS3Sink, openS3Source } from '../../../lib/storage/s3-storage.ts';
import { StorageError } from '../../../lib/storage/storage.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { recordCommands } from '../../support/s3-commands.ts';

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

describe('openS3Source', () => {
  it('streams an object written by the sink back byte for byte', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'round/trip.bin' }, { partSizeBytes: PART });
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
});

describe('openS3Sink', () => {
  it('writes a small archive with a single PutObject on commit', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'small.tar' }, { partSizeBytes: PART });
    sink.stream.end(Buffer.from('tiny archive'));
    await sink.commit();
    expect((await buffer((await openS3Source(client, { bucket: BUCKET, key: 'small.tar' })).stream)).toString()).toBe('tiny archive');
    expect(sent).toEqual(['PutObjectCommand', 'GetObjectCommand']);
  });

  it('aborts the multipart upload when the writer fails after several parts, leaving no object', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'broken/source.tar' }, { partSizeBytes: PART });
    const failure = await pipeline(megabytes(20, 14), sink.stream).catch((error: unknown) => error);
    expect((failure as Error).message).toBe('source broke mid-stream');
    await sink.abort(failure);
    expect(sent).toContain('CreateMultipartUploadCommand');
    expect(sent).toContain('UploadPartCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await exists('broken/source.tar')).toBe(false);
  });

  it('sends nothing to S3 when aborted before the first part is full', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'early.tar' }, { partSizeBytes: PART });
    sink.stream.write(Buffer.alloc(MiB));
    await sink.abort(new Error('failed early'));
    expect(sent).toEqual([]);
    expect(await exists('early.tar')).toBe(false);
  });

  it('deletes an object whose upload completed when the run fails before commit', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'late.tar' }, { partSizeBytes: PART });
    await pipeline(megabytes(1), sink.stream);
    await sink.abort(new Error('failed after the archive was written'));
    expect(await exists('late.tar')).toBe(false);
  });

  it('refuses to commit an archive the writer never ended', async () => {
    freshClient();
    const sink = await openS3Sink(client, { bucket: BUCKET, key: 'unended.tar' }, { partSizeBytes: PART });
    sink.stream.write(Buffer.alloc(10));
    await expect(sink.commit()).rejects.toThrow(StorageError);
    await sink.abort(new Error('unended'));
    expect(await exists('unended.tar')).toBe(false);
  });

  it('fails the writer promptly and aborts the upload when S3 rejects a part', async () => {
    const real = freshClient();
    const faulty = localS3Client(server.endpoint);
    clients.push(faulty);
    const mock = mockClient(faulty);
    // Every command goes to the real server except the second UploadPart, which fails as S3 would.
    mock.on(CreateMultipartUploadCommand).callsFake((input) => real.send(new CreateMultipartUploadCommand(input)));
    mock.on(CompleteMultipartUploadCommand).callsFake((input) => real.send(new CompleteMultipartUploadCommand(input)));
    mock.on(AbortMultipartUploadCommand).callsFake((input) => real.send(new AbortMultipartUploadCommand(input)));
    mock.on(PutObjectCommand).callsFake((input) => real.send(new PutObjectCommand(input)));
    let parts = 0;
    mock.on(UploadPartCommand).callsFake(async (input) => {
      parts += 1;
      if (parts === 2) throw Object.assign(new Error('We encountered an internal error. Please try again.'), { name: 'InternalError' });
      return real.send(new UploadPartCommand(input));
    });
    const sink = await openS3Sink(faulty, { bucket: BUCKET, key: 'part-failure.tar' }, { partSizeBytes: PART, queueSize: 1 });
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
