import { cacheTierName, CacheTier } from '../lib/cache/provenance.ts';
import { loadDevicesConfig } from '../lib/config.ts';
import { once } from '../lib/once.ts';
import { makeConfiguredDeviceList } from '../lib/devices/configured-devices.ts';
import { typeDeviceQuery, type DeviceQuery } from '../lib/devices/device-query.ts';
import { validate as validateDeviceQuery } from '../lib/devices/device-query.generated.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { makeLazyMetrics } from '../lib/metrics.ts';
import { checkConfigAtStartup } from '../lib/startup.ts';

const logger = makeLogger('devices');
const metrics = makeLazyMetrics('devices');

const deviceList = once(() =>
  makeConfiguredDeviceList(loadDevicesConfig(), {
    logger,
    onAuthFailure: () => metrics.add('UpstreamAuthFailures', 'Count', 1),
  }),
);
checkConfigAtStartup(logger, deviceList);

/** GET /devices: a page (or all) of the normalized devices, from the cache tiers or the Jamf Pro inventory. */
export const handler = makeHttpHandler<undefined, DeviceQuery>({
  route: 'GET /devices',
  logger,
  query: { parameterName: 'query', validate: validateDeviceQuery, type: typeDeviceQuery },
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
