import { tmpdir } from 'node:os';
import type { Context } from 'aws-lambda';
import { loadImportConfig, once } from '../lib/config.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { deadlineSignal, makeImportJob, parseImportEvent } from '../lib/import/import-job.ts';
import type { ImportSummary } from '../lib/import/run-import.ts';
import { resolveSecret } from '../lib/secrets.ts';
import { formatLocation } from '../lib/storage/location.ts';
import { makeLocationOpeners } from '../lib/storage/open-location.ts';
import { makeS3Client } from '../lib/storage/s3-client.ts';
import { fetchDestinationUsers } from '../lib/ticketing/user-listing-client.ts';

const logger = makeLogger('importTickets');
const PROGRESS_EVERY_MS = 15_000;
/** Stop this long before the Lambda timeout, so the multipart upload is still aborted cleanly. */
const DEADLINE_MARGIN_MS = 10_000;

// Built on the first invocation, so a missing variable is a logged ConfigError naming it.
const importJob = once(() => {
  const config = loadImportConfig();
  const s3 = makeS3Client({ forcePathStyle: config.s3ForcePathStyle });
  const ticketing = config.ticketing;
  return makeImportJob({
    ...makeLocationOpeners({ s3: () => s3 }),
    tmpDir: tmpdir(),
    ...(ticketing && {
      fetchDestinationUsers: async (signal) => {
        const password = await resolveSecret(ticketing.password, 'TICKETING_PASSWORD');
        return fetchDestinationUsers({ baseUrl: ticketing.url, username: ticketing.username, password, ...(signal && { signal }) });
      },
    }),
  });
});

/** `{ source, destination }` (direct or from the EventBridge schedule's input) → the import summary. */
export const handler = async (event: unknown, context?: Context): Promise<ImportSummary> => {
  if (context) logger.addContext(context);
  const started = Date.now();
  let lastProgress = started;
  const deadline = deadlineSignal(context?.getRemainingTimeInMillis(), DEADLINE_MARGIN_MS);
  try {
    const { source, destination } = parseImportEvent(event);
    logger.info('import started', { source: formatLocation(source), destination: formatLocation(destination) });
    const summary = await importJob().run({
      source,
      destination,
      signal: deadline.signal,
      onProgress: ({ rows, bytesRead }) => {
        if (Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
        lastProgress = Date.now();
        logger.info('import progress', { rows, bytes_read: bytesRead, elapsed_ms: lastProgress - started });
      },
    });
    logger.info('import finished', { summary, duration_ms: Date.now() - started });
    return summary;
  } catch (error) {
    logger.error('import failed', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), duration_ms: Date.now() - started });
    throw error;
  } finally {
    deadline.clear();
  }
};
