// `npm run import -- [options] <source> <destination>`: a chat CSV (local path or s3://bucket/key) to a TAR of
// ticket batches, gzip-compressed for a .tar.gz or .tgz destination. Progress on stderr, one JSON summary on
// stdout, non-zero exit with one clear line on failure.
import { parseArgs } from 'node:util';
import { loadImportConfig } from '../lib/config.ts';
import { AppError, describeError, hasLoggableStack, JobError } from '../lib/errors.ts';
import { makeConfiguredImport } from '../lib/import/job/configured-import.ts';
import { ImportCancelledError } from '../lib/import/job/import-job.ts';
import type { ImportProgress } from '../lib/import/job/import-pipeline.ts';
import { progressFigures, throttleProgress } from '../lib/import/job/import-progress.ts';
import { resolveEncoding } from '../lib/import/read/source-encoding.ts';
import { checkFileDestination } from '../lib/storage/file-storage.ts';
import { parseLocation } from '../lib/storage/location.ts';
import { exitWhenWritten, toleratePipeReadersLeaving } from './exit-when-written.ts';

const USAGE = [
  'usage: npm run import -- [options] <source.csv | s3://bucket/key> <destination.tar | .tar.gz | .tgz | s3://bucket/key>',
  '       npm run import -- --dry-run [options] <source.csv | s3://bucket/key>',
  "  --encoding <label>   the CSV's encoding, a WHATWG label (utf-8 by default; windows-1252, latin1, utf-16le, …)",
  '  --rejects <path|s3>  write a CSV of every row an asset did not take, and why',
  '  --dry-run            do everything but write the archive (the summary and rejects are written)',
  '  --single-thread      parse in this thread only (by default other cores parse while this one takes rows)',
  "  --read-threads <n>   parse in n threads, the file cut between rows (by default one per core beside this one's, at most 3)",
].join('\n');
const MB = 1024 * 1024;
/** More threads than this only wait on the one taking rows (and each costs tens of megabytes). */
const MAX_READ_THREADS = 16;
/** How often the progress line is redrawn on a terminal. */
const REDRAW_EVERY_MS = 250;

const progressLine = (progress: ImportProgress, elapsedMs: number): string => {
  const figures = progressFigures(progress, elapsedMs);
  const share = figures.percent_done === undefined ? '' : ` · ${figures.percent_done.toFixed(1)} %`;
  return (
    `${figures.rows} rows · ${figures.rows_per_s} rows/s · ${(figures.bytes_read / MB).toFixed(1)} MB read · ` +
    `${figures.mb_per_s.toFixed(1)} MB/s${share} · ${(elapsedMs / 1000).toFixed(1)} s`
  );
};

/** Bad input, locations, configuration, upstream, AWS and file-system failures get one line; anything else keeps its stack. */
const isExpected = (error: unknown): boolean =>
  error instanceof AppError ||
  error instanceof JobError ||
  (error instanceof Error &&
    (typeof (error as NodeJS.ErrnoException).code === 'string' || '$metadata' in error || error.name === 'CredentialsProviderError'));

/** Wrong usage: one line saying what, the usage, exit 2. */
const usageError = (problem: string): void => {
  process.stderr.write(`import: ${problem}\n${USAGE}\n`);
  process.exitCode = 2;
};

/** Options npm keeps for itself when they come before `--` (it passes them on as npm_config_* variables). */
const NPM_TAKEN_OPTIONS = ['dry-run', 'rejects', 'encoding', 'single-thread', 'read-threads'];

/**
 * What was wrong with the paths given, so the usual slips name themselves: an option whose value is
 * missing takes the next path as its value, and npm keeps options written before `--`.
 */
const pathsProblem = (positionals: readonly string[], values: Record<string, string | boolean | undefined>): string => {
  const got =
    positionals.length === 0
      ? 'got no path'
      : `got ${positionals.length} ${positionals.length === 1 ? 'path' : 'paths'} (${positionals.map((path) => `"${path}"`).join(', ')})`;
  // Only values that cannot be what their option wants (no encoding label, no count) are surely a
  // swallowed path; a --rejects path may be either, so the hint says which way it was read.
  const swallowed = (name: string, value: string): boolean =>
    name === 'rejects' ||
    (name === 'encoding' && resolveEncoding(value) === undefined) ||
    (name === 'read-threads' && !/^\s*\d+\s*$/.test(value));
  const tookPaths = ['rejects', 'encoding', 'read-threads']
    .filter((name) => typeof values[name] === 'string' && swallowed(name, values[name]))
    .map((name) => `--${name} took "${String(values[name])}" as its value`);
  const npmTook = NPM_TAKEN_OPTIONS.filter((name) => process.env[`npm_config_${name.replaceAll('-', '_')}`] !== undefined);
  const hints = [
    ...tookPaths,
    ...(npmTook.length > 0
      ? [`npm kept ${npmTook.map((name) => `--${name}`).join(', ')}: write options after -- (npm run import -- --${npmTook[0]} …)`]
      : []),
  ];
  return hints.length === 0 ? got : `${got}; ${hints.join('; ')}`;
};

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  encoding: { type: 'string' },
  rejects: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'single-thread': { type: 'boolean' },
  'read-threads': { type: 'string' },
} as const;

