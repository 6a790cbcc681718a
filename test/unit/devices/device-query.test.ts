import fc from 'fast-check';
import { buildComputerSnapshot } from '../../support/snapshot-devices.ts';
import { describe, expect, it } from 'vitest';
import { validate } from '../../../lib/devices/device-query.generated.ts';
import {
  COMPUTER_QUERY,
  deviceListEtag,
  filterMatches,
  isInstant,
  nextPageLink,
  selectPage,
  typeQueryOf,
  type DeviceQuery,
} from '../../../lib/devices/device-query.ts';
import type { DeviceSnapshot } from '../../../lib/devices/device-snapshot.ts';
import {} from '../../../lib/devices/build-snapshot.ts';
import { decideLatest, decisionsAt, everyDevice, type DecisionsAt } from '../../../lib/devices/decide-latest.ts';
import { toErrorDetails } from '../../../lib/http/error-envelope.ts';
import { fixedReference } from '../../../lib/latest-os/latest-reference.ts';
import { generateJamfComputers } from '../../../demo/fake-jamf.ts';
import { mapComputer } from '../../support/inventory-records.ts';

/** GET /devices' query typed for its schema, as its route types it. */
const typeDeviceQuery = typeQueryOf(COMPUTER_QUERY);

const devices = generateJamfComputers(400, 31).map((record) => mapComputer(record)!);
const snapshot = buildComputerSnapshot(devices, 0);
const decided = decisionsAt(decideLatest(snapshot, everyDevice(fixedReference('26.1'))), 0);
const { flags } = decided.decisions;

/** A page the way device-list.ts selects it: the filter's matches, then the page. */
const selectDevices = (from: DeviceSnapshot, at: DecisionsAt, query: DeviceQuery) =>
  selectPage(from, filterMatches(from, at, query, COMPUTER_QUERY), query);

/** What a query selects, decided device by device from the devices themselves. */
const matching = (query: DeviceQuery) =>
  devices.filter((device, index) => {
    if (query.os_is_latest !== undefined && (flags[index] === 1) !== query.os_is_latest) return false;
    if (query.managed !== undefined && device.managed !== query.managed) return false;
    if (query.supervised !== undefined && device.supervised !== query.supervised) return false;
    if (query.os_name !== undefined && device.os_name?.toLowerCase() !== query.os_name.toLowerCase()) return false;
    if (query.model_identifier !== undefined && device.model_identifier?.toLowerCase() !== query.model_identifier.toLowerCase())
      return false;
    if (query.last_contact_before !== undefined) {
      const contact = device.last_contact_at === undefined ? Number.NaN : Date.parse(device.last_contact_at);
      if (!Number.isNaN(contact) && contact >= Date.parse(query.last_contact_before)) return false;
    }
    return true;
  });

const filters: fc.Arbitrary<DeviceQuery> = fc.record(
  {
    os_is_latest: fc.boolean(),
    managed: fc.boolean(),
    supervised: fc.boolean(),
    os_name: fc.constantFrom('macOS', 'MACOS', 'Windows'),
    model_identifier: fc.constantFrom('Mac14,2', 'mac15,4', 'Nope1,1'),
    last_contact_before: fc.constantFrom('2026-11-05T00:00:00Z', '2026-11-12T12:00:00+02:00', '2000-01-01T00:00:00Z'),
  },
  { requiredKeys: [] },
);

