import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import {
  datedJamfMobileDevice,
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  generateJamfMobileDevices,
  startFakeJamf,
  type FakeJamf,
  type JamfMobileDevice,
} from '../../../demo/fake-jamf.ts';
import { startFakeSofa, type FakeSofa } from '../../../demo/fake-sofa.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
interface MobileJson {
  id: string;
  device_type?: string;
  model_identifier?: string;
  os_version?: string;
  os_is_latest: boolean;
  os_latest_version?: string;
  last_inventory_at?: string;
  managed?: boolean;
  supervised?: boolean;
  name?: string;
}

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
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'DEVICES_FULL_REFRESH_SECONDS',
  'REDIS_URL',
];
const FLEET = generateJamfMobileDevices(1_200, 5);

/** A record in the shape Jamf's OpenAPI example of `/api/v2/mobile-devices/detail` gives. */
const jamfRecord = (
  id: string,
  deviceType: string,
  modelIdentifier: string,
  osVersion: string,
  extra: { response?: string } = {},
): JamfMobileDevice => ({
  mobileDeviceId: id,
  deviceType,
  hardware: {
    capacityMb: 100,
    serialNumber: `SERIAL${id}`,
    model: `Model ${modelIdentifier}`,
    modelIdentifier,
    modelNumber: 'MW742LL',
    extensionAttributes: [],
  },
  userAndLocation: {
    username: 'admin',
    realName: 'IT Bob',
    emailAddress: 'ITBob@jamf.com',
    position: 'IT Team Lead',
    extensionAttributes: [],
  },
  general: {
    udid: `0dad565fb40b010a9e490440188063a37872${id.padStart(4, '0')}`,
    displayName: `device-${id}`,
    lastInventoryUpdateDate: '2026-11-17T11:48:56.307Z',
    osVersion,
    osRapidSecurityResponse: extra.response ?? null,
    osBuild: '23G93',
    managed: true,
    supervised: true,
  },
});

/** The cases of the iOS rules (docs/api.md#os_is_latest) on demo/sofa/ios-data-feed-v2.json. */
const RULES_FLEET: JamfMobileDevice[] = [
  jamfRecord('1', 'iOS', 'iPhone18,1', '26.5.1'), // its device-specific 26.5.1 is below the universal 26.6.1
  jamfRecord('2', 'iOS', 'iPhone11,2', '18.7.10'), // 18.7.10 is for the older models only
  jamfRecord('3', 'iOS', 'iPhone11,2', '18.7.8'),
  jamfRecord('4', 'iOS', 'iPhone12,1', '18.7.8'), // not among 18.7.10's models: the universal 18.7.8 is its latest
  jamfRecord('5', 'iOS', 'IPAD7,11', '18.7.10'), // a product type in another case
  jamfRecord('6', 'tvOS', 'AppleTV14,1', '26.6.1'), // decided only with a tvOS reference
  jamfRecord('7', 'iOS', 'iPad15,7', '26.3.1', { response: '(a)' }),
  jamfRecord('8', 'iOS', 'iPhone10,1', '16.7.12'), // a major the feed does not list
  {
    mobileDeviceId: '9',
    deviceType: 'Unknown',
    hardware: { serialNumber: 'UNTYPED9', model: 'Unknown', modelIdentifier: 'Unknown' },
    userAndLocation: null,
  },
  jamfRecord('10', 'iOS', 'iPhone17,1', '26.6.1'),
];

let jamf: FakeJamf;
let sofa: FakeSofa;
let logs: CapturedLogs;
let restoreEnvironment: () => void;

beforeAll(async () => {
  [jamf, sofa] = await Promise.all([startFakeJamf({ devices: generateJamfComputers(50, 3), mobileDevices: FLEET }), startFakeSofa()]);
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
    LATEST_IOS_VERSION: '26.6.1',
  });
  jamf.setMobileDevices(FLEET);
  jamf.setMobilePageFault(0, undefined);
  jamf.resetStats();
  logs = captureStdout();
});
afterEach(() => {
  logs.restore();
  restoreEnvironment();
});

