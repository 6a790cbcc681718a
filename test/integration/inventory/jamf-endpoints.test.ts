import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { lambdaContext, loadEvent } from '../../support/http-events.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';
import {
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  startFakeJamf,
  type FakeJamf,
  type JamfComputer,
  type JamfPersonality,
} from '../../../demo/fake-jamf.ts';

/**
 * GET /devices against each Jamf Pro the service reads: a current one (11.30 and later: `/api/v4`,
 * `/api/v1/oauth/token`) and an older one (`/api/v3`, `/api/oauth/token`), each container finding out
 * which once, counted at the fake.
 */
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type DeviceJson = Record<string, unknown> & { id: string };

const VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'INVENTORY_USERNAME',
  'INVENTORY_PASSWORD',
  'LATEST_OS_VERSION',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'REDIS_URL',
];
const V4 = 'GET /api/v4/computers-inventory';
const V3 = 'GET /api/v3/computers-inventory';
const OAUTH_V1 = 'POST /api/v1/oauth/token';
const OAUTH_OLD = 'POST /api/oauth/token';
const BASIC = 'POST /api/v1/auth/token';
/** Three inventory pages of 1,000 per read. */
const FLEET = generateJamfComputers(2_500, 31);

let restoreEnvironment: () => void;
let logs: CapturedLogs;
let jamf: FakeJamf | undefined;

beforeEach(() => {
  restoreEnvironment = saveEnvironment(VARIABLES);
  clearEnvironment(VARIABLES);
  logs = captureStdout();
});

afterEach(async () => {
  logs.restore();
  restoreEnvironment();
  await jamf?.close();
  jamf = undefined;
});

const oauthEnv = (url: string) => ({
  INVENTORY_URL: url,
  INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
  INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
  LATEST_OS_VERSION: '26.6.2',
  // The shortest freshness, so one container can read Jamf twice (see `ttlOver`).
  DEVICES_CACHE_TTL_SECONDS: '1',
});

/** A new Lambda container: the handler module loaded afresh under `env`. */
const freshContainer = async (env: Record<string, string>): Promise<Handler> => {
  Object.assign(process.env, env);
  vi.resetModules();
  return ((await import('../../../functions/devices.ts')) as { handler: Handler }).handler;
};

const getDevices = async (handler: Handler) => handler(await loadEvent('devices/success.json'), lambdaContext(20_000));
const devicesOf = (result: APIGatewayProxyStructuredResultV2) => JSON.parse(result.body!) as DeviceJson[];
const errorOf = (result: APIGatewayProxyStructuredResultV2) => (JSON.parse(result.body!) as { error: Record<string, unknown> }).error;
/** Bounded wait past the 1-second TTL: the container's next request reads Jamf again. */
const ttlOver = () => new Promise((resolve) => setTimeout(resolve, 1_100));

/** Requests by route after `reads` reads of FLEET in `containers` containers (each probing once). */
const expectedRequests = (personality: JamfPersonality, reads: number, containers: number): Record<string, number> =>
  personality === 'current'
    ? { [OAUTH_V1]: reads, [V4]: 3 * reads }
    : { [OAUTH_V1]: containers, [OAUTH_OLD]: reads, [V4]: containers, [V3]: 3 * reads };

