import { loadDevicesConfig } from '../lib/config.ts';
import { makeDeviceListHandler } from '../lib/devices/device-list-route.ts';
import { validate, validateSummary } from '../lib/devices/device-query.generated.ts';
import { COMPUTERS } from '../lib/devices/inventory-kind.ts';

/** GET /devices: a page (or all) of the normalized computers, from the cache tiers or the Jamf Pro inventory. */
export const handler = makeDeviceListHandler({
  routes: { list: 'GET /devices', summary: 'GET /devices/summary' },
  service: 'devices',
  kind: COMPUTERS,
  loadConfig: () => loadDevicesConfig(),
  latestOs: (config) => ({ macOS: config.latestOs }),
  validate: { list: validate, summary: validateSummary },
});
