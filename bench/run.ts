import { readdir } from 'node:fs/promises';
import { exitWhenWritten, toleratePipeReadersLeaving } from '../scripts/exit-when-written.ts';

/**
 * `npm run bench`: runs every `bench/*.bench.ts` (or those named on the command line, e.g.
 * `npm run bench -- devices`) one after another, each printing its own figures. Benchmarks report
 * numbers, they never fail on them: this machine is shared and noisy, so each one also runs a
 * baseline in the same process and reports ratios.
 */
toleratePipeReadersLeaving();
const only = process.argv.slice(2);
const all = (await readdir(new URL('.', import.meta.url))).filter((file) => file.endsWith('.bench.ts')).sort();
const files = all.filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)));
// A name that starts no benchmark's is a typo: say so rather than run the others and report nothing for it.
const unknown = only.filter((name) => !all.some((file) => file.startsWith(name)));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: no benchmark named ${unknown.join(', ')}; there are: ${all.map((file) => file.replace('.bench.ts', '')).join(', ')}\n`,
  );
  await exitWhenWritten(2);
}

for (const file of files) {
  process.stdout.write(`\n## ${file.replace('.bench.ts', '')}\n`);
  const module = (await import(new URL(file, import.meta.url).href)) as { run: () => Promise<void> };
  await module.run();
}
// Some benchmarks load the functions as fresh containers, whose clients (a Redis connection each)
// stay open as in a Lambda container; with their server stopped they would retry for ever, so the
// run ends here rather than when the last of them gives up.
await exitWhenWritten(0);
