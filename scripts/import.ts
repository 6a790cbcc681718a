// `npm run import -- <source> <destination>`: a chat CSV (local path or s3://bucket/key) to a TAR of
// ticket batches. Progress on stderr, one JSON summary on stdout, non-zero exit with one clear line on failure.
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { loadImportConfig } from '../lib/config.ts';
import { AppError, JobError } from '../lib/errors.ts';
import { makeConfiguredImport } from '../lib/import/configured-import.ts';
import { ImportCancelledError } from '../lib/import/import-job.ts';
import type { ImportProgress } from '../lib/import/import-pipeline.ts';
import { throttleProgress } from '../lib/import/import-progress.ts';
import { resolveEncoding } from '../lib/import/source-encoding.ts';
import { checkFileDestination } from '../lib/storage/file-storage.ts';
import { parseLocation } from '../lib/storage/location.ts';

const USAGE =
  'usage: npm run import -- [--encoding <label>] <source.csv | s3://bucket/key> <destination.tar | s3://bucket/key>\n' +
  '  --encoding <label>  the CSV\'s encoding, a WHATWG label (utf-8 by default; windows-1252, latin1, utf-16le, …)';
const MB = 1024 * 1024;
/** How often the progress line is redrawn on a terminal. */
const REDRAW_EVERY_MS = 250;

const progressLine = (rows: number, bytesRead: number, elapsedMs: number): string => {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  return `${rows} rows · ${(bytesRead / MB).toFixed(1)} MB read · ${(bytesRead / MB / seconds).toFixed(1)} MB/s · ${seconds.toFixed(1)} s`;
};

/** Bad input, locations, configuration, upstream, AWS and file-system failures get one line; anything else keeps its stack. */
const isExpected = (error: unknown): boolean =>
  error instanceof AppError ||
  error instanceof JobError ||
  (error instanceof Error && (typeof (error as NodeJS.ErrnoException).code === 'string' || '$metadata' in error || error.name === 'CredentialsProviderError'));

/** Wrong usage: one line saying what, the usage, exit 2. */
const usageError = (problem: string): void => {
  process.stderr.write(`import: ${problem}\n${USAGE}\n`);
  process.exitCode = 2;
};

const main = async (args: string[]): Promise<void> => {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, encoding: { type: 'string' } },
    });
  } catch (error) {
    usageError((error as Error).message);
    return;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (positionals.length !== 2) {
    usageError('expected a source and a destination');
    return;
  }
  const encoding = values.encoding === undefined ? undefined : resolveEncoding(values.encoding);
  if (values.encoding !== undefined && encoding === undefined) {
    usageError(`unknown encoding "${values.encoding}" (expected a WHATWG label such as utf-8, windows-1252 or utf-16le)`);
    return;
  }
  const [source, destination] = positionals.map(parseLocation) as [ReturnType<typeof parseLocation>, ReturnType<typeof parseLocation>];
  // A local destination that can never be written fails now, before the listing and the source are read.
  if (destination.kind === 'file') await checkFileDestination(destination.path);
  const configured = makeConfiguredImport(loadImportConfig(), { tmpDir: tmpdir() });
  // The first Ctrl-C stops the run and cleans the destination up; a second one exits at once.
  const interrupted = new AbortController();
  const onSignal = (name: string) => {
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(new ImportCancelledError(`interrupted by ${name}; nothing was written`));
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const started = Date.now();
  const live = process.stderr.isTTY === true;
  let last: ImportProgress = { rows: 0, bytesRead: 0 };
  const redraw = throttleProgress(REDRAW_EVERY_MS, (progress) => {
    process.stderr.write(`\r\x1b[2K${progressLine(progress.rows, progress.bytesRead, Date.now() - started)}`);
  });
  try {
    const summary = await configured.job({
      source,
      destination,
      encoding,
      signal: interrupted.signal,
      onProgress: (progress) => {
        last = progress;
        if (live) redraw(progress);
      },
    });
    process.stderr.write(`${live ? '\r\x1b[2K' : ''}done: ${progressLine(summary.rows, last.bytesRead, Date.now() - started)}\n`);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    configured.close();
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
