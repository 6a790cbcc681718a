import { CacheTier } from '../cache/provenance.ts';
import type { DeviceListSource } from './device-list-source.ts';
import { renderDeviceList } from './map-inventory-record.ts';
import type { ReadDevices } from './read-devices.ts';

/** Every request reads upstream: the device list without a cache in front of it. */
export const makeUncachedDeviceListSource =
  ({ readDevices, latestOsVersion }: { readDevices: ReadDevices; latestOsVersion: string }): DeviceListSource =>
  async (request) => ({
    json: renderDeviceList(await readDevices(request), latestOsVersion),
    tier: CacheTier.Upstream,
  });
