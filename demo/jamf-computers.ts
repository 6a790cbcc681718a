/**
 * Realistic Jamf Pro computers-inventory records (API v3 shape) for the fake inventory, tests,
 * benchmarks and the local demo. No test-framework imports.
 */

/** A computers-inventory record in the Jamf Pro API v3 shape (only the parts this service reads are typed). */
export type JamfComputer = Record<string, unknown> & { id: string };


/** A small seeded PRNG (mulberry32), so generated inventories are the same on every run. */
const seededRandom = (seed: number) => {
  let state = seed >>> 0;
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const MODELS = [
  ['MacBook Pro (14-inch, 2023)', 'Mac14,5'],
  ['MacBook Air (M2, 2022)', 'Mac14,2'],
  ['MacBook Pro (16-inch, 2021)', 'MacBookPro18,1'],
  ['Mac mini (2023)', 'Mac14,3'],
  ['iMac (24-inch, M3, 2023)', 'Mac15,4'],
  ['MacBook Air (13-inch, M4, 2025)', 'Mac16,12'],
] as const;
const OS_VERSIONS = [
  ['14.7.1', '23H222'],
  ['15.6', '24G84'],
  ['15.9', '24J100'],
  ['15.10', '24K20'],
  ['26.0 (25A354)', '25A354'],
  ['26.1', '25B78'],
  ['15.1-beta', '24B5035e'],
] as const;
const FIRST_NAMES = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara', 'dennis', 'frances', 'alan', 'radia'];
const LAST_NAMES = ['lovelace', 'hopper', 'torvalds', 'hamilton', 'thompson', 'liskov', 'ritchie', 'allen', 'turing', 'perlman'];
const SERIAL_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/**
 * `count` realistic computers-inventory records with ascending numeric string ids (with gaps):
 * several models and macOS versions, both `lastContactTime` and the newer `lastContact`, and a
 * share of sparse records (null sections, null fields, empty strings) as real fleets have.
 */
export const generateJamfComputers = (count: number, seed = 42): JamfComputer[] => {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const sometimes = <T>(probability: number, value: T): T | null => (random() < probability ? value : null);
  const computers: JamfComputer[] = [];
  let id = 0;
  for (let index = 0; index < count; index += 1) {
    id += 1 + (random() < 0.1 ? Math.floor(random() * 5) : 0);
    const [model, modelIdentifier] = pick(MODELS);
    const [version, build] = pick(OS_VERSIONS);
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const serial = Array.from({ length: 10 }, () => pick([...SERIAL_CHARS])).join('');
    // Whole seconds, as Jamf writes them (`2026-11-04T11:02:17Z`).
    const contactMs = Date.UTC(2026, 10, 1) + Math.floor(random() * 20 * 86_400) * 1000;
    const contact = new Date(contactMs).toISOString().replace('.000Z', 'Z');
    const report = new Date(contactMs - Math.floor(random() * 86_400) * 1000).toISOString().replace('.000Z', 'Z');
    const sparse = random() < 0.15;
    const newerApi = random() < 0.3;
    computers.push({
      id: String(id),
      udid: sparse && random() < 0.3 ? null : randomUuidFrom(random),
      general: {
        name: sparse && random() < 0.3 ? '' : `${first}-${model.split(' ')[0]!.toLowerCase()}-${id}`,
        lastIpAddress: `10.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
        platform: 'Mac',
        barcode1: null,
        assetTag: sometimes(0.5, `AT-${id}`),
        remoteManagement: sparse && random() < 0.3 ? null : { managed: random() < 0.95, managementUsername: 'jamfadmin' },
        supervised: sparse && random() < 0.3 ? null : random() < 0.8,
        reportDate: report,
        ...(newerApi ? { lastContact: contact } : { lastContactTime: sparse && random() < 0.3 ? null : contact }),
        site: { id: '-1', name: 'None' },
        enrolledViaAutomatedDeviceEnrollment: random() < 0.7,
        extensionAttributes: [],
      },
      hardware:
        sparse && random() < 0.3
          ? null
          : {
              make: 'Apple',
              model,
              modelIdentifier,
              serialNumber: sparse && random() < 0.3 ? '' : `C02${serial}`,
              processorArchitecture: 'arm64',
              totalRamMegabytes: pick([8192, 16384, 32768]),
              extensionAttributes: [],
            },
      operatingSystem:
        sparse && random() < 0.2
          ? null
          : { name: 'macOS', version: sparse && random() < 0.3 ? '' : version, build, activeDirectoryStatus: 'Not Bound', fileVault2Status: 'ALL_ENCRYPTED' },
      userAndLocation:
        sparse && random() < 0.5
          ? null
          : {
              username: `${first}.${last}`,
              realname: `${first} ${last}`,
              email: sometimes(0.9, `${first}.${last}@example.com`) ?? '',
              position: null,
              phone: '',
              departmentId: '-1',
              extensionAttributes: [],
            },
      diskEncryption: { fileVault2Enabled: true },
      purchasing: { leased: false, purchased: true },
      applications: null,
    });
  }
  return computers;
};

const randomUuidFrom = (random: () => number): string => {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('').toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
