import type { Context } from 'aws-lambda';
import { loadImportConfig } from '../lib/config.ts';
import { LAMBDA_MAX_MS, remainingTimeOf } from '../lib/async/deadline.ts';
import { once } from '../lib/async/once.ts';
import { describeError } from '../lib/errors.ts';
import { checkConfigAtStartup, makeLogger } from '../lib/runtime/logger.ts';
import { makeLazyMetrics } from '../lib/runtime/metrics.ts';
import { makeConfiguredImport } from '../lib/import/job/configured-import.ts';
import { importDeadline, parseImportEvent } from '../lib/import/job/import-event.ts';
import type { ImportSummary } from '../lib/import/job/import-pipeline.ts';
import { progressFigures, throttleProgress } from '../lib/import/job/import-progress.ts';
import { formatLocation } from '../lib/storage/location.ts';

const logger = makeLogger('importTickets');
const metrics = makeLazyMetrics('importTickets');
const PROGRESS_EVERY_MS = 15_000;
/** Stop this long before the Lambda timeout, so the multipart upload is still aborted cleanly. */
const DEADLINE_MARGIN_MS = 10_000;

// Built once per container; tried at start so a missing or invalid variable is logged by name
// then, and each run meets the same ConfigError.
const configuredImport = once(() =>
  makeConfiguredImport(loadImportConfig(), {
    notify: (message) => logger.warn('user listing switched to cursor paging', { detail: message }),
  }),
);
checkConfigAtStartup(logger, configuredImport);

/** `{ source, destination, rejects?, dry_run?, encoding? }` (direct or from the EventBridge schedule's input) → the import summary. */
export const handler = async (event: unknown, context?: Context): Promise<ImportSummary> => {
  if (context) logger.addContext(context);
  const started = Date.now();
  const deadline = importDeadline(remainingTimeOf(context, LAMBDA_MAX_MS)(), DEADLINE_MARGIN_MS);
  try {
    const { source, destination, rejects, dryRun, encoding } = parseImportEvent(event);
    logger.info('import started', {
      source: formatLocation(source),
      destination: destination && formatLocation(destination),
      rejects: rejects && formatLocation(rejects),
      dry_run: dryRun,
    });
    const summary = await configuredImport().job({
      source,
      destination,
      rejects,
      dryRun,
      encoding,
      signal: deadline.signal,
      onProgress: throttleProgress(PROGRESS_EVERY_MS, (progress) => {
        const elapsedMs = Date.now() - started;
        logger.info('import progress', { ...progressFigures(progress, elapsedMs), elapsed_ms: elapsedMs });
      }),
    });
    logger.info('import finished', { summary, duration_ms: Date.now() - started });
    // One per run that wrote its archive, for the alarm on a schedule that stopped succeeding: a dry
    // run started by hand must not quiet it. A metrics line that cannot be written fails nothing.
    if (!dryRun) metrics.add('ImportSucceeded', 'Count', 1);
    await metrics.publish().catch((error: unknown) => logger.warn('metrics not published', { error: describeError(error) }));
    return summary;
  } catch (error) {
    logger.error('import failed', { error: describeError(error), duration_ms: Date.now() - started });
    throw error;
  } finally {
    deadline.clear();
  }
};
