import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { makeRedisClusterTier } from '../lib/cache/cluster-tier.ts';
import { cacheTierName, CacheTier } from '../lib/cache/provenance.ts';
import { loadDevicesConfig, once, type DevicesConfig } from '../lib/config.ts';
import type { DeviceListSource } from '../lib/devices/device-list-source.ts';
import { makeReadDevices } from '../lib/devices/read-devices.ts';
import { devicesClusterKey, makeCachedDeviceListSource } from '../lib/devices/cached-device-list-source.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { makeJamfClientFromConfig } from '../lib/inventory/jamf-client-from-config.ts';
import { checkConfigAtStartup } from '../lib/startup.ts';

const logger = makeLogger('devices');
// Explicit so an unset POWERTOOLS_METRICS_NAMESPACE (tests, npm start) writes no warning line;
// the same value serverless.yml sets.
const metrics = new Metrics({ namespace: 'device-users-import', serviceName: 'devices' });

// ---- Composition: the one place that decides which DeviceListSource answers GET /devices. ----
const composeDeviceListSource = (config: DevicesConfig): DeviceListSource => {
  const inventory = makeJamfClientFromConfig(config, () => metrics.addMetric('UpstreamAuthFailures', MetricUnit.Count, 1));
  const readDevices = makeReadDevices({ inventory });
  // Memory tier always; the shared cluster tier only where REDIS_URL names one.
  const cluster = config.redisUrl === undefined ? undefined : makeRedisClusterTier({ url: config.redisUrl, logger });
  const principal = config.auth.kind === 'oauth' ? config.auth.clientId : config.auth.username;
  return makeCachedDeviceListSource({
    readDevices,
    latestOsVersion: config.latestOsVersion,
    ttlSeconds: config.cacheTtlSeconds,
    clusterKey: devicesClusterKey({ url: config.inventoryUrl, principal }),
    cluster,
  });
};
// ---- End of composition. ----

const deviceListSource = once(() => composeDeviceListSource(loadDevicesConfig()));
checkConfigAtStartup(logger, deviceListSource);

/** GET /devices: the normalized device list, from the cache tiers or the Jamf Pro inventory. */
export const handler = makeHttpHandler({
  route: 'GET /devices',
  logger,
  handle: async ({ remainingTimeMs, annotate }) => {
    // Upstream until a tier answers: only an upstream read (or its configuration) can fail or run
    // out of time, and the line keeps the key even when the deadline cuts the request short.
    annotate({ cache_tier: cacheTierName(CacheTier.Upstream) });
    try {
      const result = await deviceListSource()({ remainingTimeMs });
      annotate({ cache_tier: cacheTierName(result.tier) });
      return { status: 200, json: result.json };
    } finally {
      // Only when something was counted, so a normal request writes its access line and nothing else.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  },
});
