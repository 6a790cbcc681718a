import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { handler as ImportTicketsHandler } from '../../../functions/import-tickets.ts';
import { JobError } from '../../../lib/errors.ts';
import { ImportInputError } from '../../../lib/import/read/import-input-error.ts';
import { ImportCancelledError } from '../../../lib/import/job/import-job.ts';
import { LocationError } from '../../../lib/storage/location.ts';
import { captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { generateTicketingUsers, startFakeTicketing, type FakeTicketing } from '../../support/fake-ticketing.ts';
import { lambdaContext } from '../../support/http-events.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { chatCsv, chatRow, HEADER, readArchive } from '../../support/chat-import.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { startS3FaultProxy, type S3Fault, type S3FaultProxy, type S3Request } from '../../support/s3-fault-proxy.ts';
import { failureOf } from '../../support/failure-of.ts';

const BUCKET = 'import-local';
const PASSWORD = 'Ticketing-Pa55word!';
const MAX_ID = '9223372036854775807';
const ODD_ID = '9007199254740993';

type ImportEvent = { source: string; destination: string };
const loadImportEvent = async (scenario: string): Promise<ImportEvent> =>
  JSON.parse(await readFile(new URL(`../../../events/importTickets/${scenario}.json`, import.meta.url), 'utf8')) as ImportEvent;

let handler: typeof ImportTicketsHandler;

let s3Server: S3Server;
// In front of the S3 server for the handler: it passes everything unless a test stalls a request.
let proxy: S3FaultProxy;
let ticketing: FakeTicketing;
let s3: S3Client;
let logs: CapturedLogs;
const savedEnv = { ...process.env };

const put = (key: string, body: string) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
const get = async (key: string) => (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray();
const exists = (key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    (error: { name?: string }) => (error.name === 'NotFound' ? false : Promise.reject(error)),
  );
const keyOf = (url: string) => url.replace(`s3://${BUCKET}/`, '');

/** An event refused as such: a job error of its own kind, not a LocationError (whatever field it names). */
const expectInvalidEventError = (error: Error | undefined): void => {
  expect(error).toBeInstanceOf(JobError);
  expect(error).not.toBeInstanceOf(LocationError);
  expect(error?.name).toBe('InvalidImportEventError');
  expect(error?.message).toMatch(/^Invalid import event: /);
};

beforeAll(async () => {
  s3Server = await startS3Server();
  await createBucket({ endpoint: s3Server.endpoint, bucket: BUCKET });
  proxy = await startS3FaultProxy(s3Server.endpoint);
  // 250 other users put the two matching ones on pages 1 and 3.
  ticketing = await startFakeTicketing({
    users: [
      { id: MAX_ID, email: 'person.0@example.com', name: 'Person Zero' },
      ...generateTicketingUsers(250),
      { id: ODD_ID, email: 'PERSON.3@EXAMPLE.COM', name: 'Person Three' },
    ],
    password: PASSWORD,
  });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_S3: proxy.endpoint,
    ...LOCAL_AWS_ENV,
    TICKETING_URL: ticketing.url,
    TICKETING_USERNAME: ticketing.username,
    TICKETING_PASSWORD: PASSWORD,
  });
  s3 = localS3Client(s3Server.endpoint);
  // The module reads its configuration when it loads, so only now that the environment is set.
  ({ handler } = await import('../../../functions/import-tickets.ts'));
});
afterAll(async () => {
  s3.destroy();
  await ticketing.close();
  await proxy.close();
  await s3Server.stop();
  process.env = savedEnv;
});
beforeEach(() => {
  logs = captureStdout();
});
afterEach(() => {
  logs.restore();
});

