import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Bounds of every DynamoDB call of the users functions. A create makes at most six calls in a row:
 * for an email whose key differs from its lower case (`ß`, a final sigma), the lock an older keying
 * may hold and that lock's user; then the email lock and the user item, and removing both when the
 * second fails (see dynamodb-user-store.ts). All six, after the Idempotency-Key claim, must finish
 * before the function's 29 s timeout: a clean-up cut off by a frozen container would strand the
 * email lock. A create that first meets a stale lock makes up to four more; a lock it strands when
 * cut off is stale in turn and reclaimed. Worst case per call: attempts × (connect + request) plus
 * the SDK's retry back-off (under 1 s, its base for a throttled request), 4 s; a DynamoDB request
 * normally takes milliseconds.
 */
const USERS_CLIENT_LIMITS = { maxAttempts: 2, connectionTimeoutMs: 500, requestTimeoutMs: 1_000 } as const;

/**
 * API Gateway gives up after 30 s; bounded connect/request times and attempts keep a hung or
 * unreachable table a quick 503 instead of a Lambda timeout. Region, credentials and
 * `AWS_ENDPOINT_URL_DYNAMODB` come from the SDK's own environment lookup.
 */
export const makeUsersDocumentClient = (): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      maxAttempts: USERS_CLIENT_LIMITS.maxAttempts,
      requestHandler: { connectionTimeout: USERS_CLIENT_LIMITS.connectionTimeoutMs, requestTimeout: USERS_CLIENT_LIMITS.requestTimeoutMs },
    }),
  );
