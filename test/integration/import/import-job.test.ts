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
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImportCancelledError, makeImportJob, type ImportJobDeps } from '../../../lib/import/import-job.ts';
import { ImportInputError } from '../../../lib/import/import-input-error.ts';
import { LocationError, parseLocation, type Location } from '../../../lib/storage/location.ts';
import { makeLocationOpeners } from '../../../lib/storage/open-location.ts';
import { StorageError } from '../../../lib/storage/storage.ts';
import { TicketingListingError } from '../../../lib/ticketing/ticketing-error.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../scripts/local/s3-server.ts';
import { recordCommands } from '../../support/s3-commands.ts';
import { chatCsv, chatCsvStream, chatRow, HEADER, readArchive } from '../../support/chat-import.ts';

const BUCKET = 'job-test';
const PART = 5 * 1024 * 1024;
// ≈ 11.5 MB of archive: three 5 MiB parts.
const ROWS_FOR_THREE_PARTS = 60_000;

let server: S3Server;
let real: S3Client;
let sent: string[];
let directory: string;
const clients: S3Client[] = [];

beforeAll(async () => {
  server = await startS3Server();
  await createBucket({ endpoint: server.endpoint, bucket: BUCKET });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  real = localS3Client(server.endpoint);
  sent = recordCommands(real);
  clients.push(real);
  directory = await mkdtemp(join(tmpdir(), 'import-job-'));
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await rm(directory, { recursive: true, force: true });
});

const s3 = (key: string): Location => ({ kind: 's3', bucket: BUCKET, key });
const exists = (key: string) =>
  real.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    (error: { name?: string }) => (error.name === 'NotFound' ? false : Promise.reject(error)),
  );
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

/** Real openers on `client`; sources can be replaced by a stream factory. */
const jobOn = (client: S3Client, overrides: Partial<ImportJobDeps> = {}) =>
  makeImportJob({ ...makeLocationOpeners({ s3: () => client, s3Sink: { partSizeBytes: PART, queueSize: 2 } }), tmpDir: directory, ...overrides });

/** A client whose commands reach the real server except those `fail` rejects (faults fauxqs cannot produce). */
const clientFailing = (fail: { command: 'UploadPart' | 'CompleteMultipartUpload'; onCall: number }) => {
  const faulty = localS3Client(server.endpoint);
  clients.push(faulty);
  const mock = mockClient(faulty);
  const calls = { UploadPart: 0, CompleteMultipartUpload: 0 };
  const injected = () => Object.assign(new Error('We encountered an internal error. Please try again.'), { name: 'InternalError' });
  mock.on(CreateMultipartUploadCommand).callsFake((input) => real.send(new CreateMultipartUploadCommand(input)));
  mock.on(AbortMultipartUploadCommand).callsFake((input) => real.send(new AbortMultipartUploadCommand(input)));
  mock.on(PutObjectCommand).callsFake((input) => real.send(new PutObjectCommand(input)));
  mock.on(UploadPartCommand).callsFake(async (input) => {
    calls.UploadPart += 1;
    if (fail.command === 'UploadPart' && calls.UploadPart === fail.onCall) throw injected();
    return real.send(new UploadPartCommand(input));
  });
  mock.on(CompleteMultipartUploadCommand).callsFake(async (input) => {
    calls.CompleteMultipartUpload += 1;
    if (fail.command === 'CompleteMultipartUpload' && calls.CompleteMultipartUpload === fail.onCall) throw injected();
    return real.send(new CompleteMultipartUploadCommand(input));
  });
  return { faulty, calls };
};

