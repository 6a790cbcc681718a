import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  generateJamfMobileDevices,
  startFakeJamf,
  type FakeJamf,
  type JamfMobileDevice,
} from '../../../demo/fake-jamf.ts';
import { startFakeSofa, type FakeSofa } from '../../../demo/fake-sofa.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { summaryOfList, type ServedDevice } from '../../support/summary-oracle.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type Device = ServedDevice & {
  os_rapid_security_response?: string;
  device_type?: string;
  model_identifier?: string;
  os_latest_version?: string;
  os_missing_releases?: number;
  os_unpatched_cves?: number;
  os_update_due_at?: string;
  managed?: boolean;
};

const VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'LATEST_OS_FEED_URL',
  'LATEST_IOS_VERSION',
  'LATEST_IOS_FEED_URL',
  'LATEST_TVOS_VERSION',
  'LATEST_TVOS_FEED_URL',
  'LATEST_OS_FEED_TTL_SECONDS',
  'PATCH_SLA_EXPLOITED_DAYS',
  'PATCH_SLA_SECURITY_DAYS',
  'PATCH_SLA_DAYS',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'REDIS_URL',
];

/** Two Apple TVs worked by hand against demo/sofa/tvos-data-feed-v2.json, among a generated mobile fleet. */
const appleTv = (record: JamfMobileDevice, modelIdentifier: string, osVersion: string): JamfMobileDevice => {
  const { hardware, general } = record as unknown as { hardware: Record<string, unknown>; general: Record<string, unknown> };
  return {
    ...record,
    deviceType: 'tvOS',
    hardware: { ...hardware, modelIdentifier },
    general: { ...general, osVersion },
  } as JamfMobileDevice;
};
const MOBILE_FLEET = generateJamfMobileDevices(400, 9).map((record, index) =>
  index === 0 ? appleTv(record, 'AppleTV11,1', '18.5') : index === 1 ? appleTv(record, 'AppleTV14,1', '26.5') : record,
);

let jamf: FakeJamf;
let sofa: FakeSofa;
let logs: CapturedLogs;
let restoreEnvironment: () => void;

beforeAll(async () => {
  [jamf, sofa] = await Promise.all([startFakeJamf({ devices: generateJamfComputers(300), mobileDevices: MOBILE_FLEET }), startFakeSofa()]);
});
afterAll(async () => {
  await Promise.all([jamf.close(), sofa.close()]);
});
beforeEach(() => {
  restoreEnvironment = saveEnvironment(VARIABLES);
  clearEnvironment(VARIABLES);
  Object.assign(process.env, {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: '26.6.2',
    LATEST_OS_FEED_URL: sofa.feedUrl('v2'),
    LATEST_IOS_VERSION: '26.6.1',
    LATEST_IOS_FEED_URL: sofa.feedUrl('ios-v2'),
    LATEST_TVOS_FEED_URL: sofa.feedUrl('tvos-v2'),
    // Long enough that nothing is read again unless a test says so.
    DEVICES_CACHE_TTL_SECONDS: '3600',
    LATEST_OS_FEED_TTL_SECONDS: '3600',
  });
  // Only Date moves by hand: the servers' timers run as they do.
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-08-19T12:00:00Z') });
  jamf.resetStats();
  logs = captureStdout();
});
afterEach(() => {
  vi.useRealTimers();
  logs.restore();
  restoreEnvironment();
});

const freshContainer = async (module: 'devices' | 'mobile-devices'): Promise<Handler> => {
  vi.resetModules();
  return ((await import(`../../../functions/${module}.ts`)) as { handler: Handler }).handler;
};
const get = (handler: Handler, path: string, query = '', headers: Record<string, string> = {}) =>
  handler({ ...httpEvent('GET', path, { headers }), rawQueryString: query }, lambdaContext());
const bodyOf = <T>(result: APIGatewayProxyStructuredResultV2): T => {
  expect(result.statusCode, result.body).toBe(200);
  return JSON.parse(result.body!) as T;
};

const LATEST = { os_missing_releases: 0, os_unpatched_cves: 0, os_overdue: false };

