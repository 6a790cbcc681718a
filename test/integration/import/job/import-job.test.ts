import { DeleteBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { link, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { PassThrough, Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobError } from '../../../../lib/errors.ts';
import { ImportCancelledError, makeImportJob, type ImportJobDeps } from '../../../../lib/import/job/import-job.ts';
import { ImportInputError } from '../../../../lib/import/read/import-input-error.ts';
import { LocationError, parseLocation, type Location } from '../../../../lib/storage/location.ts';
import { makeLocationOpeners } from '../../../../lib/storage/open-location.ts';
import { StorageError } from '../../../../lib/storage/storage.ts';
import { TicketingListingError } from '../../../../lib/ticketing/ticketing-error.ts';
import { fetchDestinationUsers } from '../../../../lib/ticketing/user-listing-client.ts';
import { createBucket, localS3Client, startS3Server, type S3Server } from '../../../../scripts/local/s3-server.ts';
import { recordCommands } from '../../../support/s3-commands.ts';
import {
  chatCsv,
  chatCsvStream,
  chatRow,
  entryAssets,
  fullRow,
  HEADER,
  nonZero,
  parseRejects,
  readArchive,
  rejectCounts,
} from '../../../support/chat-import.ts';
import { generateTicketingUsers, startFakeTicketing, type FakeTicketing } from '../../../support/fake-ticketing.ts';
import {
  isCompleteMultipartUpload,
  isUploadPart,
  S3_INTERNAL_ERROR,
  startS3FaultProxy,
  type S3FaultProxy,
  type S3Request,
} from '../../../support/s3-fault-proxy.ts';
import { failureOf } from '../../../support/failure-of.ts';

const BUCKET = 'job-test';
const PART = 5 * 1024 * 1024;
// ≈ 11.5 MB of archive: three 5 MiB parts.
const ROWS_FOR_THREE_PARTS = 60_000;

let server: S3Server;
let proxy: S3FaultProxy;
let real: S3Client;
let sent: string[];
let directory: string;
const clients: S3Client[] = [];

beforeAll(async () => {
  server = await startS3Server();
  await createBucket({ endpoint: server.endpoint, bucket: BUCKET });
  proxy = await startS3FaultProxy(server.endpoint);
});
afterAll(async () => {
  await proxy.close();
  await server.stop();
});
beforeEach(async () => {
  proxy.decide(() => 'pass');
  proxy.requests.length = 0;
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

/** Real openers on `client`; sources can be replaced by a stream factory. */
const jobOn = (client: S3Client, overrides: Partial<ImportJobDeps> = {}) =>
  makeImportJob({
    ...makeLocationOpeners({ s3: () => client, s3Sink: { partSizeBytes: PART, queueSize: 2 } }),
    tmpDir: directory,
    ...overrides,
  });

/** The request id of S3's InternalError answers here, so that messages can be checked whole. */
const FAULT_REQUEST_ID = '4B1D7E0C2A9F3865';

/**
 * A client through the fault proxy, whose commands `sent` records, where S3 answers `fail` (the
 * archive's or rejects' second part, or the completion) with its 500 InternalError on every attempt:
 * the SDK retries it, then gives up, as with an S3 failing for good.
 */
const clientFailing = (fail: 'UploadPart 2' | 'CompleteMultipartUpload') => {
  const failing =
    fail === 'CompleteMultipartUpload'
      ? isCompleteMultipartUpload
      : (request: S3Request) => isUploadPart(request) && request.query.get('partNumber') === '2';
  proxy.decide((request) => (failing(request) ? { error: { ...S3_INTERNAL_ERROR, requestId: FAULT_REQUEST_ID } } : 'pass'));
  const faulty = localS3Client(proxy.endpoint);
  clients.push(faulty);
  sent = recordCommands(faulty);
  return faulty;
};
/** What the run says of an upload S3 failed: the reply's name, status and request id, not its message (lib/errors.ts). */
const internalErrorOf = (key: string) =>
  `Upload to s3://job-test/${key} failed (InternalError: AWS error reply (HTTP 500, request id ${FAULT_REQUEST_ID}; its message is not logged))`;

/** The destination's listing as the job reads it in production (configured-import.ts): the real client, on `ticketing`. */
const listingOn =
  (ticketing: FakeTicketing, password = ticketing.password): ImportJobDeps['fetchDestinationUsers'] =>
  (signal) =>
    fetchDestinationUsers({ baseUrl: ticketing.url, username: ticketing.username, password, signal });

describe('import job', () => {
  it('streams a multi-part archive to S3 and resolves users from the listing', async () => {
    const ticketing = await startFakeTicketing({
      users: [
        { id: '777', email: 'person.2@example.com', name: 'Person 2' },
        { id: '778', email: 'someone.else@example.com', name: 'Someone else' },
      ],
    });
    try {
      const summary = await jobOn(real, {
        openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }),
        fetchDestinationUsers: listingOn(ticketing),
      })({ source: parseLocation('/unused/in.csv'), destination: s3('big.tar') });
      expect(summary).toMatchObject({
        rows: ROWS_FOR_THREE_PARTS,
        comments: ROWS_FOR_THREE_PARTS,
        users: 7,
        users_matched: 1,
        batches: 600,
      });
      expect(ticketing.requests).toEqual([1]);
      expect(sent.filter((name) => name === 'UploadPartCommand')).toHaveLength(3);
      expect(sent).toContain('CompleteMultipartUploadCommand');
      expect(await exists('big.tar')).toBe(true);
    } finally {
      await ticketing.close();
    }
  });

  it('leaves no object when an UploadPart fails mid-upload, and aborts the multipart upload', async () => {
    const faulty = clientFailing('UploadPart 2');
    const error = await failureOf(
      jobOn(faulty, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('part-fails.tar'),
      }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(error?.message).toBe(internalErrorOf('part-fails.tar'));
    expect(new Set(proxy.requests.filter(isUploadPart).map((request) => request.query.get('partNumber')))).toContain('2');
    expect(sent).toContain('CreateMultipartUploadCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await exists('part-fails.tar')).toBe(false);
  });

  it('leaves no object when S3 refuses to complete the upload', async () => {
    const faulty = clientFailing('CompleteMultipartUpload');
    const error = await failureOf(
      jobOn(faulty, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('complete-fails.tar'),
      }),
    );
    expect(error?.message).toBe(internalErrorOf('complete-fails.tar'));
    expect(proxy.requests.filter(isCompleteMultipartUpload).length).toBeGreaterThanOrEqual(1);
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(await exists('complete-fails.tar')).toBe(false);
  });

  it('leaves no object when the source connection breaks after several MB', async () => {
    const error = await failureOf(
      jobOn(real, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS, 8 * 1024 * 1024), bytes: undefined }) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('source-breaks.tar'),
      }),
    );
    expect(error?.message).toBe('source connection reset');
    // The upload was started when the run opened its destination, then aborted: no part was sent.
    expect(sent).toEqual(['CreateMultipartUploadCommand', 'AbortMultipartUploadCommand']);
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
    const ticketing = await startFakeTicketing({ users: [{ id: '777', email: 'person.2@example.com', name: 'Person 2' }] });
    try {
      let opened = 0;
      const openers = makeLocationOpeners({ s3: () => real });
      // The openers are the job's own, counted: what is under test is when the job calls them.
      const job = makeImportJob({
        openSource: async (location) => {
          opened += 1;
          return openers.openSource(location);
        },
        openSink: async (location, contentType) => {
          opened += 1;
          return openers.openSink(location, contentType);
        },
        // The listing refuses the password with its 401.
        fetchDestinationUsers: listingOn(ticketing, 'not-the-password'),
      });
      const error = await failureOf(job({ source: s3('in.csv'), destination: s3('never.tar') }));
      expect(error).toBeInstanceOf(TicketingListingError);
      expect(error?.message).toBe(`Ticketing credentials rejected by ${ticketing.url}/api/v1/users.json?page=1 (HTTP 401)`);
      expect(ticketing.requests).toEqual([1]);
      expect(opened).toBe(0);
      expect(sent).toEqual([]);
    } finally {
      await ticketing.close();
    }
  });

  it('does not create the destination when the source does not exist', async () => {
    const error = await failureOf(jobOn(real)({ source: s3('absent.csv'), destination: s3('absent.tar') }));
    expect(error).toBeInstanceOf(LocationError);
    expect(sent).toEqual(['GetObjectCommand']);
  });

  it('refuses to overwrite its own source', async () => {
    await expect(jobOn(real)({ source: s3('same.csv'), destination: s3('same.csv') })).rejects.toThrow(
      /Source, destination and rejects must differ \(s3:\/\/job-test\/same.csv is given twice\)/,
    );
  });

  it('refuses a destination that is the file of the source under another name (a symbolic or hard link), and leaves the source as it was', async () => {
    const original = join(directory, 'export.csv');
    const symbolic = join(directory, 'export-link.csv');
    await writeFile(original, chatCsv([chatRow(0)]));
    await symlink(original, symbolic);
    const error = await failureOf(jobOn(real)({ source: parseLocation(symbolic), destination: parseLocation(original) }));
    expect(error).toBeInstanceOf(LocationError);
    expect(error?.message).toBe(`Source, destination and rejects must differ (${symbolic} and ${original} are the same file)`);
    expect(await readFile(original, 'utf8')).toBe(chatCsv([chatRow(0)]));
    // A hard link is one file under two names too.
    const hard = join(directory, 'export-hard.csv');
    await link(original, hard);
    await expect(jobOn(real)({ source: parseLocation(original), destination: parseLocation(hard) })).rejects.toThrow(
      `Source, destination and rejects must differ (${original} and ${hard} are the same file)`,
    );
    // The rejects file through a link to the folder is the same place too.
    await symlink(directory, join(directory, 'again'));
    await expect(
      jobOn(real)({
        source: parseLocation(original),
        destination: parseLocation(join(directory, 'out.tar')),
        rejects: parseLocation(join(directory, 'again', 'out.tar')),
      }),
    ).rejects.toThrow(/are the same file/);
  });

  it('refuses in a dry run too a destination that is the source (the dry run checks the real run it stands for)', async () => {
    await expect(jobOn(real)({ source: s3('same.csv'), destination: s3('same.csv'), dryRun: true })).rejects.toThrow(
      /must differ \(s3:\/\/job-test\/same.csv is given twice\)/,
    );
    expect(sent).toEqual([]);
  });

  it('stops mid-upload when the signal fires, aborting the multipart upload and leaving no object', async () => {
    const interrupted = new AbortController();
    // The first part on the wire is the moment to pull the plug.
    real.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand')
          interrupted.abort(new ImportCancelledError('interrupted by SIGINT; nothing was written'));
        return next(args);
      },
      { step: 'initialize', name: 'interruptOnFirstPart' },
    );
    const error = await failureOf(
      jobOn(real, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }) })({
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
      jobOn(real, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }) })({
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

  it("stops when the signal fires after the destinations opened and before the CSV is read, the source's error crashing nothing", async () => {
    // The job destroys the source with the signal's reason at once; the reading has not begun, so
    // nothing listens to the source yet (a Ctrl-C right after the archive's temporary file appeared).
    const interrupted = new AbortController();
    const source = new PassThrough();
    const { openSink } = makeLocationOpeners({ s3: () => real });
    const error = await failureOf(
      jobOn(real, {
        openSource: async () => ({ stream: source, bytes: undefined }),
        openSink: async (location, contentType, signal) => {
          const sink = await openSink(location, contentType, signal);
          // After the job's own continuation (it registers its stop, then starts the pipeline), before any I/O completes.
          setImmediate(() => interrupted.abort(new ImportCancelledError('interrupted')));
          return sink;
        },
      })({ source: parseLocation('/unused/in.csv'), destination: parseLocation(join(directory, 'out.tar')), signal: interrupted.signal }),
    );
    expect(error).toBeInstanceOf(ImportCancelledError);
    expect(source.destroyed).toBe(true);
    expect(await readdir(directory)).toEqual([]);
  });

  it('does not start when the signal has already fired', async () => {
    const interrupted = new AbortController();
    interrupted.abort(new ImportCancelledError('too late'));
    await expect(jobOn(real)({ source: s3('in.csv'), destination: s3('late.tar'), signal: interrupted.signal })).rejects.toThrow(
      'too late',
    );
    expect(sent).toEqual([]);
  });
});

