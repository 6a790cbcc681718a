import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry, type BundleReport } from '../scripts/bundle-functions.ts';
import { readFunctionEntries } from '../scripts/function-entries.ts';

/**
 * Cold start per function bundle: each bundle (built with the deployment's esbuild options, chunks
 * split off) is loaded in a fresh Node 24 process, as Lambda's init does, next to reference bundles
 * measured in the same rounds. Rounds interleave the bundles in a shuffled order so the shared
 * machine's noise lands on all of them alike. Every bundle loads twice per round: as deployed
 * (without `--enable-source-maps`: lib/runtime/stack-trace.ts maps a logged stack when it is written) and
 * with it, which prices what parsing the maps at every cold start would cost.
 *
 * References: a hello-world; and the floor of a function that talks to DynamoDB, three ways: the
 * AWS SDK v3 document client as it comes, the same with the credential chain replaced by the
 * environment provider (what Lambda hands a function), and @aws-lite/client with its DynamoDB plugin.
 *
 * Aims (docs/architecture.md#cold-start): credentials and devices (no `_SSM` set) ≤ 1.5× the
 * hello-world's whole-process load; every SDK-using function within 1.2× of the cheapest SDK-only
 * reference; every bundle < 1 MiB.
 */
/** Fresh processes per bundle and mode; COLD_START_ROUNDS asks for more (41 steadies the ratios on a busy machine). */
const ROUNDS = Math.min(Math.max(Number(process.env.COLD_START_ROUNDS) || 21, 1), 201);
const SIZE_AIM_BYTES = 1024 * 1024;
const HELLO_RATIO_AIM = 1.5;
const SDK_RATIO_AIM = 1.2;
/** The functions that load no AWS SDK at init (with no `_SSM` set): measured against the hello-world. */
const WITHOUT_SDK = new Set(['credentials', 'devices', 'refreshDevices']);
const serviceDir = fileURLToPath(new URL('..', import.meta.url));
const nodeBinary = join(serviceDir, 'node_modules/.bin/node');

interface Sample {
  wallMs: number;
  importMs: number;
}

const HELLO_WORLD = "export const handler = async () => ({ statusCode: 200, body: 'hello' });\n";
const REFERENCES: Record<string, string> = {
  'ref-sdk-dynamodb': `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => ({ statusCode: 200, body: typeof client.send });
`,
  'ref-sdk-dynamodb-env-credentials': `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fromEnv } from '@aws-sdk/credential-provider-env';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: process.env.AWS_REGION, credentials: fromEnv() }));
export const handler = async () => ({ statusCode: 200, body: typeof client.send });
`,
  'ref-aws-lite-dynamodb': `import awsLite from '@aws-lite/client';
import dynamodb from '@aws-lite/dynamodb';
const aws = await awsLite({ region: process.env.AWS_REGION, plugins: [dynamodb] });
export const handler = async () => ({ statusCode: 200, body: typeof aws.DynamoDB.GetItem });
`,
};

/**
 * What a deployment configures per function (serverless.yml), with values never contacted: init
 * then does what it does in AWS (its startup check passes) instead of logging a configuration error.
 */
const DEPLOYED_CONFIGURATION: Record<string, Record<string, string>> = {
  devices: {
    INVENTORY_URL: 'https://jamf.example.invalid',
    INVENTORY_CLIENT_ID: 'client',
    INVENTORY_CLIENT_SECRET: 'secret',
    LATEST_OS_VERSION: '26.6.2',
  },
  refreshDevices: {
    INVENTORY_URL: 'https://jamf.example.invalid',
    INVENTORY_CLIENT_ID: 'client',
    INVENTORY_CLIENT_SECRET: 'secret',
    REDIS_URL: 'redis://127.0.0.1:1',
  },
  createUser: { USERS_TABLE: 'users', IDEMPOTENCY_TABLE: 'idempotency' },
  getUser: { USERS_TABLE: 'users' },
};

