/**
 * Realistic Jamf Pro computers-inventory records for the fake inventory, tests, benchmarks and the
 * local demo. No test-framework imports.
 *
 * The shapes are copied from public records (Jamf's own OpenAPI example, real records published as
 * test fixtures, the Jamf SDKs' fixtures), odd corners included: versions with and without a
 * trailing `.0` (the Jamf binary reports `15.2.0`, Declarative Device Management `15.2`);
 * `rapidSecurityResponse` `"(a)"` or null with its `supplementalBuildVersion`; `Mac OS X` on old
 * Macs; timestamps with and without milliseconds; `general: null`; sections absent from a record;
 * the v4 `general` (`lastCheckIn` and `lastContact`, no `lastContactTime`, here also without
 * `remoteManagement`); udids that are not UUIDs; 10- and 12-character serials. The proportions are
 * made up to look like a fleet a year into macOS 26 (docs/local-stack.md), not measured anywhere.
 */

/** A computers-inventory record in the Jamf Pro API shape (only the parts this service reads are typed). */
export type JamfComputer = Record<string, unknown> & { id: string };

/** A small seeded PRNG (mulberry32), so generated inventories are the same on every run. */
export const seededRandom = (seed: number) => {
  let state = seed >>> 0;
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

interface Model {
  model: string;
  modelIdentifier: string;
  /** Intel Macs carry 12-character serials (`C02ZC2QYLVDL`), Apple silicon 10 randomized ones. */
  serialLength: 10 | 12;
  architecture: 'arm64' | 'x86_64' | 'i386';
  softwareUpdateDeviceId: string;
}

const MODELS: readonly Model[] = [
  {
    model: 'MacBook Air (M2, 2022)',
    modelIdentifier: 'Mac14,2',
    serialLength: 10,
    architecture: 'arm64',
    softwareUpdateDeviceId: 'J413AP',
  },
  {
    model: 'MacBook Pro (14-inch, 2023)',
    modelIdentifier: 'Mac14,5',
    serialLength: 10,
    architecture: 'arm64',
    softwareUpdateDeviceId: 'J414sAP',
  },
  { model: 'Mac mini (M2, 2023)', modelIdentifier: 'Mac14,3', serialLength: 10, architecture: 'arm64', softwareUpdateDeviceId: 'J473AP' },
  {
    model: 'iMac (24-inch, M3, 2023)',
    modelIdentifier: 'Mac15,4',
    serialLength: 10,
    architecture: 'arm64',
    softwareUpdateDeviceId: 'J433AP',
  },
  {
    model: 'MacBook Air (13-inch, M4, 2025)',
    modelIdentifier: 'Mac16,12',
    serialLength: 10,
    architecture: 'arm64',
    softwareUpdateDeviceId: 'J713AP',
  },
  { model: 'Mac mini (2024) M4', modelIdentifier: 'Mac16,10', serialLength: 10, architecture: 'arm64', softwareUpdateDeviceId: 'J773gAP' },
  { model: 'Mac Studio', modelIdentifier: 'Mac13,2', serialLength: 10, architecture: 'arm64', softwareUpdateDeviceId: 'J375dAP' },
  {
    model: 'MacBook Pro (16-inch, 2019)',
    modelIdentifier: 'MacBookPro16,1',
    serialLength: 12,
    architecture: 'x86_64',
    softwareUpdateDeviceId: 'J152FAP',
  },
];
/** Jamf's own example Mac: Mac OS X 10.9.5 with a response applied. */
const OLD_MODEL: Model = {
  model: '13-inch MacBook Pro (Mid 2012)',
  modelIdentifier: 'MacBookPro9,2',
  serialLength: 12,
  architecture: 'i386',
  softwareUpdateDeviceId: 'J132AP',
};

interface OsRelease {
  /** Relative share of the fleet. */
  weight: number;
  name: 'macOS' | 'Mac OS X';
  /** As Declarative Device Management reports it; the Jamf binary adds `.0` to two-part versions. */
  version: string;
  build: string;
  /** A Rapid Security Response / Background Security Improvement applied, with its supplemental build. */
  response?: { level: string; supplementalBuild: string };
  /** Only on old Intel Macs. */
  intelOnly?: boolean;
}

// Versions and builds as Apple shipped them; the share leans to the newest of each major.
const OS_RELEASES: readonly OsRelease[] = [
  { weight: 30, name: 'macOS', version: '26.6.2', build: '25G83' },
  { weight: 10, name: 'macOS', version: '26.6.1', build: '25G76' },
  { weight: 7, name: 'macOS', version: '26.6', build: '25G72' },
  { weight: 4, name: 'macOS', version: '26.3.1', build: '25D2128', response: { level: '(a)', supplementalBuild: '25D771280a' } },
  { weight: 2, name: 'macOS', version: '26.3.1', build: '25D2128' },
  { weight: 2, name: 'macOS', version: '26.0', build: '25A354' },
  { weight: 1, name: 'macOS', version: '27.0', build: '26A5378n' },
  { weight: 14, name: 'macOS', version: '15.7.9', build: '24G830' },
  { weight: 4, name: 'macOS', version: '15.7', build: '24G222' },
  { weight: 3, name: 'macOS', version: '15.2', build: '24C101' },
  { weight: 6, name: 'macOS', version: '14.8.9', build: '23J631' },
  { weight: 2, name: 'macOS', version: '14.8', build: '23J21' },
  { weight: 3, name: 'macOS', version: '13.7.8', build: '22H730', intelOnly: true },
  {
    weight: 1,
    name: 'macOS',
    version: '13.4.1',
    build: '22F82',
    response: { level: '(c)', supplementalBuild: '22F770820d' },
    intelOnly: true,
  },
  { weight: 1, name: 'macOS', version: '12.7.6', build: '21H1320', intelOnly: true },
];
const TOTAL_WEIGHT = OS_RELEASES.reduce((sum, release) => sum + release.weight, 0);

const FIRST_NAMES = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara', 'dennis', 'frances', 'alan', 'radia'];
const LAST_NAMES = ['lovelace', 'hopper', 'torvalds', 'hamilton', 'thompson', 'liskov', 'ritchie', 'allen', 'turing', 'perlman'];
const SERIAL_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
const HEX = '0123456789ABCDEF';

/**
 * `count` realistic computers-inventory records with ascending numeric string ids (with gaps): the
 * models and macOS releases above, the v3 `general` and the newer v4 one, and a share of sparse
 * records (null or absent sections, null fields, empty strings) as real fleets have. Every 400th
 * record or so is Jamf's own example Mac (`Mac OS X` 10.9.5 with `(a)`).
 */
export const generateJamfComputers = (count: number, seed = 42): JamfComputer[] => {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (probability: number): boolean => random() < probability;
  const pickRelease = (): OsRelease => {
    let left = random() * TOTAL_WEIGHT;
    for (const release of OS_RELEASES) {
      left -= release.weight;
      if (left < 0) return release;
    }
    return OS_RELEASES[0]!;
  };
  const characters = (alphabet: string, length: number): string => Array.from({ length }, () => pick([...alphabet])).join('');
  // Jamf writes most timestamps with milliseconds (`2026-08-22T13:47:30.592Z`), some without.
  const timestamp = (ms: number): string => {
    const text = new Date(ms).toISOString();
    return chance(0.2) ? text.replace(/\.\d{3}Z$/, 'Z') : text;
  };

  const computers: JamfComputer[] = [];
  let id = 0;
  for (let index = 0; index < count; index += 1) {
    id += 1 + (chance(0.1) ? Math.floor(random() * 5) : 0);
    const jamfExample = chance(0.0025);
    const release: OsRelease = jamfExample
      ? {
          weight: 0,
          name: 'Mac OS X',
          version: '10.9.5',
          build: '13A603',
          response: { level: '(a)', supplementalBuild: '13A953' },
          intelOnly: true,
        }
      : pickRelease();
    const hardware = jamfExample ? OLD_MODEL : release.intelOnly ? MODELS[MODELS.length - 1]! : pick(MODELS);
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const serial = hardware.serialLength === 12 ? `C02${characters(SERIAL_CHARS, 9)}` : characters(SERIAL_CHARS, 10);
    const contactMs = Date.UTC(2026, 10, 1) + Math.floor(random() * 20 * 86_400_000);
    const checkInMs = contactMs - Math.floor(random() * 3_600_000);
    const reportMs = contactMs - Math.floor(random() * 86_400_000);
    const sparse = chance(0.15);
    const v4 = chance(0.3);
    // The Jamf binary reports `15.2.0` and `26.0.0`, Declarative Device Management `15.2`.
    const version = !jamfExample && release.version.split('.').length === 2 && chance(0.4) ? `${release.version}.0` : release.version;
    const udid =
      sparse && chance(0.3)
        ? null
        : chance(0.01)
          ? chance(0.5)
            ? String(id)
            : `${characters(HEX, 4)}-${characters(HEX, 4)}-${characters(HEX, 4)}`
          : uuid(characters);

    const general = {
      name: sparse && chance(0.3) ? '' : `${first}-${hardware.model.split(' ')[0]!.toLowerCase()}-${id}`,
      lastIpAddress: `10.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
      jamfBinaryVersion: v4 ? '11.31.1-t1787060595569' : '11.23.2-t1765224413',
      platform: 'Mac',
      barcode1: null,
      assetTag: chance(0.5) ? `AT-${id}` : null,
      // v4 here: the management state is not in the record (docs/api.md: `managed` omitted).
      ...(v4
        ? {}
        : {
            remoteManagement:
              sparse && chance(0.3) ? null : { managed: chance(0.95), managementUsername: chance(0.5) ? 'jamfadmin' : null },
          }),
      supervised: sparse && chance(0.3) ? null : chance(0.8),
      reportDate: timestamp(reportMs),
      ...(v4
        ? { lastCheckIn: timestamp(checkInMs), lastContact: timestamp(contactMs) }
        : { lastContactTime: sparse && chance(0.3) ? null : timestamp(contactMs) }),
      lastEnrolledDate: new Date(contactMs - 200 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      initialEntryDate: new Date(contactMs - 400 * 86_400_000).toISOString().slice(0, 10),
      site: { id: '-1', name: 'None' },
      enrolledViaAutomatedDeviceEnrollment: chance(0.7),
      extensionAttributes: [],
    };
    const operatingSystem = {
      name: release.name,
      version: sparse && chance(0.3) ? '' : version,
      build: release.build,
      supplementalBuildVersion: release.response?.supplementalBuild ?? release.build,
      rapidSecurityResponse: release.response?.level ?? null,
      activeDirectoryStatus: chance(0.1) ? 'example.org' : 'Not Bound',
      fileVault2Status: pick(['ALL_ENCRYPTED', 'BOOT_ENCRYPTED']),
      softwareUpdateDeviceId: hardware.softwareUpdateDeviceId,
      extensionAttributes: [],
    };
    const record: JamfComputer = {
      id: String(id),
      udid,
      general: chance(0.01) ? null : general,
      hardware:
        sparse && chance(0.3)
          ? null
          : {
              make: 'Apple',
              model: hardware.model,
              modelIdentifier: hardware.modelIdentifier,
              serialNumber: sparse && chance(0.3) ? '' : serial,
              processorArchitecture: hardware.architecture,
              appleSilicon: hardware.architecture === 'arm64',
              totalRamMegabytes: pick([8192, 16384, 32768]),
              extensionAttributes: [],
            },
      operatingSystem: sparse && chance(0.2) ? null : operatingSystem,
      userAndLocation:
        sparse && chance(0.5)
          ? chance(0.5)
            ? null
            : {
                username: null,
                realname: null,
                email: null,
                position: null,
                phone: null,
                departmentId: null,
                buildingId: null,
                room: null,
                extensionAttributes: [],
              }
          : {
              username: `${first}.${last}`,
              realname: `${first} ${last}`,
              email: chance(0.9) ? `${first}.${last}@example.com` : '',
              position: null,
              phone: '',
              departmentId: '-1',
              buildingId: null,
              room: null,
              extensionAttributes: [],
            },
      diskEncryption: { fileVault2Enabled: true },
      purchasing: { leased: false, purchased: true },
      applications: null,
    };
    // A section missing altogether (not even null), as some list responses have it.
    if (sparse && chance(0.15)) delete record[pick(['hardware', 'userAndLocation', 'operatingSystem'])];
    computers.push(record);
  }
  return computers;
};

const uuid = (characters: (alphabet: string, length: number) => string): string => {
  const hex = characters(HEX, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
