import type { S3Client } from '@aws-sdk/client-s3';
import type { ImportConfig } from '../../config.ts';
import { resolveSecret } from '../../runtime/secrets.ts';
import { makeLocationOpeners } from '../../storage/open-location.ts';
import { fetchDestinationUsers } from '../../ticketing/user-listing-client.ts';
import { makeImportJob, type ImportJob } from './import-job.ts';

export interface ConfiguredImport {
  job: ImportJob;
  /** Releases the S3 client's sockets, if one was made; for a process that exits after its runs. */
  close: () => void;
}

/**
 * The import job as the configuration describes it, composed once for the importTickets Lambda and
 * `npm run import` (docs/architecture.md, "The import"); reading threads where the machine has a second core.
 */
export const makeConfiguredImport = (
  config: ImportConfig,
  options: {
    /** Where a listing read says it switched to cursor paging: one line (stderr for the CLI, the log for the Lambda). */
    notify?: (message: string) => void;
  },
): ConfiguredImport => {
  let s3: S3Client | undefined;
  const { ticketing } = config;
  const job = makeImportJob({
    ...makeLocationOpeners({
      s3: async () => {
        const { makeS3Client } = await import('../../storage/s3-client.ts');
        return (s3 ??= makeS3Client({ forcePathStyle: config.s3ForcePathStyle, expectedBucketOwner: config.bucketOwner }));
      },
    }),
    worker: 'by-cores',
    fence: config.fence,
    fetchDestinationUsers:
      ticketing &&
      (async (signal) => {
        const password = await resolveSecret(ticketing.password, signal);
        return fetchDestinationUsers({
          baseUrl: ticketing.url,
          username: ticketing.username,
          password,
          pagination: ticketing.pagination,
          notify: options.notify,
          signal,
        });
      }),
  });
  return { job, close: () => s3?.destroy() };
};