describe('selecting devices', () => {
  it('walks every matching device exactly once, in id order, page by page, for any filters and page size', () => {
    fc.assert(
      fc.property(filters, fc.integer({ min: 1, max: 120 }), (query, limit) => {
        const expected = matching(query).map((device) => device.id);
        const seen: string[] = [];
        let after: string | undefined;
        for (let page = 0; page < 1_000; page += 1) {
          const selection = selectDevices(snapshot, decided, { ...query, limit, ...(after === undefined ? {} : { after }) });
          expect(selection.total).toBe(expected.length);
          expect(selection.indexes.length).toBeLessThanOrEqual(limit);
          seen.push(...selection.indexes.map((index) => snapshot.ids[index]!));
          if (selection.nextAfter === undefined) break;
          expect(selection.indexes.length).toBe(limit);
          after = selection.nextAfter;
        }
        expect(seen).toEqual(expected);
      }),
      { numRuns: 80 },
    );
  });

  it('gives the whole list without a limit, and no next cursor', () => {
    const selection = selectDevices(snapshot, decided, {});
    expect(selection.indexes).toHaveLength(devices.length);
    expect(selection.total).toBe(devices.length);
    expect(selection.nextAfter).toBeUndefined();
  });

  it('gives an empty page after the last id, with the total of every page', () => {
    const selection = selectDevices(snapshot, decided, { limit: 10, after: '99999999999999999999999' });
    expect(selection).toEqual({ indexes: [], total: devices.length, nextAfter: undefined });
  });

  it('compares the cursor as a number: 0009 is 9, and ids far beyond 2^53 order exactly', () => {
    const big = buildComputerSnapshot([{ id: '9' }, { id: '10' }, { id: '9007199254740993' }, { id: '90071992547409930' }], 0);
    const noFlags = decisionsAt(decideLatest(big, everyDevice(fixedReference(undefined))), 0);
    expect(selectDevices(big, noFlags, { after: '0009' }).indexes).toEqual([1, 2, 3]);
    expect(selectDevices(big, noFlags, { after: '9007199254740992' }).indexes).toEqual([2, 3]);
  });

  it('matches names case-insensitively and exactly, and finds nothing for an unknown value', () => {
    expect(selectDevices(snapshot, decided, { os_name: 'MACOS' }).total).toBe(
      devices.filter((device) => device.os_name === 'macOS').length,
    );
    expect(selectDevices(snapshot, decided, { os_name: 'mac' }).total).toBe(0);
  });

  it('counts devices without a last contact among those not heard from before the instant', () => {
    const sparse = buildComputerSnapshot(
      [{ id: '1', last_contact_at: '2026-11-01T00:00:00Z' }, { id: '2' }, { id: '3', last_contact_at: '2026-12-01T00:00:00Z' }],
      0,
    );
    expect(
      selectDevices(sparse, decisionsAt(decideLatest(sparse, everyDevice(fixedReference(undefined))), 0), {
        last_contact_before: '2026-11-15T00:00:00Z',
      }).indexes,
    ).toEqual([0, 1]);
  });
});

