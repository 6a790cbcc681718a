import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateChatCsv } from '../demo/chat-export.ts';
import { fetchDestinationUsers, type ListingPagination } from '../lib/ticketing/user-listing-client.ts';
import { generateTicketingUsers, startFakeTicketing, type FakeTicketingOptions } from '../test/support/fake-ticketing.ts';
import { collectGarbage } from '../test/support/retained-heap.ts';
import { buildDedupeKeys, type KeyCounts } from './import/dedupe-keys.ts';

/**
 * Import pipeline, end to end: the CLI (`scripts/import.ts`) turning a generated chat CSV into a
 * local tar, in a child process, timed, with its peak RSS (`/usr/bin/time` %M = VmHWM) and its CPU
 * use (user + system over wall time: 1.0 is one core busy), next to papaparse alone parsing the same
 * file in the same run (the baseline). Figures, not pass/fail.
 *
 * Rows: BENCH_IMPORT_ROWS (comma separated, default `250000,1000000`; e.g. `BENCH_IMPORT_ROWS=50000`
 * for a quick run). The CLI runs as `npm run import` starts it (the environment and node flags of
 * package.json's `import` script, without npm's own start-up: `--max-semi-space-size=8` caps V8's
 * young generation, a fixed malloc mmap threshold lets freed blocks go back to the system, a compile
 * cache spares the TypeScript stripping), with its default reading thread
 * (one on two cores), with `--single-thread` and with `--read-threads 2` (the source cut between two
 * reading threads), then with `--rejects` and `--dry-run`, and to a `.tar.gz` (also set against the
 * plain run of its round, with the compressed size).
 *
 * Rounds: BENCH_IMPORT_ROUNDS (default 3, at most 20) rounds of the parse and every variant in turn.
 * Each variant's ratio is taken per round against that round's parse and reported as the median and
 * range of the rounds: the machine is shared, and one run of each once swung a ratio by a third.
 *
 * Dedupe state: what a run of each size keeps to its end (the winners' keys), built with the
 * import's own classes and weighed in this process, so RSS growth with rows can be set against it.
 *
 * Worst-case keys: the dedupe state of an all-new export of BENCH_IMPORT_KEYS_ROWS rows (default
 * 18,000,000, what fills `/tmp`; 0 skips it) with a destination, built in a child process under the
 * import function's heap limit (bench/import/worst-case-keys.ts): its size, and its peak RSS against
 * the function's memory.
 *
 * Listing: BENCH_IMPORT_LISTING_USERS users (default 25,000; 0 skips it) read from the fake ticketing
 * listing, each page answered after 50 ms, once per way of paging: by cursor, by page number from a
 * listing that refuses page numbers past 100 (Zendesk: the read switches to cursors), and by page
 * number from one that allows them. Each against its floor: the 50 ms pages that must follow one
 * another (all of them by cursor; page 1 then rounds of four by page number).
 *
 * Spill: a second export whose every row is a new ticket, comment and user (the most that rows of the generated export spill)
 * is imported with the spill directory watched, giving the spill bytes per source byte that the
 * early size check uses (lib/import/job/spill-space.ts).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = fileURLToPath(new URL('./out/', import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const MB = 1024 * 1024;

const BARE_PARSE = `
import { createReadStream } from 'node:fs';
import Papa from 'papaparse';
let rows = 0;
await new Promise((resolve, reject) => Papa.parse(createReadStream(process.argv[1]), {
  chunk: (results) => { rows += results.data.length; },
  complete: resolve,
  error: reject,
}));
process.stdout.write(String(rows));
`;

interface Measured {
  seconds: number;
  peakRssMb: number;
  /** CPU seconds (user + system) over wall seconds. */
  cpu: number;
  stdout: string;
}

const measure = async (args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Measured> => {
  const timeFile = `${OUT}time-${process.pid}.txt`;
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, NODE, ...args], { cwd: ROOT, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
  });
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`child failed (${code}): ${stderr}`);
  const [peakKb, user, system] = (await readFile(timeFile, 'utf8')).trim().split('\n').at(-1)!.split(' ').map(Number) as [
    number,
    number,
    number,
  ];
  await rm(timeFile, { force: true });
  return { seconds, peakRssMb: peakKb / 1024, cpu: (user + system) / seconds, stdout };
};