describe('importTickets handler', () => {
  it('imports the CSV named by the sample event from S3 into a TAR in S3, resolving users against the listing', async () => {
    const event = await loadImportEvent('success');
    await put(keyOf(event.source), chatCsv(Array.from({ length: 30 }, (_unused, n) => chatRow(n))));

    const summary = await handler(event, lambdaContext());

    expect(summary).toMatchObject({
      rows: 30,
      tickets: 10,
      comments: 30,
      users: 7,
      batches: 1,
      users_matched: 2,
      user_resolution: 'destination',
    });
    const entries = await readArchive(await get(keyOf(event.destination)));
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json']);
    const { data: tickets, comments, users, organizations } = entries[0]!.json.data.tickets;
    expect([tickets.length, comments.length, users.length, organizations]).toEqual([10, 30, 7, []]);
    // Destination ids replace AUTHOR_ID 900 (person 0) and 903 (person 3) everywhere, digit for digit.
    const text = entries[0]!.text;
    expect(text).toContain(`{"id":${MAX_ID},"name":"Person 0","email":"Person.0@Example.com"}`);
    expect(text).toContain(`{"id":${ODD_ID},"name":"Person 3","email":"Person.3@Example.com"}`);
    expect(text).toContain(`"author_id":${MAX_ID}`);
    expect(text).toContain(`"requester_id":${ODD_ID}`);
    expect(text).not.toMatch(/"(author_id|requester_id|id)":90[03][,}]/);
    expect(users.find((user) => user.name === 'Person 1')).toEqual({ id: 901, name: 'Person 1', email: 'Person.1@Example.com' });
    expect([...new Set(ticketing.requests)].sort()).toEqual([1, 2, 3]);
  });

  it('logs progress and the summary but never the ticketing password', async () => {
    const event = await loadImportEvent('success');
    await put(keyOf(event.source), chatCsv([chatRow(0)]));
    await handler({ ...event, destination: `s3://${BUCKET}/output/logged.tar` }, lambdaContext());
    const finished = logs.lines().find((line) => line.message === 'import finished');
    expect(finished?.summary).toMatchObject({ rows: 1, users_matched: 1 });
    expect(logs.raw()).not.toContain(PASSWORD);
  });

  it('runs the event the EventBridge schedule delivers (its input as the whole event)', async () => {
    const event = await loadImportEvent('scheduled');
    await put(keyOf(event.source), chatCsv(Array.from({ length: 3 }, (_unused, n) => chatRow(n))));
    const summary = await handler(event, lambdaContext());
    expect(summary).toMatchObject({ rows: 3, tickets: 1, comments: 3 });
    expect(await exists(keyOf(event.destination))).toBe(true);
  });

  it('rejects the invalid sample event with a clear error and writes nothing', async () => {
    const event = await loadImportEvent('invalid');
    const error = await failureOf(handler(event, lambdaContext()));
    expectInvalidEventError(error);
    expect(error?.message).toBe('Invalid import event: "destination" must be an s3://bucket/key URL, got "/tmp/tickets.tar"');
    // Powertools writes ERROR lines to stderr.
    expect(logs.raw()).toMatch(/"level":"ERROR","message":"import failed"/);
  });

  it.each([
    ['no destination', { source: `s3://${BUCKET}/input/chat.csv` }, /"destination" must be an s3:\/\/bucket\/key string/],
    ['an empty source (an unset schedule parameter)', { source: '', destination: `s3://${BUCKET}/x.tar` }, /"source" must be/],
    ['a malformed bucket', { source: 's3://Bad_Bucket/in.csv', destination: `s3://${BUCKET}/x.tar` }, /does not name a valid S3 bucket/],
    [
      'an http URL',
      { source: 'http://127.0.0.1/x.csv', destination: `s3://${BUCKET}/x.tar` },
      /^Invalid import event: "source" must be an s3:\/\/bucket\/key URL, got "http:\/\/127\.0\.0\.1\/x\.csv"$/,
    ],
    [
      'a key with a trailing space',
      { source: `s3://${BUCKET}/input/chat.csv `, destination: `s3://${BUCKET}/x.tar` },
      /"source": ".*chat\.csv " starts or ends with white space/,
    ],
    [
      'a key longer than S3 allows',
      { source: `s3://${BUCKET}/${'k'.repeat(1025)}`, destination: `s3://${BUCKET}/x.tar` },
      /has an object key of 1025 bytes; S3 allows at most 1024$/,
    ],
    ['not an object', 'import please', /expected \{"source"/],
  ])('rejects an event with %s', async (_label, event, message) => {
    const error = await failureOf(handler(event, lambdaContext()));
    expectInvalidEventError(error);
    expect(error?.message).toMatch(/^Invalid import event: /);
    expect(error?.message).toMatch(message);
  });

  it('reads the source in the event\'s "encoding", and refuses an unknown label as an invalid event', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'input/latin1.csv',
        Body: Buffer.from(chatCsv([{ ...chatRow(1), NAME: 'Zoë' }]), 'latin1'),
      }),
    );
    const source = `s3://${BUCKET}/input/latin1.csv`;
    const refused = await failureOf(handler({ source, destination: `s3://${BUCKET}/output/latin1-default.tar` }, lambdaContext()));
    expect(refused?.message).toMatch(/^CSV is not valid UTF-8: undecodable bytes on line 3, /); // the row starts on line 2, its BODY spans two
    expect(await exists('output/latin1-default.tar')).toBe(false);

    const summary = await handler({ source, destination: `s3://${BUCKET}/output/latin1.tar`, encoding: 'latin1' }, lambdaContext());
    expect(summary).toMatchObject({ rows: 1, users: 1, encoding: 'windows-1252' });
    const [entry] = await readArchive(await get('output/latin1.tar'));
    expect(entry!.json.data.tickets.users[0]!.name).toBe('Zoë');

    const invalid = await failureOf(
      handler({ source, destination: `s3://${BUCKET}/output/x.tar`, encoding: 'ebcdic-ish' }, lambdaContext()),
    );
    expectInvalidEventError(invalid);
    expect(invalid?.message).toBe(
      'Invalid import event: "encoding" must be a WHATWG encoding label such as "utf-8", "windows-1252" or "utf-16le", got "ebcdic-ish"',
    );
  });

  it('writes the rejects the event names, and in a dry run no archive (no destination needed)', async () => {
    await put('input/rejects.csv', chatCsv([chatRow(0), { ...chatRow(1), COMMENT_PUBLIC: 'maybe' }]));
    const source = `s3://${BUCKET}/input/rejects.csv`;
    const summary = await handler(
      { source, destination: `s3://${BUCKET}/output/rejects.tar`, rejects: `s3://${BUCKET}/output/rejects.csv` },
      lambdaContext(),
    );
    expect(summary.dropped.comments.invalid_field).toBe(1);
    const rejects = Buffer.from(await get('output/rejects.csv')).toString('utf8');
    expect(rejects).toContain('\n2,4,comment,invalid_field,COMMENT_PUBLIC,maybe\n');

    const dry = await handler({ source, rejects: `s3://${BUCKET}/output/dry-rejects.csv`, dry_run: true }, lambdaContext());
    expect(dry).toEqual(summary);
    expect(Buffer.from(await get('output/dry-rejects.csv')).toString('utf8')).toBe(rejects);
    const started = logs
      .lines()
      .filter((line) => line.message === 'import started')
      .at(-1);
    expect(started).toMatchObject({ dry_run: true, rejects: `s3://${BUCKET}/output/dry-rejects.csv` });

    for (const [event, message] of [
      [{ source, rejects: '/tmp/rejects.csv', destination: `s3://${BUCKET}/output/x.tar` }, /"rejects" must be an s3:\/\/bucket\/key URL/],
      [
        { source, destination: `s3://${BUCKET}/output/x.tar`, dry_run: 'yes' },
        /^Invalid import event: "dry_run" must be true or false, got "yes"$/,
      ],
      [
        { source, destination: `s3://${BUCKET}/output/x.tar`, dry_run: null },
        /^Invalid import event: "dry_run" must be true or false, got null$/,
      ],
      [
        { source, destination: `s3://${BUCKET}/output/x.tar`, dryRun: true },
        /^Invalid import event: unknown key "dryRun" \(expected "source", "destination", "rejects", "dry_run", "encoding"\)$/,
      ],
      [
        { source, destination: `s3://${BUCKET}/output/x.tar`, reject: 'x', Encoding: 'latin1' },
        /^Invalid import event: unknown keys "reject", "Encoding" /,
      ],
      [{ source }, /"destination" must be an s3:\/\/bucket\/key string/],
    ] as const) {
      const error = await failureOf(handler(event, lambdaContext()));
      expectInvalidEventError(error);
      expect(error?.message).toMatch(/^Invalid import event: /);
      expect(error?.message).toMatch(message);
    }
    expect(await exists('output/x.tar')).toBe(false);
  });

  it.each([
    [
      'the source request',
      (key: string) => (request: S3Request) => (request.method === 'GET' && request.path.endsWith(key) ? 'hang' : 'pass'),
    ],
    ['an archive part', () => (request: S3Request) => (request.method === 'PUT' && request.query.has('partNumber') ? 'hang' : 'pass')],
    ['the start of an upload', () => (request: S3Request) => (request.method === 'POST' && request.query.has('uploads') ? 'hang' : 'pass')],
    [
      'the completion of the upload',
      () => (request: S3Request) => (request.method === 'POST' && request.query.has('uploadId') ? 'hang' : 'pass'),
    ],
  ] as const)('stops at its deadline while S3 does not answer %s, aborting the upload and leaving nothing', async (_label, stall) => {
    const key = `input/stalled-${_label.length}.csv`;
    await put(key, chatCsv(Array.from({ length: 30 }, (_unused, n) => chatRow(n))));
    const destination = `s3://${BUCKET}/output/stalled-${_label.length}.tar`;
    proxy.decide(stall(key) as (request: S3Request) => S3Fault);
    try {
      const started = performance.now();
      // 12 s left: the run stops itself 10 s before the timeout, so 2 s in.
      const error = await failureOf(handler({ source: `s3://${BUCKET}/${key}`, destination }, lambdaContext(12_000)));
      expect(error).toBeInstanceOf(ImportCancelledError);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      proxy.decide(() => 'pass');
    }
    expect(await exists(keyOf(destination))).toBe(false);
  });

  it('fails naming the missing columns and leaves no object at the destination', async () => {
    const destination = `s3://${BUCKET}/output/missing-column.tar`;
    await put(
      'input/missing-column.csv',
      chatCsv([chatRow(0)], { columns: HEADER.filter((column) => column !== 'EMAIL' && column !== 'BODY') }),
    );
    const error = await failureOf(handler({ source: `s3://${BUCKET}/input/missing-column.csv`, destination }, lambdaContext()));
    expect(error).toBeInstanceOf(ImportInputError);
    expect(error?.message).toMatch(/BODY/);
    expect(error?.message).toMatch(/EMAIL/);
    expect(await exists(keyOf(destination))).toBe(false);
  });

  it('fails at once naming the count when the header has more than 1000 columns, leaving no object', async () => {
    const destination = `s3://${BUCKET}/output/wide.tar`;
    const columns = [...HEADER, ...Array.from({ length: 991 }, (_unused, n) => `EXTRA_${n}`)];
    await put('input/wide.csv', chatCsv([chatRow(0)], { columns }));
    const error = await failureOf(handler({ source: `s3://${BUCKET}/input/wide.csv`, destination }, lambdaContext()));
    expect(error).toBeInstanceOf(ImportInputError);
    expect(error?.message).toBe('CSV header has 1001 columns; an import reads at most 1000');
    expect(await exists(keyOf(destination))).toBe(false);
  });

  it('fails clearly when the source object does not exist', async () => {
    const destination = `s3://${BUCKET}/output/never.tar`;
    const error = await failureOf(handler({ source: `s3://${BUCKET}/input/absent.csv`, destination }, lambdaContext()));
    expect(error?.message).toBe(`Source object s3://${BUCKET}/input/absent.csv does not exist`);
    expect(await exists(keyOf(destination))).toBe(false);
  });

  it('fails without writing anything when the listing rejects the credentials', async () => {
    const event = await loadImportEvent('success');
    await put(keyOf(event.source), chatCsv([chatRow(0)]));
    const destination = `s3://${BUCKET}/output/unauthorized.tar`;
    ticketing.failNext(1, { kind: 'status', status: 401 });
    const error = await failureOf(handler({ source: event.source, destination }, lambdaContext()));
    expect(error?.message).toMatch(/Ticketing credentials rejected .*\(HTTP 401\)/);
    expect(await exists(keyOf(destination))).toBe(false);
    expect(logs.raw()).not.toContain(PASSWORD);
  });

  it('stops before the Lambda timeout and leaves no object', async () => {
    const event = await loadImportEvent('success');
    await put(keyOf(event.source), chatCsv(Array.from({ length: 300 }, (_unused, n) => chatRow(n))));
    const destination = `s3://${BUCKET}/output/deadline.tar`;
    // 5 s left is inside the 10 s safety margin: the run is cancelled at once.
    const error = await failureOf(handler({ source: event.source, destination }, lambdaContext(5_000)));
    expect(error).toBeInstanceOf(ImportCancelledError);
    expect(error?.message).toBe('Import stopped 10 s before the Lambda timeout; nothing was written');
    expect(await exists(keyOf(destination))).toBe(false);
  });
});
