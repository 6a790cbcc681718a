import { describe, expect, it } from 'vitest';
import { generateJamfMobileDevices } from '../../../demo/jamf-mobile-devices.ts';
import { mapMobile } from '../../support/inventory-records.ts';

/** A record as Jamf's OpenAPI example of `/api/v2/mobile-devices/detail` writes it (sections trimmed). */
const EXAMPLE = {
  mobileDeviceId: '1',
  deviceType: 'iOS',
  hardware: {
    capacityMb: 100,
    serialNumber: '5c28fdae',
    model: 'iPad 7th Generation (Wi-Fi)',
    modelIdentifier: 'iPad7,11',
    modelNumber: 'MW742LL',
    extensionAttributes: [],
  },
  userAndLocation: {
    username: 'admin',
    realName: 'IT Bob',
    emailAddress: 'ITBob@jamf.com',
    position: 'IT Team Lead',
    phoneNumber: '555-555-5555',
    extensionAttributes: [],
  },
  general: {
    udid: '0dad565fb40b010a9e490440188063a378721069',
    displayName: 'Banezicron',
    assetTag: '8675309',
    siteId: '-1',
    lastInventoryUpdateDate: '2022-10-17T11:48:56.307Z',
    osVersion: '11.4',
    osRapidSecurityResponse: '(a)',
    osBuild: '15F79',
    osSupplementalBuildVersion: '22A103310o',
    softwareUpdateDeviceId: 'J132AP',
    managed: true,
    supervised: true,
  },
  security: null,
};

describe('mapMobileRecord', () => {
  it("maps Jamf's example record in the documented order: displayName, emailAddress, lastInventoryUpdateDate", () => {
    const device = mapMobile(EXAMPLE);
    expect(device).toEqual({
      id: '1',
      device_type: 'iOS',
      udid: '0dad565fb40b010a9e490440188063a378721069',
      name: 'Banezicron',
      serial_number: '5c28fdae',
      model: 'iPad 7th Generation (Wi-Fi)',
      model_identifier: 'iPad7,11',
      os_version: '11.4',
      os_build: '15F79',
      os_rapid_security_response: '(a)',
      last_inventory_at: '2022-10-17T11:48:56.307Z',
      username: 'admin',
      email: 'ITBob@jamf.com',
      managed: true,
      supervised: true,
    });
    expect(Object.keys(device!)).toEqual(
      Object.keys(device!).sort((a, b) => Object.keys(EXPECTED_ORDER).indexOf(a) - Object.keys(EXPECTED_ORDER).indexOf(b)),
    );
  });

  it('keeps what a device Jamf could not type has: no general section, so none of its fields', () => {
    const { general: _general, ...untyped } = { ...EXAMPLE, deviceType: 'Unknown' };
    expect(mapMobile(untyped)).toEqual({
      id: '1',
      device_type: 'Unknown',
      serial_number: '5c28fdae',
      model: 'iPad 7th Generation (Wi-Fi)',
      model_identifier: 'iPad7,11',
      username: 'admin',
      email: 'ITBob@jamf.com',
    });
  });

  it("leaves out empty, blank, null and mistyped values and null sections, and never reads a computer's field names", () => {
    const record = {
      mobileDeviceId: 42,
      deviceType: '',
      hardware: null,
      userAndLocation: { username: ' ', realname: 'IT Bob', email: 'bob@example.com', emailAddress: null },
      general: {
        displayName: null,
        name: 'not-the-mobile-field',
        osVersion: 26,
        managed: 'true',
        supervised: false,
        reportDate: '2026-01-01T00:00:00Z',
      },
    };
    expect(mapMobile(record)).toEqual({ id: '42', supervised: false });
  });

  it("refuses a record without a usable mobileDeviceId (a computer's `id` is not one)", () => {
    expect(mapMobile({ ...EXAMPLE, mobileDeviceId: undefined, id: '1' })).toBeUndefined();
    expect(mapMobile({ ...EXAMPLE, mobileDeviceId: '-1' })).toBeUndefined();
    expect(mapMobile(null)).toBeUndefined();
  });

  it('maps every generated demo record with its id, typed or not', () => {
    const records = generateJamfMobileDevices(2_000, 3);
    const devices = records.map((record) => mapMobile(record));
    expect(devices.every((device, index) => device?.id === records[index]!.mobileDeviceId)).toBe(true);
    expect(new Set(devices.map((device) => device!.device_type))).toEqual(new Set(['iOS', 'tvOS', 'Unknown']));
    expect(generateJamfMobileDevices(300, 3)).toEqual(records.slice(0, 300));
  });
});

const EXPECTED_ORDER = {
  id: 0,
  device_type: 0,
  udid: 0,
  name: 0,
  serial_number: 0,
  model: 0,
  model_identifier: 0,
  os_version: 0,
  os_build: 0,
  os_rapid_security_response: 0,
  last_inventory_at: 0,
  username: 0,
  email: 0,
  managed: 0,
  supervised: 0,
};
