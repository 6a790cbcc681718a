// `npm run import -- <source> <destination>`: a chat CSV (local path or s3://bucket/key) to a TAR of
// ticket batches. Progress on stderr, one JSON summary on stdout, non-zero exit with one clear line on failure.
import { tmpdir } from 'node:os';
import { loadImportConfig } from '../lib/config.ts';
import { AppError } from '../lib/errors.ts';
import { ImportCancelledError, makeImportJob } from '../lib/import/import-job.ts';
import { ImportInputError } from '../lib/import/import-input-error.ts';
import { checkFileDestination, openFileSink, openFileSource } from '../lib/storage/file-storage.ts';
import { formatLocation, parseLocation, type Location } from '../lib/storage/location.ts';
import type { OpenSink, OpenSource } from '../lib/storage/storage.ts';
import { fetchDestinationUsers } from '../lib/ticketing/user-listing-client.ts';
import type { S3Client } from '@aws-sdk/client-s3';

const USAGE = 'usage: npm run import -- <source.csv | s3://bucket/key> <destination.tar | s3://bucket/key>';
const MB = 1024 * 1024;

const progressLine = (rows: number, bytesRead: number, elapsedMs: number): string => {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  return `${rows} rows · ${(bytesRead / MB).toFixed(1)} MB read · ${(bytesRead / MB / seconds).toFixed(1)} MB/s · ${seconds.toFixed(1)} s`;
};

/** Bad input, locations, configuration, upstream, AWS and file-system failures get one line; anything else keeps its stack. */
const isExpected = (error: unknown): boolean =>
  error instanceof AppError ||
  error instanceof ImportInputError ||
  (error instanceof Error && (typeof (error as NodeJS.ErrnoException).code === 'string' || '$metadata' in error || error.name === 'CredentialsProviderError'));

/**
 * The AWS SDK is loaded only when a location is on S3 (and the SSM client only for a TICKETING_PASSWORD_SSM):
 * loading it costs about 0.3 s and 75 MB of RSS, which a file-to-file run does not need.
 */
const locationOpeners = async (
  locations: readonly Location[],
  forcePathStyle: boolean,
  clients: { s3?: S3Client },
): Promise<{ openSource: OpenSource; openSink: OpenSink }> => {
  if (locations.every((location) => location.kind === 'file')) {
    const pathOf = (location: Location): string => (location.kind === 'file' ? location.path : formatLocation(location));
    return {
      openSource: async (location) => openFileSource(pathOf(location)),
      openSink: async (location) => openFileSink(pathOf(location)),
    };
  }
  const [{ makeLocationOpeners }, { makeS3Client }] = await Promise.all([
    import('../lib/storage/open-location.ts'),
    import('../lib/storage/s3-client.ts'),
  ]);
  return makeLocationOpeners({ s3: () => (clients.s3 ??= makeS3Client({ forcePathStyle })) });
};

const main = async (args: string[]): Promise<void> => {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (args.length !== 2) {
    process.stderr.write(`import: expected a source and a destination\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const [source, destination] = args.map(parseLocation) as [ReturnType<typeof parseLocation>, ReturnType<typeof parseLocation>];
  // A local destination that can never be written fails now, before the listing and the source are read.
  if (destination.kind === 'file') await checkFileDestination(destination.path);
  const config = loadImportConfig();
  const clients: { s3?: S3Client } = {};
  const ticketing = config.ticketing;
  const job = makeImportJob({
    ...(await locationOpeners([source, destination], config.s3ForcePathStyle, clients)),
    tmpDir: tmpdir(),
    ...(ticketing && {
      fetchDestinationUsers: async (signal) => {
        const { resolveSecret } = await import('../lib/secrets.ts');
        const password = await resolveSecret(ticketing.password, 'TICKETING_PASSWORD');
        return fetchDestinationUsers({ baseUrl: ticketing.url, username: ticketing.username, password, ...(signal && { signal }) });
      },
    }),
  });
  // The first Ctrl-C stops the run and cleans the destination up; a second one exits at once.
  const interrupted = new AbortController();
  const onSignal = (name: string) => {
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(new ImportCancelledError(`interrupted by ${name}; nothing was written`));
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const started = Date.now();
  const live = process.stderr.isTTY === true;
  let last = { rows: 0, bytesRead: 0 };
  let lastDrawn = 0;
  try {
    const summary = await job.run({
      source,
      destination,
      signal: interrupted.signal,
      onProgress: (progress) => {
        last = progress;
        if (!live || Date.now() - lastDrawn < 250) return;
        lastDrawn = Date.now();
        process.stderr.write(`\r\x1b[2K${progressLine(progress.rows, progress.bytesRead, lastDrawn - started)}`);
      },
    });
    process.stderr.write(`${live ? '\r\x1b[2K' : ''}done: ${progressLine(summary.rows, last.bytesRead, Date.now() - started)}\n`);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    clients.s3?.destroy();
  }
};

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
  const expected = isExpected(error);
  const detail = expected ? (error as Error).message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`import failed: ${detail}\n`);
  process.exitCode = error instanceof ImportCancelledError ? 130 : 1;
}
