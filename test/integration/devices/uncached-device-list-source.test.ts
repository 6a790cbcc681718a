import { afterEach, describe, expect, it } from 'vitest';
import { CacheTier } from '../../../lib/cache/provenance.ts';
import { mapInventoryRecord, renderDeviceList, type InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';
import { DEADLINE_MARGIN_MS, makeReadDevices } from '../../../lib/devices/read-devices.ts';
import { makeUncachedDeviceListSource } from '../../../lib/devices/uncached-device-list-source.ts';
import { makeJamfClient } from '../../../lib/inventory/jamf-client.ts';
import { UpstreamError, UpstreamFailure } from '../../../lib/inventory/upstream-error.ts';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf } from '../../../demo/fake-jamf.ts';

let jamf: FakeJamf | undefined;
afterEach(async () => {
  await jamf?.close();
  jamf = undefined;
});

const readDevicesFrom = (fake: FakeJamf) =>
  makeReadDevices({
    inventory: makeJamfClient({
      baseUrl: fake.url,
      auth: { kind: 'oauth', clientId: DEMO_JAMF_CREDENTIALS.clientId, clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret },
    }),
  });

describe('read-devices and the uncached device list source', () => {
  it('reads every page into devices before the latest-OS decision', async () => {
    const records = generateJamfComputers(40, 31);
    jamf = await startFakeJamf({ devices: records });
    const devices = await readDevicesFrom(jamf)({ remainingTimeMs: () => 10_000 });
    expect(devices).toEqual(records.map((record) => mapInventoryRecord(record)));
    expect(devices.some((device) => 'os_is_latest' in device)).toBe(false);
  });

  it('reads upstream on every call and renders against its reference, tier upstream', async () => {
    jamf = await startFakeJamf({ devices: generateJamfComputers(12, 32) });
    const readDevices = readDevicesFrom(jamf);
    const seen: InventoryDevice[][] = [];
    const source = makeUncachedDeviceListSource({
      readDevices: async (request) => {
        const devices = await readDevices(request);
        seen.push(devices);
        return devices;
      },
      latestOsVersion: '15.6',
    });
    const first = await source({ remainingTimeMs: () => 10_000 });
    const second = await source({ remainingTimeMs: () => 10_000 });
    expect(first.tier).toBe(CacheTier.Upstream);
    expect(second.tier).toBe(CacheTier.Upstream);
    expect(jamf.stats().inventoryRequests).toBe(2);
    expect(first.json).toBe(renderDeviceList(seen[0]!, '15.6'));
  });

  it('gives up with timed-out when the remaining time is within the safety margin', async () => {
    jamf = await startFakeJamf({ devices: generateJamfComputers(5, 33) });
    const error = await readDevicesFrom(jamf)({ remainingTimeMs: () => DEADLINE_MARGIN_MS }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).failure).toBe(UpstreamFailure.TimedOut);
    expect(jamf.stats().tokenRequests).toBe(0);
  });
});
