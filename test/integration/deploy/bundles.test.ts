import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunctions, type BundleReport } from '../../../scripts/bundle-functions.ts';
import { startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createBucket, localS3Client, startS3Server } from '../../../scripts/local/s3-server.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { chatCsv, chatRow, readArchive } from '../../support/chat-import.ts';
import { createUserTables } from '../../support/load-handlers.ts';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf } from '../../../demo/fake-jamf.ts';
import { startRedisServer } from '../../support/redis-server.ts';
import { startFakeSsm } from '../../support/fake-ssm.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);
const RESULT_MARK = '@@result@@';

/** Loads a bundle in a fresh Node 24 process, as Lambda does, and invokes its handler with one sample event. */
const invokeBundle = async (
  bundle: BundleReport,
  eventFile: string,
  env: Record<string, string> = {},
): Promise<{
  result?: { statusCode: number; headers?: Record<string, string>; body?: string } & Record<string, unknown>;
  error?: string;
  lines: Record<string, unknown>[];
}> => {
  const event = await readFile(join(repoRoot, 'events', eventFile), 'utf8');
  const script = `
    const { handler } = await import(${JSON.stringify(pathToFileURL(bundle.file).href)});
    const context = { awsRequestId: 'bundle-test', functionName: ${JSON.stringify(bundle.name)}, getRemainingTimeInMillis: () => 20000 };
    let outcome;
    try { outcome = { result: await handler(JSON.parse(process.env.SAMPLE_EVENT), context) }; }
    catch (error) { outcome = { error: error.name + ': ' + error.message }; }
    process.stdout.write('${RESULT_MARK}' + JSON.stringify(outcome));
    process.exit(0);`;
  // As deployed: no --enable-source-maps (serverless.yml).
  const { stdout } = await run(join(repoRoot, 'node_modules/.bin/node'), ['--input-type=module', '-e', script], {
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', SAMPLE_EVENT: event, ...env },
  });
  const at = stdout.lastIndexOf(RESULT_MARK);
  const lines = stdout
    .slice(0, at)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...(JSON.parse(stdout.slice(at + RESULT_MARK.length)) as object), lines };
};