/** A new container of the mobileDevices function under the current environment. */
const freshContainer = async (): Promise<Handler> => {
  vi.resetModules();
  return ((await import('../../../functions/mobile-devices.ts')) as { handler: Handler }).handler;
};
const get = (handler: Handler, query = '', headers: Record<string, string> = {}) =>
  handler({ ...httpEvent('GET', '/mobile-devices', { headers }), rawQueryString: query }, lambdaContext());
const devicesOf = (result: APIGatewayProxyStructuredResultV2) => JSON.parse(result.body!) as MobileJson[];
const nextQuery = (result: APIGatewayProxyStructuredResultV2): string | undefined => {
  const link = result.headers?.Link as string | undefined;
  if (link === undefined) return undefined;
  const match = /^<\/mobile-devices\?([^>]*)>; rel="next"$/.exec(link);
  expect(match, link).not.toBeNull();
  return match![1];
};

describe('GET /mobile-devices over a Jamf Pro mobile inventory', () => {
  it('reads every mobile device once, in ascending id order, mapped in the documented key order, with one access line', async () => {
    const result = await get(await freshContainer());
    expect(result.statusCode).toBe(200);
    const devices = devicesOf(result);
    expect(devices.map((device) => device.id)).toEqual(FLEET.map((record) => record.mobileDeviceId));
    expect(result.headers?.['X-Total-Count']).toBe(String(FLEET.length));
    for (const device of devices) {
      expect(Object.values(device)).not.toContain(null);
      expect(Object.values(device)).not.toContain('');
    }
    const order = [
      'id',
      'device_type',
      'udid',
      'name',
      'serial_number',
      'model',
      'model_identifier',
      'os_version',
      'os_build',
      'os_rapid_security_response',
      'os_is_latest',
      'os_latest_version',
      'last_inventory_at',
      'username',
      'email',
      'managed',
      'supervised',
    ];
    for (const device of devices) {
      const keys = Object.keys(device);
      expect(keys).toEqual(order.filter((key) => keys.includes(key)));
    }
    // The demo fleet: iPhones and iPads latest and not, Apple TVs never, and devices Jamf could not type.
    expect(devices.some((device) => device.device_type === 'iOS' && device.os_is_latest)).toBe(true);
    expect(devices.some((device) => device.device_type === 'iOS' && !device.os_is_latest)).toBe(true);
    const tvs = devices.filter((device) => device.device_type === 'tvOS');
    expect(tvs.length).toBeGreaterThan(0);
    expect(tvs.every((device) => !device.os_is_latest && device.os_latest_version === undefined)).toBe(true);
    const untyped = devices.filter((device) => device.device_type === 'Unknown');
    expect(untyped.length).toBeGreaterThan(0);
    for (const device of untyped)
      expect(Object.keys(device).filter((key) => ['udid', 'name', 'os_version', 'managed', 'last_inventory_at'].includes(key))).toEqual([]);
    // The Jamf request as documented: its sections, sorted by mobileDeviceId.
    const [first] = jamf.stats().mobileLog;
    expect(first!.sections).toEqual(['GENERAL', 'HARDWARE', 'USER_AND_LOCATION']);
    expect(first!.sort).toBe('mobileDeviceId:asc');
    expect(jamf.stats().inventoryRequests).toBe(0);
    expect(accessLines(logs)).toEqual([
      expect.objectContaining({ path: '/mobile-devices', status_code: 200, cache_tier: 'upstream', service: 'mobileDevices' }),
    ]);
  });

  it('maps a record as Jamf writes it: displayName, emailAddress (not realName), lastInventoryUpdateDate, the response level', async () => {
    jamf.setMobileDevices(RULES_FLEET);
    const devices = devicesOf(await get(await freshContainer()));
    expect(devices.find((device) => device.id === '7')).toEqual({
      id: '7',
      device_type: 'iOS',
      udid: '0dad565fb40b010a9e490440188063a378720007',
      name: 'device-7',
      serial_number: 'SERIAL7',
      model: 'Model iPad15,7',
      model_identifier: 'iPad15,7',
      os_version: '26.3.1',
      os_build: '23G93',
      os_rapid_security_response: '(a)',
      os_is_latest: false,
      os_latest_version: '26.6.1',
      last_inventory_at: '2026-11-17T11:48:56.307Z',
      username: 'admin',
      email: 'ITBob@jamf.com',
      managed: true,
      supervised: true,
    });
    expect(devices.find((device) => device.id === '9')).toEqual({
      id: '9',
      device_type: 'Unknown',
      serial_number: 'UNTYPED9',
      model: 'Unknown',
      model_identifier: 'Unknown',
      os_is_latest: false,
    });
  });

  it('serves [] for a Jamf Pro without mobile devices', async () => {
    jamf.setMobileDevices([]);
    const result = await get(await freshContainer(), 'limit=10');
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe('[]');
    expect(result.headers?.['X-Total-Count']).toBe('0');
    expect(result.headers?.Link).toBeUndefined();
  });

  describe('paging and filters', () => {
    let handler: Handler;
    let all: MobileJson[];
    beforeEach(async () => {
      handler = await freshContainer();
      all = devicesOf(await get(handler));
    });

    const before = Date.parse('2026-11-10T00:00:00Z');
    it.each([
      ['no filter', '', () => true],
      ['os_is_latest=true', 'os_is_latest=true', (device: MobileJson) => device.os_is_latest],
      ['managed=false', 'managed=false', (device: MobileJson) => device.managed === false],
      ['supervised=true', 'supervised=true', (device: MobileJson) => device.supervised === true],
      ['device_type, any case', 'device_type=TVOS', (device: MobileJson) => device.device_type === 'tvOS'],
      ['model_identifier', 'model_identifier=iphone11%2C2', (device: MobileJson) => device.model_identifier === 'iPhone11,2'],
      [
        "last_inventory_before with its offset's + written bare",
        'last_inventory_before=2026-11-10T01:00:00+01:00',
        (device: MobileJson) => device.last_inventory_at === undefined || Date.parse(device.last_inventory_at) < before,
      ],
      [
        'several filters',
        'device_type=iOS&os_is_latest=false&managed=true',
        (device: MobileJson) => device.device_type === 'iOS' && !device.os_is_latest && device.managed === true,
      ],
    ])('walks the Link headers through every matching device exactly once, in id order: %s', async (_label, filter, keep) => {
      const expected = all.filter(keep).map((device) => device.id);
      expect(expected.length).toBeGreaterThan(0);
      const seen: string[] = [];
      let query: string | undefined = [filter, 'limit=97'].filter(Boolean).join('&');
      let pages = 0;
      while (query !== undefined && pages < 100) {
        const page = await get(handler, query);
        expect(page.statusCode).toBe(200);
        expect(page.headers?.['X-Total-Count']).toBe(String(expected.length));
        seen.push(...devicesOf(page).map((device) => device.id));
        query = nextQuery(page);
        pages += 1;
      }
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 97));
      expect(jamf.stats().tokenRequests).toBe(1);
      expect(
        accessLines(logs)
          .slice(1)
          .every((line) => line.cache_tier === 'memory'),
      ).toBe(true);
    });

    it('answers 304 to a matching If-None-Match, and another ETag for another page', async () => {
      const first = await get(handler, 'limit=50&device_type=iOS');
      const etag = first.headers?.ETag as string;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await get(handler, 'limit=50&device_type=iOS', { 'if-none-match': etag });
      expect(again.statusCode).toBe(304);
      expect(again.body ?? '').toBe('');
      expect((await get(handler, 'limit=51&device_type=iOS')).headers?.ETag).not.toBe(etag);
      expect(accessLines(logs).at(-2)).toMatchObject({ status_code: 304, cache_tier: 'memory' });
    });

    it.each([
      ['limit=0', '/limit'],
      ['managed=yes', '/managed'],
      ['after=x', '/after'],
      ['last_inventory_before=2026-11-10', '/last_inventory_before'],
      // The computers' own filters are not this route's.
      ['os_name=iOS', '/os_name'],
      ['last_contact_before=2026-11-10T00:00:00Z', '/last_contact_before'],
    ])('refuses %s with the 422 envelope naming %s, without a lookup', async (query, path) => {
      jamf.resetStats();
      const result = await get(await freshContainer(), query);
      expect(result.statusCode).toBe(422);
      const { error } = JSON.parse(result.body!) as { error: { message: string; details: { path: string }[] } };
      expect(error.message).toBe('Request validation failed: Parameter (query) failed schema validation');
      expect(error.details.map((detail) => detail.path)).toEqual([path]);
      expect(jamf.stats().tokenRequests).toBe(0);
      expect(accessLines(logs).at(-1)).toMatchObject({ status_code: 422, cache_tier: 'upstream' });
    });
  });

  describe('os_is_latest of iPhones and iPads', () => {
    const decisions = async () =>
      Object.fromEntries(
        devicesOf(await get(await freshContainer())).map((device) => [device.id, [device.os_is_latest, device.os_latest_version ?? null]]),
      );

    it('decides each against the highest release of its major that applies to its model, on the SOFA iOS feed', async () => {
      jamf.setMobileDevices(RULES_FLEET);
      process.env.LATEST_IOS_FEED_URL = sofa.feedUrl('ios-v2');
      expect(await decisions()).toEqual({
        '1': [false, '26.6.1'],
        '2': [true, '18.7.10'],
        '3': [false, '18.7.10'],
        '4': [true, '18.7.8'],
        '5': [true, '18.7.10'],
        '6': [false, null],
        '7': [false, '26.6.1'],
        '8': [false, '26.6.1'],
        '9': [false, null],
        '10': [true, '26.6.1'],
      });
    });

    it('leaves a major the feed does not list undecided without LATEST_IOS_VERSION', async () => {
      jamf.setMobileDevices(RULES_FLEET);
      delete process.env.LATEST_IOS_VERSION;
      process.env.LATEST_IOS_FEED_URL = sofa.feedUrl('ios-v2');
      expect((await decisions())['8']).toEqual([false, null]);
    });

    it('decides every iPhone and iPad against LATEST_IOS_VERSION alone without a feed, and no Apple TV', async () => {
      jamf.setMobileDevices(RULES_FLEET);
      const decided = await decisions();
      expect(decided).toMatchObject({ '2': [false, '26.6.1'], '6': [false, null], '9': [false, null], '10': [true, '26.6.1'] });
    });

    it('decides Apple TVs against the SOFA tvOS feed when one is set, iPhones and iPads still against iOS', async () => {
      // demo/sofa/tvos-data-feed-v2.json: tvOS 26's latest is 26.6, tvOS 18's 18.6.
      jamf.setMobileDevices([
        ...RULES_FLEET,
        jamfRecord('11', 'tvOS', 'AppleTV11,1', '18.5'),
        jamfRecord('12', 'tvOS', 'AppleTV14,1', '26.6'),
      ]);
      process.env.LATEST_TVOS_FEED_URL = sofa.feedUrl('tvos-v2');
      expect(await decisions()).toMatchObject({
        '2': [false, '26.6.1'],
        '6': [true, '26.6'],
        '9': [false, null],
        '10': [true, '26.6.1'],
        '11': [false, '18.6'],
        '12': [true, '26.6'],
      });
    });

    it('decides Apple TVs against LATEST_TVOS_VERSION alone without a tvOS feed, and changes the ETag with it', async () => {
      jamf.setMobileDevices(RULES_FLEET);
      const before = await get(await freshContainer());
      process.env.LATEST_TVOS_VERSION = '26.7';
      const after = await get(await freshContainer());
      const decided = Object.fromEntries(
        devicesOf(after).map((device) => [device.id, [device.os_is_latest, device.os_latest_version ?? null]]),
      );
      expect(decided).toMatchObject({ '6': [false, '26.7'], '9': [false, null], '10': [true, '26.6.1'] });
      expect(after.headers?.ETag).not.toBe(before.headers?.ETag);
    });

    it('ignores LATEST_OS_VERSION and needs LATEST_IOS_VERSION or LATEST_IOS_FEED_URL, naming the first in the log', async () => {
      delete process.env.LATEST_IOS_VERSION;
      process.env.LATEST_OS_VERSION = '26.6.2';
      const result = await get(await freshContainer());
      expect(result.statusCode).toBe(500);
      expect(result.body).not.toContain('LATEST_IOS_VERSION');
      expect(JSON.stringify(accessLines(logs).at(-1)!.error)).toContain(
        'LATEST_IOS_VERSION is required but not set (or set LATEST_IOS_FEED_URL)',
      );
      expect(jamf.stats().tokenRequests).toBe(0);
    });
  });

  it("answers 503 with Jamf's Retry-After when the mobile inventory is rate limited, and 502 on its 500, after retries", async () => {
    // A wait longer than the request's time is not waited for; a 500 is asked 4 times in all.
    jamf.setMobilePageFault(0, { kind: 'rate-limited', retryAfter: '90', times: 1 });
    const limited = await get(await freshContainer());
    expect(limited.statusCode).toBe(503);
    expect(limited.headers?.['Retry-After']).toBe('90');
    jamf.setMobilePageFault(0, { kind: 'status', status: 500, times: 4 });
    const failed = await get(await freshContainer());
    expect(failed.statusCode).toBe(502);
    expect(JSON.stringify(accessLines(logs).at(-1)!.error)).toContain('/api/v2/mobile-devices/detail page 0');
  });

  it('renews a token Jamf refuses mid-read, as on computers', async () => {
    jamf.setMobilePageFault(0, { kind: 'unauthorized', times: 1 });
    const result = await get(await freshContainer());
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(FLEET.length);
    expect(jamf.stats().tokenRequests).toBe(2);
  });
});

