import type { Context } from 'aws-lambda';
import { loadRefreshConfig } from '../lib/config.ts';
import { LAMBDA_MAX_MS, remainingTimeOf } from '../lib/async/deadline.ts';
import { once } from '../lib/async/once.ts';
import { makeConfiguredRefreshes } from '../lib/devices/refresh-inventories.ts';
import type { InventoryKind } from '../lib/devices/inventory-kind.ts';
import { describeError } from '../lib/errors.ts';
import { checkConfigAtStartup, makeLogger } from '../lib/runtime/logger.ts';
import { makeLazyMetrics } from '../lib/runtime/metrics.ts';

const logger = makeLogger('refreshDevices');
const metrics = makeLazyMetrics('refreshDevices');

/** The computers' metric keeps its name (the devices-refresh-missing alarm reads it). */
const METRIC_OF: Record<InventoryKind['name'], string> = {
  computers: 'DevicesRefreshSeconds',
  mobile_devices: 'MobileDevicesRefreshSeconds',
};

const refresh = once(() =>
  makeConfiguredRefreshes(loadRefreshConfig(), {
    logger,
    onAuthFailure: () => metrics.add('UpstreamAuthFailures', 'Count', 1),
    onRetry: () => metrics.add('UpstreamRetries', 'Count', 1),
    onRefreshed: (kind, seconds) => metrics.add(METRIC_OF[kind.name], 'Seconds', seconds),
  }),
);
checkConfigAtStartup(logger, refresh);

/**
 * The scheduled refresh of both device lists (EventBridge; lib/devices/refresh-inventories.ts). A
 * run where either failed throws (Lambda counts the error; the schedule's next run is the retry).
 */
export const handler = async (_event: unknown, context?: Context) => {
  if (context) logger.addContext(context);
  const started = Date.now();
  let run: ReturnType<typeof refresh>;
  try {
    run = refresh();
  } catch (error) {
    // Misconfigured: no inventory was refreshed, and the line says why.
    logger.error('devices refresh', { outcome: 'failed', duration_ms: Date.now() - started, error: describeError(error) });
    throw error;
  }
  const { failures, ...result } = await run(remainingTimeOf(context, LAMBDA_MAX_MS));
  await metrics.publish();
  if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(describeError(failures[0]));
  return result;
};
