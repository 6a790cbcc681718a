import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeImportJob } from '../../../../lib/import/job/import-job.ts';
import { ImportInputError } from '../../../../lib/import/read/import-input-error.ts';
import type { Location } from '../../../../lib/storage/location.ts';
import { makeLocationOpeners } from '../../../../lib/storage/open-location.ts';
import { StorageError } from '../../../../lib/storage/storage.ts';
import { localS3Client } from '../../../../scripts/local/s3-server.ts';
import { chatCsv, chatRow, HEADER, readArchive } from '../../../support/chat-import.ts';
import { isCompleteMultipartUpload, S3_INTERNAL_ERROR, startS3FaultProxy, type S3FaultProxy } from '../../../support/s3-fault-proxy.ts';
import { startVersionedS3Server, type VersionedS3Server } from '../../../support/versioned-s3-server.ts';
import { failureOf } from '../../../support/failure-of.ts';

const BUCKET = 'import-versioned';

let server: VersionedS3Server;
let proxy: S3FaultProxy;
let direct: S3Client;
let client: S3Client;
let directory: string;

beforeAll(async () => {
  server = await startVersionedS3Server();
  proxy = await startS3FaultProxy(server.endpoint);
  direct = localS3Client(server.endpoint);
  await direct.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await direct.send(new PutBucketVersioningCommand({ Bucket: BUCKET, VersioningConfiguration: { Status: 'Enabled' } }));
});
afterAll(async () => {
  direct.destroy();
  await proxy.close();
  await server.close();
});
beforeEach(async () => {
  proxy.decide(() => 'pass');
  client = localS3Client(proxy.endpoint);
  directory = await mkdtemp(join(tmpdir(), 'import-versioned-'));
});
afterEach(async () => {
  client.destroy();
  await rm(directory, { recursive: true, force: true });
});

const s3 = (key: string): Location => ({ kind: 's3', bucket: BUCKET, key });
const job = () => makeImportJob({ ...makeLocationOpeners({ s3: () => client }), tmpDir: directory, worker: false });
const put = (key: string, body: string) => direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
const current = (key: string) =>
  direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: key })).then(
    async (answer) => Buffer.from(await answer.Body!.transformToByteArray()),
    (error: { name?: string }) => (error.name === 'NoSuchKey' ? undefined : Promise.reject(error)),
  );
const history = async (key: string) => {
  const listed = await direct.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: key }));
  return { versions: listed.Versions?.length ?? 0, deleteMarkers: listed.DeleteMarkers?.length ?? 0 };
};

describe('an import onto a versioned bucket', () => {
  it('makes the new archive and rejects current on success, the previous versions kept', async () => {
    await put('in/ok.csv', chatCsv([chatRow(0), { ...chatRow(1), COMMENT_PUBLIC: 'maybe' }]));
    await put('out/ok.tar', 'yesterday');
    const summary = await job()({ source: s3('in/ok.csv'), destination: s3('out/ok.tar'), rejects: s3('out/ok-rejects.csv') });
    expect(summary.rows).toBe(2);
    const entries = await readArchive((await current('out/ok.tar'))!);
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json']);
    expect(await history('out/ok.tar')).toEqual({ versions: 2, deleteMarkers: 0 });
    expect((await current('out/ok-rejects.csv'))?.toString()).toContain('comment,invalid_field,COMMENT_PUBLIC,maybe');
  });

  it("leaves yesterday's archive current when the rejects fail after the archive was completed", async () => {
    await put('in/late.csv', chatCsv([chatRow(0), { ...chatRow(1), COMMENT_PUBLIC: 'maybe' }]));
    await put('out/late.tar', 'yesterday');
    await put('out/late-rejects.csv', 'yesterday,rejects');
    // The archive completes first; the rejects' completion fails for good.
    proxy.decide((request) =>
      isCompleteMultipartUpload(request) && request.path.endsWith('/out/late-rejects.csv') ? { error: S3_INTERNAL_ERROR } : 'pass',
    );
    const error = await failureOf(
      job()({ source: s3('in/late.csv'), destination: s3('out/late.tar'), rejects: s3('out/late-rejects.csv') }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(error?.message).toMatch(/^Upload to s3:\/\/import-versioned\/out\/late-rejects\.csv failed/);
    expect((await current('out/late.tar'))?.toString()).toBe('yesterday');
    expect(await history('out/late.tar')).toEqual({ versions: 1, deleteMarkers: 0 });
    expect((await current('out/late-rejects.csv'))?.toString()).toBe('yesterday,rejects');
    expect(await history('out/late-rejects.csv')).toEqual({ versions: 1, deleteMarkers: 0 });
  });

  it('leaves nothing behind when it fails before any commit', async () => {
    await put('in/bad.csv', chatCsv([chatRow(0)], { columns: HEADER.filter((column) => column !== 'EMAIL') }));
    await put('out/bad.tar', 'yesterday');
    const error = await failureOf(job()({ source: s3('in/bad.csv'), destination: s3('out/bad.tar'), rejects: s3('out/bad-rejects.csv') }));
    expect(error).toBeInstanceOf(ImportInputError);
    expect((await current('out/bad.tar'))?.toString()).toBe('yesterday');
    expect(await history('out/bad.tar')).toEqual({ versions: 1, deleteMarkers: 0 });
    expect(await history('out/bad-rejects.csv')).toEqual({ versions: 0, deleteMarkers: 0 });
  });
});