describe('GET /devices on each Jamf Pro version', () => {
  it.each(['current', 'legacy'] as const)('reads a %s Jamf Pro, finding its paths once per container', async (personality) => {
    jamf = await startFakeJamf({ personality, devices: FLEET });
    const container = await freshContainer(oauthEnv(jamf.url));
    const first = await getDevices(container);
    expect(first.statusCode).toBe(200);
    expect(devicesOf(first)).toHaveLength(FLEET.length);
    expect(jamf.stats().requests).toEqual(expectedRequests(personality, 1, 1));

    // The same container reads again: straight to the paths that answered.
    await ttlOver();
    const second = await getDevices(container);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(jamf.stats().requests).toEqual(expectedRequests(personality, 2, 1));

    // A new container knows nothing yet and finds out again.
    const third = await getDevices(await freshContainer(oauthEnv(jamf.url)));
    expect(third.body).toBe(first.body);
    expect(jamf.stats().requests).toEqual(expectedRequests(personality, 3, 2));
    expect(accessLines(logs).map((line) => [line.status_code, line.cache_tier])).toEqual([
      [200, 'upstream'],
      [200, 'upstream'],
      [200, 'upstream'],
    ]);
  });

  it('serves the same list from either version: v4 lastContact is v3 lastContactTime', async () => {
    const bodies: string[] = [];
    for (const personality of ['current', 'legacy'] as const) {
      jamf = await startFakeJamf({ personality, devices: FLEET });
      bodies.push((await getDevices(await freshContainer(oauthEnv(jamf.url)))).body!);
      await jamf.close();
      jamf = undefined;
    }
    expect(bodies[0]).toBe(bodies[1]);
    const contacted = JSON.parse(bodies[0]!) as DeviceJson[];
    expect(contacted.filter((device) => device.last_contact_at !== undefined).length).toBeGreaterThan(FLEET.length * 0.9);
  });

  it.each([
    ['current', 'inventory', (fake: FakeJamf) => fake.setPageFault(0, { kind: 'status', status: 404 }), [OAUTH_V1, V4]],
    ['legacy', 'inventory', (fake: FakeJamf) => fake.setPageFault(0, { kind: 'status', status: 404 }), [OAUTH_OLD, V3]],
    ['legacy', 'OAuth token endpoint', (fake: FakeJamf) => fake.setTokenFault({ kind: 'status', status: 404 }), [OAUTH_OLD]],
  ] as const)(
    "answers 502 when a %s Jamf Pro's %s answers 404 where it answered before, trying no other path",
    async (personality, _what, fault, asked) => {
      jamf = await startFakeJamf({ personality, devices: generateJamfComputers(30, 32) });
      const container = await freshContainer(oauthEnv(jamf.url));
      expect((await getDevices(container)).statusCode).toBe(200);
      fault(jamf);
      await ttlOver();
      const before = jamf.stats().requests;
      const failed = await getDevices(container);
      expect(failed.statusCode).toBe(502);
      expect(errorOf(failed)).toEqual({ message: 'The device inventory is unavailable', status: 502, httpMessage: 'Bad Gateway' });
      // Once each at the remembered paths, up to the 404: no newer path probed, no older one tried.
      expect(jamf.stats().requests).toEqual({ ...before, ...Object.fromEntries(asked.map((route) => [route, before[route]! + 1])) });
      const line = accessLines(logs)[1]!;
      expect(line).toMatchObject({ status_code: 502, cache_tier: 'upstream' });
      expect(JSON.stringify(line.error)).toMatch(/unavailable: .* answered 404: .*this path answered before/);
    },
  );

  it('answers 500 "Service misconfigured" when both inventory paths answer 404 before either answered, and learns nothing from it', async () => {
    jamf = await startFakeJamf({
      personality: 'current',
      devices: generateJamfComputers(30, 33),
      pageFaults: { 0: { kind: 'status', status: 404 } },
    });
    const container = await freshContainer(oauthEnv(jamf.url));
    for (let request = 1; request <= 2; request += 1) {
      const result = await getDevices(container);
      expect(result.statusCode).toBe(500);
      expect(errorOf(result)).toEqual({ message: 'Service misconfigured', status: 500, httpMessage: 'Internal Server Error' });
      expect(jamf.stats().requests).toEqual({ [OAUTH_V1]: request, [V4]: request, [V3]: request });
    }
    expect(JSON.stringify(accessLines(logs)[0]!.error)).toContain(
      '/api/v3/computers-inventory page 0 (page-size 1000) (after a 404 at /api/v4/computers-inventory) answered 404',
    );
  });

  it.each(['current', 'legacy'] as const)(
    'authenticates with INVENTORY_USERNAME at /api/v1/auth/token on a %s Jamf Pro, never at an OAuth path',
    async (personality) => {
      jamf = await startFakeJamf({
        personality,
        devices: generateJamfComputers(30, 34),
        username: 'jamf-api-reader',
        password: 'basic-password',
      });
      const container = await freshContainer({
        INVENTORY_URL: jamf.url,
        INVENTORY_USERNAME: 'jamf-api-reader',
        INVENTORY_PASSWORD: 'basic-password',
        LATEST_OS_VERSION: '26.6.2',
        DEVICES_CACHE_TTL_SECONDS: '1',
      });
      expect(devicesOf(await getDevices(container))).toHaveLength(30);
      await ttlOver();
      expect(devicesOf(await getDevices(container))).toHaveLength(30);
      expect(jamf.stats().requests).toEqual(personality === 'current' ? { [BASIC]: 2, [V4]: 2 } : { [BASIC]: 2, [V4]: 1, [V3]: 2 });
    },
  );

  it('renews a token refused mid-read on an older Jamf Pro at the old OAuth path, counting one UpstreamAuthFailures', async () => {
    jamf = await startFakeJamf({ personality: 'legacy', devices: FLEET, latencyMs: 10 });
    jamf.invalidateTokensAtRequest(3);
    const result = await getDevices(await freshContainer(oauthEnv(jamf.url)));
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(FLEET.length);
    const { requests, rejectedTokens } = jamf.stats();
    expect(rejectedTokens).toBeGreaterThan(0);
    expect(requests).toMatchObject({ [OAUTH_V1]: 1, [OAUTH_OLD]: 2, [V4]: 1 });
    const metrics = logs.lines().filter((line) => '_aws' in line);
    expect(metrics).toHaveLength(1);
    expect(metrics[0]).toMatchObject({ UpstreamAuthFailures: 1, service: 'devices' });
  });
});

/**
 * Records in the v4 shape of Jamf's OpenAPI description (ComputerGeneralV4: `lastCheckIn` and
 * `lastContact`, no `lastContactTime`; `lastReportedIpV4`/`V6`, `lastLoggedInUsernameMdm`), with
 * the other sections as v3 has them.
 */