/**
 * What to say of the first option this CLI does not know, found by parsing again without
 * strictness (node's own message for it ends in a quote it never closes): the option as typed, an
 * option it may be a slip for (`--dryrun`), or how to give a path that starts with `-`.
 */
const unknownOptionProblem = (args: string[]): string | undefined => {
  for (const token of parseArgs({ args, allowPositionals: true, strict: false, tokens: true, options: OPTIONS }).tokens) {
    if (token.kind !== 'option' || Object.hasOwn(OPTIONS, token.name)) continue;
    const typed = args[token.index]!;
    const squashed = (name: string): string => name.replaceAll('-', '').toLowerCase();
    const meant = Object.keys(OPTIONS).find((name) => squashed(name) === squashed(token.name));
    const where = typed === token.rawName ? token.rawName : `${token.rawName} (in "${typed}")`;
    if (meant !== undefined) return `unknown option ${where}; did you mean --${meant}?`;
    return typed === token.rawName
      ? `unknown option ${where} (a path that starts with "-" can be written ./${typed})`
      : `unknown option ${where}`;
  }
  return undefined;
};

const main = async (args: string[]): Promise<void> => {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    const unknown = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? unknownOptionProblem(args) : undefined;
    usageError(unknown ?? (error as Error).message);
    return;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const dryRun = values['dry-run'] === true;
  if (positionals.length !== 2 && !(dryRun && positionals.length === 1)) {
    usageError(
      `${dryRun ? 'expected a source (and optionally a destination)' : 'expected a source and a destination'}, ${pathsProblem(positionals, values)}`,
    );
    return;
  }
  const encoding = values.encoding === undefined ? undefined : resolveEncoding(values.encoding);
  if (values.encoding !== undefined && encoding === undefined) {
    usageError(`unknown encoding "${values.encoding}" (expected a WHATWG label such as utf-8, windows-1252 or utf-16le)`);
    return;
  }
  const readThreads = values['read-threads'] === undefined ? undefined : Number(values['read-threads']);
  if (readThreads !== undefined && !(Number.isInteger(readThreads) && readThreads >= 1 && readThreads <= MAX_READ_THREADS)) {
    usageError(`--read-threads must be a whole number from 1 to ${MAX_READ_THREADS} (got "${values['read-threads']}")`);
    return;
  }
  if (readThreads !== undefined && values['single-thread'] === true) {
    usageError('--single-thread and --read-threads each say how many threads read: give one of them');
    return;
  }
  const source = parseLocation(positionals[0]!);
  const destination = positionals[1] === undefined ? undefined : parseLocation(positionals[1]);
  const rejects = values.rejects === undefined ? undefined : parseLocation(values.rejects);
  // A local destination that can never be written fails now, before the listing and the source are read.
  if (destination?.kind === 'file' && !dryRun) await checkFileDestination(destination.path);
  if (rejects?.kind === 'file') await checkFileDestination(rejects.path);
  const configured = makeConfiguredImport(loadImportConfig(), {
    // The listing is read before any progress line is drawn.
    notify: (message) => process.stderr.write(`${message}\n`),
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
  let last: ImportProgress = { rows: 0, bytesRead: 0 };
  const redraw = throttleProgress(REDRAW_EVERY_MS, (progress) => {
    process.stderr.write(`\r\x1b[2K${progressLine(progress, Date.now() - started)}`);
  });
  try {
    const summary = await configured.job({
      source,
      destination,
      rejects,
      dryRun,
      singleThread: values['single-thread'] === true,
      readThreads,
      encoding,
      signal: interrupted.signal,
      onProgress: (progress) => {
        last = progress;
        if (live) redraw(progress);
      },
    });
    process.stderr.write(
      `${live ? '\r\x1b[2K' : ''}${dryRun ? 'dry run done' : 'done'}: ${progressLine({ ...last, rows: summary.rows }, Date.now() - started)}\n`,
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    configured.close();
  }
};

toleratePipeReadersLeaving();
try {
  await main(process.argv.slice(2));
} catch (error) {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
  const expected = isExpected(error);
  // The stack of what was not expected, unless it would repeat an AWS service's text (lib/errors.ts).
  const detail = expected
    ? (error as Error).message
    : error instanceof Error && hasLoggableStack(error) && error.stack
      ? error.stack
      : describeError(error);
  process.stderr.write(`import failed: ${detail}\n`);
  // Exit now, the run has cleaned up: nothing it left open (a source's connection, a client's
  // sockets) may hold the process after a failure.
  await exitWhenWritten(error instanceof ImportCancelledError ? 130 : 1);
}