describe('import job: the source encoding', () => {
  /** A Windows-1252 export: é is the one byte 0xE9, ° 0xB0, and € the byte 0x80. */
  const windows1252 = (rows: number): Buffer => {
    const text = chatCsv(Array.from({ length: rows }, (_unused, n) => fullRow(n + 1, { BODY: `<p>Café n°${n} €</p>`, NAME: `René ${n}` })));
    return Buffer.from(text.replaceAll('€', '\x80'), 'latin1');
  };

  it('fails a Windows-1252 file by default, naming its line and byte offset, and leaves nothing at the destination', async () => {
    const input = join(directory, 'in.csv');
    const csv = windows1252(3);
    await writeFile(input, csv);
    const error = await failureOf(jobOn(real)({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar')) }));
    expect(error).toBeInstanceOf(ImportInputError);
    const offset = csv.indexOf(0xe9);
    const line = 1 + csv.subarray(0, offset).filter((byte) => byte === 10).length;
    expect(error?.message).toMatch(
      new RegExp(`^CSV is not valid UTF-8: undecodable bytes on line ${line}, at byte offset ${offset} \\(from 0\\); .*--encoding`),
    );
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('imports it with encoding windows-1252, BODY and NAME as the characters they were, and says so in the summary', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, windows1252(3));
    const output = join(directory, 'out.tar');
    const summary = await jobOn(real)({ source: parseLocation(input), destination: parseLocation(output), encoding: 'windows-1252' });
    expect(summary).toMatchObject({ rows: 3, comments: 3, users: 3, encoding: 'windows-1252' });
    const [entry] = await readArchive(await readFile(output));
    const assets = entryAssets(entry!.text);
    expect(assets.comments.map((comment) => comment.html_body)).toEqual(['<p>Café n°0 €</p>', '<p>Café n°1 €</p>', '<p>Café n°2 €</p>']);
    expect(assets.users.map((user) => user.name)).toEqual(['René 0', 'René 1', 'René 2']);
    expect(entry!.text).not.toContain('\ufffd');
  });

  it('says utf-8 in the summary of a default run, and reads a UTF-16 file with its BOM as utf-16le', async () => {
    const input = join(directory, 'in.csv');
    const text = chatCsv([fullRow(1, { BODY: 'Zoë ✓ 🎉', NAME: 'Zoë' })], { newline: '\r\n' });
    await writeFile(input, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const output = join(directory, 'out.tar');
    const summary = await jobOn(real)({ source: parseLocation(input), destination: parseLocation(output), encoding: 'utf-16le' });
    expect(summary).toMatchObject({ rows: 1, comments: 1, users: 1, encoding: 'utf-16le' });
    const [entry] = await readArchive(await readFile(output));
    expect(entryAssets(entry!.text).comments[0]!.html_body).toBe('Zoë ✓ 🎉');
    await writeFile(input, `\ufeff${text}`);
    expect(await jobOn(real)({ source: parseLocation(input), destination: parseLocation(join(directory, 'utf8.tar')) })).toMatchObject({
      rows: 1,
      comments: 1,
      encoding: 'utf-8',
    });
  });

  describe('a multi-MB UTF-8 source on S3, arriving in network-sized pieces', () => {
    // Multi-byte characters everywhere, so piece boundaries fall inside them.
    const bigCsv = (): Buffer => {
      const rows = Array.from({ length: 16_000 }, (_unused, n) =>
        fullRow(n + 1, { BODY: `<p>ü✓🎉 ${'é'.repeat(n % 97)}\r\n${n}</p>`, NAME: `Zoë ${n}` }),
      );
      return Buffer.from(chatCsv(rows));
    };

    it('imports it whole', async () => {
      const csv = bigCsv();
      expect(csv.length).toBeGreaterThan(3 * 1024 * 1024);
      await real.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big-utf8.csv', Body: csv }));
      const summary = await jobOn(real)({ source: s3('big-utf8.csv'), destination: s3('big-utf8.tar') });
      expect(summary).toMatchObject({ rows: 16_000, comments: 16_000, users: 16_000 });
      expect(await exists('big-utf8.tar')).toBe(true);
    });

    it('fails on one stray byte past the first MB, naming line and offset, and leaves no object and no part sent', async () => {
      const csv = bigCsv();
      const at = csv.indexOf('\n', 2 * 1024 * 1024) + 5;
      const broken = Buffer.concat([csv.subarray(0, at), Buffer.from([0xfe]), csv.subarray(at)]);
      await real.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'stray-byte.csv', Body: broken }));
      sent.length = 0;
      const error = await failureOf(jobOn(real)({ source: s3('stray-byte.csv'), destination: s3('stray-byte.tar') }));
      const line = 1 + csv.subarray(0, at).filter((byte) => byte === 10).length;
      expect(error?.message).toContain(`undecodable bytes on line ${line}, at byte offset ${at} (from 0)`);
      // Pass 1 fails before the archive's first part: the upload started with the run is aborted, no part sent.
      expect(sent).toEqual(['GetObjectCommand', 'CreateMultipartUploadCommand', 'AbortMultipartUploadCommand']);
      expect(await exists('stray-byte.tar')).toBe(false);
    });
  });
});

describe('import job: rejects, dry run and size', () => {
  const getText = async (key: string) =>
    await (await real.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();

  it('writes the archive and the rejects file to S3 together, the rejects counting what the summary dropped', async () => {
    const summary = await jobOn(real, { openSource: async () => ({ stream: chatCsvStream(3_000), bytes: undefined }) })({
      source: parseLocation('/unused/in.csv'),
      destination: s3('with-rejects.tar'),
      rejects: s3('with-rejects.csv'),
    });
    expect(await exists('with-rejects.tar')).toBe(true);
    const lines = parseRejects(await getText('with-rejects.csv'));
    expect(lines.length).toBeGreaterThan(3_000);
    expect(rejectCounts(lines)).toEqual(nonZero(summary.dropped));
  });

  it('leaves neither the archive nor the rejects on S3 when an upload part fails', async () => {
    const faulty = clientFailing('UploadPart 2');
    const error = await failureOf(
      jobOn(faulty, { openSource: async () => ({ stream: chatCsvStream(ROWS_FOR_THREE_PARTS), bytes: undefined }) })({
        source: parseLocation('/unused/in.csv'),
        destination: s3('both-fail.tar'),
        rejects: s3('both-fail.csv'),
      }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(await exists('both-fail.tar')).toBe(false);
    expect(await exists('both-fail.csv')).toBe(false);
  });

  it('leaves no local rejects file (nor its temporary file) when the run fails', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, `${chatCsv([chatRow(0), { ...chatRow(1), NAME: '' }])}"never closed\n`);
    const error = await failureOf(
      jobOn(real)({
        source: parseLocation(input),
        destination: parseLocation(join(directory, 'out.tar')),
        rejects: parseLocation(join(directory, 'rejects.csv')),
      }),
    );
    expect(error).toBeInstanceOf(ImportInputError);
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('opens nothing when the rejects directory does not exist', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv([chatRow(0)]));
    const missing = join(directory, 'no-such-dir', 'rejects.csv');
    const error = await failureOf(
      jobOn(real)({ source: parseLocation(input), destination: s3('never-opened.tar'), rejects: parseLocation(missing) }),
    );
    expect(error).toBeInstanceOf(LocationError);
    expect(await exists('never-opened.tar')).toBe(false);
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('does a dry run: the same summary and rejects as a real run, no archive at the destination', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(
      input,
      chatCsv(Array.from({ length: 250 }, (_unused, n) => ({ ...chatRow(n), ...(n % 9 === 0 ? { EMAIL: 'broken' } : {}) }))),
    );
    const job = jobOn(real);
    const wet = await job({
      source: parseLocation(input),
      destination: parseLocation(join(directory, 'out.tar')),
      rejects: parseLocation(join(directory, 'real.csv')),
    });
    await rm(join(directory, 'out.tar'));
    const dry = await job({
      source: parseLocation(input),
      destination: parseLocation(join(directory, 'out.tar')),
      rejects: parseLocation(join(directory, 'dry.csv')),
      dryRun: true,
    });
    expect(dry).toEqual(wet);
    expect(await readFile(join(directory, 'dry.csv'), 'utf8')).toBe(await readFile(join(directory, 'real.csv'), 'utf8'));
    expect((await readdir(directory)).sort()).toEqual(['dry.csv', 'in.csv', 'real.csv']);
    // Without a destination at all, and on S3.
    sent.length = 0;
    expect(await job({ source: parseLocation(input), dryRun: true })).toEqual(wet);
    expect(await job({ source: parseLocation(input), destination: s3('dry.tar'), dryRun: true })).toEqual(wet);
    expect(sent).toEqual([]);
    expect(await exists('dry.tar')).toBe(false);
  });

  it('refuses a run without a destination unless it is a dry run', async () => {
    await expect(jobOn(real)({ source: s3('in.csv') })).rejects.toThrow(
      new LocationError('A destination is required (except for a dry run)'),
    );
  });

  it('refuses at once a source too large for the spill space, before any output', async () => {
    const input = join(directory, 'huge.csv');
    await writeFile(input, '');
    await truncate(input, 15 * 1024 ** 4); // a sparse 15 TiB file: its size is all the check reads
    const error = await failureOf(
      jobOn(real)({ source: parseLocation(input), destination: s3('huge.tar'), rejects: s3('huge-rejects.csv') }),
    );
    expect(error).toBeInstanceOf(JobError);
    expect(error?.message).toMatch(
      /^Source is 16492\.7 GB: its spill files need about \d+\.\d GB in .+ \(1\.45 bytes per source byte\) but only \d+\.\d GB are free; split the export/,
    );
    expect(sent).toEqual([]);
    expect(await readdir(directory)).toEqual(['huge.csv']);
  });
});

describe('import job: gzip archives', () => {
  const MTIME = new Date('2026-01-02T03:04:05Z');
  /** Random bodies, which gzip can shrink by a quarter at most: `rows` of them give about rows KB of archive. */
  const incompressibleCsv = (rows: number): string =>
    chatCsv(
      Array.from({ length: rows }, (_unused, n) =>
        fullRow(n + 1, { BODY: randomBytes(768).toString('base64'), EMAIL: `u${n}@example.com` }),
      ),
    );
  const fromText = (text: string) => async () => ({ stream: Readable.from([Buffer.from(text)]), bytes: undefined });
  const plainArchiveOf = async (text: string): Promise<Buffer> => {
    const path = join(directory, `plain-${randomBytes(4).toString('hex')}.tar`);
    await jobOn(real, { openSource: fromText(text), mtime: MTIME })({
      source: parseLocation('/unused/in.csv'),
      destination: parseLocation(path),
    });
    const bytes = await readFile(path);
    await rm(path);
    return bytes;
  };
  /** Deleting a bucket succeeds only when it holds no object and no multipart upload in progress. */
  const bucketIsEmpty = (bucket: string) =>
    real.send(new DeleteBucketCommand({ Bucket: bucket })).then(
      () => true,
      (error: { name?: string }) => (error.name === 'BucketNotEmpty' ? false : Promise.reject(error)),
    );

  it('writes a .tar.gz (and a .TGZ) whose gunzip is the plain .tar byte for byte, and says so in the summary', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, chatCsv(Array.from({ length: 250 }, (_unused, n) => chatRow(n))));
    const job = jobOn(real, { mtime: MTIME });
    const plain = await job({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar')) });
    const gzip = await job({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar.gz')) });
    const tgz = await job({ source: parseLocation(input), destination: parseLocation(join(directory, 'OUT.TGZ')) });
    expect(plain.compression).toBe('none');
    expect(gzip).toEqual({ ...plain, compression: 'gzip' });
    expect(tgz).toEqual(gzip);
    const tar = await readFile(join(directory, 'out.tar'));
    const compressed = await readFile(join(directory, 'out.tar.gz'));
    expect(compressed.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(compressed.length).toBeLessThan(tar.length / 3);
    expect(gunzipSync(compressed).equals(tar)).toBe(true);
    expect(gunzipSync(await readFile(join(directory, 'OUT.TGZ'))).equals(tar)).toBe(true);
    expect((await readArchive(gunzipSync(compressed))).map((entry) => entry.name)).toEqual([
      'backup_tickets_100.json',
      'backup_tickets_200.json',
      'backup_tickets_300.json',
    ]);
    // A dry run names the compression of the archive it stands for, and writes none.
    expect(await job({ source: parseLocation(input), destination: parseLocation(join(directory, 'dry.tar.gz')), dryRun: true })).toEqual(
      gzip,
    );
    expect((await readdir(directory)).sort()).toEqual(['OUT.TGZ', 'in.csv', 'out.tar', 'out.tar.gz']);
  });

  it('streams a .tar.gz to S3 as a multipart upload, stored as application/gzip, its gunzip the plain archive byte for byte', async () => {
    const text = incompressibleCsv(12_000);
    const tar = await plainArchiveOf(text);
    sent.length = 0;
    const summary = await jobOn(real, { openSource: fromText(text), mtime: MTIME })({
      source: parseLocation('/unused/in.csv'),
      destination: s3('gz/big.tar.gz'),
    });
    expect(summary).toMatchObject({ rows: 12_000, comments: 12_000, compression: 'gzip' });
    expect(sent.filter((name) => name === 'UploadPartCommand').length).toBeGreaterThanOrEqual(2);
    expect(sent).toContain('CompleteMultipartUploadCommand');
    const object = await real.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'gz/big.tar.gz' }));
    expect(object.ContentType).toBe('application/gzip');
    const body = Buffer.from(await object.Body!.transformToByteArray());
    expect(body.length).toBeGreaterThan(PART);
    expect(gunzipSync(body).equals(tar)).toBe(true);
  });

  it('leaves no object and no multipart upload when a part of a .tar.gz fails on S3', async () => {
    const bucket = 'job-gzip-part-fails';
    await createBucket({ endpoint: server.endpoint, bucket });
    const faulty = clientFailing('UploadPart 2');
    const error = await failureOf(
      jobOn(faulty, { openSource: fromText(incompressibleCsv(12_000)) })({
        source: parseLocation('/unused/in.csv'),
        destination: { kind: 's3', bucket, key: 'fails.tar.gz' },
      }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(error?.message).toBe(
      `Upload to s3://${bucket}/fails.tar.gz failed (InternalError: AWS error reply (HTTP 500, request id ${FAULT_REQUEST_ID}; its message is not logged))`,
    );
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await bucketIsEmpty(bucket)).toBe(true);
  });

  it('leaves no object and no multipart upload when a .tar.gz run is stopped mid-upload', async () => {
    const bucket = 'job-gzip-stopped';
    await createBucket({ endpoint: server.endpoint, bucket });
    const interrupted = new AbortController();
    real.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand')
          interrupted.abort(new ImportCancelledError('interrupted by SIGTERM; nothing was written'));
        return next(args);
      },
      { step: 'initialize', name: 'interruptOnFirstPart' },
    );
    const error = await failureOf(
      jobOn(real, { openSource: fromText(incompressibleCsv(12_000)) })({
        source: parseLocation('/unused/in.csv'),
        destination: { kind: 's3', bucket, key: 'stopped.tgz' },
        signal: interrupted.signal,
      }),
    );
    expect(error).toBeInstanceOf(ImportCancelledError);
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(await bucketIsEmpty(bucket)).toBe(true);
  });

  it('leaves no local file (nor its temporary file) when writing a .tar.gz fails mid-archive', async () => {
    const input = join(directory, 'in.csv');
    await writeFile(input, incompressibleCsv(4_000));
    const { openSink } = makeLocationOpeners({ s3: () => real });
    let written = 0;
    const error = await failureOf(
      jobOn(real, {
        // The real file sink, its disk filling up after 256 KiB of compressed archive.
        openSink: async (location, contentType, signal) => {
          const sink = await openSink(location, contentType, signal);
          const filling = new Writable({
            write(chunk: Buffer, _encoding, callback) {
              written += chunk.length;
              if (written > 256 * 1024) callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
              else if (sink.stream.write(chunk)) callback();
              else sink.stream.once('drain', () => callback());
            },
            final(callback) {
              sink.stream.end(callback);
            },
          });
          return { ...sink, stream: filling };
        },
      })({ source: parseLocation(input), destination: parseLocation(join(directory, 'out.tar.gz')) }),
    );
    expect(error?.message).toBe('ENOSPC: no space left on device, write');
    expect(written).toBeGreaterThan(256 * 1024);
    expect(await readdir(directory)).toEqual(['in.csv']);
  });

  it('writes nothing when a cursor page of the listing fails mid-way', async () => {
    const ticketing = await startFakeTicketing({ users: generateTicketingUsers(1_000) });
    try {
      for (let attempt = 0; attempt < 4; attempt += 1) ticketing.failNext(5, { kind: 'status', status: 503 }, 'cursor');
      const error = await failureOf(
        jobOn(real, {
          fetchDestinationUsers: (signal) =>
            fetchDestinationUsers({
              baseUrl: ticketing.url,
              username: ticketing.username,
              password: ticketing.password,
              pagination: 'cursor',
              backoffMs: 1,
              signal,
            }),
        })({ source: s3('in.csv'), destination: s3('never.tar.gz') }),
      );
      expect(error).toBeInstanceOf(TicketingListingError);
      expect(error?.message).toMatch(/^User listing .*page%5Bafter%5D=.* failed with HTTP 503 \(4 attempts\)$/);
      expect(ticketing.log.map((request) => request.page)).toEqual([1, 2, 3, 4, 5, 5, 5, 5]);
      expect(sent).toEqual([]);
      expect(await exists('never.tar.gz')).toBe(false);
    } finally {
      await ticketing.close();
    }
  });
});