/** package.json's `import` script, split into its leading `NAME=value` settings and the node arguments. */
const npmImportCommand = async (): Promise<{ env: NodeJS.ProcessEnv; nodeArgs: string[] }> => {
  const packageJson = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { scripts: { import: string } };
  const words = packageJson.scripts.import.trim().split(/\s+/);
  const env: NodeJS.ProcessEnv = {};
  let index = 0;
  for (; index < words.length && /^[A-Z_]+=/.test(words[index]!); index += 1) {
    const [name, ...value] = words[index]!.split('=');
    env[name!] = value.join('=');
  }
  if (words[index] !== 'node') throw new Error(`unexpected import script: ${packageJson.scripts.import}`);
  return { env, nodeArgs: words.slice(index + 1) };
};

const withoutTicketing = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env = { ...process.env, ...extra };
  delete env.TICKETING_URL;
  return env;
};

const LISTING_PAGE_LATENCY_MS = 50;

/** One read of a listing of `count` users from the fake (its pages answered after 50 ms), timed. */
const timeListingRead = async (
  count: number,
  pagination: ListingPagination,
  fake: FakeTicketingOptions,
): Promise<{ seconds: number; switched: boolean }> => {
  // Rate limits are not what is measured here.
  const listing = await startFakeTicketing({
    users: generateTicketingUsers(count),
    latencyMs: LISTING_PAGE_LATENCY_MS,
    rateLimit: { limit: 1_000_000, windowMs: 60_000 },
    ...fake,
  });
  try {
    let switched = false;
    const started = performance.now();
    const users = await fetchDestinationUsers({
      baseUrl: listing.url,
      username: listing.username,
      password: listing.password,
      pagination,
      notify: () => (switched = true),
    });
    const seconds = (performance.now() - started) / 1000;
    if (users.size !== count) throw new Error(`the listing read ${users.size} users of ${count}`);
    return { seconds, switched };
  } finally {
    await listing.close();
  }
};

const measureListingReads = async (count: number): Promise<string> => {
  const pages = Math.ceil(count / 100);
  const sequentialFloor = (pages * LISTING_PAGE_LATENCY_MS) / 1000;
  const numberedFloor = ((1 + Math.ceil((pages - 1) / 4)) * LISTING_PAGE_LATENCY_MS) / 1000;
  const cursor = await timeListingRead(count, 'cursor', {});
  const refused = await timeListingRead(count, 'pages', {});
  const numbered = await timeListingRead(count, 'pages', { offsetLimit: null });
  const line = (label: string, read: { seconds: number }, floor: number) =>
    `  ${label} ${read.seconds.toFixed(1)} s = ${(read.seconds / floor).toFixed(2)}× its floor of ${floor.toFixed(1)} s`;
  return [
    `listing of ${count} users (${pages} pages, each answered after ${LISTING_PAGE_LATENCY_MS} ms):`,
    line('TICKETING_PAGINATION=cursor:', cursor, sequentialFloor),
    line(`pages, page numbers refused past 100 (switched to cursors: ${refused.switched ? 'yes' : 'no'}):`, refused, sequentialFloor),
    line('pages, page numbers allowed past 100, four at a time:', numbered, numberedFloor),
  ].join('\n');
};

const MAX_SPILL_POLLS = 100_000;
/** The heap limit of the import function: Lambda's Node.js runtime starts node with 90 % of its 3,538 MB. */
const IMPORT_HEAP_MB = 3184;
const MAX_ROUNDS = 20;

/**
 * Imports an export of `rows` rows that are all new tickets, comments and users, watching the spill
 * directory until pass 1 ends: the largest spill seen over the source's size.
 */
