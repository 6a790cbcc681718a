import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { makeDynamoDbUserStore } from '../lib/users/dynamodb-user-store.ts';
import { compileUserValidator } from '../lib/users/user-schema.ts';
import { createUsersTable, LOCAL_AWS, startDynalite } from '../test/support/dynalite.ts';
import { httpEvent, lambdaContext } from '../test/support/http-events.ts';

/**
 * POST /api/users through the real handler against dynalite on loopback: sequential and 16 in
 * flight. Baseline: one raw PutItem of a user-sized item in the same process, so the figures can be
 * read as ratios on this shared machine. Validation and storage are timed separately on the same
 * bodies to show where a create spends its time.
 */
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const SEQUENTIAL = 600;
const CONCURRENT = 1_200;
const IN_FLIGHT = 16;

let serial = 0;
const body = () => {
  serial += 1;
  return { email: `bench.user${serial}@example.com`, firstName: `First${serial}`, lastName: 'Bench' };
};
const event = () =>
  httpEvent('POST', '/api/users', {
    body: JSON.stringify(body()),
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

interface Run {
  perSecond: number;
  p50: number;
  p99: number;
  meanMs: number;
}

/** Runs `total` operations with `inFlight` workers and records each one's latency. */
const measure = async (total: number, inFlight: number, operation: () => Promise<void>): Promise<Run> => {
  const latencies: number[] = [];
  let started = 0;
  const worker = async () => {
    while (started < total) {
      started += 1;
      const t0 = performance.now();
      await operation();
      latencies.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: (total / elapsed) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    meanMs: latencies.reduce((sum, value) => sum + value, 0) / latencies.length,
  };
};

const silenced = async <T>(work: () => Promise<T>): Promise<T> => {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await work();
  } finally {
    process.stdout.write = write;
  }
};

const fmt = (run: Run) =>
  `${run.perSecond.toFixed(0).padStart(6)} req/s   p50 ${run.p50.toFixed(2).padStart(6)} ms   p99 ${run.p99.toFixed(2).padStart(6)} ms`;

export const run = async (): Promise<void> => {
  const dynalite = await startDynalite();
  const tableName = `bench-users-${randomUUID()}`;
  await createUsersTable({ endpoint: dynalite.endpoint, tableName });
  const saved = { ...process.env };
  Object.assign(process.env, {
    USERS_TABLE: tableName,
    USER_EMAIL_PATTERN: 'strict',
    AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
    AWS_REGION: LOCAL_AWS.region,
    AWS_ACCESS_KEY_ID: LOCAL_AWS.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_AWS.credentials.secretAccessKey,
  });
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint: dynalite.endpoint }));
  try {
    const { handler } = (await import('../functions/create-user.ts')) as unknown as { handler: Handler };
    const create = async () => {
      const result = await handler(event(), lambdaContext());
      if (result.statusCode !== 201) throw new Error(`unexpected ${result.statusCode}: ${result.body}`);
    };
    const rawPut = async () => {
      const user = body();
      await client.send(new PutCommand({ TableName: tableName, Item: { pk: `RAW#${randomUUID()}`, ...user } }));
    };
    const validate = compileUserValidator('strict');
    const store = makeDynamoDbUserStore({ client, tableName });
    const storeInsert = async () => {
      const user = body();
      const now = new Date().toISOString();
      await store.insert({ id: randomUUID(), ...user, username: user.email, active: true, created: now, lastUpdated: now });
    };

    await silenced(() => measure(100, 4, create)); // warm-up: JIT, connections, first-request config
    await measure(100, 4, rawPut);

    const baseSeq = await measure(SEQUENTIAL, 1, rawPut);
    const seq = await silenced(() => measure(SEQUENTIAL, 1, create));
    const baseConc = await measure(CONCURRENT, IN_FLIGHT, rawPut);
    const conc = await silenced(() => measure(CONCURRENT, IN_FLIGHT, create));

    // Validation versus storage, same bodies, same process.
    const bodies = Array.from({ length: 20_000 }, () => ({ body: body() }));
    const v0 = performance.now();
    for (const candidate of bodies) if (!validate(candidate)) throw new Error('bench body failed validation');
    const validationMs = (performance.now() - v0) / bodies.length;
    const storage = await measure(SEQUENTIAL, 1, storeInsert);

    const lines = [
      `sequential  handler   ${fmt(seq)}`,
      `sequential  raw put   ${fmt(baseSeq)}   (baseline)`,
      `16 in flight handler  ${fmt(conc)}`,
      `16 in flight raw put  ${fmt(baseConc)}   (baseline)`,
      `ratio handler/raw put mean latency: sequential ${(seq.meanMs / baseSeq.meanMs).toFixed(2)}x, 16 in flight ${(conc.meanMs / baseConc.meanMs).toFixed(2)}x`,
      `validation ${(validationMs * 1000).toFixed(2)} µs/body   store.insert (lock + user, 2 puts) ${storage.meanMs.toFixed(3)} ms/user`,
      `share of a sequential create: validation ${((validationMs / seq.meanMs) * 100).toFixed(2)}%, storage ${((storage.meanMs / seq.meanMs) * 100).toFixed(1)}%, rest (chain, JSON, logging) ${(((seq.meanMs - storage.meanMs - validationMs) / seq.meanMs) * 100).toFixed(1)}%`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    client.destroy();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await dynalite.stop();
  }
};
