import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bySystem,
  decideLatest,
  decisionsAt,
  everyDevice,
  overdueEpoch,
  renderDevices,
  type DeviceReferences,
} from '../../../lib/devices/decide-latest.ts';
import { buildSnapshot } from '../../../lib/devices/build-snapshot.ts';
import { MOBILE_DEVICES } from '../../../lib/devices/inventory-kind.ts';
import { MOBILE_LAYOUT } from '../../../lib/devices/map-mobile-record.ts';
import { COMPUTER_QUERY, filterMatches, type DeviceQuery } from '../../../lib/devices/device-query.ts';
import type { DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import type { InventoryDevice } from '../../../lib/devices/map-inventory-record.ts';
import { feedReference, fixedReference, type LatestReference } from '../../../lib/latest-os/latest-reference.ts';
import { osFieldsOf } from '../../../lib/latest-os/patch-compliance.ts';
import { sofaReleases, type SofaReleases } from '../../../lib/latest-os/sofa-feed.ts';
import { generateJamfComputers, generateJamfMobileDevices } from '../../../demo/fake-jamf.ts';
import iosV2 from '../../../demo/sofa/ios-data-feed-v2.json' with { type: 'json' };
import tvosV2 from '../../../demo/sofa/tvos-data-feed-v2.json' with { type: 'json' };
import macosV1 from '../../../demo/sofa/macos-data-feed-v1.json' with { type: 'json' };
import macosV2 from '../../../demo/sofa/macos-data-feed-v2.json' with { type: 'json' };
import { mapComputer, mapMobile } from '../../support/inventory-records.ts';
import { buildComputerSnapshot } from '../../support/snapshot-devices.ts';

const OS_FIELDS = [
  'os_is_latest',
  'os_latest_version',
  'os_missing_releases',
  'os_unpatched_cves',
  'os_exploited_cves',
  'os_update_due_at',
  'os_overdue',
] as const;

type Served = Record<string, unknown> & { id: string };

const devices = generateJamfComputers(600, 41).map((record) => mapComputer(record)!);
const snapshot = buildComputerSnapshot(devices, 0);
const REFERENCES: Record<string, LatestReference> = {
  'v2 feed': feedReference(sofaReleases(macosV2) as SofaReleases, '26.6.2'),
  'v1 feed': feedReference(sofaReleases(macosV1) as SofaReleases, undefined),
  'fixed version': fixedReference('26.6.2'),
};
/** From before the feeds' newest releases to long after every deadline. */
const MOMENTS = [
  '2025-01-01T00:00:00Z',
  '2026-08-19T23:59:59.999Z',
  '2026-08-20T00:00:00Z',
  '2026-09-07T00:00:00Z',
  '2030-01-01T00:00:00Z',
];

const served = (from: DeviceSnapshot, references: DeviceReferences, now: number): Served[] =>
  JSON.parse(
    renderDevices(
      from,
      decisionsAt(decideLatest(from, references), now),
      Array.from({ length: from.count }, (_, index) => index),
    ),
  ) as Served[];

/** What the one decision says of a device at `now`, as osFieldsOf writes it. */
const expectedFields = (reference: LatestReference, device: InventoryDevice, now: number) =>
  osFieldsOf(
    reference.assess({
      osVersion: device.os_version,
      response: device.os_rapid_security_response,
      boardId: device.board_id,
      modelIdentifier: device.model_identifier?.toLowerCase(),
    }),
    now,
  );

const osFieldsOfServed = (device: Served) =>
  Object.fromEntries(Object.entries(device).filter(([key]) => key.startsWith('os_') && OS_FIELDS.includes(key as never)));

describe('every device rendered with its decision and patch compliance', () => {
  it.each(Object.entries(REFERENCES))('gives each device exactly the fields of its assessment at any moment (%s)', (_name, reference) => {
    for (const moment of MOMENTS) {
      const now = Date.parse(moment);
      const list = served(snapshot, everyDevice(reference), now);
      expect(list).toHaveLength(devices.length);
      list.forEach((device, index) => {
        expect(osFieldsOfServed(device), `device ${device.id} at ${moment}`).toEqual(expectedFields(reference, devices[index]!, now));
        // In the documented order: right after os_is_latest, before the device's last contact.
        const keys = Object.keys(device).filter((key) => OS_FIELDS.includes(key as never) || key === 'last_contact_at');
        const expectedOrder = [
          ...OS_FIELDS.filter((key) => key in device),
          ...(device.last_contact_at === undefined ? [] : ['last_contact_at']),
        ];
        expect(keys).toEqual(expectedOrder);
      });
    }
  });

  it('serves the feed-decided fleet with real exposure: some overdue, some exploited, some latest', () => {
    const list = served(snapshot, everyDevice(REFERENCES['v2 feed']!), Date.parse('2026-09-01T00:00:00Z'));
    expect(list.some((device) => device.os_overdue === true)).toBe(true);
    expect(list.some((device) => device.os_overdue === false && device.os_is_latest === false)).toBe(true);
    expect(list.some((device) => Array.isArray(device.os_exploited_cves))).toBe(true);
    expect(list.some((device) => device.os_is_latest === true && device.os_missing_releases === 0)).toBe(true);
    // A device the feed does not decide (a major it does not list) carries none of the five.
    expect(list.some((device) => device.os_is_latest === false && !('os_missing_releases' in device))).toBe(true);
  });

  it('has os_missing_releases 0 exactly when os_is_latest is true, for any fleet the feed decides', () => {
    const versions = ['26.6.2', '26.6.1', '26.6', '26.3.1', '26.3.1 (a)', '15.7.9', '15.7', '14.8', '13.7.8', '12.1', 'not-a-version'];
    const arbitraryDevice = fc.record({
      os_version: fc.constantFrom(...versions),
      os_rapid_security_response: fc.option(fc.constantFrom('(a)', '(c)'), { nil: undefined }),
      board_id: fc.option(fc.constantFrom('J413AP', 'J516cAP', 'Mac-0000000000000000', ''), { nil: undefined }),
      model_identifier: fc.option(fc.constantFrom('Mac14,2', 'MacBookPro18,3', 'Mac15,12'), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryDevice, { maxLength: 40 }),
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        (fleet, now) => {
          const withIds = fleet.map((device, index) => ({ id: String(index + 1), ...device })) as InventoryDevice[];
          for (const device of served(buildComputerSnapshot(withIds, 0), everyDevice(REFERENCES['v2 feed']!), now)) {
            if ('os_missing_releases' in device) expect(device.os_missing_releases === 0).toBe(device.os_is_latest);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a device turning overdue', () => {
  const decisions = decideLatest(snapshot, everyDevice(REFERENCES['v2 feed']!));

  it('moves the epoch at each due date exactly, and only then', () => {
    expect(decisions.dueDates.length).toBeGreaterThan(1);
    for (const [position, due] of decisions.dueDates.entries()) {
      expect(overdueEpoch(decisions, due - 1)).toBe(position);
      expect(overdueEpoch(decisions, due)).toBe(position + 1);
    }
    expect(overdueEpoch(decisions, Number.NEGATIVE_INFINITY)).toBe(0);
    expect(overdueEpoch(decisions, Number.POSITIVE_INFINITY)).toBe(decisions.dueDates.length);
  });

  it('turns os_overdue true at its due date, from the same decisions', () => {
    const due = Date.parse('2026-08-20T00:00:00Z');
    const before = served(snapshot, everyDevice(REFERENCES['v2 feed']!), due - 1);
    const at = served(snapshot, everyDevice(REFERENCES['v2 feed']!), due);
    const turned = at.filter((device, index) => device.os_overdue === true && before[index]!.os_overdue === false);
    expect(turned.length).toBeGreaterThan(0);
    for (const device of turned) expect(device.os_update_due_at).toBe('2026-08-20T00:00:00.000Z');
  });
});

describe('the compliance filters', () => {
  const reference = everyDevice(REFERENCES['v2 feed']!);
  const now = Date.parse('2026-09-01T00:00:00Z');
  const at = decisionsAt(decideLatest(snapshot, reference), now);
  const list = served(snapshot, reference, now);
  const idsOf = (query: DeviceQuery) => [...(filterMatches(snapshot, at, query, COMPUTER_QUERY) ?? [])].map((index) => snapshot.ids[index]);

  it('select exactly the devices whose fields say so; a device without the fields matches neither value', () => {
    const withFields = list.filter((device) => 'os_overdue' in device);
    expect(idsOf({ os_overdue: true })).toEqual(withFields.filter((device) => device.os_overdue === true).map((device) => device.id));
    expect(idsOf({ os_overdue: false })).toEqual(withFields.filter((device) => device.os_overdue === false).map((device) => device.id));
    expect(idsOf({ os_exploited: true })).toEqual(list.filter((device) => 'os_exploited_cves' in device).map((device) => device.id));
    expect(idsOf({ os_exploited: false })).toEqual(
      withFields.filter((device) => !('os_exploited_cves' in device)).map((device) => device.id),
    );
    expect(withFields.length).toBeLessThan(list.length);
    expect(idsOf({ os_overdue: true, os_exploited: false, managed: true })).toEqual(
      withFields
        .filter((device) => device.os_overdue === true && !('os_exploited_cves' in device) && device.managed === true)
        .map((device) => device.id),
    );
  });

  it('match nothing when no feed decides the devices', () => {
    const fixed = decisionsAt(decideLatest(snapshot, everyDevice(REFERENCES['fixed version']!)), now);
    for (const query of [{ os_overdue: true }, { os_overdue: false }, { os_exploited: true }, { os_exploited: false }])
      expect(filterMatches(snapshot, fixed, query, COMPUTER_QUERY)).toHaveLength(0);
  });
});

describe('a mobile fleet decided per system', () => {
  it('gives each iPhone, iPad and Apple TV the fields of its own system’s assessment, and a watch none', () => {
    const records = generateJamfMobileDevices(600, 13).map((record) => mapMobile(record)!);
    const mobile = buildSnapshot(records, MOBILE_LAYOUT, 0);
    const ios = feedReference(sofaReleases(iosV2) as SofaReleases, '26.6.1', 'product-type');
    const tvos = feedReference(sofaReleases(tvosV2) as SofaReleases, undefined, 'product-type');
    const now = Date.parse('2026-08-19T00:00:00Z');
    const list = served(mobile, bySystem({ iOS: ios, tvOS: tvos }, MOBILE_DEVICES.systemOf), now);
    const systems = new Set<string>();
    list.forEach((device, index) => {
      const record = records[index]!;
      const reference = record.device_type === 'iOS' ? ios : record.device_type === 'tvOS' ? tvos : undefined;
      systems.add(`${record.device_type}:${'os_missing_releases' in device}`);
      const expected =
        reference === undefined
          ? { os_is_latest: false }
          : osFieldsOf(
              reference.assess({
                osVersion: record.os_version,
                response: record.os_rapid_security_response,
                boardId: undefined,
                modelIdentifier: record.model_identifier?.toLowerCase(),
              }),
              now,
            );
      expect(osFieldsOfServed(device), `device ${device.id}`).toEqual(expected);
    });
    expect([...systems].filter((entry) => entry.endsWith(':true')).sort()).toEqual(['iOS:true', 'tvOS:true']);
  });
});
