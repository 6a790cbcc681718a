import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf } from '../../../demo/fake-jamf.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
interface DeviceJson {
  id: string;
  os_name?: string;
  os_is_latest: boolean;
  managed?: boolean;
  supervised?: boolean;
  model_identifier?: string;
  last_contact_at?: string;
}

const VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'REDIS_URL',
];
const FLEET = generateJamfComputers(1_500, 41);

let jamf: FakeJamf;
let logs: CapturedLogs;
let restoreEnvironment: () => void;

beforeAll(async () => {
  jamf = await startFakeJamf({ devices: FLEET });
});
afterAll(async () => {
  await jamf.close();
});
beforeEach(() => {
  restoreEnvironment = saveEnvironment(VARIABLES);
  clearEnvironment(VARIABLES);
  Object.assign(process.env, {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: '26.1',
  });
  jamf.setDevices(FLEET);
  jamf.resetStats();
  logs = captureStdout();
});
afterEach(() => {
  logs.restore();
  restoreEnvironment();
});

/** A new container: the handler module loaded afresh under the current environment. */
const freshContainer = async (): Promise<Handler> => {
  vi.resetModules();
  return ((await import('../../../functions/devices.ts')) as { handler: Handler }).handler;
};

const get = (handler: Handler, query: string, headers: Record<string, string> = {}) =>
  handler({ ...httpEvent('GET', '/devices', { headers }), rawQueryString: query }, lambdaContext());

const devicesOf = (result: APIGatewayProxyStructuredResultV2) => JSON.parse(result.body!) as DeviceJson[];

/** The query of a `Link: </devices?…>; rel="next"` header. */
const nextQuery = (result: APIGatewayProxyStructuredResultV2): string | undefined => {
  const link = result.headers?.Link as string | undefined;
  if (link === undefined) return undefined;
  const match = /^<\/devices\?([^>]*)>; rel="next"$/.exec(link);
  expect(match, link).not.toBeNull();
  return match![1];
};