describe('import job', () => {
  it('streams a multi-part archive to S3 and resolves users from the listing', async () => {
    const summary = await jobOn(real, {
      openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS),
      fetchDestinationUsers: async () => new Map([['person.2@example.com', '777']]),
    })({ source: parseLocation('/unused/in.csv'), destination: s3('big.tar') });
    expect(summary).toMatchObject({ rows: ROWS_FOR_THREE_PARTS, comments: ROWS_FOR_THREE_PARTS, users: 7, users_matched: 1, batches: 600 });
    expect(sent.filter((name) => name === 'UploadPartCommand')).toHaveLength(3);
    expect(sent).toContain('CompleteMultipartUploadCommand');
    expect(await exists('big.tar')).toBe(true);
  });

  it('leaves no object when an UploadPart fails mid-upload, and aborts the multipart upload', async () => {
    const { faulty, calls } = clientFailing({ command: 'UploadPart', onCall: 2 });
    const error = await failureOf(
      jobOn(faulty, { openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS) })({ source: parseLocation('/unused/in.csv'), destination: s3('part-fails.tar') }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(error?.message).toBe('Upload to s3://job-test/part-fails.tar failed (InternalError: We encountered an internal error. Please try again.)');
    expect(calls.UploadPart).toBeGreaterThanOrEqual(2);
    expect(sent).toContain('CreateMultipartUploadCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await exists('part-fails.tar')).toBe(false);
  });

  it('leaves no object when S3 refuses to complete the upload', async () => {
    const { faulty } = clientFailing({ command: 'CompleteMultipartUpload', onCall: 1 });
    const error = await failureOf(
      jobOn(faulty, { openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS) })({ source: parseLocation('/unused/in.csv'), destination: s3('complete-fails.tar') }),
    );
    expect(error?.message).toBe('Upload to s3://job-test/complete-fails.tar failed (InternalError: We encountered an internal error. Please try again.)');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(await exists('complete-fails.tar')).toBe(false);
  });

  it('leaves no object when the source connection breaks after several MB', async () => {
    const error = await failureOf(
      jobOn(real, { openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS, 8 * 1024 * 1024) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('source-breaks.tar'),
      }),
    );
    expect(error?.message).toBe('source connection reset');
    expect(sent).toEqual([]);
    expect(await exists('source-breaks.tar')).toBe(false);
  });

  it('leaves no file when a local CSV lacks a required column', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0)], { columns: HEADER.filter((column) => column !== 'AUTHOR_ID') }));
    const error = await failureOf(jobOn(real)({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar')) }));
    expect(error).toBeInstanceOf(ImportInputError);
    expect(error?.message).toMatch(/AUTHOR_ID/);
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('writes a local archive with resolution disabled when no listing is configured', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv(Array.from({ length: 250 }, (_unused, n) => chatRow(n))));
    const summary = await jobOn(real)({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar')) });
    expect(summary).toMatchObject({ rows: 250, batches: 3, user_resolution: 'disabled', users_matched: 0 });
    const entries = await readArchive(await readFile(join(directory, 'out.tar')));
    expect(entries.map((entry) => entry.name)).toEqual(['backup_tickets_100.json', 'backup_tickets_200.json', 'backup_tickets_300.json']);
  });

  it('reads the listing before opening anything, so a listing failure touches neither side', async () => {
    let opened = 0;
    const openers = makeLocationOpeners({ s3: () => real });
    const job = makeImportJob({
      openSource: async (location) => {
        opened += 1;
        return openers.openSource(location);
      },
      openSink: async (location) => {
        opened += 1;
        return openers.openSink(location);
      },
      fetchDestinationUsers: async () => {
        throw new TicketingListingError('Ticketing credentials rejected by http://127.0.0.1/ (HTTP 401)');
      },
    });
    await expect(job({ source: s3('in.csv'), destination: s3('never.tar') })).rejects.toThrow(TicketingListingError);
    expect(opened).toBe(0);
    expect(sent).toEqual([]);
  });

  it('does not create the destination when the source does not exist', async () => {
    const error = await failureOf(jobOn(real)({ source: s3('absent.csv'), destination: s3('absent.tar') }));
    expect(error).toBeInstanceOf(LocationError);
    expect(sent).toEqual(['GetObjectCommand']);
  });

  it('refuses to overwrite its own source', async () => {
    await expect(jobOn(real)({ source: s3('same.csv'), destination: s3('same.csv') })).rejects.toThrow(/Source and destination are the same/);
  });

  it('stops mid-upload when the signal fires, aborting the multipart upload and leaving no object', async () => {
    const interrupted = new AbortController();
    // The first part on the wire is the moment to pull the plug.
    real.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand') interrupted.abort(new ImportCancelledError('interrupted by SIGINT; nothing was written'));
        return next(args);
      },
      { step: 'initialize', name: 'interruptOnFirstPart' },
    );
    const error = await failureOf(
      jobOn(real, { openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('interrupted.tar'),
        signal: interrupted.signal,
      }),
    );
    expect(error).toBeInstanceOf(ImportCancelledError);
    expect(error?.message).toBe('interrupted by SIGINT; nothing was written');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await exists('interrupted.tar')).toBe(false);
  });

  it('stops while reading the CSV when the signal fires, leaving no file', async () => {
    const interrupted = new AbortController();
    const output = join(directory, 'out.tar');
    const error = await failureOf(
      jobOn(real, { openSource: async () => chatCsvStream(ROWS_FOR_THREE_PARTS) })({
        source: parseLocation('/unused/in.csv'),
        destination: parseLocation(output),
        signal: interrupted.signal,
        onProgress: ({ rows }) => {
          if (rows > 1_000) interrupted.abort(new ImportCancelledError('stopped'));
        },
      }),
    );
    expect(error).toBeInstanceOf(ImportCancelledError);
    expect(await readdir(directory)).toEqual([]);
  });

  it('does not start when the signal has already fired', async () => {
    const interrupted = new AbortController();
    interrupted.abort(new ImportCancelledError('too late'));
    await expect(jobOn(real)({ source: s3('in.csv'), destination: s3('late.tar'), signal: interrupted.signal })).rejects.toThrow('too late');
    expect(sent).toEqual([]);
  });
});