const measureSpill = async (
  rows: number,
  npm: { env: NodeJS.ProcessEnv; nodeArgs: string[] },
): Promise<{ ratio: number; sourceMb: number }> => {
  const csv = `${OUT}unique-${rows}.csv`;
  const tar = `${OUT}unique-${rows}.tar`;
  const tmp = `${OUT}spill-tmp/`;
  await mkdir(tmp, { recursive: true });
  try {
    // Each row a conversation, a comment and an author of its own; the bodies of the generated export.
    const template = (await readFile(`${ROOT}demo/chat-export.csv`, 'utf8')).split('\r\n')[0]!;
    const { chatCsvChunks } = await import('../demo/chat-export.ts');
    const source = [...chatCsvChunks({ rows, seed: 5, faultRate: 0 })].join('');
    const columns = template.split(',');
    let n = 0;
    const unique = source.replace(/^(\d+),/gm, () => `${9_000_000_000 + n++},`).replace(/@/g, () => `.${n++}@`);
    await writeFile(csv, unique);
    const sourceBytes = (await stat(csv)).size;
    let largest = 0;
    let running = true;
    const watching = (async () => {
      for (let polls = 0; running && polls < MAX_SPILL_POLLS; polls += 1) {
        for (const dir of await readdir(tmp).catch(() => [])) {
          let bytes = 0;
          for (const file of await readdir(join(tmp, dir)).catch(() => []))
            bytes += (await stat(join(tmp, dir, file)).catch(() => ({ size: 0 }))).size;
          largest = Math.max(largest, bytes);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const result = await measure([...npm.nodeArgs, csv, tar], withoutTicketing({ ...npm.env, TMPDIR: tmp }));
    running = false;
    await watching;
    const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { tickets: number; users: number };
    if (summary.tickets < rows * 0.9 || summary.users < rows * 0.9 || columns.length < 10)
      throw new Error('the unique export is not unique enough');
    return { ratio: largest / sourceBytes, sourceMb: sourceBytes / MB };
  } finally {
    await rm(csv, { force: true });
    await rm(tar, { force: true });
    await rm(tmp, { recursive: true, force: true });
  }
};

/** Heap and array buffers in use after a full collection. */
const liveBytes = (): number => {
  collectGarbage()();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

/**
 * The dedupe state a run of these counts keeps to its end (ids and emails that won; AUTHOR_ID
 * decisions are kept only with a destination, and these runs have none), built with the import's
 * own classes and weighed: what RSS may grow by with rows.
 */
const dedupeStateMb = (counts: KeyCounts): number => {
  const before = liveBytes();
  const keys = buildDedupeKeys(counts, false);
  const bytes = liveBytes() - before;
  // Still in use up to here, so the collection above could not take them.
  if (keys.deduper.dropped.users.duplicate !== 0) throw new Error('unexpected duplicates');
  return bytes / MB;
};

/** The middle value (the lower middle of an even count). */
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

/**
 * A variant's runs against the bare parse's runs of the same rounds: the median time, and the ratio
 * of each round (a paired comparison, so a slow minute of the shared machine weighs on both sides)
 * as its median and range; CPU the median, peak RSS the highest seen.
 */
const figures = (label: string, size: number, runs: readonly Measured[], bare: readonly Measured[]): string => {
  const seconds = median(runs.map((run) => run.seconds));
  const ratios = runs.map((run, round) => run.seconds / bare[round]!.seconds);
  const range = runs.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)` : '';
  return (
    `${label} ${(size / seconds).toFixed(1)} MB/s (${seconds.toFixed(1)} s) = ${median(ratios).toFixed(2)}× the parse${range}, ` +
    `CPU ${median(runs.map((run) => run.cpu)).toFixed(2)}, peak RSS ${Math.max(...runs.map((run) => run.peakRssMb)).toFixed(0)} MB`
  );
};

export const run = async (): Promise<void> => {
  const sizes = (process.env.BENCH_IMPORT_ROWS ?? '250000,1000000').split(',').map((value) => Number(value.trim()));
  const rounds = Math.max(1, Math.min(MAX_ROUNDS, Number(process.env.BENCH_IMPORT_ROUNDS ?? '3') || 1));
  await mkdir(OUT, { recursive: true });
  const npm = await npmImportCommand();
  // Fills the compile cache as any earlier run would (`--help` loads every module, then stops).
  await measure([...npm.nodeArgs, '--help'], withoutTicketing(npm.env));
  for (const rows of sizes) {
    const csv = `${OUT}chat-${rows}.csv`;
    const tar = `${OUT}chat-${rows}.tar`;
    const tarGz = `${OUT}chat-${rows}.tar.gz`;
    const rejects = `${OUT}chat-${rows}-rejects.csv`;
    try {
      const { bytes } = await generateChatCsv({ rows, path: csv });
      const size = bytes / MB;
      const env = withoutTicketing(npm.env);
      const variants = {
        threaded: [csv, tar],
        single: ['--single-thread', csv, tar],
        twoReaders: ['--read-threads', '2', csv, tar],
        withRejects: ['--rejects', rejects, csv, tar],
        dry: ['--dry-run', csv],
        gzip: [csv, tarGz],
      } satisfies Record<string, string[]>;
      const bare: Measured[] = [];
      const runs: Record<keyof typeof variants, Measured[]> = {
        threaded: [],
        single: [],
        twoReaders: [],
        withRejects: [],
        dry: [],
        gzip: [],
      };
      // Rounds of every variant in turn, so each is compared with the bare parse of its own round.
      for (let round = 0; round < rounds; round += 1) {
        bare.push(await measure(['--input-type=module', '-e', BARE_PARSE, csv]));
        for (const [name, args] of Object.entries(variants))
          runs[name as keyof typeof variants].push(await measure([...npm.nodeArgs, ...args], env));
      }
      const summary = JSON.parse(runs.threaded[0]!.stdout.trim().split('\n').at(-1)!) as {
        rows: number;
        batches: number;
        tickets: number;
        comments: number;
        users: number;
      };
      const tarMb = (await stat(tar)).size / MB;
      const tarGzMb = (await stat(tarGz)).size / MB;
      const gzipRatios = runs.gzip.map((run, round) => run.seconds / runs.threaded[round]!.seconds);
      const rejectsMb = (await stat(rejects)).size / MB;
      const bareSeconds = median(bare.map((run) => run.seconds));
      process.stdout.write(
        [
          `${String(rows).padStart(8)} rows ${size.toFixed(0).padStart(5)} MB → ${tarMb.toFixed(0)} MB tar, ${summary.batches} entries`,
          `  papaparse alone ${(size / bareSeconds).toFixed(1)} MB/s (${bareSeconds.toFixed(1)} s), CPU ${median(bare.map((run) => run.cpu)).toFixed(2)}, ` +
            `peak RSS ${Math.max(...bare.map((run) => run.peakRssMb)).toFixed(0)} MB; medians of ${rounds} round${rounds === 1 ? '' : 's'}`,
          `  ${figures('npm run import (one reading thread):', size, runs.threaded, bare)}`,
          `  ${figures('npm run import --single-thread:', size, runs.single, bare)}`,
          `  ${figures('npm run import --read-threads 2:', size, runs.twoReaders, bare)}`,
          `  ${figures(`with --rejects (${rejectsMb.toFixed(0)} MB):`, size, runs.withRejects, bare)}`,
          `  ${figures('--dry-run:', size, runs.dry, bare)}`,
          `  ${figures(`to .tar.gz (${tarGzMb.toFixed(0)} MB, ${(tarMb / tarGzMb).toFixed(1)}:1):`, size, runs.gzip, bare)}; ` +
            `${median(gzipRatios).toFixed(2)}× the plain run (${Math.min(...gzipRatios).toFixed(2)}–${Math.max(...gzipRatios).toFixed(2)}×)`,
          `  dedupe state at the end: ${dedupeStateMb(summary).toFixed(1)} MB (${summary.tickets} tickets, ${summary.comments} comments, ${summary.users} users)`,
        ].join('\n') + '\n',
      );
    } finally {
      await rm(csv, { force: true });
      await rm(tar, { force: true });
      await rm(tarGz, { force: true });
      await rm(rejects, { force: true });
    }
  }
  const listingUsers = Number(process.env.BENCH_IMPORT_LISTING_USERS ?? '25000');
  if (listingUsers > 0) process.stdout.write(`${await measureListingReads(listingUsers)}\n`);
  const keyRows = Number(process.env.BENCH_IMPORT_KEYS_ROWS ?? '18000000');
  if (keyRows > 0) {
    const keys = await measure([
      `--max-old-space-size=${IMPORT_HEAP_MB}`,
      fileURLToPath(new URL('./import/worst-case-keys.ts', import.meta.url)),
      String(keyRows),
    ]);
    const figures = JSON.parse(keys.stdout) as { seconds: number; rssMb: number; heapMb: number; arrayBuffersMb: number };
    process.stdout.write(
      `dedupe state of an all-new export with a destination (${keyRows} distinct ticket ids, comment ids, emails and AUTHOR_IDs), heap capped at ${IMPORT_HEAP_MB} MB: ` +
        `built in ${figures.seconds.toFixed(0)} s, ${figures.arrayBuffersMb.toFixed(0)} MB off the heap and ${figures.heapMb.toFixed(0)} MB on it at the end, ` +
        `RSS ${figures.rssMb.toFixed(0)} MB at the end, ${keys.peakRssMb.toFixed(0)} MB peak\n`,
    );
  }
  const spillRows = Number(process.env.BENCH_IMPORT_SPILL_ROWS ?? '200000');
  const spill = await measureSpill(spillRows, npm);
  process.stdout.write(
    `spill of an all-new export (${spillRows} rows, ${spill.sourceMb.toFixed(0)} MB): ${spill.ratio.toFixed(3)} bytes per source byte\n`,
  );
};
