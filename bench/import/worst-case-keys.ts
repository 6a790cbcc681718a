import { buildDedupeKeys } from './dedupe-keys.ts';

/**
 * The dedupe state of an export whose every row is a new ticket, comment and user with an AUTHOR_ID
 * of its own (the most keys a row can add), imported with a destination that holds none of them,
 * for `process.argv[2]` rows; run by import.bench.ts under the import function's heap limit. Prints
 * its figures as JSON.
 */
const rows = Number(process.argv[2]);
if (!Number.isInteger(rows) || rows < 0) throw new Error(`rows must be a whole number, got ${process.argv[2]}`);
const started = performance.now();
buildDedupeKeys({ tickets: rows, comments: rows, users: rows }, true);
const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
process.stdout.write(
  JSON.stringify({
    seconds: (performance.now() - started) / 1000,
    rssMb: rss / 2 ** 20,
    heapMb: heapUsed / 2 ** 20,
    arrayBuffersMb: arrayBuffers / 2 ** 20,
  }),
);
