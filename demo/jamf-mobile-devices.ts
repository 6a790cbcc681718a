import { seededRandom } from './jamf-computers.ts';

/**
 * Realistic Jamf Pro mobile device detail records (`/api/v2/mobile-devices/detail`) for the fake
 * inventory, tests and the local demo. No test-framework imports.
 *
 * The shapes follow Jamf's OpenAPI examples of the endpoint, odd corners included: `deviceType`
 * (`iOS` for iPhones and iPads, `tvOS` for Apple TVs, `Unknown` for a device Jamf could not type,
 * whose record has no `general` section at all); `userAndLocation.realName` and `emailAddress`
 * (not `realname` and `email` as on computers); `osRapidSecurityResponse` `"(a)"` with its
 * `osSupplementalBuildVersion`; empty strings and null fields. The proportions are made up to look
 * like a fleet a year into iOS 26 (docs/local-stack.md), not measured anywhere.
 */

/** A mobile device detail record (only the parts this service reads are typed). */
export type JamfMobileDevice = Record<string, unknown> & { mobileDeviceId: string };

interface MobileModel {
  model: string;
  /** The product type, as SOFA's iOS feed lists it in `SupportedDevices`. */
  modelIdentifier: string;
  deviceType: 'iOS' | 'tvOS';
  /** Which releases it runs: the newest iPhones, models iOS 26 dropped, or an Apple TV. */
  line: 'current' | 'older' | 'tv';
  /** Shipped with iOS 26: never on an older major. */
  shippedWith26?: true;
}

const MODELS: readonly MobileModel[] = [
  { model: 'iPhone 17 Pro', modelIdentifier: 'iPhone18,1', deviceType: 'iOS', line: 'current', shippedWith26: true },
  { model: 'iPhone 17', modelIdentifier: 'iPhone18,3', deviceType: 'iOS', line: 'current', shippedWith26: true },
  { model: 'iPhone 16 Pro', modelIdentifier: 'iPhone17,1', deviceType: 'iOS', line: 'current' },
  { model: 'iPhone 16', modelIdentifier: 'iPhone17,3', deviceType: 'iOS', line: 'current' },
  { model: 'iPhone 15', modelIdentifier: 'iPhone15,4', deviceType: 'iOS', line: 'current' },
  { model: 'iPhone 11', modelIdentifier: 'iPhone12,1', deviceType: 'iOS', line: 'current' },
  { model: 'iPad (A16)', modelIdentifier: 'iPad15,7', deviceType: 'iOS', line: 'current' },
  { model: 'iPad Air 11-inch (M2)', modelIdentifier: 'iPad14,8', deviceType: 'iOS', line: 'current' },
  { model: 'iPad (10th generation)', modelIdentifier: 'iPad13,18', deviceType: 'iOS', line: 'current' },
  // Models iOS 26 dropped: on 18, where the device-specific 18.7.10 is theirs alone.
  { model: 'iPhone XS', modelIdentifier: 'iPhone11,2', deviceType: 'iOS', line: 'older' },
  { model: 'iPhone XR', modelIdentifier: 'iPhone11,8', deviceType: 'iOS', line: 'older' },
  { model: 'iPad 7th Generation (Wi-Fi)', modelIdentifier: 'iPad7,11', deviceType: 'iOS', line: 'older' },
  { model: 'Apple TV 4K (3rd generation)', modelIdentifier: 'AppleTV14,1', deviceType: 'tvOS', line: 'tv' },
  { model: 'Apple TV 4K (2nd generation)', modelIdentifier: 'AppleTV11,1', deviceType: 'tvOS', line: 'tv' },
];

interface MobileRelease {
  weight: number;
  version: string;
  build: string;
  response?: { level: string; supplementalBuild: string };
}

// Per line of models; the share leans to each major's newest release.
const RELEASES: Readonly<Record<MobileModel['line'], readonly MobileRelease[]>> = {
  current: [
    { weight: 30, version: '26.6.1', build: '23G93' },
    { weight: 8, version: '26.6', build: '23G80' },
    { weight: 5, version: '26.5.1', build: '23F84' },
    { weight: 4, version: '26.3.1', build: '23D8133', response: { level: '(a)', supplementalBuild: '23D771330a' } },
    { weight: 10, version: '18.7.8', build: '22H340' },
    { weight: 3, version: '18.6.2', build: '22G100' },
  ],
  older: [
    { weight: 10, version: '18.7.10', build: '22H360' },
    { weight: 5, version: '18.7.8', build: '22H340' },
    { weight: 2, version: '17.7.10', build: '21H450' },
  ],
  tv: [
    { weight: 6, version: '26.0', build: '23J354' },
    { weight: 3, version: '18.6', build: '22M84' },
  ],
};

