import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { makeIdempotencyDynamoDbClient } from '../../../lib/http/idempotency-store.ts';
import { makeUsersDocumentClient } from '../../../lib/users/dynamodb-client.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { clearEnvironment, saveEnvironment, setEnvironment } from '../../support/environment.ts';

/**
 * The SDK's standard retry waits at most this long between two attempts at this attempt count: a
 * random share of its base delay, which is 1 s for a throttled request (50 ms otherwise).
 */
const RETRY_BACKOFF_BOUND_MS = 1_000;
/**
 * The longest chain of calls of a create (lib/users/dynamodb-user-store.ts): for an email whose key
 * differs from its lower case, the older keying's lock and that lock's user; then the email lock, the
 * user item, and removing both when the second fails.
 */
const MAX_CALLS_PER_CREATE = 6;
/**
 * The functions answer their own 504 this long before their deadline (docs/operations.md,
 * docs/architecture.md; test/integration/http/make-http-handler.test.ts holds the chain to it).
 */
const TIMEOUT_MARGIN_MS = 200;

interface CallLimits {
  maxAttempts: number;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
}

const worstCallMs = ({ maxAttempts, connectionTimeoutMs, requestTimeoutMs }: CallLimits) =>
  maxAttempts * (connectionTimeoutMs + requestTimeoutMs) + (maxAttempts - 1) * RETRY_BACKOFF_BOUND_MS;

/**
 * The limits a client the functions build actually applies. The SDK settles its HTTP handler's
 * options on the first request, so one call is made first (to a stub that refuses it at once).
 */
const limitsOf = async (client: Pick<DynamoDBClient, 'config'>, firstCall: () => Promise<unknown>): Promise<CallLimits> => {
  await firstCall().catch(() => undefined);
  // The SDK's Node handler (NodeHttpHandler) reports the options it applies.
  const handler = client.config.requestHandler as unknown as {
    httpHandlerConfigs: () => { connectionTimeout?: number; requestTimeout?: number };
  };
  const { connectionTimeout, requestTimeout } = handler.httpHandlerConfigs();
  if (connectionTimeout === undefined || requestTimeout === undefined) throw new Error('the client sets no connection or request timeout');
  return { maxAttempts: await client.config.maxAttempts(), connectionTimeoutMs: connectionTimeout, requestTimeoutMs: requestTimeout };
};

const ENDPOINT_VARIABLES = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_PROFILE', ...Object.keys(LOCAL_AWS_ENV)];

describe('users DynamoDB client limits', () => {
  let stub: Server;
  let restoreEnvironment: () => void;
  beforeAll(async () => {
    stub = createServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'refused by the stub' }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    restoreEnvironment = saveEnvironment(ENDPOINT_VARIABLES);
    clearEnvironment(ENDPOINT_VARIABLES);
    setEnvironment({ ...LOCAL_AWS_ENV, AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${(stub.address() as AddressInfo).port}` });
  });
  afterAll(async () => {
    restoreEnvironment();
    await new Promise<void>((resolve) => stub.close(() => resolve()));
  });

  it("let a create's longest chain of calls, clean-up included, finish before the function times out, after claiming its Idempotency-Key", async () => {
    const template = parse(await readFile(new URL('../../../serverless.yml', import.meta.url), 'utf8'), { logLevel: 'silent' }) as {
      provider: { timeout: number };
    };
    const users = makeUsersDocumentClient();
    const idempotency = makeIdempotencyDynamoDbClient();
    try {
      const usersLimits = await limitsOf(users, () => users.send(new GetCommand({ TableName: 'users', Key: { pk: 'x' } })));
      const idempotencyLimits = await limitsOf(idempotency, () =>
        idempotency.send(new GetItemCommand({ TableName: 'keys', Key: { id: { S: 'x' } } })),
      );
      // The claim comes first; keeping the outcome comes after the answer is known and may be cut off
      // (the claim then lapses at the deadline), so the create's own calls get the rest of the budget.
      expect(worstCallMs(idempotencyLimits) + MAX_CALLS_PER_CREATE * worstCallMs(usersLimits)).toBeLessThan(
        template.provider.timeout * 1000 - TIMEOUT_MARGIN_MS,
      );
    } finally {
      users.destroy();
      idempotency.destroy();
    }
  });
});
