import { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 client the import entry points create once. Region, credentials and an endpoint override
 * (`AWS_ENDPOINT_URL_S3`) come from the SDK's own environment handling; local S3-compatible servers
 * answer only path-style requests, hence the switch. A connection that cannot be made in 5 s, or a
 * request whose socket stays silent for 60 s, fails (and is retried by the SDK) instead of holding
 * the CLI, or a run until its deadline: the SDK sets no such limits by itself (its `requestTimeout`
 * only warns).
 */
export const makeS3Client = (options: { forcePathStyle: boolean }): S3Client =>
  new S3Client({ forcePathStyle: options.forcePathStyle, requestHandler: { connectionTimeout: 5_000, socketTimeout: 60_000 } });
