import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { IDEMPOTENCY_CLIENT_LIMITS } from '../../../lib/http/idempotency-store.ts';
import { TIMEOUT_MARGIN_MS } from '../../../lib/http/make-http-handler.ts';
import { MAX_CALLS_PER_REQUEST, USERS_CLIENT_LIMITS } from '../../../lib/users/dynamodb-client.ts';

/** The SDK's standard retry waits at most this long between two attempts at this attempt count. */
const RETRY_BACKOFF_BOUND_MS = 500;

const worstCallMs = ({ maxAttempts, connectionTimeoutMs, requestTimeoutMs }: { maxAttempts: number; connectionTimeoutMs: number; requestTimeoutMs: number }) =>
  maxAttempts * (connectionTimeoutMs + requestTimeoutMs) + (maxAttempts - 1) * RETRY_BACKOFF_BOUND_MS;

describe('users DynamoDB client limits', () => {
  it("let a create's longest chain of calls, clean-up included, finish before the function times out, after claiming its Idempotency-Key", async () => {
    const template = parse(await readFile(new URL('../../../serverless.yml', import.meta.url), 'utf8'), { logLevel: 'silent' }) as {
      provider: { timeout: number };
    };
    // The claim comes first; keeping the outcome comes after the answer is known and may be cut off
    // (the claim then lapses at the deadline), so the create's own calls get the rest of the budget.
    expect(worstCallMs(IDEMPOTENCY_CLIENT_LIMITS) + MAX_CALLS_PER_REQUEST * worstCallMs(USERS_CLIENT_LIMITS)).toBeLessThan(
      template.provider.timeout * 1000 - TIMEOUT_MARGIN_MS,
    );
  });
});