describe('the function bundles (built with the deployment options) work on their own', () => {
  let outDir: string;
  let bundles: Map<string, BundleReport>;
  let dynalite: Dynalite;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'bundles-'));
    bundles = new Map((await bundleFunctions(repoRoot, outDir)).map((bundle) => [bundle.name, bundle]));
    dynalite = await startDynalite();
  }, 120_000);
  afterAll(async () => {
    await dynalite?.stop();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  const bundle = (name: string): BundleReport => {
    const found = bundles.get(name);
    if (!found) throw new Error(`no bundle ${name}`);
    return found;
  };

  it('keeps every bundle under 1 MiB with nothing left to node_modules', async () => {
    expect([...bundles.keys()].sort()).toEqual([
      'createUser',
      'credentials',
      'devices',
      'getUser',
      'importTickets',
      'mobileDevices',
      'refreshDevices',
    ]);
    for (const report of bundles.values()) {
      expect(report.bytes, report.name).toBeLessThan(1024 * 1024);
      // Only Node built-ins may be loaded from outside the bundle.
      expect(
        report.externalImports.filter((name) => !name.startsWith('node:')),
        report.name,
      ).toEqual([]);
      expect(report.externalImports, report.name).toContain('node:crypto');
    }
  });

  it('loads at init nothing a first request may not use: SSM, Redis, metrics, S3 and the idempotency lifecycle come on demand', () => {
    const atInit = (name: string) => new Set(bundle(name).contributors.map((part) => part.source));
    for (const name of bundles.keys()) {
      for (const lazy of [
        '@aws-sdk/client-ssm',
        '@aws-lambda-powertools/parameters',
        '@aws-lambda-powertools/metrics',
        'ioredis',
        '@aws-sdk/client-s3',
      ]) {
        expect(atInit(name), `${name} loads ${lazy} at init`).not.toContain(lazy);
      }
      // The SDK's credential chain beyond the environment provider Lambda uses.
      for (const provider of ['@aws-sdk/credential-provider-sso', '@aws-sdk/credential-provider-ini'])
        expect(atInit(name), `${name}: ${provider}`).not.toContain(provider);
      expect(bundle(name).chunkBytes, name).toBeGreaterThan(0);
    }
    for (const lazy of ['@aws-lambda-powertools/idempotency', '@aws-lambda-powertools/jmespath'])
      expect(atInit('createUser')).not.toContain(lazy);
    expect(atInit('createUser')).toContain('@aws-sdk/client-dynamodb');
  });

  it('answers POST /credentials (200 echo, 422 envelope with reason phrase) from the credentials bundle', async () => {
    const ok = await invokeBundle(bundle('credentials'), 'credentials/success.json');
    expect(ok.result?.statusCode).toBe(200);
    expect(JSON.parse(ok.result!.body!)).toEqual({ client_id: 'demo-client', client_secret: 'demo-secret-value' });
    const invalid = await invokeBundle(bundle('credentials'), 'credentials/invalid-extra-property.json');
    expect(invalid.result?.statusCode).toBe(422);
    expect(JSON.parse(invalid.result!.body!).error).toMatchObject({ status: 422, httpMessage: 'Unprocessable Entity' });
  });

  it('creates a user through the bundled AWS SDK against a DynamoDB-compatible server, and replays a kept Idempotency-Key', async () => {
    const env = {
      ...(await createUserTables(dynalite.endpoint)),
      AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    const created = await invokeBundle(bundle('createUser'), 'createUser/success.json', env);
    expect(created.result?.statusCode).toBe(201);
    expect(created.result?.headers?.Location).toMatch(/^\/api\/users\/[0-9a-f-]{36}$/);
    // Two fresh processes, one store: the second gets the first one's kept outcome.
    const first = await invokeBundle(bundle('createUser'), 'createUser/idempotent-replay.json', env);
    const second = await invokeBundle(bundle('createUser'), 'createUser/idempotent-replay.json', env);
    expect(first.result?.statusCode).toBe(201);
    expect(first.result?.headers).not.toHaveProperty('Idempotent-Replayed');
    expect(second.result).toMatchObject({
      statusCode: 201,
      body: first.result!.body,
      headers: { 'Idempotent-Replayed': 'true', Location: first.result!.headers!.Location },
    });
  });

  it('answers GET /api/users/{id} with a malformed id 404 from the getUser bundle', async () => {
    const missing = await invokeBundle(bundle('getUser'), 'getUser/invalid-id.json', { USERS_TABLE: 'users' });
    expect(missing.result?.statusCode).toBe(404);
    expect(JSON.parse(missing.result!.body!).error).toMatchObject({ status: 404, httpMessage: 'Not Found' });
  });

  it('answers GET /devices 500 "Service misconfigured" from the devices bundle when nothing is configured, its logged stack in TypeScript terms', async () => {
    const result = await invokeBundle(bundle('devices'), 'devices/success.json');
    expect(result.result?.statusCode).toBe(500);
    expect(JSON.parse(result.result!.body!).error).toMatchObject({ status: 500, httpMessage: 'Internal Server Error' });
    const access = result.lines.find((line) => line.message === 'request') as { error: { name: string; stack: string } };
    expect(access.error.name).toBe('ConfigError');
    // Mapped through the bundle's source map when the line was written, not at load.
    expect(access.error.stack).toMatch(/\blib\/config\.ts:\d+:\d+/);
    expect(access.error.stack).not.toMatch(/devices\.mjs:\d+:\d+/);
  });

  it('loads the refreshDevices bundle and refuses to run without a cluster, naming REDIS_URL', async () => {
    const result = await invokeBundle(bundle('refreshDevices'), 'refreshDevices/success.json', {
      INVENTORY_URL: 'https://jamf.example.invalid',
      INVENTORY_CLIENT_ID: 'client',
      INVENTORY_CLIENT_SECRET: 'secret',
      LATEST_OS_VERSION: '26.1',
    });
    expect(result.result).toBeUndefined();
    expect(result.error).toMatch(/^ConfigError: Configuration error: REDIS_URL/);
  });

  it('refreshes the cluster with the refreshDevices bundle (ioredis loaded on demand), and a fresh devices bundle answers from it', async () => {
    const redis = await startRedisServer();
    const jamf = await startFakeJamf({ devices: generateJamfComputers(40, 21) });
    try {
      const env = {
        INVENTORY_URL: jamf.url,
        INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
        INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
        LATEST_OS_VERSION: '26.1',
        REDIS_URL: redis.url,
      };
      const refresh = await invokeBundle(bundle('refreshDevices'), 'refreshDevices/success.json', env);
      expect(refresh.error).toBeUndefined();
      expect(refresh.result).toMatchObject({ outcome: 'refreshed', computers: { outcome: 'refreshed', devices: 40 } });
      const inventoryReads = jamf.stats().inventoryRequests;
      const page = await invokeBundle(bundle('devices'), 'devices/success.json', env);
      expect(page.result?.statusCode).toBe(200);
      expect(page.lines.find((line) => line.message === 'request')).toMatchObject({ status_code: 200, cache_tier: 'cluster' });
      expect(jamf.stats().inventoryRequests).toBe(inventoryReads);
    } finally {
      await jamf.close();
      await redis.stop();
    }
  });

  it('reads the Jamf client secret from SSM through the devices bundle (Powertools Parameters loaded on demand)', async () => {
    const ssm = await startFakeSsm({ '/bundle/jamf-secret': DEMO_JAMF_CREDENTIALS.clientSecret });
    const jamf = await startFakeJamf({ devices: generateJamfComputers(9, 23) });
    try {
      const page = await invokeBundle(bundle('devices'), 'devices/success.json', {
        ...LOCAL_AWS_ENV,
        INVENTORY_URL: jamf.url,
        INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
        INVENTORY_CLIENT_SECRET_SSM: '/bundle/jamf-secret',
        LATEST_OS_VERSION: '26.1',
        AWS_ENDPOINT_URL_SSM: ssm.endpoint,
      });
      expect(page.result?.statusCode).toBe(200);
      expect(JSON.parse(page.result!.body!)).toHaveLength(9);
      expect(ssm.requests()).toEqual([{ Name: '/bundle/jamf-secret', WithDecryption: true }]);
    } finally {
      await jamf.close();
      await ssm.close();
    }
  });

  it('imports from S3 to S3 with the importTickets bundle, its rows parsed in a worker thread started from the same bundle', async () => {
    const server = await startS3Server();
    const s3 = localS3Client(server.endpoint);
    try {
      await createBucket({ endpoint: server.endpoint, bucket: 'import-local' });
      await s3.send(
        new PutObjectCommand({
          Bucket: 'import-local',
          Key: 'incoming/chat.csv',
          Body: chatCsv(Array.from({ length: 250 }, (_unused, n) => chatRow(n))),
        }),
      );
      const env = { ...LOCAL_AWS_ENV, AWS_ENDPOINT_URL_S3: server.endpoint };
      const outcome = await invokeBundle(bundle('importTickets'), 'importTickets/success.json', env);
      expect(outcome.error).toBeUndefined();
      expect(outcome.result).toMatchObject({ rows: 250, batches: 3, encoding: 'utf-8' });
      const tar = await (
        await s3.send(new GetObjectCommand({ Bucket: 'import-local', Key: 'archives/tickets.tar' }))
      ).Body!.transformToByteArray();
      expect((await readArchive(tar)).map((entry) => entry.name)).toEqual([
        'backup_tickets_100.json',
        'backup_tickets_200.json',
        'backup_tickets_300.json',
      ]);
    } finally {
      s3.destroy();
      await server.stop();
    }
  });

  it('loads the importTickets bundle and refuses an event it cannot run', async () => {
    const result = await invokeBundle(bundle('importTickets'), 'importTickets/invalid.json');
    expect(result.result).toBeUndefined();
    // keepNames: the error's class name survives minification (it reaches the logs).
    expect(result.error).toMatch(/^InvalidImportEventError: Invalid import event/);
  });
});
