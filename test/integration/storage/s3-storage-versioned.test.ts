import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openS3Sink } from '../../../lib/storage/s3-storage.ts';
import { makeS3Client } from '../../../lib/storage/s3-client.ts';
import { StorageError, type Sink } from '../../../lib/storage/storage.ts';
import { localS3Client } from '../../../scripts/local/s3-server.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { isCompleteMultipartUpload, S3_INTERNAL_ERROR, startS3FaultProxy, type S3FaultProxy } from '../../support/s3-fault-proxy.ts';
import { startVersionedS3Server, type VersionedS3Server } from '../../support/versioned-s3-server.ts';
import { failureOf } from '../../support/failure-of.ts';

const VERSIONED = 'archive-versioned';
const PLAIN = 'archive-plain';
const OWNER = '123456789012';
const TAR = 'application/x-tar';

let server: VersionedS3Server;
let proxy: S3FaultProxy;
let direct: S3Client;
const clients: S3Client[] = [];

beforeAll(async () => {
  server = await startVersionedS3Server({ owner: OWNER });
  proxy = await startS3FaultProxy(server.endpoint);
  direct = localS3Client(server.endpoint);
  await direct.send(new CreateBucketCommand({ Bucket: VERSIONED }));
  await direct.send(new CreateBucketCommand({ Bucket: PLAIN }));
  await direct.send(new PutBucketVersioningCommand({ Bucket: VERSIONED, VersioningConfiguration: { Status: 'Enabled' } }));
});
afterAll(async () => {
  direct.destroy();
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  proxy.decide(() => 'pass');
  server.requests.length = 0;
});
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

const throughProxy = () => {
  const client = localS3Client(proxy.endpoint);
  clients.push(client);
  return client;
};

/** What the bucket holds at `key`: the current object's text (undefined when none or a delete marker), versions and markers. */
const stateOf = async (key: string, bucket = VERSIONED) => {
  const current = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(
    async (answer) => answer.Body!.transformToString(),
    (error: { name?: string }) => (error.name === 'NoSuchKey' ? undefined : Promise.reject(error)),
  );
  const listed = await direct.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
  return { current, versions: listed.Versions?.length ?? 0, deleteMarkers: listed.DeleteMarkers?.length ?? 0 };
};

const yesterday = async (key: string, bucket = VERSIONED) => {
  await direct.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'yesterday' }));
};

/** A sink on `key` with `text` written and its stream ended, ready to commit. */
const written = async (client: S3Client, key: string, text = 'today', bucket = VERSIONED): Promise<Sink> => {
  const sink = await openS3Sink(client, { bucket, key }, TAR);
  await pipeline(Readable.from([Buffer.from(text)]), sink.stream);
  return sink;
};

/** Requests that deleted something other than a multipart upload: the version id each named, or null for the bare key. */
const deletions = () =>
  server.requests
    .filter((request) => request.method === 'DELETE' && !request.query.has('uploadId'))
    .map((request) => request.query.get('versionId'));

