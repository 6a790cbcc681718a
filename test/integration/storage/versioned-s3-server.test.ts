import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localS3Client } from '../../../scripts/local/s3-server.ts';
import { startVersionedS3Server, type VersionedS3Server } from '../../support/versioned-s3-server.ts';

const VERSIONED = 'versioned-bucket';
const PLAIN = 'plain-bucket';
const OWNER = '111122223333';

let server: VersionedS3Server;
let s3: S3Client;

const text = async (key: string, versionId?: string, bucket = VERSIONED) =>
  (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }))).Body!.transformToString();
const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as { name?: string; $metadata?: { httpStatusCode?: number } },
  );
const versions = async (prefix: string, bucket = VERSIONED) => {
  const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix }));
  return {
    versions: (listed.Versions ?? []).map(({ Key, VersionId, IsLatest, Size }) => ({ Key, VersionId, IsLatest, Size })),
    markers: (listed.DeleteMarkers ?? []).map(({ Key, VersionId, IsLatest }) => ({ Key, VersionId, IsLatest })),
  };
};

beforeAll(async () => {
  server = await startVersionedS3Server({ owner: OWNER });
  s3 = localS3Client(server.endpoint);
  await s3.send(new CreateBucketCommand({ Bucket: VERSIONED }));
  await s3.send(new CreateBucketCommand({ Bucket: PLAIN }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: VERSIONED, VersioningConfiguration: { Status: 'Enabled' } }));
});
afterAll(async () => {
  s3.destroy();
  await server.close();
});

