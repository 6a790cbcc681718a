import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { handler as ImportTicketsHandler } from '../../../functions/import-tickets.ts';
import { FencedLocationError } from '../../../lib/import/job/import-fence.ts';
import { ImportInputError } from '../../../lib/import/read/import-input-error.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { localS3Client } from '../../../scripts/local/s3-server.ts';
import { captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { chatCsv, chatRow, HEADER, readArchive } from '../../support/chat-import.ts';
import { lambdaContext } from '../../support/http-events.ts';
import { startS3FaultProxy, type S3FaultProxy } from '../../support/s3-fault-proxy.ts';
import { startVersionedS3Server, type VersionedS3Server } from '../../support/versioned-s3-server.ts';
import { failureOf } from '../../support/failure-of.ts';

// The sample events' bucket, as deployed: IMPORT_BUCKET names it, the default prefixes apply.
const BUCKET = 'import-local';
const OWNER = '123456789012';

let handler: typeof ImportTicketsHandler;
let server: VersionedS3Server;
// In front of the server for the handler: it records every request the import sends.
let proxy: S3FaultProxy;
let s3: S3Client;
let logs: CapturedLogs;
const savedEnv = { ...process.env };

const loadEvent = async (scenario: string): Promise<{ source: string; destination: string }> =>
  JSON.parse(await readFile(new URL(`../../../events/importTickets/${scenario}.json`, import.meta.url), 'utf8')) as {
    source: string;
    destination: string;
  };
const put = (key: string, body: string) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
/** Every version and delete marker of the bucket, to show that a refused run changed nothing. */
const bucketState = async () => {
  const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: BUCKET }));
  return [...(listed.Versions ?? []), ...(listed.DeleteMarkers ?? [])].map(({ Key, VersionId }) => `${Key} ${VersionId}`).sort();
};
const metricLines = () => logs.lines().filter((line) => '_aws' in line);

beforeAll(async () => {
  server = await startVersionedS3Server({ owner: OWNER });
  proxy = await startS3FaultProxy(server.endpoint);
  s3 = localS3Client(server.endpoint);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: BUCKET, VersioningConfiguration: { Status: 'Enabled' } }));
  for (const name of Object.keys(process.env)) if (name.startsWith('TICKETING_') || name.startsWith('IMPORT_')) delete process.env[name];
  Object.assign(process.env, { ...LOCAL_AWS_ENV, AWS_ENDPOINT_URL_S3: proxy.endpoint, IMPORT_BUCKET: BUCKET, IMPORT_BUCKET_OWNER: OWNER });
  // The module reads its configuration when it loads, so only now that the environment is set.
  ({ handler } = await import('../../../functions/import-tickets.ts'));
});
afterAll(async () => {
  s3.destroy();
  await proxy.close();
  await server.close();
  process.env = savedEnv;
});
beforeEach(() => {
  proxy.requests.length = 0;
  logs = captureStdout();
});
afterEach(() => {
  logs.restore();
});

