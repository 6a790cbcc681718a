import { describe, expect, it } from 'vitest';
import { makeMemoryTier } from '../../../lib/cache/memory-tier.ts';
import { CacheTier } from '../../../lib/cache/provenance.ts';
import { makeCachedDeviceListSource } from '../../../lib/devices/cached-device-list-source.ts';
import type { InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';

const DEVICES: InventoryDevice[] = [
  { id: '1', name: 'Mac-1', os_name: 'macOS', os_version: '26.1', os_build: '25B78', supervised: true, managed: true },
  { id: '2', name: 'Mac-2', os_version: '15.7.2' },
  { id: '10', udid: 'A-B', os_version: '26.0 (25A354)', email: 'jdoe@example.com' },
  { id: '11' },
];

const request = { remainingTimeMs: () => 30_000 };

describe('cached device list source', () => {
  it('serves the rendered body from upstream first, then the very same string from memory', async () => {
    let reads = 0;
    const source = makeCachedDeviceListSource({
      readDevices: async () => {
        reads += 1;
        return DEVICES;
      },
      latestOsVersion: '26.0',
      ttlSeconds: 60,
      clusterKey: 'devices:v1:test',
    });
    const first = await source(request);
    const second = await source(request);
    expect(first.tier).toBe(CacheTier.Upstream);
    expect(second.tier).toBe(CacheTier.Memory);
    expect(second.json).toBe(first.json);
    expect(reads).toBe(1);
    expect((JSON.parse(first.json) as { id: string; os_is_latest: boolean }[]).map((device) => [device.id, device.os_is_latest])).toEqual([
      ['1', true],
      ['2', false],
      ['10', true],
      ['11', false],
    ]);
  });

  it('keeps bodies for different references apart in a shared memory tier', async () => {
    const memory = makeMemoryTier<string>({ maxEntries: 4 });
    const readDevices = async () => DEVICES;
    const older = makeCachedDeviceListSource({ readDevices, latestOsVersion: '15.7', ttlSeconds: 60, clusterKey: 'devices:v1:test', memory });
    const newer = makeCachedDeviceListSource({ readDevices, latestOsVersion: '26.1', ttlSeconds: 60, clusterKey: 'devices:v1:test', memory });
    await older(request);
    const result = await newer(request);
    expect(result.tier).toBe(CacheTier.Upstream);
    expect((JSON.parse(result.json) as { os_is_latest: boolean }[]).map((device) => device.os_is_latest)).toEqual([true, false, false, false]);
  });

  it('passes the caller request to the upstream read', async () => {
    let seen: number | undefined;
    const source = makeCachedDeviceListSource({
      readDevices: async (incoming) => {
        seen = incoming.remainingTimeMs();
        return DEVICES;
      },
      latestOsVersion: '26.1',
      ttlSeconds: 60,
      clusterKey: 'devices:v1:test',
    });
    await source({ remainingTimeMs: () => 1_234 });
    expect(seen).toBe(1_234);
  });
});