describe('openS3Sink on a versioned bucket', () => {
  it('makes the new version current on commit, the previous one kept behind it', async () => {
    await yesterday('ok/tickets.tar');
    const sink = await written(direct, 'ok/tickets.tar');
    await sink.commit();
    expect(await stateOf('ok/tickets.tar')).toEqual({ current: 'today', versions: 2, deleteMarkers: 0 });
  });

  it("undoes a commit by deleting only the version it wrote: yesterday's archive is current again, no delete marker", async () => {
    await yesterday('undo/tickets.tar');
    const sink = await written(direct, 'undo/tickets.tar');
    await sink.commit();
    await sink.abort(new Error('the rejects failed'));
    expect(await stateOf('undo/tickets.tar')).toEqual({ current: 'yesterday', versions: 1, deleteMarkers: 0 });
    expect(deletions()).toEqual([expect.stringMatching(/\S/)]);
    // A second abort changes nothing.
    await sink.abort(new Error('again'));
    expect(deletions()).toHaveLength(1);
  });

  it('leaves nothing new when aborted before commit', async () => {
    await yesterday('early/tickets.tar');
    const sink = await written(direct, 'early/tickets.tar');
    await sink.abort(new Error('failed before commit'));
    expect(await stateOf('early/tickets.tar')).toEqual({ current: 'yesterday', versions: 1, deleteMarkers: 0 });
    expect(await stateOf('early/none.tar')).toEqual({ current: undefined, versions: 0, deleteMarkers: 0 });
    expect(deletions()).toEqual([]);
  });

  it('asks whether a completion whose answer was lost happened, and deletes the version it wrote', async () => {
    await yesterday('lost/tickets.tar');
    // The completion reaches the server (which completes it), its answer never reaches the client.
    proxy.decide((request) => (isCompleteMultipartUpload(request) ? { cutAfterBytes: 0 } : 'pass'));
    const sink = await written(throughProxy(), 'lost/tickets.tar');
    expect(await failureOf(sink.commit())).toBeInstanceOf(StorageError);
    // Meanwhile the new archive is current: the completion happened.
    expect((await stateOf('lost/tickets.tar')).current).toBe('today');
    proxy.decide(() => 'pass');
    await sink.abort(new Error('commit failed'));
    expect(await stateOf('lost/tickets.tar')).toEqual({ current: 'yesterday', versions: 1, deleteMarkers: 0 });
    expect(server.requests.some((request) => request.method === 'HEAD')).toBe(true);
    expect(deletions()).toEqual([expect.stringMatching(/\S/)]);
  });

  it('deletes nothing when the bucket says a failed completion never happened', async () => {
    await yesterday('refused/tickets.tar');
    proxy.decide((request) => (isCompleteMultipartUpload(request) ? { error: S3_INTERNAL_ERROR } : 'pass'));
    const sink = await written(throughProxy(), 'refused/tickets.tar');
    expect(await failureOf(sink.commit())).toBeInstanceOf(StorageError);
    proxy.decide(() => 'pass');
    await sink.abort(new Error('commit failed'));
    expect(await stateOf('refused/tickets.tar')).toEqual({ current: 'yesterday', versions: 1, deleteMarkers: 0 });
    expect(server.requests.some((request) => request.method === 'HEAD')).toBe(true);
    expect(deletions()).toEqual([]);
  });

  it('deletes nothing when it cannot ask (the question fails too)', async () => {
    await yesterday('unasked/tickets.tar');
    proxy.decide((request) => (isCompleteMultipartUpload(request) ? { cutAfterBytes: 0 } : 'pass'));
    const sink = await written(throughProxy(), 'unasked/tickets.tar');
    expect(await failureOf(sink.commit())).toBeInstanceOf(StorageError);
    proxy.decide((request) =>
      request.method === 'HEAD' ? { error: { status: 403, code: 'AccessDenied', message: 'Access Denied' } } : 'pass',
    );
    await sink.abort(new Error('commit failed'));
    // The run's archive stays (it may be another run's): never a guess that hides or deletes one.
    expect(deletions()).toEqual([]);
    expect(await stateOf('unasked/tickets.tar')).toEqual({ current: 'today', versions: 2, deleteMarkers: 0 });
  });
});

describe('openS3Sink on an unversioned bucket', () => {
  it('undoes a commit by deleting the key, as there is no version to name', async () => {
    const sink = await written(direct, 'plain/tickets.tar', 'today', PLAIN);
    await sink.commit();
    await sink.abort(new Error('the rejects failed'));
    expect(await stateOf('plain/tickets.tar', PLAIN)).toEqual({ current: undefined, versions: 0, deleteMarkers: 0 });
    expect(deletions()).toEqual([null]);
  });
});

describe('makeS3Client with an expected bucket owner', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });
  const clientFor = (owner: string) => {
    Object.assign(process.env, LOCAL_AWS_ENV, { AWS_ENDPOINT_URL_S3: server.endpoint });
    const client = makeS3Client({ forcePathStyle: true, expectedBucketOwner: owner });
    clients.push(client);
    return client;
  };

  it('sends ExpectedBucketOwner with every request, writing and undoing', async () => {
    const sink = await written(clientFor(OWNER), 'owner/tickets.tar');
    await sink.commit();
    await sink.abort(new Error('undo'));
    expect(server.requests.length).toBeGreaterThanOrEqual(4);
    expect(server.requests.map((request) => request.headers['x-amz-expected-bucket-owner'])).toEqual(server.requests.map(() => OWNER));
  });

  it('is refused by a bucket of another account before anything is written', async () => {
    const error = await failureOf(openS3Sink(clientFor('999999999999'), { bucket: VERSIONED, key: 'owner/other.tar' }, TAR));
    expect(error?.message).toBe(`Access to s3://${VERSIONED}/owner/other.tar is denied`);
    expect(await stateOf('owner/other.tar')).toEqual({ current: undefined, versions: 0, deleteMarkers: 0 });
  });
});
