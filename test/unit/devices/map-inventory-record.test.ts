import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generalAs, generateJamfComputers } from '../../../demo/fake-jamf.ts';
import { mapComputer } from '../../support/inventory-records.ts';

const FIELD_ORDER = [
  'id',
  'udid',
  'name',
  'serial_number',
  'model',
  'model_identifier',
  'os_name',
  'os_version',
  'os_build',
  'os_rapid_security_response',
  'last_contact_at',
  'last_inventory_at',
  'username',
  'email',
  'supervised',
  'managed',
  // Read for the latest-OS decision, never served.
  'board_id',
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
  operatingSystem: {
    name: 'macOS',
    version: '26.3.1',
    build: '25D2128',
    supplementalBuildVersion: '25D771280a',
    rapidSecurityResponse: '(a)',
    softwareUpdateDeviceId: 'J414sAP',
  },
  userAndLocation: { username: 'ada', email: 'ada@example.com', realname: 'Ada' },
  diskEncryption: null,
};

const isOrderedSubsequence = (keys: string[], order: string[]) => {
  const positions = keys.map((key) => order.indexOf(key));
  return positions.every((position, index) => position >= 0 && (index === 0 || position > positions[index - 1]!));
};

describe('mapInventoryRecord', () => {
  it('maps every field from its upstream path, in the documented order', () => {
    const device = mapComputer(fullRecord)!;
    expect(device).toEqual({
      id: '17',
      udid: '55900BDC-347C-58B1-D249-F32244B11D30',
      name: 'ada-macbook-17',
      serial_number: 'C02XYZ123',
      model: 'MacBook Pro (14-inch, 2023)',
      model_identifier: 'Mac14,5',
      os_name: 'macOS',
      os_version: '26.3.1',
      os_build: '25D2128',
      os_rapid_security_response: '(a)',
      last_contact_at: '2026-11-20T09:15:00Z',
      last_inventory_at: '2026-11-19T22:00:00Z',
      username: 'ada',
      email: 'ada@example.com',
      supervised: true,
      managed: false,
      board_id: 'J414sAP',
    });
    expect(Object.keys(device)).toEqual(FIELD_ORDER);
  });

  it('takes last_contact_at from general.lastContact when lastContactTime is absent (newer API)', () => {
    const record = { id: '1', general: { lastContact: '2026-11-21T08:00:00Z' } };
    expect(mapComputer(record)).toEqual({ id: '1', last_contact_at: '2026-11-21T08:00:00Z' });
  });

  it('prefers general.lastContactTime over general.lastContact', () => {
    const record = { id: '1', general: { lastContactTime: '2026-01-01T00:00:00Z', lastContact: '2026-02-02T00:00:00Z' } };
    expect(mapComputer(record)?.last_contact_at).toBe('2026-01-01T00:00:00Z');
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
    expect(mapComputer(record)).toEqual({ id: '5', username: 'x' });
  });

  it('keeps false booleans, which are values', () => {
    const record = { id: '5', general: { supervised: false, remoteManagement: { managed: false } } };
    expect(mapComputer(record)).toEqual({ id: '5', supervised: false, managed: false });
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
    expect(mapComputer(record)).toEqual({ id: '9' });
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
    expect(mapComputer(record)).toBeUndefined();
  });

  it('keeps the id as Jamf sent it', () => {
    expect(mapComputer({ id: '12345678901234567890' })?.id).toBe('12345678901234567890');
  });

  it('never emits null or empty strings and keeps the key order for generated sparse records', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (seed) => {
        for (const record of generateJamfComputers(30, seed)) {
          const device = mapComputer(record)!;
          const values = Object.values(device);
          if (values.some((value) => value === null || value === '')) return false;
          if (!isOrderedSubsequence(Object.keys(device), FIELD_ORDER)) return false;
        }
        return true;
      }),
      { numRuns: 30 },
    );
  });

  it('maps what generated records carry: every new shape, never null or empty', () => {
    const devices = generateJamfComputers(4000, 3).map((record) => mapComputer(record)!);
    const some = (test: (device: ReturnType<typeof mapComputer> & object) => boolean) => devices.some(test);
    expect(some((device) => device.os_rapid_security_response === '(a)')).toBe(true);
    expect(some((device) => device.os_name === 'Mac OS X' && device.os_version === '10.9.5')).toBe(true);
    expect(some((device) => /^\d+\.\d+\.0$/.test(device.os_version ?? ''))).toBe(true);
    expect(some((device) => /\.\d{3}Z$/.test(device.last_contact_at ?? ''))).toBe(true);
    expect(some((device) => /:\d{2}Z$/.test(device.last_contact_at ?? ''))).toBe(true);
    expect(some((device) => device.name === undefined && device.last_contact_at === undefined)).toBe(true);
    expect(some((device) => device.last_contact_at !== undefined && device.managed === undefined)).toBe(true);
  });
});

