import type { ValidateFunction } from 'ajv';
import { cacheTierName, CacheTier, makeTieredCache } from '../cache/tiered-cache.ts';
import type { DevicesConfig, LatestOsConfig } from '../config.ts';
import { checkConfigAtStartup, makeLogger } from '../runtime/logger.ts';
import { makeHttpHandler } from '../http/make-http-handler.ts';
import type { RouteKey } from '../http/routes.ts';
import { makeLazyMetrics } from '../runtime/metrics.ts';
import { once } from '../async/once.ts';
import { makeLatestOsSource, type LatestOsSystem } from '../latest-os/latest-os-feed.ts';
import { bySystem } from './decide-latest.ts';
import { makeDeviceInventory, type DeviceInventoryDeps } from './device-inventory.ts';
import { makeDeviceList, type SnapshotRequest } from './device-list.ts';
import { typeQueryOf, type DeviceQuery } from './device-query.ts';
import type { InventoryKind } from './inventory-kind.ts';

/** Each system's latest-OS setting a list decides its devices by (a list's configuration names them). */
export type LatestOsSettings = Partial<Record<LatestOsSystem, LatestOsConfig | undefined>>;

/**
 * GET /devices (or, with the mobile devices' kind, GET /mobile-devices) as the configuration
 * describes it: the inventory's Jamf reads behind the memory and (with REDIS_URL) cluster tiers, and
 * one latest-OS source per configured system, its devices told by the kind's `systemOf`.
 */
const makeConfiguredDeviceList = (
  config: DevicesConfig,
  latestOs: LatestOsSettings,
  deps: Omit<DeviceInventoryDeps, 'cluster'>,
  kind: InventoryKind,
) => {
  const inventory = makeDeviceInventory(config, deps, kind);
  const snapshots = makeTieredCache({
    cluster: inventory.entry,
    ttlMs: inventory.ttlMs,
    servableMs: inventory.servableMs,
    load: (request: SnapshotRequest) => inventory.readSnapshot(request.remainingTimeMs),
  });
  const sources = (Object.entries(latestOs) as [LatestOsSystem, LatestOsConfig | undefined][]).flatMap(([system, setting]) =>
    setting === undefined
      ? []
      : [
          {
            system,
            source: makeLatestOsSource({
              feedUrl: setting.feed?.url,
              fallbackVersion: setting.version,
              ttlMs: (setting.feed?.ttlSeconds ?? 0) * 1000,
              system,
              levels: config.patchSla,
              logger: deps.logger,
              ...(deps.onRetry === undefined ? {} : { onRetry: deps.onRetry }),
            }),
          },
        ],
  );
  const references = async (request: SnapshotRequest) =>
    bySystem(
      Object.fromEntries(await Promise.all(sources.map(async ({ system, source }) => [system, await source(request)] as const))),
      kind.systemOf,
    );
  return makeDeviceList({ snapshots, references, query: kind.query, now: Date.now });
};

/**
 * The handler of one device list (GET /devices, GET /mobile-devices) and its summary: its logger and
 * metrics under the function's name, its configuration tried at init, its query validated (422
 * naming `query`), 304 on the answer's ETag, and `cache_tier` on every access line.
 */
export const makeDeviceListHandler = <C extends DevicesConfig>(spec: {
  /** The list's route and its summary's. */
  routes: { list: RouteKey; summary: RouteKey };
  service: string;
  kind: InventoryKind;
  loadConfig: () => C;
  /** The latest-OS settings of the list's systems, from its configuration. */
  latestOs: (config: C) => LatestOsSettings;
  /** The generated validators of the list's query and of the summary's (its filters only). */
  validate: { list: ValidateFunction; summary: ValidateFunction };
}) => {
  const logger = makeLogger(spec.service);
  const metrics = makeLazyMetrics(spec.service);
  const deviceList = once(() => {
    const config = spec.loadConfig();
    return makeConfiguredDeviceList(
      config,
      spec.latestOs(config),
      {
        logger,
        onAuthFailure: () => metrics.add('UpstreamAuthFailures', 'Count', 1),
        onRetry: () => metrics.add('UpstreamRetries', 'Count', 1),
      },
      spec.kind,
    );
  });
  checkConfigAtStartup(logger, deviceList);

  const type = typeQueryOf(spec.kind.query);
  return makeHttpHandler<undefined, DeviceQuery>({
    routes: [spec.routes.list, spec.routes.summary],
    logger,
    query: {
      [spec.routes.list]: { parameterName: 'query', validate: spec.validate.list, type },
      [spec.routes.summary]: { parameterName: 'query', validate: spec.validate.summary, type },
    },
    // Upstream until a tier answers: only an upstream read (or its configuration) can fail or run out
    // of time, and the line keeps the key whichever way the request ends.
    logFields: { cache_tier: cacheTierName(CacheTier.Upstream) },
    // 304 on the answer's ETag, rendering the body only when it is sent.
    conditional: true,
    handle: async ({ route, query, remainingTimeMs, annotate }) => {
      try {
        if (route === spec.routes.summary) {
          const summary = await deviceList().summary(query, { remainingTimeMs });
          annotate({ cache_tier: cacheTierName(summary.tier) });
          return { status: 200, json: summary.body, headers: { ETag: summary.etag } };
        }
        const page = await deviceList().page(query, { remainingTimeMs });
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