const FIRST_NAMES = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara', 'dennis', 'frances', 'alan', 'radia'];
const LAST_NAMES = ['lovelace', 'hopper', 'torvalds', 'hamilton', 'thompson', 'liskov', 'ritchie', 'allen', 'turing', 'perlman'];
const SERIAL_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
const HEX = '0123456789ABCDEF';

/**
 * `count` mobile device detail records with ascending numeric string ids (with gaps): the models and
 * releases above, Apple TVs among them (shared, no user), a share of sparse records, and now and
 * then (about 1 in 100) a device Jamf could not type: `deviceType` `Unknown` and no `general`.
 */
export const generateJamfMobileDevices = (count: number, seed = 7): JamfMobileDevice[] => {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (probability: number): boolean => random() < probability;
  const pickRelease = (releases: readonly MobileRelease[]): MobileRelease => {
    let left = random() * releases.reduce((sum, release) => sum + release.weight, 0);
    for (const release of releases) {
      left -= release.weight;
      if (left < 0) return release;
    }
    return releases[0]!;
  };
  const characters = (alphabet: string, length: number): string => Array.from({ length }, () => pick([...alphabet])).join('');
  const timestamp = (ms: number): string => {
    const text = new Date(ms).toISOString();
    return chance(0.2) ? text.replace(/\.\d{3}Z$/, 'Z') : text;
  };

  const devices: JamfMobileDevice[] = [];
  let id = 0;
  for (let index = 0; index < count; index += 1) {
    id += 1 + (chance(0.1) ? Math.floor(random() * 5) : 0);
    const hardware = pick(MODELS);
    const release = pickRelease(
      RELEASES[hardware.line].filter((candidate) => !hardware.shippedWith26 || candidate.version.startsWith('26.')),
    );
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const sparse = chance(0.1);
    const inventoryMs = Date.UTC(2026, 10, 1) + Math.floor(random() * 20 * 86_400_000);
    const serial = characters(SERIAL_CHARS, 10);
    const untyped = chance(0.01);
    const tv = hardware.deviceType === 'tvOS';
    const record: JamfMobileDevice = {
      mobileDeviceId: String(id),
      deviceType: untyped ? 'Unknown' : hardware.deviceType,
      hardware: {
        capacityMb: pick([65_536, 131_072, 262_144]),
        serialNumber: sparse && chance(0.3) ? '' : serial,
        wifiMacAddress: `ee:00:${characters(HEX, 2)}:${characters(HEX, 2)}:${characters(HEX, 2)}:${characters(HEX, 2)}`.toLowerCase(),
        model: hardware.model,
        modelIdentifier: hardware.modelIdentifier,
        modelNumber: `M${characters(SERIAL_CHARS, 5)}LL`,
        extensionAttributes: [],
      },
      userAndLocation:
        tv || (sparse && chance(0.5))
          ? {
              username: null,
              realName: null,
              emailAddress: '',
              position: null,
              phoneNumber: null,
              departmentId: null,
              buildingId: null,
              room: null,
              extensionAttributes: [],
            }
          : {
              username: `${first}.${last}`,
              realName: `${first} ${last}`,
              emailAddress: chance(0.9) ? `${first}.${last}@example.com` : '',
              position: null,
              phoneNumber: '',
              departmentId: '-1',
              buildingId: null,
              room: null,
              extensionAttributes: [],
            },
    };
    if (!untyped) {
      record.general = {
        udid: sparse && chance(0.3) ? null : `0000${characters(HEX, 4)}-${characters(HEX, 16)}`,
        displayName:
          sparse && chance(0.3) ? '' : tv ? `conference-room-${id}` : `${first}-${hardware.model.split(' ')[0]!.toLowerCase()}-${id}`,
        assetTag: chance(0.5) ? `AT-${id}` : null,
        siteId: '-1',
        lastInventoryUpdateDate: timestamp(inventoryMs),
        osVersion: sparse && chance(0.3) ? '' : release.version,
        osRapidSecurityResponse: release.response?.level ?? null,
        osBuild: release.build,
        osSupplementalBuildVersion: release.response?.supplementalBuild ?? release.build,
        ipAddress: `10.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
        managed: sparse && chance(0.3) ? null : chance(0.95),
        supervised: sparse && chance(0.3) ? null : chance(0.8),
        deviceOwnershipType: 'Institutional',
        lastEnrolledDate: new Date(inventoryMs - 200 * 86_400_000).toISOString(),
        timeZone: 'Europe/Warsaw',
        extensionAttributes: [],
      };
    }
    devices.push(record);
  }
  return devices;
};
