import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { ValidateFunction } from 'ajv';
import { makeLogger } from '../lib/runtime/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { makeCreateUser } from '../lib/users/create-user.ts';
import { makeDynamoDbUserStore } from '../lib/users/dynamodb-user-store.ts';
import { makeUserBodySpec } from '../lib/users/user-body.ts';
import { jsonBody } from '../lib/http/json-body.ts';
import type { NewUser, UserStore } from '../lib/users/user.ts';
import { createIdempotencyTable, createUsersTable, startDynalite } from '../scripts/local/dynalite.ts';
import { LOCAL_AWS, LOCAL_AWS_ENV } from '../scripts/local/local-aws.ts';
import { httpEvent, lambdaContext } from '../test/support/http-events.ts';
import { quietly } from './quietly.ts';

/**
 * POST /api/users through the real handler against dynalite on loopback: sequential and 16 in
 * flight, without and with an Idempotency-Key (a fresh key each time: claim and keep). Baseline: one raw PutItem of a user-sized item in the same process, so the figures can be
 * read as ratios on this shared machine. For the split of a create's time, the same chain is composed
 * with a timed validator and a timed store, so validation and storage are measured inside the very
 * requests they belong to.
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
const event = (key?: string) =>
  httpEvent('POST', '/api/users', {
    body: JSON.stringify(body()),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

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

const fmt = (run: Run) =>
  `${run.perSecond.toFixed(0).padStart(6)} req/s   p50 ${run.p50.toFixed(2).padStart(6)} ms   p99 ${run.p99.toFixed(2).padStart(6)} ms`;

export const run = async (): Promise<void> => {
  const dynalite = await startDynalite();
  const tableName = `bench-users-${randomUUID()}`;
  const idempotencyTable = `bench-idempotency-${randomUUID()}`;
  await createUsersTable({ endpoint: dynalite.endpoint, tableName });
  await createIdempotencyTable({ endpoint: dynalite.endpoint, tableName: idempotencyTable });
  const saved = { ...process.env };
  Object.assign(process.env, {
    USERS_TABLE: tableName,
    IDEMPOTENCY_TABLE: idempotencyTable,
    USER_EMAIL_PATTERN: 'strict',
    AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
    ...LOCAL_AWS_ENV,
  });
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint: dynalite.endpoint }));
  try {
    const { handler } = (await import('../functions/create-user.ts')) as unknown as { handler: Handler };
    const create = async () => {
      const result = await handler(event(), lambdaContext());
      if (result.statusCode !== 201) throw new Error(`unexpected ${result.statusCode}: ${result.body}`);
    };
    const createKeyed = async () => {
      const result = await handler(event(randomUUID()), lambdaContext());
      if (result.statusCode !== 201) throw new Error(`unexpected ${result.statusCode}: ${result.body}`);
    };
    const rawPut = async () => {
      const user = body();
      await client.send(new PutCommand({ TableName: tableName, Item: { pk: `RAW#${randomUUID()}`, ...user } }));
    };
    // The chain of functions/create-user.ts, with the validator and the store timed.
    let validationMs = 0;
    let storageMs = 0;
    const spec = makeUserBodySpec(() => 'strict');
    const timedValidate = ((candidate: unknown) => {
      const t0 = performance.now();
      const valid = spec.validate(candidate);
      validationMs += performance.now() - t0;
      timedValidate.errors = spec.validate.errors;
      return valid;
    }) as ValidateFunction;
    const store = makeDynamoDbUserStore({ client, tableName });
    const timedStore: UserStore = {
      ...store,
      insert: async (record, origin) => {
        const t0 = performance.now();
        const stored = await store.insert(record, origin);
        storageMs += performance.now() - t0;
        return stored;
      },
    };
    const createUser = makeCreateUser({ store: timedStore, clock: () => new Date(), newId: randomUUID });
    // Validation = alias folding + the schema, as the chain runs them.
    const timedNormalize = (candidate: unknown) => {
      const t0 = performance.now();
      try {
        return spec.normalize!(candidate);
      } finally {
        validationMs += performance.now() - t0;
      }
    };
    const instrumented = makeHttpHandler<NewUser>({
      routes: ['POST /api/users'],
      logger: makeLogger('createUser'),
      body: jsonBody({ ...spec, normalize: timedNormalize, validate: timedValidate }),
      handle: async ({ body: user }) => ({ status: 201, body: await createUser(user) }),
    }) as unknown as Handler;
    const instrumentedCreate = async () => {
      const result = await instrumented(event(), lambdaContext());
      if (result.statusCode !== 201) throw new Error(`unexpected ${result.statusCode}: ${result.body}`);
    };

    await quietly(() => measure(100, 4, create)); // warm-up: JIT, connections, first-request config
    await measure(100, 4, rawPut);

    const baseSeq = await measure(SEQUENTIAL, 1, rawPut);
    const seq = await quietly(() => measure(SEQUENTIAL, 1, create));
    const seqKeyed = await quietly(() => measure(SEQUENTIAL, 1, createKeyed));
    const baseConc = await measure(CONCURRENT, IN_FLIGHT, rawPut);
    const conc = await quietly(() => measure(CONCURRENT, IN_FLIGHT, create));

    await quietly(() => measure(100, 1, instrumentedCreate));
    /** Each request's time, summed over the run, split into validation, storage and the rest. */
    const splitOf = async (total: number, inFlight: number): Promise<string> => {
      validationMs = 0;
      storageMs = 0;
      const timed = await quietly(() => measure(total, inFlight, instrumentedCreate));
      const requestMs = timed.meanMs * total;
      return (
        `inside ${total} creates, ${inFlight} in flight (${timed.meanMs.toFixed(3)} ms mean): validation ${((validationMs / total) * 1000).toFixed(1)} µs/request = ` +
        `${((validationMs / requestMs) * 100).toFixed(2)}%, storage (lock + user puts) ${(storageMs / total).toFixed(3)} ms = ${((storageMs / requestMs) * 100).toFixed(1)}%, ` +
        `rest (chain, JSON, logging, waiting for the event loop) ${(((requestMs - validationMs - storageMs) / requestMs) * 100).toFixed(1)}%`
      );
    };
    const splitSequential = await splitOf(SEQUENTIAL, 1);
    const splitConcurrent = await splitOf(CONCURRENT, IN_FLIGHT);

    const lines = [
      `sequential  handler   ${fmt(seq)}`,
      `sequential  raw put   ${fmt(baseSeq)}   (baseline)`,
      `sequential  with Idempotency-Key ${fmt(seqKeyed)}   (${(seqKeyed.meanMs / seq.meanMs).toFixed(2)}x the handler without)`,
      `16 in flight handler  ${fmt(conc)}`,
      `16 in flight raw put  ${fmt(baseConc)}   (baseline)`,
      `ratio handler/raw put mean latency: sequential ${(seq.meanMs / baseSeq.meanMs).toFixed(2)}x, 16 in flight ${(conc.meanMs / baseConc.meanMs).toFixed(2)}x`,
      splitSequential,
      splitConcurrent,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    client.destroy();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await dynalite.stop();
  }
};