describe('GET /devices with patch compliance (the SOFA v2 macOS feed)', () => {
  it('carries the five fields on every device the feed decides, a Tahoe 26.6 Mac worked by hand', async () => {
    const devices = bodyOf<Device[]>(await get(await freshContainer('devices'), '/devices'));
    const tahoe = devices.filter((device) => device.os_version === '26.6' && device.os_rapid_security_response === undefined);
    expect(tahoe.length).toBeGreaterThan(0);
    // Lacks 26.6.2 (17 August, 28 CVEs, none exploited: +21 d) and 26.6.1 (6 August, CVE-2026-65400
    // actively exploited: +14 d = 20 August). On 19 August not yet overdue.
    for (const device of tahoe)
      expect(device).toMatchObject({
        os_is_latest: false,
        os_latest_version: '26.6.2',
        os_missing_releases: 2,
        os_unpatched_cves: 29,
        os_exploited_cves: ['CVE-2026-65400'],
        os_update_due_at: '2026-08-20T00:00:00.000Z',
        os_overdue: false,
      });
    for (const device of devices.filter((entry) => entry.os_version === '26.6.2')) {
      expect(device).toMatchObject(LATEST);
      expect(device).not.toHaveProperty('os_exploited_cves');
      expect(device).not.toHaveProperty('os_update_due_at');
    }
    // Monterey is not in the feed: LATEST_OS_VERSION decides, and no compliance fields.
    const monterey = devices.filter((device) => device.os_version?.startsWith('12.'));
    expect(monterey.length).toBeGreaterThan(0);
    for (const device of monterey) expect(device).not.toHaveProperty('os_missing_releases');
    for (const device of devices)
      if (device.os_missing_releases !== undefined) expect(device.os_missing_releases === 0, device.id).toBe(device.os_is_latest);
  });

  it('turns a device overdue on its day without a refresh, with a new ETag for the list and the summary', async () => {
    const handler = await freshContainer('devices');
    vi.setSystemTime(Date.parse('2026-08-19T23:59:59.999Z'));
    const before = await get(handler, '/devices', 'os_overdue=true');
    const summaryBefore = await get(handler, '/devices/summary');
    const readsBefore = jamf.stats().inventoryRequests;
    expect(bodyOf<Device[]>(before).some((device) => device.os_version === '26.6')).toBe(false);

    vi.setSystemTime(Date.parse('2026-08-20T00:00:00Z'));
    const after = await get(handler, '/devices', 'os_overdue=true', { 'if-none-match': String(before.headers?.ETag) });
    expect(after.statusCode).toBe(200);
    expect(after.headers?.ETag).not.toBe(before.headers?.ETag);
    expect(bodyOf<Device[]>(after).some((device) => device.os_version === '26.6')).toBe(true);
    const summaryAfter = await get(handler, '/devices/summary', '', { 'if-none-match': String(summaryBefore.headers?.ETag) });
    expect(summaryAfter.headers?.ETag).not.toBe(summaryBefore.headers?.ETag);
    expect(bodyOf<{ os_overdue: { true: number } }>(summaryAfter).os_overdue.true).toBeGreaterThan(
      bodyOf<{ os_overdue: { true: number } }>(summaryBefore).os_overdue.true,
    );
    // The same moment again: the same tags, 304.
    expect((await get(handler, '/devices', 'os_overdue=true', { 'if-none-match': String(after.headers?.ETag) })).statusCode).toBe(304);
    expect(jamf.stats().inventoryRequests).toBe(readsBefore);
  });

  it('filters by os_overdue and os_exploited exactly as the fields say, paging with them', async () => {
    const handler = await freshContainer('devices');
    const all = bodyOf<Device[]>(await get(handler, '/devices'));
    const idsOf = async (query: string) => bodyOf<Device[]>(await get(handler, '/devices', query)).map((device) => device.id);
    const withFields = all.filter((device) => device.os_overdue !== undefined);
    expect(await idsOf('os_overdue=true')).toEqual(withFields.filter((device) => device.os_overdue).map((device) => device.id));
    expect(await idsOf('os_overdue=false')).toEqual(withFields.filter((device) => !device.os_overdue).map((device) => device.id));
    expect(await idsOf('os_exploited=true')).toEqual(all.filter((device) => device.os_exploited_cves).map((device) => device.id));
    expect(await idsOf('os_exploited=false')).toEqual(withFields.filter((device) => !device.os_exploited_cves).map((device) => device.id));
    const page = await get(handler, '/devices', 'os_exploited=true&limit=5');
    expect(page.headers?.Link).toMatch(/^<\/devices\?limit=5&os_exploited=true&after=\d+>; rel="next"$/);
    expect(page.headers?.['X-Total-Count']).toBe(String(all.filter((device) => device.os_exploited_cves).length));
    const refused = await get(handler, '/devices', 'os_overdue=yes');
    expect(refused.statusCode).toBe(422);
    expect(JSON.parse(refused.body!).error.details).toEqual([{ path: '/os_overdue', message: 'must be boolean' }]);
  });
});

