import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf } from '../../../demo/fake-jamf.ts';
import { readSofaFeed, startFakeSofa, type FakeSofa, type SofaFault } from '../../../demo/fake-sofa.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
interface DeviceJson {
  id: string;
  os_name?: string;
  os_version?: string;
  os_rapid_security_response?: string;
  os_is_latest: boolean;
}

const VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'LATEST_OS_FEED_URL',
  'LATEST_OS_FEED_TTL_SECONDS',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'REDIS_URL',
];
/** The size of the demo inventory `npm start` serves: 300 generated computers (docs/local-stack.md). */
const DEMO_COMPUTER_COUNT = 300;
/** The LATEST_OS_VERSION `npm start` uses when it is unset: 26.6.2 (docs/local-stack.md). */
const DEMO_LATEST_OS_VERSION = '26.6.2';
/** The inventory `npm start` serves. */
const DEMO_FLEET = generateJamfComputers(DEMO_COMPUTER_COUNT);

/**
 * Written by hand from the v2 feed copy (Tahoe 26.6.2, Sequoia 15.7.9, Sonoma 14.8.9; no other
 * major) and the demo's LATEST_OS_VERSION for the rest: every release the demo inventory runs,
 * with and without the response level it may carry.
 */
const EXPECTED_WITH_FEED: Record<string, boolean> = {
  '26.6.2': true,
  '26.6.1': false,
  '26.6': false,
  '26.6.0': false,
  '26.3.1 (a)': false,
  '26.3.1': false,
  '26.0': false,
  '26.0.0': false,
  '27.0': true,
  '27.0.0': true,
  '15.7.9': true,
  '15.7': false,
  '15.7.0': false,
  '15.2': false,
  '15.2.0': false,
  '14.8.9': true,
  '14.8': false,
  '14.8.0': false,
  '13.7.8': false,
  '13.4.1 (c)': false,
  '12.7.6': false,
  '10.9.5 (a)': false,
};
/** The same Macs against LATEST_OS_VERSION alone (the feed never fetched). */
const EXPECTED_WITHOUT_FEED: Record<string, boolean> = Object.fromEntries(
  Object.keys(EXPECTED_WITH_FEED).map((release) => [release, ['26.6.2', '27.0', '27.0.0'].includes(release)]),
);

const releaseOf = (device: DeviceJson): string =>
  device.os_rapid_security_response === undefined ? device.os_version! : `${device.os_version} ${device.os_rapid_security_response}`;

let jamf: FakeJamf;
let sofa: FakeSofa;
let logs: CapturedLogs;
let restoreEnvironment: () => void;

beforeAll(async () => {
  jamf = await startFakeJamf({ devices: DEMO_FLEET });
});
afterAll(async () => {
  await jamf.close();
});
beforeEach(async () => {
  restoreEnvironment = saveEnvironment(VARIABLES);
  clearEnvironment(VARIABLES);
  sofa = await startFakeSofa();
  Object.assign(process.env, {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: DEMO_LATEST_OS_VERSION,
    LATEST_OS_FEED_URL: sofa.feedUrl('v2'),
    // The shortest: the tests below wait it out to see the feed fetched again.
    LATEST_OS_FEED_TTL_SECONDS: '1',
  });
  jamf.resetStats();
  logs = captureStdout();
});
afterEach(async () => {
  logs.restore();
  await sofa.close();
  restoreEnvironment();
});

const freshContainer = async (): Promise<Handler> => {
  vi.resetModules();
  return ((await import('../../../functions/devices.ts')) as { handler: Handler }).handler;
};

const get = (handler: Handler, query = '', headers: Record<string, string> = {}) =>
  handler({ ...httpEvent('GET', '/devices', { headers }), rawQueryString: query }, lambdaContext());

const devicesOf = (result: APIGatewayProxyStructuredResultV2): DeviceJson[] => {
  expect(result.statusCode).toBe(200);
  return JSON.parse(result.body!) as DeviceJson[];
};

/** Checks every device's decision against `expected` (each release the devices run must be in it); returns the releases seen. */
const expectDecisions = (devices: DeviceJson[], expected: Record<string, boolean>): Set<string> => {
  const seen = new Set<string>();
  for (const device of devices) {
    if (device.os_version === undefined) {
      expect(device.os_is_latest).toBe(false);
      continue;
    }
    const release = releaseOf(device);
    expect(expected[release], `${release} is a release the table decides`).toBeTypeOf('boolean');
    expect(device.os_is_latest, `device ${device.id} on ${release}`).toBe(expected[release]);
    seen.add(release);
  }
  return seen;
};

const feedLines = () =>
  [...logs.lines(), ...logs.errorLines()].filter((line) => typeof line.message === 'string' && line.message.startsWith('latest OS feed'));

/** Past the feed's one-second TTL, so the next request fetches it again. */
const afterTtl = () => sleep(1_100);

