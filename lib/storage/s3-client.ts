import { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 client the import entry points create once. Region, credentials and an endpoint override
 * (`AWS_ENDPOINT_URL_S3`) come from the SDK's own environment handling; local S3-compatible servers
 * answer only path-style requests, hence the switch. A connection that cannot be made in 5 s, or a
 * request whose socket stays silent for 60 s, fails (and is retried by the SDK) instead of holding
 * the CLI, or a run until its deadline: the SDK sets no such limits by itself (its `requestTimeout`
 * only warns).
 *
 * With `expectedBucketOwner` (an account id), every request the client sends carries it
 * (`ExpectedBucketOwner`, which S3 answers with 403 for a bucket of another account): set on the
 * client, no command of the import can leave it out.
 */
export const makeS3Client = (options: { forcePathStyle: boolean; expectedBucketOwner?: string | undefined }): S3Client => {
  const client = new S3Client({
    forcePathStyle: options.forcePathStyle,
    requestHandler: { connectionTimeout: 5_000, socketTimeout: 60_000 },
  });
  const owner = options.expectedBucketOwner;
  if (owner !== undefined) {
    client.middlewareStack.add((next) => async (args) => next({ ...args, input: { ExpectedBucketOwner: owner, ...args.input } }), {
      step: 'initialize',
      name: 'expectedBucketOwner',
    });
  }
  return client;
};
