import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * API Gateway gives up after 30 s; bounded connect/request times and attempts keep a hung or
 * unreachable table a quick 503 instead of a Lambda timeout. Region, credentials and
 * `AWS_ENDPOINT_URL_DYNAMODB` come from the SDK's own environment lookup.
 */
export const makeUsersDocumentClient = (): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ maxAttempts: 3, requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 } }),
  );