describe('importTickets behind its fences (IMPORT_BUCKET set)', () => {
  it('runs the sample event (incoming/ to archives/), every request naming the bucket owner, and counts ImportSucceeded', async () => {
    const event = await loadEvent('success');
    await put('incoming/chat.csv', chatCsv(Array.from({ length: 30 }, (_unused, n) => chatRow(n))));
    const summary = await handler(event, lambdaContext());
    expect(summary).toMatchObject({ rows: 30, tickets: 10 });
    const tar = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'archives/tickets.tar' }))).Body!.transformToByteArray();
    expect((await readArchive(tar)).map((entry) => entry.name)).toEqual(['backup_tickets_100.json']);
    expect(proxy.requests.length).toBeGreaterThanOrEqual(4);
    expect(proxy.requests.map((request) => request.headers['x-amz-expected-bucket-owner'])).toEqual(proxy.requests.map(() => OWNER));
    const metrics = metricLines();
    expect(metrics).toHaveLength(1);
    expect(metrics[0]).toMatchObject({ ImportSucceeded: 1, service: 'importTickets' });
    expect(JSON.stringify(metrics[0])).toContain('{"Name":"ImportSucceeded","Unit":"Count"}');
  });

  it('counts neither a dry run (no archive: one by hand must not quiet the alarm) nor a failed run', async () => {
    await put('incoming/dry.csv', chatCsv([chatRow(0)]));
    expect(await handler({ source: `s3://${BUCKET}/incoming/dry.csv`, dry_run: true }, lambdaContext())).toMatchObject({ rows: 1 });
    expect(metricLines()).toEqual([]);

    await put('incoming/bad.csv', chatCsv([chatRow(0)], { columns: HEADER.filter((column) => column !== 'EMAIL') }));
    const error = await failureOf(
      handler({ source: `s3://${BUCKET}/incoming/bad.csv`, destination: `s3://${BUCKET}/archives/bad.tar` }, lambdaContext()),
    );
    expect(error).toBeInstanceOf(ImportInputError);
    expect(metricLines()).toEqual([]);
  });

  it.each([
    [
      'a source in another bucket',
      { source: 's3://other-bucket/incoming/chat.csv', destination: `s3://${BUCKET}/archives/t.tar` },
      'The source "s3://other-bucket/incoming/chat.csv" names bucket other-bucket; an import here may use bucket import-local only',
    ],
    [
      'a destination in another bucket',
      { source: `s3://${BUCKET}/incoming/chat.csv`, destination: 's3://other-bucket/archives/t.tar' },
      'The destination "s3://other-bucket/archives/t.tar" names bucket other-bucket; an import here may use bucket import-local only',
    ],
    [
      'rejects in another bucket',
      {
        source: `s3://${BUCKET}/incoming/chat.csv`,
        destination: `s3://${BUCKET}/archives/t.tar`,
        rejects: 's3://other-bucket/archives/r.csv',
      },
      'The rejects "s3://other-bucket/archives/r.csv" names bucket other-bucket; an import here may use bucket import-local only',
    ],
    [
      'a source outside incoming/ (a folder that only starts alike)',
      { source: `s3://${BUCKET}/incoming-evil/chat.csv`, destination: `s3://${BUCKET}/archives/t.tar` },
      'The source "s3://import-local/incoming-evil/chat.csv" is outside incoming/, where sources of an import here must be (no "." or ".." parts)',
    ],
    [
      'an archive outside archives/',
      { source: `s3://${BUCKET}/incoming/chat.csv`, destination: `s3://${BUCKET}/incoming/chat-copy.tar` },
      'The destination "s3://import-local/incoming/chat-copy.tar" is outside archives/, where archives and rejects of an import here must be (no "." or ".." parts)',
    ],
    [
      'rejects outside archives/ by ".."',
      {
        source: `s3://${BUCKET}/incoming/chat.csv`,
        destination: `s3://${BUCKET}/archives/t.tar`,
        rejects: `s3://${BUCKET}/archives/../r.csv`,
      },
      'The rejects "s3://import-local/archives/../r.csv" is outside archives/, where archives and rejects of an import here must be (no "." or ".." parts)',
    ],
    [
      'a dry run whose destination is outside archives/',
      { source: `s3://${BUCKET}/incoming/chat.csv`, destination: `s3://${BUCKET}/t.tar`, dry_run: true },
      'The destination "s3://import-local/t.tar" is outside archives/, where archives and rejects of an import here must be (no "." or ".." parts)',
    ],
  ])('refuses %s before anything is read or written', async (_label, event, message) => {
    await put('incoming/chat.csv', chatCsv([chatRow(0)]));
    const before = await bucketState();
    proxy.requests.length = 0;
    const error = await failureOf(handler(event, lambdaContext()));
    expect(error).toBeInstanceOf(FencedLocationError);
    expect(error?.message).toBe(message);
    // Not a request reached S3 (the source was never asked for), and the bucket is as it was.
    expect(proxy.requests).toEqual([]);
    expect(await bucketState()).toEqual(before);
    expect(metricLines()).toEqual([]);
  });
});