describe('GET /mobile-devices with the cluster tier and refreshDevices', () => {
  let redis: RedisServer;
  let raw: Redis;
  const scheduledEvent = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
  const freshRefresh = async () => {
    vi.resetModules();
    return (await import('../../../functions/refresh-devices.ts')).handler;
  };
  const keys = async () => {
    const all = await raw.keys('*devices:*');
    return {
      computers: all.find((key) => key.startsWith('devices:') && !key.endsWith(':refresh-lock')),
      mobile: all.find((key) => key.startsWith('mobile-devices:') && !key.endsWith(':refresh-lock')),
    };
  };
  const refreshLines = () =>
    logs
      .raw()
      .split('\n')
      .filter((line) => line.includes('"devices refresh"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const renamedFirst = (name: string): JamfMobileDevice[] =>
    FLEET.map((record, index) => (index === 0 ? { ...record, general: { ...(record.general as object), displayName: name } } : record));
  /** The first `count` records' inventory updated now, as Jamf dates it, the first of them renamed `name`. */
  const updated = (count: number, name: string): JamfMobileDevice[] => {
    const now = new Date().toISOString();
    return renamedFirst(name).map((record, index) => (index < count ? datedJamfMobileDevice(record, now) : record));
  };
  /**
   * Each mobile inventory request as its page size and whether it was filtered; the first two by size,
   * as an incremental read sends its probe (one record) and its first filtered page side by side.
   */
  const mobileRequestsAt = (fake: FakeJamf) => {
    const log = fake.stats().mobileLog.map((entry) => [entry.pageSize, entry.filter === null ? 'all' : 'changed'] as const);
    return [...log.slice(0, 2).sort((a, b) => a[0] - b[0]), ...log.slice(2)];
  };
  const storedMobile = async () => (await deviceSnapshotCodec.decode((await raw.getBuffer((await keys()).mobile!))!))!;
  const refreshOnce = async () => (await freshRefresh())(scheduledEvent, lambdaContext(60_000));

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
  });
  afterAll(async () => {
    raw.disconnect();
    await redis.stop();
  });
  beforeEach(async () => {
    await raw.flushall();
    process.env.REDIS_URL = redis.url;
    jamf.setPageFault(0, undefined);
  });

  it('warms both lists in one run, one line per inventory, and a fresh container serves the mobile list from the cluster', async () => {
    const outcome = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000));
    expect(outcome).toMatchObject({
      outcome: 'refreshed',
      computers: { outcome: 'refreshed', devices: 50, read: 'full' },
      mobile_devices: { outcome: 'refreshed', devices: FLEET.length, read: 'full', full_read_reason: 'no previous snapshot' },
    });
    const { computers, mobile } = await keys();
    expect(computers).toMatch(/^devices:v6:\{[0-9a-f]{16}\}$/);
    expect(mobile).toMatch(/^mobile-devices:v6:\{[0-9a-f]{16}\}$/);
    expect((await deviceSnapshotCodec.decode((await raw.getBuffer(mobile!))!))!.count).toBe(FLEET.length);
    expect(refreshLines().map((line) => [line.inventory, line.outcome])).toEqual([
      ['computers', 'refreshed'],
      ['mobile_devices', 'refreshed'],
    ]);
    expect(logs.lines().find((line) => '_aws' in line)).toMatchObject({
      DevicesRefreshSeconds: expect.any(Number),
      MobileDevicesRefreshSeconds: expect.any(Number),
    });

    jamf.resetStats();
    const page = await get(await freshContainer(), 'limit=10');
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['X-Total-Count']).toBe(String(FLEET.length));
    expect(accessLines(logs).at(-1)).toMatchObject({ path: '/mobile-devices', cache_tier: 'cluster' });
    expect(jamf.stats().mobileRequests).toBe(0);
  });

  it('reads after a full read only the mobile devices Jamf dates as updated, in exactly the filtered pages and one probe, and writes what a full read would', async () => {
    await refreshOnce();
    const previous = await storedMobile();
    jamf.setMobileDevices(updated(1_100, 'incremental-iphone'));
    jamf.resetStats();
    expect(await refreshOnce()).toMatchObject({
      outcome: 'refreshed',
      mobile_devices: { outcome: 'refreshed', devices: FLEET.length, read: 'incremental' },
    });
    const line = refreshLines().at(-1)!;
    expect(line).toMatchObject({ inventory: 'mobile_devices', outcome: 'refreshed', devices: FLEET.length, read: 'incremental' });
    expect(line).not.toHaveProperty('full_read_reason');
    // One record for the inventory's size, beside the first of the 1,100 updates' two pages of 1,000, under one token.
    expect(mobileRequestsAt(jamf)).toEqual([
      [1, 'all'],
      [1000, 'changed'],
      [1000, 'changed'],
    ]);
    // Since the previous read began less 60 s, to the second below, in ISO 8601 UTC.
    const since = new Date(Math.floor((previous.readAt - 60_000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    expect(
      new Set(
        jamf
          .stats()
          .mobileLog.filter((entry) => entry.filter !== null)
          .map((entry) => entry.filter),
      ),
    ).toEqual(new Set([`general.lastInventoryUpdateDate=ge=${since}`]));
    expect(
      jamf
        .stats()
        .mobileLog.filter((entry) => entry.filter !== null)
        .every((entry) => entry.sort === 'mobileDeviceId:asc' && entry.sections.join() === 'GENERAL,HARDWARE,USER_AND_LOCATION'),
    ).toBe(true);
    // One token for each inventory's read.
    expect(jamf.stats().tokenRequests).toBe(2);
    const merged = await storedMobile();
    expect(merged.fullReadAt).toBe(previous.fullReadAt);

    process.env.DEVICES_FULL_REFRESH_SECONDS = '0';
    expect(await refreshOnce()).toMatchObject({ mobile_devices: { read: 'full', full_read_reason: 'full read due' } });
    expect((await storedMobile()).id).toBe(merged.id);
    expect(devicesOf(await get(await freshContainer(), 'limit=1'))[0]!.name).toBe('incremental-iphone');
  });

  it('reads the mobile devices in full when Jamf refuses their filter, and says so on their line', async () => {
    // A Jamf Pro that cannot filter its mobile devices by their inventory date.
    const refusing = await startFakeJamf({
      devices: generateJamfComputers(50, 3),
      mobileDevices: FLEET,
      mobileFilterFields: ['general.lastEnrolledDate'],
    });
    try {
      process.env.INVENTORY_URL = refusing.url;
      await refreshOnce();
      refusing.setMobileDevices(updated(10, 'refused-filter-iphone'));
      refusing.resetStats();
      expect(await refreshOnce()).toMatchObject({
        outcome: 'refreshed',
        computers: { outcome: 'refreshed', read: 'incremental' },
        mobile_devices: { outcome: 'refreshed', devices: FLEET.length, read: 'full', full_read_reason: 'filter refused' },
      });
      expect(refreshLines().at(-1)).toMatchObject({
        inventory: 'mobile_devices',
        level: 'INFO',
        read: 'full',
        full_read_reason: 'filter refused',
      });
      expect(mobileRequestsAt(refusing)).toEqual([
        [1, 'all'],
        [1000, 'changed'],
        [1000, 'all'],
        [1000, 'all'],
      ]);
      // Served from the cluster: no further request.
      expect(devicesOf(await get(await freshContainer(), 'limit=1'))[0]!.name).toBe('refused-filter-iphone');
      expect(refusing.stats().mobileRequests).toBe(4);
    } finally {
      await refusing.close();
    }
  });

  it("leaves the other inventory's entry as it is when one fails, either way round, and says which failed", async () => {
    await (
      await freshRefresh()
    )(scheduledEvent, lambdaContext(60_000));
    const before = await keys();
    const computersBefore = await raw.getBuffer(before.computers!);
    const mobileBefore = await raw.getBuffer(before.mobile!);

    jamf.setMobileDevices(renamedFirst('renamed-iphone'));
    jamf.setPageFault(0, { kind: 'status', status: 500 });
    process.env.DEVICES_FULL_REFRESH_SECONDS = '0';
    const failure = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((await raw.getBuffer(before.computers!))!.equals(computersBefore!)).toBe(true);
    expect((await raw.getBuffer(before.mobile!))!.equals(mobileBefore!)).toBe(false);
    expect(
      refreshLines()
        .slice(-2)
        .map((line) => [line.inventory, line.level, line.outcome]),
    ).toEqual([
      ['computers', 'ERROR', 'failed'],
      ['mobile_devices', 'INFO', 'refreshed'],
    ]);
    expect(devicesOf(await get(await freshContainer(), 'limit=1'))[0]!.name).toBe('renamed-iphone');

    jamf.setPageFault(0, undefined);
    const mobileNow = await raw.getBuffer(before.mobile!);
    jamf.setMobileDevices(renamedFirst('never-served'));
    jamf.setMobilePageFault(0, { kind: 'status', status: 500 });
    const second = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000)).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(Error);
    expect((await raw.getBuffer(before.mobile!))!.equals(mobileNow!)).toBe(true);
    expect(
      refreshLines()
        .slice(-2)
        .map((line) => [line.inventory, line.outcome]),
    ).toEqual([
      ['computers', 'refreshed'],
      ['mobile_devices', 'failed'],
    ]);
    expect(devicesOf(await get(await freshContainer(), 'limit=1'))[0]!.name).toBe('renamed-iphone');
  });
});
