import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry, type BundleReport } from '../scripts/bundle-functions.ts';
import { readFunctionEntries } from '../scripts/function-entries.ts';

/**
 * Cold start per function bundle: each bundle (built with the deployment's esbuild options) is loaded
 * in a fresh Node 24 process, as Lambda's init does, next to a hello-world bundle measured in the same
 * rounds. Rounds interleave the bundles in a shuffled order so the shared machine's noise lands on all
 * of them alike. Aims: every bundle < 1 MiB and < 2x the hello-world load time (whole process).
 * A reference bundle holding only the AWS SDK's DynamoDB document client shows the floor of any
 * function that talks to AWS, whatever its own code does.
 */
const ROUNDS = 21;
const SIZE_AIM_BYTES = 1024 * 1024;
const LOAD_RATIO_AIM = 2;
const serviceDir = fileURLToPath(new URL('..', import.meta.url));
const nodeBinary = join(serviceDir, 'node_modules/.bin/node');

interface Sample {
  wallMs: number;
  importMs: number;
}

const HELLO_WORLD = "export const handler = async () => ({ statusCode: 200, body: 'hello' });\n";
/** A second reference: nothing but the AWS SDK v3 DynamoDB document client, the floor of any function using it. */
const DYNAMODB_CLIENT_ONLY = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => ({ statusCode: 200, body: typeof client.send });
`;

/** One fresh process importing the bundle, with Lambda's NODE_OPTIONS; nothing else of this shell's env leaks in. */
const loadOnce = (file: string, name: string): Promise<Sample> =>
  new Promise((resolvePromise, reject) => {
    const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
    const started = process.hrtime.bigint();
    const child = spawn(nodeBinary, ['--enable-source-maps', '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', AWS_LAMBDA_FUNCTION_NAME: name },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`${name}: loading ${file} exited ${code}: ${stderr.slice(0, 500)}`));
      else resolvePromise({ wallMs, importMs: Number(stdout) });
    });
  });

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const shuffled = <T>(items: readonly T[]): T[] => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
};

export const run = async (): Promise<void> => {
  const workDir = await mkdtemp(join(tmpdir(), 'cold-start-'));
  try {
    const functions: BundleReport[] = [];
    for (const entry of await readFunctionEntries(serviceDir)) {
      // A function that does not build right now (work in progress elsewhere) is reported, not fatal.
      try {
        functions.push(await bundleEntry(serviceDir, entry, join(workDir, 'functions')));
      } catch (error) {
        process.stdout.write(`${entry.name}: not measured, its bundle does not build (${(error as Error).message.split('\n')[1] ?? ''})\n`);
      }
    }
    await mkdir(join(workDir, 'reference/functions'), { recursive: true });
    await writeFile(join(workDir, 'reference/functions/hello.ts'), HELLO_WORLD);
    await writeFile(join(workDir, 'reference/functions/sdk.ts'), DYNAMODB_CLIENT_ONLY);
    const hello = await bundleEntry(join(workDir, 'reference'), { name: 'hello-world', entry: 'functions/hello.ts' }, join(workDir, 'out'));
    const sdkOnly = await bundleEntry(join(workDir, 'reference'), { name: 'ref-dynamodb-client-only', entry: 'functions/sdk.ts' }, join(workDir, 'out'), {
      nodePaths: [join(serviceDir, 'node_modules')],
    });
    const bundles: BundleReport[] = [hello, sdkOnly, ...functions];

    const samples = new Map<string, Sample[]>(bundles.map((bundle) => [bundle.name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const bundle of shuffled(bundles)) samples.get(bundle.name)!.push(await loadOnce(bundle.file, bundle.name));
    }

    const helloWall = median(samples.get(hello.name)!.map((sample) => sample.wallMs));
    const rows = bundles.map((bundle) => {
      const wall = median(samples.get(bundle.name)!.map((sample) => sample.wallMs));
      const ratio = wall / helloWall;
      return {
        bundle: bundle.name,
        'size KiB': Number((bundle.bytes / 1024).toFixed(1)),
        'load ms (process, median)': Number(wall.toFixed(1)),
        'x hello-world': Number(ratio.toFixed(2)),
        'import ms (median)': Number(median(samples.get(bundle.name)!.map((sample) => sample.importMs)).toFixed(1)),
        aims: bundle === sdkOnly ? '(reference)' : bundle.bytes < SIZE_AIM_BYTES && ratio < LOAD_RATIO_AIM ? 'met' : 'MISSED',
      };
    });
    process.stdout.write(`cold start: ${ROUNDS} fresh processes per bundle (node --enable-source-maps, as deployed)\n`);
    console.table(rows);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
};