/**
 * Records as real Jamf Pro servers send them, trimmed to what the mapping reads and a little
 * around it: Jamf's own OpenAPI example, a real 11.31 record of the v4 inventory, a real 11.23
 * record, a list response's record whose general section is null, and one of the Jamf SDK's
 * records with sections absent altogether.
 */
describe('mapInventoryRecord on real record shapes', () => {
  it("maps Jamf's own example: Mac OS X 10.9.5 with a response applied, a udid that is no UUID, a 12-character serial", () => {
    const record = {
      id: '1',
      udid: '123',
      general: {
        name: 'Boalime',
        platform: 'Mac',
        remoteManagement: { managed: true },
        supervised: true,
        reportDate: '2018-10-31T18:04:13Z',
        lastContactTime: '2018-10-31T18:04:13Z',
        initialEntryDate: '2018-10-31',
      },
      hardware: {
        make: 'Apple',
        model: '13-inch MacBook Pro (Mid 2012)',
        modelIdentifier: 'MacBookPro9,2',
        serialNumber: 'C02ZC2QYLVDL',
        appleSilicon: false,
      },
      operatingSystem: {
        name: 'Mac OS X',
        version: '10.9.5',
        build: '13A603',
        supplementalBuildVersion: '13A953',
        rapidSecurityResponse: '(a)',
        activeDirectoryStatus: 'Not Bound',
        softwareUpdateDeviceId: 'J132AP',
      },
      userAndLocation: { username: 'Madison Anderson', realname: '13-inch MacBook', email: 'email@com.pl', departmentId: '1' },
    };
    const device = mapComputer(record)!;
    expect(device).toEqual({
      id: '1',
      udid: '123',
      name: 'Boalime',
      serial_number: 'C02ZC2QYLVDL',
      model: '13-inch MacBook Pro (Mid 2012)',
      model_identifier: 'MacBookPro9,2',
      os_name: 'Mac OS X',
      os_version: '10.9.5',
      os_build: '13A603',
      os_rapid_security_response: '(a)',
      last_contact_at: '2018-10-31T18:04:13Z',
      last_inventory_at: '2018-10-31T18:04:13Z',
      username: 'Madison Anderson',
      email: 'email@com.pl',
      supervised: true,
      managed: true,
      board_id: 'J132AP',
    });
    expect(Object.keys(device)).toEqual(FIELD_ORDER);
  });

  const v4General = {
    name: 'Loon’s Mac mini',
    jamfBinaryVersion: '11.31.1-t1787060595569',
    platform: 'Mac',
    barcode1: null,
    assetTag: null,
    supervised: true,
    reportDate: '2026-08-21T21:44:27.626Z',
    lastCheckIn: '2026-08-22T13:34:03.591Z',
    lastContact: '2026-08-22T13:47:30.592Z',
    lastCloudBackupDate: null,
    initialEntryDate: '2025-11-13',
    declarativeDeviceManagementEnabled: true,
  };
  const v4Record = {
    id: '3',
    udid: 'A1B2C3D4-0000-4000-8000-0000000000A3',
    general: { ...v4General, remoteManagement: { managed: true, managementUsername: null } },
    hardware: { make: 'Apple', model: 'Mac mini (2024) M4', modelIdentifier: 'Mac16,10', serialNumber: 'LOONMINI0M4', appleSilicon: true },
    operatingSystem: {
      name: 'macOS',
      version: '27.0',
      build: '26A5378n',
      supplementalBuildVersion: '26A5378n',
      rapidSecurityResponse: null,
    },
    userAndLocation: {
      username: null,
      realname: null,
      email: null,
      position: null,
      phone: null,
      departmentId: null,
      buildingId: null,
      room: null,
      extensionAttributes: [],
    },
  };

  it('maps a v4 record: lastContact (not lastCheckIn) with milliseconds, a null response, a user section of nulls', () => {
    expect(mapComputer(v4Record)).toEqual({
      id: '3',
      udid: 'A1B2C3D4-0000-4000-8000-0000000000A3',
      name: 'Loon’s Mac mini',
      serial_number: 'LOONMINI0M4',
      model: 'Mac mini (2024) M4',
      model_identifier: 'Mac16,10',
      os_name: 'macOS',
      os_version: '27.0',
      os_build: '26A5378n',
      last_contact_at: '2026-08-22T13:47:30.592Z',
      last_inventory_at: '2026-08-21T21:44:27.626Z',
      supervised: true,
      managed: true,
    });
  });

  it('ignores lastCheckIn: a v4 record with no contact time has no last_contact_at', () => {
    const { lastContact: _lastContact, ...checkedInOnly } = v4General;
    for (const general of [checkedInOnly, { ...v4General, lastContact: null }, { ...v4General, lastContact: '' }]) {
      const device = mapComputer({ ...v4Record, general })!;
      expect(device).not.toHaveProperty('last_contact_at');
      expect(Object.values(device)).not.toContain(v4General.lastCheckIn);
    }
  });

  it('maps a record the same whichever version served it (v4 lastContact, v3 lastContactTime)', () => {
    for (const record of generateJamfComputers(500, 8)) {
      const servedBy = (personality: 'current' | 'legacy') => mapComputer({ ...record, general: generalAs(personality, record.general) });
      expect(servedBy('current')).toEqual(servedBy('legacy'));
    }
  });

  it('omits managed for a v4 record without remoteManagement, keeping everything else', () => {
    const { managed, ...rest } = mapComputer(v4Record)!;
    expect(managed).toBe(true);
    expect(mapComputer({ ...v4Record, general: v4General })).toEqual(rest);
  });

  it('keeps a version with a trailing .0 as sent, with a 10-character serial', () => {
    const record = {
      id: '958',
      udid: 'B5B94226-E80F-5CD4-9A7C-B8BE6067741D',
      general: {
        name: 'C02XX0000XXX',
        remoteManagement: { managed: true, managementUsername: null },
        supervised: true,
        reportDate: '2026-01-19T23:57:00.659Z',
        lastContactTime: '2026-01-19T23:55:32.937Z',
        lastEnrolledDate: '2025-12-16T15:50:57Z',
      },
      hardware: { make: 'Apple', model: 'Mac Studio', modelIdentifier: 'Mac13,2', serialNumber: 'LYFGQ7J7JQ' },
      operatingSystem: {
        name: 'macOS',
        version: '15.2.0',
        build: '24C101',
        supplementalBuildVersion: '24C101',
        rapidSecurityResponse: null,
        activeDirectoryStatus: 'example.org',
      },
      userAndLocation: { username: 'testuser', realname: 'Test User', email: 'testuser@example.org' },
    };
    expect(mapComputer(record)).toMatchObject({
      serial_number: 'LYFGQ7J7JQ',
      os_version: '15.2.0',
      os_build: '24C101',
      last_contact_at: '2026-01-19T23:55:32.937Z',
      last_inventory_at: '2026-01-19T23:57:00.659Z',
    });
    expect(mapComputer(record)).not.toHaveProperty('os_rapid_security_response');
  });

  it('maps a list record whose general section is null from its other sections', () => {
    const record = {
      id: '4',
      udid: 'DBAEF5A6-82D5-5327-A480-A904F42F3F98',
      general: null,
      hardware: null,
      operatingSystem: null,
      userAndLocation: {
        username: 'jane.doe',
        realname: 'Jane Doe',
        email: 'jane.doe@jamf.com',
        position: 'Contractor',
        departmentId: '1',
      },
    };
    expect(mapComputer(record)).toEqual({
      id: '4',
      udid: 'DBAEF5A6-82D5-5327-A480-A904F42F3F98',
      username: 'jane.doe',
      email: 'jane.doe@jamf.com',
    });
  });

  it('maps a record with sections absent altogether, as with null ones', () => {
    const record = {
      id: '42',
      udid: 'AAAA-BBBB-CCCC',
      general: {
        name: 'Test Mac',
        platform: 'Mac',
        remoteManagement: { managed: true, managementUsername: 'admin' },
        site: { id: '1', name: 'Main Site' },
      },
      hardware: { make: 'Apple', model: 'MacBook Pro', serialNumber: 'C02XYZ123456', appleSilicon: true },
    };
    expect(mapComputer(record)).toEqual({
      id: '42',
      udid: 'AAAA-BBBB-CCCC',
      name: 'Test Mac',
      serial_number: 'C02XYZ123456',
      model: 'MacBook Pro',
      managed: true,
    });
    expect(mapComputer({ ...record, operatingSystem: null, userAndLocation: null })).toEqual(mapComputer(record));
  });
});
