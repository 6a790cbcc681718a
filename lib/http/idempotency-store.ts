import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';

/**
 * The idempotency table (infra/idempotency-table.yml): hash key `id` (the hashed key, one item per
 * Idempotency-Key), TTL on `expiration` (seconds since the epoch). Both are Powertools' own default
 * names, spelled out so the template and the local tables cannot drift from what the code writes.
 */
export const IDEMPOTENCY_TABLE_KEY = 'id';
const IDEMPOTENCY_TABLE_TTL = 'expiration';

/**
 * Bounds of each call to the idempotency table. The claim of a key comes before a create's own
 * calls (lib/users/dynamodb-client.ts) and must leave them their whole budget before the function's
 * timeout: single-item calls that DynamoDB answers in milliseconds, so tight bounds cost nothing.
 */
const IDEMPOTENCY_CLIENT_LIMITS = { maxAttempts: 2, connectionTimeoutMs: 300, requestTimeoutMs: 700 } as const;

/** A DynamoDB client within those bounds; region, credentials and endpoint come from the SDK's own environment lookup. */
export const makeIdempotencyDynamoDbClient = (): DynamoDBClient =>
  new DynamoDBClient({
    maxAttempts: IDEMPOTENCY_CLIENT_LIMITS.maxAttempts,
    requestHandler: {
      connectionTimeout: IDEMPOTENCY_CLIENT_LIMITS.connectionTimeoutMs,
      requestTimeout: IDEMPOTENCY_CLIENT_LIMITS.requestTimeoutMs,
    },
  });

/** Powertools' DynamoDB persistence of kept outcomes, on the given client and table. */
export const makeDynamoDbIdempotencyStore = ({
  client,
  tableName,
}: {
  client: DynamoDBClient;
  tableName: string;
}): DynamoDBPersistenceLayer =>
  new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client, keyAttr: IDEMPOTENCY_TABLE_KEY, expiryAttr: IDEMPOTENCY_TABLE_TTL });