describe('GET /devices with the latest-OS feed', () => {
  it('decides the demo inventory per major, response levels included, one access line per request', async () => {
    const handler = await freshContainer();
    const devices = devicesOf(await get(handler));
    expect(devices).toHaveLength(DEMO_COMPUTER_COUNT);
    const seen = expectDecisions(devices, EXPECTED_WITH_FEED);
    // The demo shows every case: each major's latest, older releases, a response with and without, an unlisted major, Jamf's `.0`.
    for (const release of ['26.6.2', '26.6.1', '26.3.1 (a)', '26.3.1', '15.7.9', '15.7', '14.8.9', '13.7.8', '15.2.0'])
      expect(seen, release).toContain(release);
    expect(accessLines(logs)).toHaveLength(1);
    expect(feedLines()).toEqual([]);
    expect(sofa.requests()).toBe(1);
  });

  /** One Mac of the demo's shapes per release given (`rapidSecurityResponse` as Jamf sends it). */
  const fleetOn = (releases: readonly [version: string, response: string | null][]) =>
    generateJamfComputers(releases.length, 5).map((record, index) => ({
      ...record,
      operatingSystem: {
        ...(record.operatingSystem as object),
        name: 'macOS',
        version: releases[index]![0],
        rapidSecurityResponse: releases[index]![1],
      },
    }));
  const latestById = (devices: DeviceJson[]) =>
    devices.map((device) => [device.os_version, device.os_rapid_security_response ?? null, device.os_is_latest]);

  it('needs the response a feed lists as newest: Ventura on 12 July 2023, when 13.4.1 (c) was', async () => {
    const feed = await readSofaFeed('v1');
    const ventura = (
      feed.OSVersions as { OSVersion: string; Latest: Record<string, unknown>; SecurityReleases: { ReleaseDate: string }[] }[]
    ).find((entry) => entry.OSVersion === 'Ventura 13')!;
    ventura.SecurityReleases = ventura.SecurityReleases.filter((release) => release.ReleaseDate <= '2023-07-12T00:00:00Z');
    ventura.Latest = { ...ventura.Latest, ProductVersion: '13.4.1' };
    sofa.setFeed('v1', feed);
    process.env.LATEST_OS_FEED_URL = sofa.feedUrl('v1');
    jamf.setDevices(
      fleetOn([
        ['13.4.1', null],
        ['13.4.1', '(a)'],
        ['13.4.1', '(c)'],
        ['13.4.1 (c)', null],
        ['13.5', null],
        ['13.4', null],
      ]),
    );
    try {
      const result = await get(await freshContainer());
      expect(latestById(devicesOf(result))).toEqual([
        ['13.4.1', null, false],
        ['13.4.1', '(a)', false],
        ['13.4.1', '(c)', true],
        ['13.4.1 (c)', null, true],
        ['13.5', null, true],
        ['13.4', null, false],
      ]);
      expect(accessLines(logs)).toHaveLength(1);
    } finally {
      jamf.setDevices(DEMO_FLEET);
    }
  });

  it('decides each Mac against the releases for its own board (v2): a BSI for one model leaves the others latest, and says what each was decided against', async () => {
    // Tahoe on 17 March 2026: 26.3.2 the newest release for every Mac, 26.3.2 (a) a BSI for board J700AP (Mac17,5) alone.
    const feed = await readSofaFeed('v2');
    const tahoe = (
      feed.OSVersions as { OSVersion: string; Latest: Record<string, unknown>; SecurityReleases: { ReleaseDate: string }[] }[]
    ).find((entry) => entry.OSVersion === 'Tahoe 26')!;
    tahoe.SecurityReleases = tahoe.SecurityReleases.filter((release) => release.ReleaseDate <= '2026-03-17T00:00:00Z');
    tahoe.Latest = { ...tahoe.Latest, ProductVersion: '26.3.2' };
    sofa.setFeed('v2', feed);
    const macs = fleetOn([
      ['26.3.2', null],
      ['26.3.2', null],
      ['26.3.2', null],
      ['26.3.2', '(a)'],
      ['15.7.8', null],
    ]);
    const boards: [board: string | null, model: string][] = [
      ['J413AP', 'Mac14,2'],
      ['J700AP', 'Mac17,5'],
      [null, 'Mac17,5'],
      ['J700AP', 'Mac17,5'],
      ['J413AP', 'Mac14,2'],
    ];
    jamf.setDevices(
      macs.map((record, index) => ({
        ...record,
        hardware: { ...((record as Record<string, unknown>).hardware as object), modelIdentifier: boards[index]![1] },
        operatingSystem: { ...(record.operatingSystem as object), softwareUpdateDeviceId: boards[index]![0] },
      })),
    );
    try {
      const devices = devicesOf(await get(await freshContainer())) as (DeviceJson & { os_latest_version?: string })[];
      expect(devices.map((device) => [device.os_is_latest, device.os_latest_version])).toEqual([
        [true, '26.3.2'],
        [false, '26.3.2 (a)'],
        // No board id: matched by its model identifier through the feed's Devices table.
        [false, '26.3.2 (a)'],
        [true, '26.3.2 (a)'],
        [false, '15.7.9'],
      ]);
      // The documented order: os_latest_version right after os_is_latest; no board id in the body.
      const first = Object.keys(devices[0]!);
      expect(first.indexOf('os_latest_version')).toBe(first.indexOf('os_is_latest') + 1);
      expect(JSON.stringify(devices)).not.toContain('J413AP');
      expect(devicesOf(await get(await freshContainer(), 'os_is_latest=true')).map((device) => device.id)).toEqual([
        devices[0]!.id,
        devices[3]!.id,
      ]);
    } finally {
      jamf.setDevices(DEMO_FLEET);
    }
  });

  it('does not count a Mac without the response as latest against LATEST_OS_VERSION=26.3.1 (a), and counts one with it', async () => {
    delete process.env.LATEST_OS_FEED_URL;
    process.env.LATEST_OS_VERSION = '26.3.1 (a)';
    jamf.setDevices(
      fleetOn([
        ['26.3.1', null],
        ['26.3.1', '(a)'],
        ['26.3', '(a)'],
        ['26.3.2', null],
      ]),
    );
    try {
      const result = await get(await freshContainer());
      expect(latestById(devicesOf(result))).toEqual([
        ['26.3.1', null, false],
        ['26.3.1', '(a)', true],
        ['26.3', '(a)', false],
        ['26.3.2', null, true],
      ]);
      expect(accessLines(logs)).toHaveLength(1);
      expect(sofa.requests()).toBe(0);
    } finally {
      jamf.setDevices(DEMO_FLEET);
    }
  });

  it.each<[string, SofaFault]>([
    ['a timeout', { kind: 'hang' }],
    ['HTTP 500', { kind: 'status', status: 500 }],
    ['a body that is not JSON', { kind: 'garbage' }],
    ['JSON in another shape', { kind: 'wrong-shape' }],
  ])(
    'answers from LATEST_OS_VERSION when the feed fails before any good fetch (%s), warning once',
    async (_label, fault) => {
      sofa.setFault(fault);
      const handler = await freshContainer();
      expectDecisions(devicesOf(await get(handler)), EXPECTED_WITHOUT_FEED);
      devicesOf(await get(handler, 'limit=10'));
      expect(accessLines(logs).map((line) => line.status_code)).toEqual([200, 200]);
      expect(feedLines()).toHaveLength(1);
      expect(feedLines()[0]).toMatchObject({ level: 'WARN', message: 'latest OS feed unavailable', serving: 'LATEST_OS_VERSION' });
    },
    20_000,
  );

  it.each<[string, SofaFault]>([
    ['a timeout', { kind: 'hang' }],
    ['HTTP 500', { kind: 'status', status: 500 }],
    ['a body that is not JSON', { kind: 'garbage' }],
    ['JSON in another shape', { kind: 'wrong-shape' }],
  ])(
    'keeps answering from the last good copy when the feed fails later (%s), warning once',
    async (_label, fault) => {
      const handler = await freshContainer();
      const before = await get(handler);
      sofa.setFault(fault);
      await afterTtl();
      const during = await get(handler);
      expectDecisions(devicesOf(during), EXPECTED_WITH_FEED);
      expect(during.headers?.ETag).toBe(before.headers?.ETag);
      await get(handler, 'limit=5');
      expect(accessLines(logs)).toHaveLength(3);
      expect(feedLines().map((line) => [line.level, line.serving])).toEqual([['WARN', 'last good copy']]);
    },
    20_000,
  );

  it('re-decides the cached devices when the feed moves, without reading the inventory again', async () => {
    const handler = await freshContainer();
    const before = await get(handler);
    expectDecisions(devicesOf(before), EXPECTED_WITH_FEED);
    const inventoryRequests = jamf.stats().inventoryRequests;

    const moved = await readSofaFeed('v2');
    const sequoia = (moved.OSVersions as { OSVersion: string; Latest: { ProductVersion: string } }[]).find(
      (entry) => entry.OSVersion === 'Sequoia 15',
    )!;
    sequoia.Latest.ProductVersion = '15.7.10';
    sofa.setFeed('v2', moved);
    await afterTtl();

    const after = await get(handler, '', { 'if-none-match': String(before.headers?.ETag) });
    expect(after.statusCode).toBe(200);
    expect(after.headers?.ETag).not.toBe(before.headers?.ETag);
    expectDecisions(devicesOf(after), { ...EXPECTED_WITH_FEED, '15.7.9': false });
    // Filters follow the new decisions too.
    const latestNow = devicesOf(await get(handler, 'os_is_latest=true'));
    expect(latestNow.some((device) => device.os_version === '15.7.9')).toBe(false);
    expect(jamf.stats().inventoryRequests).toBe(inventoryRequests);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'memory', 'memory']);
    expect(sofa.requests()).toBe(2);
  }, 20_000);
});
