import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { generateChatCsv } from '../demo/chat-export.ts';

/**
 * Import pipeline, end to end: the CLI (`scripts/import.ts`) turning a generated chat CSV into a
 * local tar, in a child process, timed and with its peak RSS (`/usr/bin/time` %M = VmHWM), next to
 * papaparse alone parsing the same file in the same run (the baseline). Figures, not pass/fail.
 *
 * Rows: BENCH_IMPORT_ROWS (comma separated, default `250000,1000000`; e.g. `BENCH_IMPORT_ROWS=50000`
 * for a quick run). The CLI runs twice per size: as `node scripts/import.ts` (default flags), and as
 * `npm run import` starts it (the environment and node flags of package.json's `import` script, without
 * npm's own start-up): `--max-semi-space-size=8` caps V8's young generation, which otherwise grows to
 * 64 MB under this allocation rate, and a compile cache spares the TypeScript stripping on later runs.
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

/** The core alone (no CLI, no SDK): runImport from a file to a file. */
const CORE_ONLY = `
import { createReadStream, createWriteStream } from 'node:fs';
import { runImport } from '${ROOT}lib/import/run-import.ts';
const summary = await runImport({ input: createReadStream(process.argv[1], { highWaterMark: 1024 * 1024 }), output: createWriteStream(process.argv[2]) });
process.stdout.write(JSON.stringify(summary));
`;

interface Measured {
  seconds: number;
  peakRssMb: number;
  stdout: string;
}

const measure = async (args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Measured> => {
  const timeFile = `${OUT}time-${process.pid}.txt`;
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, NODE, ...args], { cwd: ROOT, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
  });
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`child failed (${code}): ${stderr}`);
  const peakKb = Number((await readFile(timeFile, 'utf8')).trim().split('\n').at(-1));
  await rm(timeFile, { force: true });
  return { seconds, peakRssMb: peakKb / 1024, stdout };
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

export const run = async (): Promise<void> => {
  const sizes = (process.env.BENCH_IMPORT_ROWS ?? '250000,1000000').split(',').map((value) => Number(value.trim()));
  await mkdir(OUT, { recursive: true });
  const npm = await npmImportCommand();
  // Fills the compile cache as any earlier run would (`--help` loads every module, then stops).
  await measure([...npm.nodeArgs, '--help'], withoutTicketing(npm.env));
  const lines: string[] = [];
  for (const rows of sizes) {
    const csv = `${OUT}chat-${rows}.csv`;
    const tar = `${OUT}chat-${rows}.tar`;
    try {
      const { bytes } = await generateChatCsv({ rows, path: csv });
      const size = bytes / MB;
      const bare = await measure(['--input-type=module', '-e', BARE_PARSE, csv]);
      const cli = await measure(['scripts/import.ts', csv, tar], withoutTicketing());
      const summary = JSON.parse(cli.stdout.trim().split('\n').at(-1)!) as { rows: number; batches: number };
      const tarMb = (await stat(tar)).size / MB;
      const tuned = await measure([...npm.nodeArgs, csv, tar], withoutTicketing(npm.env));
      const core = await measure(['--input-type=module', '-e', CORE_ONLY, csv, tar]);
      lines.push(
        `${String(rows).padStart(8)} rows ${size.toFixed(0).padStart(5)} MB → ${tarMb.toFixed(0)} MB tar, ${summary.batches} entries | ` +
          `papaparse alone ${(size / bare.seconds).toFixed(1)} MB/s (${bare.seconds.toFixed(1)} s, ${bare.peakRssMb.toFixed(0)} MB RSS) | ` +
          `import ${(size / cli.seconds).toFixed(1)} MB/s (${cli.seconds.toFixed(1)} s) = ${(cli.seconds / bare.seconds).toFixed(2)}× the parse, ` +
          `peak RSS ${cli.peakRssMb.toFixed(0)} MB | as npm run import: ${(size / tuned.seconds).toFixed(1)} MB/s = ` +
          `${(tuned.seconds / bare.seconds).toFixed(2)}× the parse, peak RSS ${tuned.peakRssMb.toFixed(0)} MB | runImport alone (no CLI) ${(size / core.seconds).toFixed(1)} MB/s = ` +
          `${(core.seconds / bare.seconds).toFixed(2)}× the parse, peak RSS ${core.peakRssMb.toFixed(0)} MB`,
      );
      process.stdout.write(`${lines.at(-1)}\n`);
    } finally {
      await rm(csv, { force: true });
      await rm(tar, { force: true });
    }
  }
};