describe('GET /devices/summary', () => {
  it('equals what the list implies, with and without filters, served from memory with cache_tier', async () => {
    const handler = await freshContainer('devices');
    for (const query of [
      '',
      'os_overdue=true',
      'os_exploited=false&managed=true',
      'os_name=MACOS&os_is_latest=false',
      'model_identifier=nothing',
    ]) {
      const list = bodyOf<Device[]>(await get(handler, '/devices', query));
      const summary = await get(handler, '/devices/summary', query);
      expect(bodyOf(summary), query).toEqual(summaryOfList(list));
      expect(summary.headers?.ETag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(summary.headers?.['Content-Type']).toBe('application/json');
    }
    const whole = bodyOf<{ devices: number; os_overdue: { true: number }; exploited_cves: unknown[] }>(
      await get(handler, '/devices/summary'),
    );
    expect(whole.devices).toBe(300);
    expect(whole.os_overdue.true).toBeGreaterThan(0);
    expect(whole.exploited_cves.length).toBeGreaterThan(0);
    // The first request read the inventory; every one after it was answered from memory.
    const lines = accessLines(logs).filter((line) => line.path === '/devices/summary');
    expect(lines.length).toBe(6);
    for (const line of lines) expect(line).toMatchObject({ status_code: 200, cache_tier: 'memory' });
    expect(jamf.stats().inventoryRequests).toBe(1);
  });

  it('answers 304 to its own ETag, and 422 naming limit, after or an unknown parameter', async () => {
    const handler = await freshContainer('devices');
    const first = await get(handler, '/devices/summary', 'os_exploited=true');
    const again = await get(handler, '/devices/summary', 'os_exploited=true', { 'if-none-match': String(first.headers?.ETag) });
    expect(again.statusCode).toBe(304);
    expect(again.body ?? '').toBe('');
    const other = await get(handler, '/devices/summary', 'os_exploited=false', { 'if-none-match': String(first.headers?.ETag) });
    expect(other.statusCode).toBe(200);
    for (const [query, paths] of [
      ['limit=10', ['/limit']],
      ['after=5', ['/after']],
      ['limit=10&after=5&os_overdue=true', ['/limit', '/after']],
      ['page=2', ['/page']],
      ['os_exploited=true&os_exploited=false', ['/os_exploited']],
    ] as const) {
      const refused = await get(handler, '/devices/summary', query);
      expect(refused.statusCode, query).toBe(422);
      const { error } = JSON.parse(refused.body!) as { error: { message: string; details: { path: string }[] } };
      expect(error.message).toBe('Request validation failed: Parameter (query) failed schema validation');
      expect(error.details.map((detail) => detail.path).sort()).toEqual([...paths].sort());
    }
  });

  it("is served only by its own route: never through $default, another route's key, another spelling or the other list's function", async () => {
    const handler = await freshContainer('devices');
    const answer = (path: string, routeKey?: string) =>
      handler(httpEvent('GET', path, routeKey === undefined ? {} : { routeKey }), lambdaContext());
    for (const [path, routeKey] of [
      ['/devices/summary', '$default'],
      ['/devices/summary', 'GET /devices'],
      ['/devices/summary/', undefined],
      ['/devices/Summary', undefined],
      ['/mobile-devices/summary', undefined],
      ['/mobile-devices/summary', 'GET /mobile-devices/summary'],
    ] as const)
      expect((await answer(path, routeKey)).statusCode, `${path} by ${routeKey}`).toBe(404);
    const wrongMethod = await handler(httpEvent('POST', '/devices/summary', { routeKey: '$default' }), lambdaContext());
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers?.Allow).toBe('GET');
    expect(jamf.stats().inventoryRequests).toBe(0);
    expect((await answer('/devices/summary')).statusCode).toBe(200);
  });

  it('counts a v1 feed the same way as the list', async () => {
    process.env.LATEST_OS_FEED_URL = sofa.feedUrl('v1');
    vi.setSystemTime(Date.parse('2025-09-20T00:00:00Z'));
    const handler = await freshContainer('devices');
    const list = bodyOf<Device[]>(await get(handler, '/devices'));
    expect(list.some((device) => device.os_missing_releases !== undefined)).toBe(true);
    expect(bodyOf(await get(handler, '/devices/summary'))).toEqual(summaryOfList(list));
  });
});

