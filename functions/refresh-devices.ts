import type { Context } from 'aws-lambda';
import { loadRefreshConfig } from '../lib/config.ts';
import { once } from '../lib/once.ts';
import { makeConfiguredRefresh } from '../lib/devices/configured-refresh.ts';
import type { FullReadReason } from '../lib/devices/read-snapshot.ts';
import type { RefreshOutcome } from '../lib/devices/refresh-devices.ts';
import { describeError } from '../lib/errors.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { makeLazyMetrics } from '../lib/metrics.ts';
import { checkConfigAtStartup } from '../lib/startup.ts';

const logger = makeLogger('refreshDevices');
const metrics = makeLazyMetrics('refreshDevices');

const refresh = once(() =>
  makeConfiguredRefresh(loadRefreshConfig(), {
    logger,
    onAuthFailure: () => metrics.add('UpstreamAuthFailures', 'Count', 1),
  }),
);
checkConfigAtStartup(logger, refresh);

/** Without a Lambda context (a direct call), the read may take this long. */
const DEFAULT_BUDGET_MS = 15 * 60 * 1000;

/**
 * The scheduled refresh of the device list (EventBridge): reads the inventory (whole, or what
 * changed since the last run) and writes the cluster entry that every devices container serves
 * from. One log line per run, `devices refresh`, and the `DevicesRefreshSeconds` metric for a
 * completed one. A failed run throws (Lambda counts the error; the schedule's next run is the retry)
 * and leaves the previous entry in place.
 */
export const handler = async (
  _event: unknown,
  context?: Context,
): Promise<{ outcome: RefreshOutcome['outcome']; devices?: number; read?: 'full' | 'incremental'; full_read_reason?: FullReadReason; duration_ms: number }> => {
  if (context) logger.addContext(context);
  const started = Date.now();
  let result: RefreshOutcome;
  try {
    result = await refresh()(() => context?.getRemainingTimeInMillis() ?? DEFAULT_BUDGET_MS - (Date.now() - started));
  } catch (error) {
    result = { outcome: 'failed', durationMs: Date.now() - started, error };
  }
  const fields = {
    outcome: result.outcome,
    ...(result.outcome === 'refreshed'
      ? { devices: result.devices, read: result.read, ...(result.fullReadReason === undefined ? {} : { full_read_reason: result.fullReadReason }) }
      : {}),
    duration_ms: result.durationMs,
  };
  if (result.outcome === 'failed') {
    logger.error('devices refresh', { ...fields, error: describeError(result.error) });
  } else {
    logger.info('devices refresh', fields);
  }
  if (result.outcome === 'refreshed') metrics.add('DevicesRefreshSeconds', 'Seconds', result.durationMs / 1000);
  await metrics.publish();
  if (result.outcome === 'failed') throw result.error instanceof Error ? result.error : new Error(describeError(result.error));
  return fields;
};
