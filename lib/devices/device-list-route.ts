import type { ValidateFunction } from 'ajv';
import { cacheTierName, CacheTier, makeTieredCache } from '../cache/tiered-cache.ts';
import type { DevicesConfig } from '../config.ts';
import { makeLogger } from '../runtime/logger.ts';
import { makeHttpHandler } from '../http/make-http-handler.ts';
import type { RouteKey } from '../http/routes.ts';
import { makeLazyMetrics } from '../runtime/metrics.ts';
import { once } from '../runtime/once.ts';
import { checkConfigAtStartup } from '../runtime/startup.ts';
import { makeLatestOsSource } from '../latest-os/latest-os-feed.ts';
import { makeDeviceInventory, type DeviceInventoryDeps } from './device-inventory.ts';
import { makeDeviceList, type SnapshotRequest } from './device-list.ts';
import { typeQueryOf, type DeviceQuery } from './device-query.ts';
import type { InventoryKind } from './inventory-kind.ts';

/**
 * GET /devices (or, with the mobile devices' kind, GET /mobile-devices) as the configuration
 * describes it: the inventory's Jamf reads behind the memory and (with REDIS_URL) cluster tiers.
 */
const makeConfiguredDeviceList = (config: DevicesConfig, deps: Omit<DeviceInventoryDeps, 'cluster'>, kind: InventoryKind) => {
  const inventory = makeDeviceInventory(config, deps, kind);
  const snapshots = makeTieredCache({
    cluster: inventory.entry,
    ttlMs: inventory.ttlMs,
    servableMs: inventory.servableMs,
    load: (request: SnapshotRequest) => inventory.readSnapshot(request.remainingTimeMs),
  });
  const reference = makeLatestOsSource({
    feedUrl: config.latestOs.feed?.url,
    fallbackVersion: config.latestOs.version,
    ttlMs: (config.latestOs.feed?.ttlSeconds ?? 0) * 1000,
    system: kind.system,
    logger: deps.logger,
    ...(deps.onRetry === undefined ? {} : { onRetry: deps.onRetry }),
  });
  return makeDeviceList({ snapshots, reference, query: kind.query, decides: kind.decides });
};

/**
 * The handler of one device list route (GET /devices, GET /mobile-devices): its logger and metrics
 * under the function's name, its configuration tried at init, its query validated (422 naming
 * `query`), 304 on the page's ETag, and `cache_tier` on every access line.
 */
export const makeDeviceListHandler = (spec: {
  route: RouteKey;
  service: string;
  kind: InventoryKind;
  loadConfig: () => DevicesConfig;
  validate: ValidateFunction;
}) => {
  const logger = makeLogger(spec.service);
  const metrics = makeLazyMetrics(spec.service);
  const deviceList = once(() =>
    makeConfiguredDeviceList(
      spec.loadConfig(),
      {
        logger,
        onAuthFailure: () => metrics.add('UpstreamAuthFailures', 'Count', 1),
        onRetry: () => metrics.add('UpstreamRetries', 'Count', 1),
      },
      spec.kind,
    ),
  );
  checkConfigAtStartup(logger, deviceList);

  return makeHttpHandler<undefined, DeviceQuery>({
    route: spec.route,
    logger,
    query: { parameterName: 'query', validate: spec.validate, type: typeQueryOf(spec.kind.query) },
    // Upstream until a tier answers: only an upstream read (or its configuration) can fail or run out
    // of time, and the line keeps the key whichever way the request ends.
    logFields: { cache_tier: cacheTierName(CacheTier.Upstream) },
    // 304 on the page's ETag, rendering the body only when it is sent.
    conditional: true,
    handle: async ({ query, remainingTimeMs, annotate }) => {
      try {
        const page = await deviceList()(query, { remainingTimeMs });
        annotate({ cache_tier: cacheTierName(page.tier) });
        return {
          status: 200,
          json: page.body,
          headers: { ETag: page.etag, 'X-Total-Count': String(page.total), ...(page.next === undefined ? {} : { Link: page.next }) },
        };
      } finally {
        // Only when something was counted, so a normal request writes its access line and nothing else.
        await metrics.publish();
      }
    },
  });
};
