import { AssetDeduper } from '../../lib/import/asset-rules.ts';
import { int64Halves } from '../../lib/import/int64-set.ts';
import { UserResolver } from '../../lib/import/resolve-users.ts';

/**
 * The dedupe state of an export whose every row is a new ticket, comment and user with an AUTHOR_ID
 * of its own (the most keys a row can add), imported with a destination that holds none of them (so
 * every AUTHOR_ID decision is kept), built with the import's own classes for `process.argv[2]`
 * rows; run by import.bench.ts under the import function's heap limit. Prints its figures as JSON.
 */
const rows = Number(process.argv[2]);
if (!Number.isInteger(rows) || rows < 0) throw new Error(`rows must be a whole number, got ${process.argv[2]}`);
const deduper = new AssetDeduper();
const resolver = new UserResolver(true);
const halves = new Int32Array(2);
const started = performance.now();
for (let n = 0; n < rows; n += 1) {
  int64Halves(String(9_000_000_000 + n), halves);
  deduper.takeTicket(halves[0]!, halves[1]!);
  int64Halves(String(42_000_000_000 + n), halves);
  deduper.takeComment(halves[0]!, halves[1]!);
  // 36 characters, as the generated export's emails.
  deduper.takeUser(`hana.oneil.${String(n).padStart(8, '0')}@mail.example.com`);
  resolver.take(String(7_000_000_000_000_000_000n + BigInt(n)), null);
}
const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
if (deduper.dropped.users.duplicate !== 0 || resolver.remapsAny) throw new Error('unexpected duplicates');
process.stdout.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, rssMb: rss / 2 ** 20, heapMb: heapUsed / 2 ** 20, arrayBuffersMb: arrayBuffers / 2 ** 20 }));
