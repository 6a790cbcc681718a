import { loadMobileDevicesConfig } from '../lib/config.ts';
import { makeDeviceListHandler } from '../lib/devices/device-list-route.ts';
import { MOBILE_DEVICES } from '../lib/devices/inventory-kind.ts';
import { validate, validateSummary } from '../lib/devices/mobile-device-query.generated.ts';

/**
 * GET /mobile-devices: a page (or all) of the normalized iPhones, iPads and Apple TVs, served as
 * GET /devices serves computers, their iOS decided against LATEST_IOS_FEED_URL or LATEST_IOS_VERSION.
 */
export const handler = makeDeviceListHandler({
  routes: { list: 'GET /mobile-devices', summary: 'GET /mobile-devices/summary' },
  service: 'mobileDevices',
  kind: MOBILE_DEVICES,
  loadConfig: () => loadMobileDevicesConfig(),
  latestOs: (config) => ({ iOS: config.latestOs, tvOS: config.latestTvos }),
  validate: { list: validate, summary: validateSummary },
});
