import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Bounds of every DynamoDB call of the users functions: a create's calls in a row (up to six, ten
 * with a stale lock) must finish before the function's 29 s timeout, or a clean-up cut off by a
 * frozen container strands the email lock. The arithmetic: docs/architecture.md#the-users-time-budget.
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
