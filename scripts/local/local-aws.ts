/**
 * What every client of the local AWS-compatible stores (dynalite, the embedded S3) uses: they accept
 * any credentials, but the SDK refuses to sign without some, and needs a region.
 */
export const LOCAL_AWS = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
} as const;

/** The same as environment variables, for a process (or a handler) that reads them itself. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: LOCAL_AWS.region,
  AWS_ACCESS_KEY_ID: LOCAL_AWS.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_AWS.credentials.secretAccessKey,
} as const;
