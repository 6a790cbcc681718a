import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideLatest, decisionsAt, everyDevice, renderDevices } from '../../../lib/devices/decide-latest.ts';
import { COMPUTER_QUERY, filterMatches, type DeviceQuery } from '../../../lib/devices/device-query.ts';
import type { DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import { summarizeDevices } from '../../../lib/devices/device-summary.ts';
import type { InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';
import { feedReference, type LatestReference } from '../../../lib/latest-os/latest-reference.ts';
import { sofaReleases, type SofaReleases } from '../../../lib/latest-os/sofa-feed.ts';
import { generateJamfComputers } from '../../../demo/fake-jamf.ts';
import macosV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };
import { mapComputer } from '../../support/inventory-records.ts';
import { buildComputerSnapshot } from '../../support/snapshot-devices.ts';
import { summaryOfList, type ServedDevice } from '../../support/summary-oracle.ts';

const v2 = feedReference(sofaReleases(macosV2) as SofaReleases, '26.6.2');

const summaryOf = (snapshot: DeviceSnapshot, reference: LatestReference, query: DeviceQuery, now: number) => {
  const at = decisionsAt(decideLatest(snapshot, everyDevice(reference)), now);
  const matches = filterMatches(snapshot, at, query, COMPUTER_QUERY);
  const list = JSON.parse(
    renderDevices(snapshot, at, matches ?? Array.from({ length: snapshot.count }, (_, index) => index)),
  ) as ServedDevice[];
  return { summary: summarizeDevices(snapshot, at, matches), list };
};

describe('the fleet summary', () => {
  it('counts a hand-worked fleet on the real v2 feed on 1 September 2026', () => {
    const fleet: InventoryDevice[] = [
      { id: '1', os_version: '26.6.2', board_id: 'J413AP' },
      { id: '2', os_version: '26.6', board_id: 'J413AP' },
      { id: '3', os_version: '26.6', board_id: 'J516cAP' },
      { id: '4', os_version: '26.6.1', board_id: 'J413AP' },
      { id: '5', os_version: '26.06.0' },
      { id: '6', os_version: 'beta' },
      { id: '7', os_version: '12.7.6' },
      { id: '8' },
    ];
    const { summary } = summaryOf(buildComputerSnapshot(fleet, 0), v2, {}, Date.parse('2026-09-01T00:00:00Z'));
    // Highest first: 26.6.1 above 26.6, and 26.6 and 26.06.0 rank equal, by text (26.6 lacks 26.6.1, exploited, due 20 August: overdue); 26.6.1 lacks
    // only 26.6.2 (due 7 September); Monterey 12 is not in the feed (no fields, and LATEST_OS_VERSION
    // 26.6.2 says not latest); "beta" and the device without a version are not decided.
    expect(summary).toEqual({
      devices: 8,
      os_is_latest: { true: 1, false: 7 },
      os_overdue: { true: 3, false: 2 },
      os_exploited: { true: 3, false: 2 },
      os_versions: [
        { os_version: '26.6.2', devices: 1, os_is_latest: 1, os_overdue: 0, os_exploited: 0 },
        { os_version: '26.6.1', devices: 1, os_is_latest: 0, os_overdue: 0, os_exploited: 0 },
        { os_version: '26.06.0', devices: 1, os_is_latest: 0, os_overdue: 1, os_exploited: 1 },
        { os_version: '26.6', devices: 2, os_is_latest: 0, os_overdue: 2, os_exploited: 2 },
        { os_version: '12.7.6', devices: 1, os_is_latest: 0, os_overdue: 0, os_exploited: 0 },
        { os_version: 'beta', devices: 1, os_is_latest: 0, os_overdue: 0, os_exploited: 0 },
        { devices: 1, os_is_latest: 0, os_overdue: 0, os_exploited: 0 },
      ],
      exploited_cves: [{ cve: 'CVE-2026-65400', devices: 3 }],
    });
  });

  it('equals what the list implies, for any filter and moment', () => {
    const devices = generateJamfComputers(500, 7).map((record) => mapComputer(record)!);
    const snapshot = buildComputerSnapshot(devices, 0);
    const query = fc.record(
      {
        os_is_latest: fc.boolean(),
        os_overdue: fc.boolean(),
        os_exploited: fc.boolean(),
        managed: fc.boolean(),
        os_name: fc.constantFrom('macOS', 'MACOS', 'Mac OS X'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(query, fc.integer({ min: Date.parse('2025-06-01'), max: Date.parse('2027-01-01') }), (filters, now) => {
        const { summary, list } = summaryOf(snapshot, v2, filters, now);
        expect(summary).toEqual(summaryOfList(list));
      }),
      { numRuns: 80 },
    );
  });

  it('is all zeros and empty lists for no devices', () => {
    const { summary } = summaryOf(buildComputerSnapshot([], 0), v2, {}, 0);
    expect(summary).toEqual({
      devices: 0,
      os_is_latest: { true: 0, false: 0 },
      os_overdue: { true: 0, false: 0 },
      os_exploited: { true: 0, false: 0 },
      os_versions: [],
      exploited_cves: [],
    });
  });
});