describe('GET /mobile-devices and its summary with patch compliance', () => {
  it('decides Apple TVs against the tvOS feed, hand-worked, and iPhones against iOS', async () => {
    const handler = await freshContainer('mobile-devices');
    const devices = bodyOf<Device[]>(await get(handler, '/mobile-devices'));
    const byId = new Map(devices.map((device) => [device.id, device]));
    const [first, second] = MOBILE_FLEET.map((record) => record.mobileDeviceId);
    // tvOS 18.5 lacks 18.6 (29 July 2025; 26 CVEs, CVE-2025-31277 and CVE-2025-6558 actively exploited): +14 d.
    expect(byId.get(first!)).toMatchObject({
      device_type: 'tvOS',
      os_is_latest: false,
      os_latest_version: '18.6',
      os_missing_releases: 1,
      os_unpatched_cves: 26,
      os_exploited_cves: ['CVE-2025-31277', 'CVE-2025-6558'],
      os_update_due_at: '2025-08-12T00:00:00.000Z',
      os_overdue: true,
    });
    // tvOS 26.5 lacks 26.6 (27 July 2026; 100 CVEs, none exploited): +21 d = 17 August.
    expect(byId.get(second!)).toMatchObject({
      os_is_latest: false,
      os_latest_version: '26.6',
      os_missing_releases: 1,
      os_unpatched_cves: 100,
      os_update_due_at: '2026-08-17T00:00:00.000Z',
      os_overdue: true,
    });
    expect(byId.get(second!)).not.toHaveProperty('os_exploited_cves');
    const phones = devices.filter((device) => device.device_type === 'iOS' && device.os_missing_releases !== undefined);
    expect(phones.length).toBeGreaterThan(0);
    for (const device of devices)
      if (device.os_missing_releases !== undefined) expect(device.os_missing_releases === 0, device.id).toBe(device.os_is_latest);
  });

  it('summarizes what the list implies, by device type too', async () => {
    const handler = await freshContainer('mobile-devices');
    for (const query of ['', 'device_type=tvOS', 'os_overdue=true&supervised=true', 'os_exploited=true']) {
      const list = bodyOf<Device[]>(await get(handler, '/mobile-devices', query));
      const summary = await get(handler, '/mobile-devices/summary', query);
      expect(bodyOf(summary), query).toEqual(summaryOfList(list));
    }
    expect((await get(handler, '/mobile-devices/summary', 'last_contact_before=2026-01-01T00:00:00Z')).statusCode).toBe(422);
    expect(jamf.stats().mobileRequests).toBe(1);
  });

  it('gives Apple TVs none of the fields without a tvOS feed', async () => {
    delete process.env.LATEST_TVOS_FEED_URL;
    const devices = bodyOf<Device[]>(await get(await freshContainer('mobile-devices'), '/mobile-devices', 'device_type=tvOS'));
    expect(devices.length).toBeGreaterThan(1);
    for (const device of devices) {
      expect(device).toMatchObject({ os_is_latest: false });
      expect(device).not.toHaveProperty('os_missing_releases');
    }
  });
});