describe('the next link and the ETag', () => {
  it('writes the next link relative, with the same filters and limit and the new cursor last', () => {
    expect(nextPageLink({ limit: 2, managed: true, os_name: 'Mac OS X', after: '5' }, '17', COMPUTER_QUERY)).toBe(
      '</devices?limit=2&managed=true&os_name=Mac%20OS%20X&after=17>; rel="next"',
    );
  });

  it('changes the ETag with the devices, the reference, the due dates passed, the view and the query, and only with them', () => {
    const state = { snapshotId: 'snapshot-a', referenceKey: 'fixed:26.1', epoch: 0 };
    const base = deviceListEtag(state, 'list', { limit: 10 }, COMPUTER_QUERY);
    expect(base).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(deviceListEtag({ ...state }, 'list', { limit: 10 }, COMPUTER_QUERY)).toBe(base);
    expect(deviceListEtag({ ...state, snapshotId: 'snapshot-b' }, 'list', { limit: 10 }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag({ ...state, referenceKey: 'fixed:26.2' }, 'list', { limit: 10 }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag({ ...state, epoch: 1 }, 'list', { limit: 10 }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag(state, 'summary', { limit: 10 }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag(state, 'list', { limit: 10, after: '3' }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag(state, 'list', { limit: 11 }, COMPUTER_QUERY)).not.toBe(base);
    expect(deviceListEtag(state, 'list', { limit: 10, os_overdue: true }, COMPUTER_QUERY)).not.toBe(base);
  });
});

describe('instants in last_contact_before', () => {
  /** Which of two devices, last heard from 1 ms before `at` ("1") and at `at` ("2"), were last heard from before `text`. */
  const heardFromBefore = (text: string, at: number): string[] => {
    const pair = buildComputerSnapshot(
      [
        { ...devices[0]!, id: '1', last_contact_at: new Date(at - 1).toISOString() },
        { ...devices[1]!, id: '2', last_contact_at: new Date(at).toISOString() },
      ],
      0,
    );
    const selection = selectDevices(pair, decisionsAt(decideLatest(pair, everyDevice(fixedReference('26.1'))), 0), {
      last_contact_before: text,
    });
    return selection.indexes.map((index) => pair.ids[index]!);
  };

  it.each([
    ['2026-11-01T00:00:00Z', Date.UTC(2026, 10, 1)],
    ['2026-11-01T02:30:00+02:30', Date.UTC(2026, 10, 1)],
    ['2026-11-01T00:00:00.250Z', Date.UTC(2026, 10, 1) + 250],
    ['2026-10-31T19:00-05:00', Date.UTC(2026, 10, 1)],
    ['2026-11-01t00:00:00z', Date.UTC(2026, 10, 1)],
  ])('reads %s', (text, expected) => {
    expect(isInstant(text)).toBe(true);
    expect(heardFromBefore(text, expected)).toEqual(['1']);
  });

  it.each([
    '2026-11-01',
    '2026-11-01T00:00:00',
    '2026-02-30T00:00:00Z',
    '2026-11-01T24:00:00Z',
    '2026-11-01T10:60:00Z',
    '2026-11-01T00:00:00+24:00',
    'yesterday',
    '',
  ])('refuses %j', (text) => {
    expect(isInstant(text)).toBe(false);
  });
});

describe('the query schema (generated validator)', () => {
  const check = (parameters: Record<string, string>) => {
    const typed = typeDeviceQuery(parameters);
    return validate(typed) ? { valid: true, typed } : { valid: false, details: toErrorDetails(validate.errors) };
  };

  it('accepts every parameter at its bounds, typed', () => {
    expect(
      check({
        limit: '5000',
        after: '0',
        os_is_latest: 'false',
        managed: 'true',
        supervised: 'false',
        os_name: 'macOS',
        model_identifier: 'Mac14,2',
        last_contact_before: '2026-11-01T00:00:00Z',
      }),
    ).toEqual({
      valid: true,
      typed: {
        limit: 5000,
        after: '0',
        os_is_latest: false,
        managed: true,
        supervised: false,
        os_name: 'macOS',
        model_identifier: 'Mac14,2',
        last_contact_before: '2026-11-01T00:00:00Z',
      },
    });
    expect(check({ limit: '1' }).valid).toBe(true);
  });

  it('reads the space a bare + offset became in the URL as that +, and no other space', () => {
    expect(check({ last_contact_before: '2026-11-01T10:00:00 01:00' })).toEqual({
      valid: true,
      typed: { last_contact_before: '2026-11-01T10:00:00+01:00' },
    });
    expect(check({ last_contact_before: '2026-11-01T10:00:00.25 01:00' })).toEqual({
      valid: true,
      typed: { last_contact_before: '2026-11-01T10:00:00.25+01:00' },
    });
    expect(check({ last_contact_before: '2026-11-01 10:00:00Z' }).valid).toBe(false);
    expect(check({ last_contact_before: '2026-11-01T10:00:00  01:00' }).valid).toBe(false);
  });

  it.each([
    [{ limit: '0' }, '/limit'],
    [{ limit: '5001' }, '/limit'],
    [{ limit: 'abc' }, '/limit'],
    [{ limit: '1.5' }, '/limit'],
    [{ limit: '' }, '/limit'],
    [{ after: '-1' }, '/after'],
    [{ after: '12a' }, '/after'],
    [{ managed: 'yes' }, '/managed'],
    [{ os_is_latest: 'TRUE' }, '/os_is_latest'],
    [{ os_name: '' }, '/os_name'],
    [{ last_contact_before: '2026-11-01' }, '/last_contact_before'],
    [{ last_contact_before: '2026-02-30T00:00:00Z' }, '/last_contact_before'],
    [{ sort: 'id' }, '/sort'],
  ])('refuses %j naming %s', (parameters, path) => {
    const result = check(parameters);
    expect(result.valid).toBe(false);
    expect(result.details?.map((detail) => detail.path)).toEqual([path]);
  });
});
