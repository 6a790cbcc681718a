import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { buildApp } from 'fauxqs';
import { LOCAL_AWS } from './local-aws.ts';

/**
 * An S3-compatible server (fauxqs, embedded, in memory) on a free loopback port. fauxqs's own
 * `startFauxqs` binds every interface, so its app is listened on 127.0.0.1 here instead.
 * It answers multipart uploads including AbortMultipartUpload. `npm start`, the tests and the benchmarks use it.
 */
export interface S3Server {
  endpoint: string;
  stop(): Promise<void>;
}

export const startS3Server = async (): Promise<S3Server> => {
  const app = buildApp({ logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('fauxqs did not report a TCP address');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: async () => {
      await app.close();
    },
  };
};

/** The client settings every local S3 caller uses (any credentials are accepted). */
export const localS3Client = (endpoint: string): S3Client =>
  new S3Client({
    ...LOCAL_AWS,
    endpoint,
    forcePathStyle: true,
  });

export const createBucket = async (options: { endpoint: string; bucket: string }): Promise<void> => {
  const client = localS3Client(options.endpoint);
  try {
    await client.send(new CreateBucketCommand({ Bucket: options.bucket }));
  } finally {
    client.destroy();
  }
};
