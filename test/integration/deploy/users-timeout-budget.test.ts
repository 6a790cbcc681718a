import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TIMEOUT_MARGIN_MS } from '../../../lib/http/make-http-handler.ts';
import { MAX_CALLS_PER_REQUEST, USERS_CLIENT_LIMITS } from '../../../lib/users/dynamodb-client.ts';

/** The SDK's standard retry waits at most this long between two attempts at this attempt count. */
const RETRY_BACKOFF_BOUND_MS = 500;

describe('users DynamoDB client limits', () => {
  it("let a create's longest chain of calls, clean-up included, finish before the function times out", async () => {
    const template = parse(await readFile(new URL('../../../serverless.yml', import.meta.url), 'utf8'), { logLevel: 'silent' }) as {
      provider: { timeout: number };
    };
    const { maxAttempts, connectionTimeoutMs, requestTimeoutMs } = USERS_CLIENT_LIMITS;
    const worstCallMs = maxAttempts * (connectionTimeoutMs + requestTimeoutMs) + (maxAttempts - 1) * RETRY_BACKOFF_BOUND_MS;
    expect(MAX_CALLS_PER_REQUEST * worstCallMs).toBeLessThan(template.provider.timeout * 1000 - TIMEOUT_MARGIN_MS);
  });
});