describe('the versioned S3 test server', () => {
  it('says which buckets are versioned', async () => {
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: VERSIONED }))).Status).toBe('Enabled');
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: PLAIN }))).Status).toBeUndefined();
  });

  it('keeps every version of a key put twice, the newest current, each readable by its id', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'twice/a.txt', Body: 'yesterday' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'twice/a.txt', Body: 'today!' }));
    expect(first.VersionId).toMatch(/\S/);
    expect(second.VersionId).not.toBe(first.VersionId);
    expect(await text('twice/a.txt')).toBe('today!');
    expect(await text('twice/a.txt', first.VersionId)).toBe('yesterday');
    expect(await versions('twice/')).toEqual({
      versions: [
        { Key: 'twice/a.txt', VersionId: second.VersionId, IsLatest: true, Size: 6 },
        { Key: 'twice/a.txt', VersionId: first.VersionId, IsLatest: false, Size: 9 },
      ],
      markers: [],
    });
  });

  it('puts a delete marker over a key deleted without a version, and brings the previous back when the marker goes', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt', Body: 'kept' }));
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt' }));
    expect(deleted.DeleteMarker).toBe(true);
    const missing = await errorOf(s3.send(new GetObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt' })));
    expect([missing?.name, missing?.$metadata?.httpStatusCode]).toEqual(['NoSuchKey', 404]);
    expect((await errorOf(s3.send(new HeadObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt' }))))?.$metadata?.httpStatusCode).toBe(
      404,
    );
    const byId = await errorOf(s3.send(new GetObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt', VersionId: deleted.VersionId })));
    expect(byId?.$metadata?.httpStatusCode).toBe(405);
    expect(await versions('marker/')).toEqual({
      versions: [{ Key: 'marker/a.txt', VersionId: put.VersionId, IsLatest: false, Size: 4 }],
      markers: [{ Key: 'marker/a.txt', VersionId: deleted.VersionId, IsLatest: true }],
    });

    await s3.send(new DeleteObjectCommand({ Bucket: VERSIONED, Key: 'marker/a.txt', VersionId: deleted.VersionId }));
    expect(await text('marker/a.txt')).toBe('kept');
  });

  it('deletes one version by its id, leaving the one before it current and no marker', async () => {
    const old = await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'by-id/a.txt', Body: 'old' }));
    const added = await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'by-id/a.txt', Body: 'new' }));
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: VERSIONED, Key: 'by-id/a.txt', VersionId: added.VersionId }));
    expect(deleted.DeleteMarker).toBeUndefined();
    expect(await text('by-id/a.txt')).toBe('old');
    expect(await versions('by-id/')).toEqual({
      versions: [{ Key: 'by-id/a.txt', VersionId: old.VersionId, IsLatest: true, Size: 3 }],
      markers: [],
    });
    const gone = await errorOf(s3.send(new GetObjectCommand({ Bucket: VERSIONED, Key: 'by-id/a.txt', VersionId: added.VersionId })));
    expect(gone?.name).toBe('NoSuchVersion');
  });

  it('completes a multipart upload as a new version with its metadata, and aborts one for good', async () => {
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({
        Bucket: VERSIONED,
        Key: 'multi/a.bin',
        ContentType: 'application/x-tar',
        Metadata: { token: 't-1' },
      }),
    );
    const one = await s3.send(
      new UploadPartCommand({ Bucket: VERSIONED, Key: 'multi/a.bin', UploadId, PartNumber: 1, Body: Buffer.from('ab') }),
    );
    const two = await s3.send(
      new UploadPartCommand({ Bucket: VERSIONED, Key: 'multi/a.bin', UploadId, PartNumber: 2, Body: Buffer.from('cd') }),
    );
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: VERSIONED,
        Key: 'multi/a.bin',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: one.ETag },
            { PartNumber: 2, ETag: two.ETag },
          ],
        },
      }),
    );
    expect(done.VersionId).toMatch(/\S/);
    expect(done.ETag).toMatch(/^"[0-9a-f]{32}-2"$/);
    const head = await s3.send(new HeadObjectCommand({ Bucket: VERSIONED, Key: 'multi/a.bin' }));
    expect([head.VersionId, head.Metadata, head.ContentType, head.ContentLength]).toEqual([
      done.VersionId,
      { token: 't-1' },
      'application/x-tar',
      4,
    ]);
    expect(await text('multi/a.bin')).toBe('abcd');

    const again = await errorOf(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: VERSIONED,
          Key: 'multi/a.bin',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: one.ETag }] },
        }),
      ),
    );
    expect(again?.name).toBe('NoSuchUpload');

    const aborted = await s3.send(new CreateMultipartUploadCommand({ Bucket: VERSIONED, Key: 'multi/b.bin' }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket: VERSIONED, Key: 'multi/b.bin', UploadId: aborted.UploadId }));
    const late = await errorOf(
      s3.send(
        new UploadPartCommand({ Bucket: VERSIONED, Key: 'multi/b.bin', UploadId: aborted.UploadId, PartNumber: 1, Body: Buffer.from('x') }),
      ),
    );
    expect(late?.name).toBe('NoSuchUpload');
    expect((await versions('multi/b')).versions).toEqual([]);
  });

  it('refuses a completion listing a part it does not have', async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: VERSIONED, Key: 'multi/c.bin' }));
    const error = await errorOf(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: VERSIONED,
          Key: 'multi/c.bin',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"0"' }] },
        }),
      ),
    );
    expect(error?.name).toBe('InvalidPart');
  });

  it('keeps one object a key on an unversioned bucket: no version id, a delete removes it', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: PLAIN, Key: 'a.txt', Body: 'one' }));
    await s3.send(new PutObjectCommand({ Bucket: PLAIN, Key: 'a.txt', Body: 'two' }));
    expect(put.VersionId).toBeUndefined();
    expect(await text('a.txt', undefined, PLAIN)).toBe('two');
    expect((await versions('', PLAIN)).versions).toEqual([{ Key: 'a.txt', VersionId: 'null', IsLatest: true, Size: 3 }]);
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: PLAIN, Key: 'a.txt' }));
    expect(deleted.DeleteMarker).toBeUndefined();
    expect(await versions('', PLAIN)).toEqual({ versions: [], markers: [] });
  });

  it('refuses a request for another bucket owner with 403, and a missing bucket with NoSuchBucket', async () => {
    await s3.send(new PutObjectCommand({ Bucket: VERSIONED, Key: 'owned.txt', Body: 'x', ExpectedBucketOwner: OWNER }));
    const denied = await errorOf(
      s3.send(new GetObjectCommand({ Bucket: VERSIONED, Key: 'owned.txt', ExpectedBucketOwner: '999999999999' })),
    );
    expect([denied?.name, denied?.$metadata?.httpStatusCode]).toEqual(['AccessDenied', 403]);
    expect((await errorOf(s3.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'a' }))))?.name).toBe('NoSuchBucket');
  });
});