const v4Records: JamfComputer[] = [
  {
    id: '1',
    udid: '45436EDF-864E-4364-982A-330B01D39E65',
    general: {
      name: 'Boalime',
      lastIpAddress: '247.185.82.186',
      lastReportedIpV4: '247.185.82.186',
      lastReportedIpV6: null,
      jamfBinaryVersion: '11.31.1-t1787060595569',
      platform: 'Mac',
      barcode1: '5 12345 678900',
      barcode2: null,
      assetTag: '304822',
      remoteManagement: { managed: true, managementUsername: null },
      supervised: true,
      mdmCapable: { capable: true, capableUsers: [], userManagementInfo: [] },
      reportDate: '2026-11-19T22:00:00.123Z',
      lastCheckIn: '2026-11-20T08:55:00.456Z',
      lastContact: '2026-11-20T09:15:00.789Z',
      lastCloudBackupDate: null,
      lastEnrolledDate: '2026-02-01T10:00:00Z',
      mdmProfileExpiration: '2028-02-01T10:00:00Z',
      initialEntryDate: '2025-11-13',
      distributionPoint: null,
      enrollmentMethod: null,
      site: { id: '-1', name: 'None' },
      itunesStoreAccountActive: false,
      enrolledViaAutomatedDeviceEnrollment: true,
      userApprovedMdm: true,
      declarativeDeviceManagementEnabled: true,
      extensionAttributes: [],
      managementId: '73226fb6-61df-4c10-9552-eb9bc353d507',
      lastLoggedInUsernameSelfService: null,
      lastLoggedInUsernameSelfServiceTimestamp: null,
      lastLoggedInUsernameBinary: 'ada',
      lastLoggedInUsernameBinaryTimestamp: '2026-11-20T08:55:00Z',
      lastLoggedInUsernameMdm: 'ada',
      lastLoggedInUsernameMdmTimestamp: '2026-11-20T09:15:00Z',
    },
    hardware: {
      make: 'Apple',
      model: 'Mac mini (2024) M4',
      modelIdentifier: 'Mac16,10',
      serialNumber: 'KX5SJ51LGT',
      processorArchitecture: 'arm64',
      appleSilicon: true,
      extensionAttributes: [],
    },
    operatingSystem: {
      name: 'macOS',
      version: '26.6.2',
      build: '25G83',
      supplementalBuildVersion: '25G83',
      rapidSecurityResponse: null,
      activeDirectoryStatus: 'Not Bound',
      fileVault2Status: 'ALL_ENCRYPTED',
      softwareUpdateDeviceId: 'J773gAP',
      extensionAttributes: [],
    },
    userAndLocation: {
      username: 'ada.lovelace',
      realname: 'Ada Lovelace',
      email: 'ada.lovelace@example.com',
      position: null,
      phone: '',
      departmentId: '-1',
      buildingId: null,
      room: null,
      extensionAttributes: [],
    },
  },
  {
    // Checked in through the binary, no contact recorded: lastCheckIn is no contact time.
    id: '2',
    udid: 'A1B2C3D4-0000-4000-8000-0000000000A2',
    general: {
      name: 'binary-only',
      platform: 'Mac',
      supervised: false,
      reportDate: '2026-11-18T10:00:00Z',
      lastCheckIn: '2026-11-18T10:00:00Z',
      lastContact: null,
      remoteManagement: { managed: false },
    },
    operatingSystem: { name: 'macOS', version: '15.7.9', build: '24G830', rapidSecurityResponse: null, softwareUpdateDeviceId: 'J413AP' },
  },
];

describe('GET /devices on v4 records', () => {
  it('takes last_contact_at from lastContact and ignores lastCheckIn', async () => {
    jamf = await startFakeJamf({ personality: 'current', devices: v4Records });
    const result = await getDevices(await freshContainer(oauthEnv(jamf.url)));
    expect(result.statusCode).toBe(200);
    const [full, binaryOnly] = devicesOf(result);
    // The fields read from the record (the latest-OS ones are another layer's).
    expect(full).toMatchObject({
      id: '1',
      udid: '45436EDF-864E-4364-982A-330B01D39E65',
      name: 'Boalime',
      serial_number: 'KX5SJ51LGT',
      model: 'Mac mini (2024) M4',
      model_identifier: 'Mac16,10',
      os_name: 'macOS',
      os_version: '26.6.2',
      os_build: '25G83',
      last_contact_at: '2026-11-20T09:15:00.789Z',
      last_inventory_at: '2026-11-19T22:00:00.123Z',
      username: 'ada.lovelace',
      email: 'ada.lovelace@example.com',
      supervised: true,
      managed: true,
    });
    expect(binaryOnly).toMatchObject({
      id: '2',
      name: 'binary-only',
      last_inventory_at: '2026-11-18T10:00:00Z',
      supervised: false,
      managed: false,
    });
    expect(binaryOnly).not.toHaveProperty('last_contact_at');
    expect(result.body).not.toContain('2026-11-20T08:55:00.456Z');
    expect(jamf.stats().requests).toEqual({ [OAUTH_V1]: 1, [V4]: 1 });
  });
});
