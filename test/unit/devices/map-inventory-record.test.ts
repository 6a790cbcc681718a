import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapInventoryRecord } from '../../../lib/devices/map-inventory-record.ts';
import { generateJamfComputers } from '../../../demo/fake-jamf.ts';

const FIELD_ORDER = [
  'id', 'udid', 'name', 'serial_number', 'model', 'model_identifier', 'os_name', 'os_version', 'os_build',
  'last_contact_at', 'last_inventory_at', 'username', 'email', 'supervised', 'managed',
];

const fullRecord = {
  id: '17',
  udid: '55900BDC-347C-58B1-D249-F32244B11D30',
  general: {
    name: 'ada-macbook-17',
    lastContactTime: '2026-11-20T09:15:00Z',
    reportDate: '2026-11-19T22:00:00Z',
    supervised: true,
    remoteManagement: { managed: false, managementUsername: 'jamfadmin' },
    platform: 'Mac',
  },
  hardware: { make: 'Apple', model: 'MacBook Pro (14-inch, 2023)', modelIdentifier: 'Mac14,5', serialNumber: 'C02XYZ123' },
  operatingSystem: { name: 'macOS', version: '26.0 (25A354)', build: '25A354' },
  userAndLocation: { username: 'ada', email: 'ada@example.com', realname: 'Ada' },
  diskEncryption: null,
};

const isOrderedSubsequence = (keys: string[], order: string[]) => {
  const positions = keys.map((key) => order.indexOf(key));
  return positions.every((position, index) => position >= 0 && (index === 0 || position > positions[index - 1]!));
};

describe('mapInventoryRecord', () => {
  it('maps every field from its upstream path, in the documented order', () => {
    const device = mapInventoryRecord(fullRecord)!;
    expect(device).toEqual({
      id: '17',
      udid: '55900BDC-347C-58B1-D249-F32244B11D30',
      name: 'ada-macbook-17',
      serial_number: 'C02XYZ123',
      model: 'MacBook Pro (14-inch, 2023)',
      model_identifier: 'Mac14,5',
      os_name: 'macOS',
      os_version: '26.0 (25A354)',
      os_build: '25A354',
      last_contact_at: '2026-11-20T09:15:00Z',
      last_inventory_at: '2026-11-19T22:00:00Z',
      username: 'ada',
      email: 'ada@example.com',
      supervised: true,
      managed: false,
    });
    expect(Object.keys(device)).toEqual(FIELD_ORDER);
  });

  it('takes last_contact_at from general.lastContact when lastContactTime is absent (newer API)', () => {
    const record = { id: '1', general: { lastContact: '2026-11-21T08:00:00Z' } };
    expect(mapInventoryRecord(record)).toEqual({ id: '1', last_contact_at: '2026-11-21T08:00:00Z' });
  });

  it('prefers general.lastContactTime over general.lastContact', () => {
    const record = { id: '1', general: { lastContactTime: '2026-01-01T00:00:00Z', lastContact: '2026-02-02T00:00:00Z' } };
    expect(mapInventoryRecord(record)?.last_contact_at).toBe('2026-01-01T00:00:00Z');
  });

  it('omits null, absent and empty-string values instead of emitting null', () => {
    const record = {
      id: '5',
      udid: null,
      general: { name: '', supervised: null, remoteManagement: null, reportDate: '   ' },
      hardware: { serialNumber: '', model: null },
      operatingSystem: null,
      userAndLocation: { username: 'x', email: '' },
    };
    expect(mapInventoryRecord(record)).toEqual({ id: '5', username: 'x' });
  });

  it('keeps false booleans, which are values', () => {
    const record = { id: '5', general: { supervised: false, remoteManagement: { managed: false } } };
    expect(mapInventoryRecord(record)).toEqual({ id: '5', supervised: false, managed: false });
  });

  it('ignores unknown fields, unrequested sections and values of the wrong type', () => {
    const record = {
      id: '9',
      futureField: { anything: 1 },
      applications: [{ name: 'Safari' }],
      general: { name: 42, supervised: 'yes', remoteManagement: 'managed', newThing: 'x' },
      hardware: 'not an object',
      operatingSystem: ['macOS'],
    };
    expect(mapInventoryRecord(record)).toEqual({ id: '9' });
  });

  it.each([
    ['no id', { general: { name: 'x' } }],
    ['a null id', { id: null }],
    ['an empty id', { id: '' }],
    ['a non-numeric id', { id: 'abc' }],
    ['a negative id', { id: -3 }],
    ['a fractional id', { id: 1.5 }],
    ['a record that is not an object', 'record'],
    ['null', null],
    ['an array', [{ id: '1' }]],
  ])('drops a record with %s', (_label, record) => {
    expect(mapInventoryRecord(record)).toBeUndefined();
  });

  it('keeps the id as Jamf sent it', () => {
    expect(mapInventoryRecord({ id: '12345678901234567890' })?.id).toBe('12345678901234567890');
  });

  it('never emits null or empty strings and keeps the key order for generated sparse records', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (seed) => {
        for (const record of generateJamfComputers(30, seed)) {
          const device = mapInventoryRecord(record)!;
          const values = Object.values(device);
          if (values.some((value) => value === null || value === '')) return false;
          if (!isOrderedSubsequence(Object.keys(device), FIELD_ORDER)) return false;
        }
        return true;
      }),
      { numRuns: 30 },
    );
  });
});