describe('GET /devices with paging, filters and conditional requests', () => {
  let handler: Handler;
  let all: DeviceJson[];
  beforeEach(async () => {
    handler = await freshContainer();
    const whole = await get(handler, '');
    expect(whole.statusCode).toBe(200);
    all = devicesOf(whole);
    expect(all).toHaveLength(FLEET.length);
    expect(whole.headers?.['X-Total-Count']).toBe(String(FLEET.length));
    expect(whole.headers?.Link).toBeUndefined();
  });

  const contactBefore = Date.parse('2026-11-10T00:00:00Z');
  it.each([
    ['no filter', '', () => true],
    ['os_is_latest=true', 'os_is_latest=true', (device: DeviceJson) => device.os_is_latest],
    ['os_is_latest=false', 'os_is_latest=false', (device: DeviceJson) => !device.os_is_latest],
    ['managed=true', 'managed=true', (device: DeviceJson) => device.managed === true],
    ['supervised=false', 'supervised=false', (device: DeviceJson) => device.supervised === false],
    ['os_name, any case', 'os_name=MACOS', (device: DeviceJson) => device.os_name === 'macOS'],
    ['model_identifier', 'model_identifier=mac14%2C2', (device: DeviceJson) => device.model_identifier === 'Mac14,2'],
    [
      'last_contact_before',
      'last_contact_before=2026-11-10T01:00:00%2B01:00',
      (device: DeviceJson) => device.last_contact_at === undefined || Date.parse(device.last_contact_at) < contactBefore,
    ],
    [
      "last_contact_before with its offset's + written bare",
      'last_contact_before=2026-11-10T01:00:00+01:00',
      (device: DeviceJson) => device.last_contact_at === undefined || Date.parse(device.last_contact_at) < contactBefore,
    ],
    [
      'several filters',
      'managed=true&supervised=true&os_is_latest=false',
      (device: DeviceJson) => device.managed === true && device.supervised === true && !device.os_is_latest,
    ],
  ])(
    'walks the Link headers from the first page through every matching device exactly once, in id order: %s',
    async (_label, filter, keep) => {
      const expected = all.filter(keep).map((device) => device.id);
      expect(expected.length).toBeGreaterThan(0);
      const seen: string[] = [];
      let query: string | undefined = [filter, 'limit=97'].filter(Boolean).join('&');
      let pages = 0;
      while (query !== undefined && pages < 100) {
        const page = await get(handler, query);
        expect(page.statusCode).toBe(200);
        expect(page.headers?.['X-Total-Count']).toBe(String(expected.length));
        const devices = devicesOf(page);
        expect(devices.length).toBeLessThanOrEqual(97);
        seen.push(...devices.map((device) => device.id));
        query = nextQuery(page);
        pages += 1;
      }
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 97));
      // Every page came from the one snapshot: the first request read Jamf, nothing since.
      expect(jamf.stats().tokenRequests).toBe(1);
      expect(
        accessLines(logs)
          .slice(1)
          .every((line) => line.cache_tier === 'memory'),
      ).toBe(true);
    },
  );

  it('keeps a filter value that spells another filter apart from those filters, in either order', async () => {
    const model = all.find((device) => device.os_name === 'macOS' && device.model_identifier !== undefined)!.model_identifier!;
    const real = `os_name=macOS&model_identifier=${encodeURIComponent(model)}`;
    const spelled = `os_name=${encodeURIComponent(`macOS&model_identifier=${model}`)}`;
    const expected = all.filter((device) => device.os_name === 'macOS' && device.model_identifier === model).map((device) => device.id);
    expect(expected.length).toBeGreaterThan(0);
    for (const order of [
      [spelled, real],
      [real, spelled],
    ]) {
      const container = await freshContainer();
      const answers = new Map<string, APIGatewayProxyStructuredResultV2>();
      for (const query of order) answers.set(query, await get(container, query));
      expect(devicesOf(answers.get(real)!).map((device) => device.id)).toEqual(expected);
      expect(answers.get(real)!.headers?.['X-Total-Count']).toBe(String(expected.length));
      expect(answers.get(spelled)!.body).toBe('[]');
      expect(answers.get(spelled)!.headers?.['X-Total-Count']).toBe('0');
    }
  });

  it('keeps the filters and the limit in the next link, with the cursor of the last device', async () => {
    const page = await get(handler, 'os_name=macOS&limit=3');
    const devices = devicesOf(page);
    expect(page.headers?.Link).toBe(`</devices?limit=3&os_name=macOS&after=${devices.at(-1)!.id}>; rel="next"`);
  });

  it('answers a cursor past the last device with an empty page, the total, and no next link', async () => {
    const page = await get(handler, `limit=10&after=${BigInt(all.at(-1)!.id) + 1n}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toBe('[]');
    expect(page.headers?.['X-Total-Count']).toBe(String(FLEET.length));
    expect(page.headers?.Link).toBeUndefined();
  });

  it('answers 304 without a body to a matching If-None-Match, and 200 to any other', async () => {
    const first = await get(handler, 'limit=50');
    const etag = first.headers?.ETag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(handler, 'limit=50', { 'if-none-match': header });
      expect(again.statusCode, header).toBe(304);
      expect(again.body ?? '').toBe('');
      expect(again.headers?.ETag).toBe(etag);
    }
    const other = await get(handler, 'limit=50', { 'if-none-match': '"something-else"' });
    expect(other.statusCode).toBe(200);
    expect(other.body).toBe(first.body);
    // Another page, another ETag.
    expect((await get(handler, 'limit=51')).headers?.ETag).not.toBe(etag);
  });

  it("tags a large page's gzip form apart from its plain form, and answers 304 to either copy with the tag it holds", async () => {
    const gzip = { 'accept-encoding': 'gzip' };
    const plain = await get(handler, 'limit=1000');
    const compressed = await get(handler, 'limit=1000', gzip);
    expect(compressed.headers?.['Content-Encoding']).toBe('gzip');
    expect(plain.headers?.['Content-Encoding']).toBeUndefined();
    const plainTag = plain.headers?.ETag as string;
    const gzipTag = compressed.headers?.ETag as string;
    expect(gzipTag).toBe(`${plainTag.slice(0, -1)}-gzip"`);
    expect(plain.headers?.Vary).toBe('Accept-Encoding');
    expect(compressed.headers?.Vary).toBe('Accept-Encoding');
    for (const [held, headers] of [
      [plainTag, {}],
      [gzipTag, gzip],
      [`W/${gzipTag}`, gzip],
    ] as const) {
      const again = await get(handler, 'limit=1000', { ...headers, 'if-none-match': held });
      expect(again.statusCode, held).toBe(304);
      expect(again.headers).toEqual({ ETag: held.replace(/^W\//, ''), Vary: 'Accept-Encoding' });
    }
    // A small page is never compressed: one tag.
    expect((await get(handler, 'limit=5', gzip)).headers?.ETag).toBe((await get(handler, 'limit=5')).headers?.ETag);
  });

  it('gives a new ETag once the list changed upstream, and 200 to the old one', async () => {
    process.env.DEVICES_CACHE_TTL_SECONDS = '1';
    process.env.DEVICES_CACHE_STALE_SECONDS = '0';
    const container = await freshContainer();
    const before = await get(container, 'limit=5');
    jamf.setDevices(
      FLEET.map((record, index) => (index === 0 ? { ...record, general: { ...(record.general as object), name: 'renamed-mac' } } : record)),
    );
    // Bounded wait for the one-second TTL.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const after = await get(container, 'limit=5', { 'if-none-match': before.headers?.ETag as string });
    expect(after.statusCode).toBe(200);
    expect(after.headers?.ETag).not.toBe(before.headers?.ETag);
    expect(devicesOf(after)[0]).toMatchObject({ name: 'renamed-mac' });
  });

  it.each([
    ['limit=0', '/limit'],
    ['limit=5001', '/limit'],
    ['limit=abc', '/limit'],
    ['limit=1&limit=2', '/limit'],
    ['sort=id', '/sort'],
    ['last_contact_before=2026-11-10', '/last_contact_before'],
    ['managed=yes', '/managed'],
    ['after=-5', '/after'],
  ])('refuses %s with the 422 envelope naming %s, without a lookup', async (query, path) => {
    jamf.resetStats();
    const fresh = await freshContainer();
    const result = await get(fresh, query);
    expect(result.statusCode).toBe(422);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    const { error } = JSON.parse(result.body!) as {
      error: { message: string; status: number; httpMessage: string; details: { path: string }[] };
    };
    expect(error).toMatchObject({
      message: 'Request validation failed: Parameter (query) failed schema validation',
      status: 422,
      httpMessage: 'Unprocessable Entity',
    });
    expect(error.details.map((detail) => detail.path)).toEqual([path]);
    expect(jamf.stats().tokenRequests).toBe(0);
  });

  it('writes exactly one access line per request, cache_tier one of the three values, refused queries included', async () => {
    await get(handler, 'limit=5');
    await get(handler, 'limit=0');
    const etag = (await get(handler, 'limit=5')).headers?.ETag as string;
    await get(handler, 'limit=5', { 'if-none-match': etag });
    const lines = accessLines(logs);
    expect(logs.lines()).toHaveLength(lines.length);
    expect(lines.map((line) => [line.status_code, line.cache_tier])).toEqual([
      [200, 'upstream'],
      [200, 'memory'],
      [422, 'upstream'],
      [200, 'memory'],
      [304, 'memory'],
    ]);
  });
});