/** One fresh process importing the bundle, with Lambda's kind of environment; nothing else of this shell's env leaks in. */
const loadOnce = (file: string, name: string, sourceMaps: boolean): Promise<Sample> =>
  new Promise((resolvePromise, reject) => {
    const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
    const started = process.hrtime.bigint();
    const child = spawn(nodeBinary, [...(sourceMaps ? ['--enable-source-maps'] : []), '--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'eu-west-1',
        AWS_LAMBDA_FUNCTION_NAME: name,
        // Lambda hands every function its role's credentials in the environment.
        AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'example',
        AWS_SESSION_TOKEN: 'example',
        ...DEPLOYED_CONFIGURATION[name],
      },
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
    const hello = await bundleEntry(join(workDir, 'reference'), { name: 'hello-world', entry: 'functions/hello.ts' }, join(workDir, 'out'));
    const references: BundleReport[] = [];
    for (const [name, source] of Object.entries(REFERENCES)) {
      await writeFile(join(workDir, `reference/functions/${name}.ts`), source);
      references.push(
        await bundleEntry(join(workDir, 'reference'), { name, entry: `functions/${name}.ts` }, join(workDir, 'out'), {
          nodePaths: [join(serviceDir, 'node_modules')],
        }),
      );
    }
    const bundles: BundleReport[] = [hello, ...references, ...functions];

    const samples = new Map<string, { maps: Sample[]; plain: Sample[] }>(bundles.map((bundle) => [bundle.name, { maps: [], plain: [] }]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const bundle of shuffled(bundles)) {
        samples.get(bundle.name)!.maps.push(await loadOnce(bundle.file, bundle.name, true));
        samples.get(bundle.name)!.plain.push(await loadOnce(bundle.file, bundle.name, false));
      }
    }

    const wallOf = (name: string, kind: 'maps' | 'plain' = 'plain') => median(samples.get(name)![kind].map((sample) => sample.wallMs));
    const helloWall = wallOf(hello.name);
    // The floor of the SDK the functions use; @aws-lite is the alternative measured against it (it
    // would replace the SDK only if it loaded at least 2x faster: docs/architecture.md#cold-start).
    const sdkReferences = references.filter((reference) => reference.name.startsWith('ref-sdk-'));
    const sdkFloor = Math.min(...sdkReferences.map((reference) => wallOf(reference.name)));
    const cheapest = sdkReferences.find((reference) => wallOf(reference.name) === sdkFloor)!;
    const rows = bundles.map((bundle) => {
      const wall = wallOf(bundle.name);
      const isReference = bundle === hello || references.includes(bundle);
      const againstSdk = WITHOUT_SDK.has(bundle.name) || bundle === hello ? undefined : wall / sdkFloor;
      const met =
        bundle.bytes < SIZE_AIM_BYTES &&
        (WITHOUT_SDK.has(bundle.name) ? wall / helloWall <= HELLO_RATIO_AIM : againstSdk! <= SDK_RATIO_AIM);
      return {
        bundle: bundle.name,
        'KiB at init': Number((bundle.bytes / 1024).toFixed(1)),
        'KiB on demand': Number((bundle.chunkBytes / 1024).toFixed(1)),
        'lib modules (at init)': bundle.projectModules.all === 0 ? '' : `${bundle.projectModules.all} (${bundle.projectModules.atInit})`,
        'load ms (process)': Number(wall.toFixed(1)),
        'x hello-world': Number((wall / helloWall).toFixed(2)),
        'x SDK floor': againstSdk === undefined ? '' : Number(againstSdk.toFixed(2)),
        'import ms': Number(median(samples.get(bundle.name)!.plain.map((sample) => sample.importMs)).toFixed(1)),
        'x with --enable-source-maps': Number((wallOf(bundle.name, 'maps') / wall).toFixed(2)),
        aims: isReference ? '(reference)' : met ? 'met' : 'MISSED',
      };
    });
    process.stdout.write(
      `cold start: ${ROUNDS} fresh processes per bundle and mode (medians, as deployed: no --enable-source-maps; ` +
        `the last ratio with it); SDK floor = ${cheapest.name}, the cheapest AWS SDK v3 reference\n`,
    );
    console.table(rows);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
};
