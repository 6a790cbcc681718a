import { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 client the import entry points create once. Region, credentials and an endpoint override
 * (`AWS_ENDPOINT_URL_S3`) come from the SDK's own environment handling; local S3-compatible servers
 * answer only path-style requests, hence the switch.
 */
export const makeS3Client = (options: { forcePathStyle: boolean }): S3Client =>
  new S3Client({ forcePathStyle: options.forcePathStyle });
