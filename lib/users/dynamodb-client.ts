import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Bounds of every DynamoDB call of the users functions. A create makes at most four calls in a row
 * (email lock, user item, then removing both when the second fails; see dynamodb-user-store.ts), and
 * all four must finish before the function's 29 s timeout: a clean-up cut off by a frozen container
 * would strand the email lock. A create that first meets a stale lock makes up to four more; a lock
 * it strands when cut off is stale in turn and reclaimed. Worst case per call: attempts × (connect
 * + request) plus the SDK's retry back-off (under 0.5 s).
 */
const USERS_CLIENT_LIMITS = { maxAttempts: 2, connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000 } as const;

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
