import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import {
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  startFakeJamf,
  type FakeJamf,
  type FakeJamfOptions,
  type JamfComputer,
} from '../../../demo/fake-jamf.ts';
import { lambdaContext, loadEvent } from '../../support/http-events.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';
import { startFakeSsm, type FakeSsm } from '../../support/fake-ssm.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type DeviceJson = Record<string, unknown> & { id: string; os_is_latest: boolean };

const VARIABLES = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'INVENTORY_USERNAME',
  'INVENTORY_PASSWORD',
  'LATEST_OS_VERSION',
  'DEVICES_CACHE_TTL_SECONDS',
  'REDIS_URL',
  'INVENTORY_CLIENT_SECRET_SSM',
  'AWS_ENDPOINT_URL_SSM',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
];
const BASIC = { username: 'jamf-api-reader', password: 'basic-password-do-not-log' };
const TOKEN_PREFIX = 'fake-jamf-token-';

let restoreEnvironment: () => void;
let logs: CapturedLogs;
let jamf: FakeJamf | undefined;
// One for the file (see test/support/fake-ssm.ts), each test with parameters of its own.
let ssm: FakeSsm;
const SSM_SECRET = '/jamf/served-client-secret';
const SSM_HANGING = '/jamf/stalled-client-secret';
const SSM_REFUSED = '/jamf/refused-signature';

beforeAll(async () => {
  ssm = await startFakeSsm({ [SSM_SECRET]: DEMO_JAMF_CREDENTIALS.clientSecret }, { hanging: [SSM_HANGING], badSignature: [SSM_REFUSED] });
});
afterAll(async () => {
  await ssm.close();
});

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

/** A fresh handler module (its lazily loaded config and source) under the given environment. */
const loadHandler = async (env: Record<string, string>): Promise<Handler> => {
  Object.assign(process.env, env);
  vi.resetModules();
  return ((await import('../../../functions/devices.ts')) as { handler: Handler }).handler;
};

const oauthEnv = (url: string) => ({
  INVENTORY_URL: url,
  INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
  INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
  LATEST_OS_VERSION: '26.6.2',
});

const withJamf = async (options: FakeJamfOptions, env: (url: string) => Record<string, string> = oauthEnv) => {
  jamf = await startFakeJamf(options);
  return loadHandler(env(jamf.url));
};

const getDevices = async (handler: Handler, remainingMs = 20_000) =>
  handler(await loadEvent('devices/success.json'), lambdaContext(remainingMs));

const devicesOf = (result: APIGatewayProxyStructuredResultV2) => JSON.parse(result.body!) as DeviceJson[];
const errorOf = (result: APIGatewayProxyStructuredResultV2) =>
  (JSON.parse(result.body!) as { error: { message: string; status: number; httpMessage: string } }).error;
const metricLines = () => logs.lines().filter((line) => '_aws' in line);

const expectAscendingUnique = (ids: string[]) => {
  for (let index = 1; index < ids.length; index += 1) expect(BigInt(ids[index]!) > BigInt(ids[index - 1]!)).toBe(true);
};

const expectNoSecrets = () => {
  const raw = logs.raw();
  expect(raw).not.toContain(DEMO_JAMF_CREDENTIALS.clientSecret);
  expect(raw).not.toContain(BASIC.password);
  expect(raw).not.toContain(Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64'));
  expect(raw).not.toContain(TOKEN_PREFIX);
};

/** Exactly one access line, with cache_tier "upstream", and (unless a metric was due) nothing else on stdout. */
const expectOneAccessLine = (status: number, { metric = false } = {}) => {
  const lines = accessLines(logs);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ http_method: 'GET', path: '/devices', status_code: status, cache_tier: 'upstream' });
  expect(logs.lines()).toHaveLength(metric ? 2 : 1);
  return lines[0]!;
};

describe('GET /devices over a Jamf Pro inventory', () => {
  it('reads all 4,500 devices over OAuth with the sample event, mapped and flagged', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(4500, 11), latencyMs: 50 });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    const devices = devicesOf(result);
    expect(devices).toHaveLength(4500);
    expectAscendingUnique(devices.map((device) => device.id));
    for (const device of devices) {
      expect(typeof device.os_is_latest).toBe('boolean');
      expect(Object.values(device)).not.toContain(null);
      expect(Object.values(device)).not.toContain('');
    }
    const latest = devices.filter((device) => device.os_is_latest).map((device) => device.os_version);
    // 26.6.2 and the beta above it, with and without the Jamf binary's `.0`.
    expect(new Set(latest)).toEqual(new Set(['26.6.2', '27.0', '27.0.0']));
    const stats = jamf!.stats();
    expect(stats.inventoryLog.map((entry) => entry.page).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(stats.maxConcurrentInventory).toBeLessThanOrEqual(4);
    expect(stats.maxConcurrentInventory).toBeGreaterThan(1);
    expectOneAccessLine(200);
    expectNoSecrets();
  });

  describe('an error page repeating the request keeps every credential out of the log', () => {
    const basicEnv = (url: string) => ({
      INVENTORY_URL: url,
      INVENTORY_USERNAME: BASIC.username,
      INVENTORY_PASSWORD: BASIC.password,
      LATEST_OS_VERSION: '26.1',
    });
    const failedLine = () => JSON.stringify(accessLines(logs)[0]);

    it('from the OAuth token endpoint (the form holds the client secret): its error codes only', async () => {
      const handler = await withJamf({ tokenFault: { kind: 'echo', status: 500 } });
      expect((await getDevices(handler)).statusCode).toBe(502);
      expect(failedLine()).toContain('/api/v1/oauth/token answered 500: error INTERNAL_ERROR');
      expectNoSecrets();
    });

    it('from the basic token endpoint (the Authorization header holds the password)', async () => {
      const handler = await withJamf({ tokenFault: { kind: 'echo', status: 400 }, ...BASIC }, basicEnv);
      expect((await getDevices(handler)).statusCode).toBe(502);
      expect(failedLine()).toContain('/api/v1/auth/token answered 400: error INTERNAL_ERROR');
      expectNoSecrets();
    });

    it('from an inventory page (the bearer token), on a 500 and on a 401 each time', async () => {
      const handler = await withJamf({ devices: generateJamfComputers(2500, 40), pageFaults: { 1: { kind: 'echo', status: 500 } } });
      expect((await getDevices(handler)).statusCode).toBe(502);
      expect(failedLine()).toMatch(/page 1 \(page-size 1000\) answered 500: .*Bearer \[redacted\]/);
      expectNoSecrets();
      const refused = await withJamf({ pageFaults: { 0: { kind: 'echo', status: 401 } } });
      expect((await getDevices(refused)).statusCode).toBe(502);
      expectNoSecrets();
    });

    it('from a token no header can carry (a line feed in it): the call fails without quoting it', async () => {
      const handler = await withJamf({ tokenFault: { kind: 'unusable-token' } });
      expect((await getDevices(handler)).statusCode).toBe(502);
      expect(failedLine()).toContain('a request header is not a valid header value');
      expectNoSecrets();
    });
  });

  it('authenticates with basic credentials when no OAuth client is configured', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(30, 12), ...BASIC }, (url) => ({
      INVENTORY_URL: url,
      INVENTORY_USERNAME: BASIC.username,
      INVENTORY_PASSWORD: BASIC.password,
      LATEST_OS_VERSION: '15.10',
    }));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    const devices = devicesOf(result);
    expect(devices).toHaveLength(30);
    for (const device of devices.filter((entry) => entry.os_version === '15.9')) expect(device.os_is_latest).toBe(false);
    for (const device of devices.filter((entry) => entry.os_version === '26.0 (25A354)')) expect(device.os_is_latest).toBe(true);
    expectOneAccessLine(200);
    expectNoSecrets();
  });

  it('reads every device when Jamf clamps the page size, never more than 4 pages at once', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(4500, 13), maxPageSize: 400, latencyMs: 30 });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(4500);
    const stats = jamf!.stats();
    const later = stats.inventoryLog.filter((entry) => entry.page > 0);
    // 12 pages of 400: page 0, then 11 more with 4 in flight at most.
    expect(later.map((entry) => entry.page).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(later.every((entry) => entry.pageSize === 400)).toBe(true);
    expect(stats.maxConcurrentInventory).toBeLessThanOrEqual(4);
    expect(stats.maxConcurrentInventory).toBeGreaterThan(1);
  });

  it('returns each id once in ascending numeric order when upstream shuffles and repeats records', async () => {
    const base = generateJamfComputers(2500, 14);
    const shuffled: JamfComputer[] = [...base].sort((a, b) => ((Number(a.id) * 7919) % 2503) - ((Number(b.id) * 7919) % 2503));
    shuffled.splice(1500, 0, { ...base[0]! }, { ...base[1999]! });
    const handler = await withJamf({ devices: shuffled, ignoreSort: true });
    const devices = devicesOf(await getDevices(handler));
    expect(devices.map((device) => device.id)).toEqual(base.map((record) => record.id));
  });

  it('drops records without an id and keeps the rest', async () => {
    const base = generateJamfComputers(5, 15);
    const withoutId = { ...base[2]!, id: undefined } as unknown as JamfComputer;
    const handler = await withJamf({ devices: [base[0]!, withoutId, base[4]!] });
    const devices = devicesOf(await getDevices(handler));
    expect(devices.map((device) => device.id)).toEqual([base[0]!.id, base[4]!.id]);
  });

  it('re-authenticates once when the token expires mid-read, succeeds and emits UpstreamAuthFailures', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(4500, 16), latencyMs: 10 });
    jamf!.invalidateTokensAtRequest(3);
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(4500);
    expect(jamf!.stats().tokenRequests).toBe(2);
    const metrics = metricLines();
    expect(metrics).toHaveLength(1);
    expect(metrics[0]).toMatchObject({ UpstreamAuthFailures: 1, service: 'devices' });
    expect(JSON.stringify(metrics[0])).toContain('"Name":"UpstreamAuthFailures"');
    expectOneAccessLine(200, { metric: true });
    expectNoSecrets();
  });

  it('fails with 502 when the renewed token is refused as well', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(2500, 17), pageFaults: { 1: { kind: 'unauthorized' } } });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(502);
    expect(errorOf(result)).toMatchObject({ status: 502, httpMessage: 'Bad Gateway' });
    // The first token served page 0, so its refusal is an expiry: renewed; then two fresh tokens in a
    // row are refused before serving anything, which is the credentials, not time.
    expect(jamf!.stats().tokenRequests).toBe(3);
    expect(metricLines()).toHaveLength(1);
    const line = expectOneAccessLine(502, { metric: true });
    expect(JSON.stringify(line.error)).toContain('credentials-rejected');
    expectNoSecrets();
  });

  it('fails with 502 when the token endpoint refuses the client secret, and never logs it', async () => {
    const handler = await withJamf({ clientSecret: 'the-real-secret' });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(502);
    expect(errorOf(result).message).toBe('The device inventory rejected the service credentials');
    expect(jamf!.stats().inventoryRequests).toBe(0);
    expect(metricLines()).toHaveLength(0);
    expectOneAccessLine(502);
    expectNoSecrets();
  });

  it.each([
    ['a 500 on one page', { kind: 'status', status: 500 } as const, 502, 'unavailable', true],
    ['a 503 on one page', { kind: 'status', status: 503 } as const, 502, 'unavailable', true],
    ['malformed JSON on one page', { kind: 'malformed' } as const, 502, 'unreadable', false],
    ['JSON of the wrong shape on one page', { kind: 'wrong-shape' } as const, 502, 'unreadable', false],
  ])('answers %s with %i and no partial list', async (_label, fault, status, variant, retried) => {
    const handler = await withJamf({ devices: generateJamfComputers(4500, 18), pageFaults: { 3: fault } });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(status);
    const error = errorOf(result);
    expect(error.status).toBe(status);
    expect(Array.isArray(JSON.parse(result.body!))).toBe(false);
    // A 5xx is asked 4 times in all (UpstreamRetries counts 3); an unreadable page once.
    expect(jamf!.stats().inventoryLog.filter((entry) => entry.page === 3)).toHaveLength(retried ? 4 : 1);
    const line = expectOneAccessLine(status, { metric: retried });
    // The operator's view: which upstream call failed and how, on the access line only.
    expect(JSON.stringify(line.error)).toContain(variant);
    expect(JSON.stringify(line.error)).toContain(`${jamf!.url}/api/v4/computers-inventory page 3`);
    expect(result.body).not.toContain('127.0.0.1');
    expect(result.body).not.toContain('computers-inventory');
    expectNoSecrets();
  });

  it.each([
    ['text that is not JSON', 'text/plain', 'not json {'],
    ['malformed JSON', 'application/json', '{"a":'],
    ['a JSON array', 'application/json', '[1,2,3]'],
    ['JSON nested 10,000 levels deep', 'application/json', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['a 1 MB body', 'application/octet-stream', 'x'.repeat(1024 * 1024)],
  ])('ignores a GET body (%s) and answers 200 with the list, no stack trace anywhere', async (_label, contentType, body) => {
    const handler = await withJamf({ devices: generateJamfComputers(30, 23) });
    const event = await loadEvent('devices/success.json');
    const result = await handler({ ...event, body, headers: { ...event.headers, 'content-type': contentType } }, lambdaContext());
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(30);
    expectOneAccessLine(200);
    expect(logs.raw()).not.toMatch(/\n\s+at /);
  });

  it("serves a fleet whose list is over Lambda's 6 MB limit gzip-compressed, and refuses it uncompressed with a clear 500", async () => {
    const handler = await withJamf({ devices: generateJamfComputers(16_000, 24) });
    const event = await loadEvent('devices/success.json');
    const compressed = await handler({ ...event, headers: { ...event.headers, 'accept-encoding': 'gzip, deflate, br' } }, lambdaContext());
    expect(compressed.statusCode).toBe(200);
    expect(compressed.isBase64Encoded).toBe(true);
    expect(compressed.headers).toMatchObject({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
    expect(compressed.body!.length).toBeLessThan(6 * 1024 * 1024);
    const devices = JSON.parse(gunzipSync(Buffer.from(compressed.body!, 'base64')).toString('utf8')) as DeviceJson[];
    expect(devices).toHaveLength(16_000);
    expect(Buffer.byteLength(JSON.stringify(devices))).toBeGreaterThan(6 * 1024 * 1024);

    const plain = await handler(event, lambdaContext());
    expect(plain.statusCode).toBe(500);
    expect(errorOf(plain).message).toMatch(/Accept-Encoding: gzip/);
    const line = accessLines(logs)[1]!;
    expect(line).toMatchObject({ status_code: 500, cache_tier: 'memory' });
    expect(JSON.stringify(line.error)).toContain("exceeds Lambda's 6 MB response limit");
  });

  it('reads the exact list through transient failures on a third of the pages and the token endpoint: one retry line, UpstreamRetries', async () => {
    const fleet = generateJamfComputers(6_000, 42);
    const handler = await withJamf({
      devices: fleet,
      tokenFault: { kind: 'status', status: 503, times: 1 },
      pageFaults: { 1: { kind: 'status', status: 502, gateway: true, times: 1 }, 4: { kind: 'rate-limited', retryAfter: '1', times: 1 } },
    });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result).map((device) => device.id)).toEqual(
      fleet.map((record) => String(record.id)).sort((a, b) => Number(a) - Number(b)),
    );
    const pages = jamf!.stats().inventoryLog.map((entry) => entry.page);
    expect(pages.sort()).toEqual([0, 1, 1, 2, 3, 4, 4, 5]);
    const retried = [...logs.lines(), ...logs.errorLines()].filter((line) => line.message === 'upstream retried');
    expect(retried).toHaveLength(1);
    expect(retried[0]).toMatchObject({
      level: 'WARN',
      upstream: 'jamf',
      inventory: 'computers',
      retries: 3,
      answers: { '503': 1, '502': 1, '429': 1 },
      outcome: 'recovered',
    });
    expect(JSON.stringify(metricLines())).toContain('"Name":"UpstreamRetries"');
    expectOneAccessLine(200, { metric: true });
    expectNoSecrets();
  });

  it('answers 502 after exactly 4 attempts at a page that never recovers, with one retry line', async () => {
    const handler = await withJamf({
      devices: generateJamfComputers(3_000, 43),
      pageFaults: { 2: { kind: 'status', status: 504, gateway: true } },
    });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(502);
    expect(Array.isArray(JSON.parse(result.body!))).toBe(false);
    expect(jamf!.stats().inventoryLog.filter((entry) => entry.page === 2)).toHaveLength(4);
    const retried = [...logs.lines(), ...logs.errorLines()].filter((line) => line.message === 'upstream retried');
    expect(retried).toHaveLength(1);
    expect(retried[0]).toMatchObject({ retries: 3, answers: { '504': 4 }, outcome: 'gave up', gave_up: 'attempts' });
    expectOneAccessLine(502, { metric: true });
  });

  it('answers 502 and caches nothing when a page in the middle comes back short', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(4500, 19), pageFaults: { 2: { kind: 'short', keep: 0, times: 1 } } });
    const failed = await getDevices(handler);
    expect(failed.statusCode).toBe(502);
    expect(errorOf(failed).message).not.toMatch(/short|page/);
    const retried = await getDevices(handler);
    expect(retried.statusCode).toBe(200);
    expect(JSON.parse(retried.body!)).toHaveLength(4500);
  });

  it('answers 504 within the Lambda deadline when a page hangs', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(2500, 19), pageFaults: { 2: { kind: 'hang' } } });
    const started = performance.now();
    const result = await getDevices(handler, 2500);
    const elapsed = performance.now() - started;
    expect(result.statusCode).toBe(504);
    expect(errorOf(result)).toMatchObject({ status: 504, httpMessage: 'Gateway Timeout' });
    expect(elapsed).toBeLessThan(2500);
    // The read's own budget ended it (the deadline less its margin), not the chain's last-resort 504.
    expect(expectOneAccessLine(504).error).toMatchObject({
      name: 'UpstreamError',
      message: expect.stringMatching(/^Upstream inventory timed-out: .*did not complete in time/),
    });
  });

  it('answers 504 at once when the Lambda has no time left for a read', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(10, 20) });
    const result = await getDevices(handler, 500);
    expect(result.statusCode).toBe(504);
    expect(jamf!.stats().inventoryRequests).toBe(0);
  });

  const ssmEnv = (parameter: string) => (url: string) => ({
    INVENTORY_URL: url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET_SSM: parameter,
    LATEST_OS_VERSION: '26.1',
    AWS_ENDPOINT_URL_SSM: ssm.endpoint,
    ...LOCAL_AWS_ENV,
  });

  it('reads the client secret from its SSM parameter (decrypted) and serves the inventory, the secret in no log line', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(12, 22) }, ssmEnv(SSM_SECRET));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(200);
    expect(devicesOf(result)).toHaveLength(12);
    expect(ssm.requests().filter((request) => request.Name === SSM_SECRET)).toEqual([{ Name: SSM_SECRET, WithDecryption: true }]);
    expectOneAccessLine(200);
    expectNoSecrets();
  });

  it('answers 500 "Service misconfigured" naming the SSM variable in the log when the parameter does not exist', async () => {
    const handler = await withJamf({}, ssmEnv('/jamf/missing'));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(500);
    expect(errorOf(result).message).toBe('Service misconfigured');
    expect(result.body).not.toContain('/jamf/missing');
    expect(JSON.stringify(accessLines(logs)[0])).toContain('INVENTORY_CLIENT_SECRET_SSM could not be read from SSM');
    expect(jamf!.stats().tokenRequests).toBe(0);
  });

  it("logs SSM's refusal by name and status, never its text, which quotes the signed request (session token included)", async () => {
    const handler = await withJamf({}, ssmEnv(SSM_REFUSED));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(500);
    expect(logs.raw()).toContain('INVENTORY_CLIENT_SECRET_SSM could not be read from SSM');
    expect(logs.raw()).toContain('AWS error reply (HTTP 400');
    // Powertools keeps the first client of the file, so which token it signs with is not this test's:
    // no part of SSM's text may show.
    expect(logs.raw()).not.toMatch(/Canonical String|x-amz-security-token/);
  });

  it('answers 504 with cache_tier within the deadline when reading the client secret from SSM hangs', async () => {
    const handler = await withJamf({}, ssmEnv(SSM_HANGING));
    const started = Date.now();
    const result = await getDevices(handler, 2_500);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(result.statusCode).toBe(504);
    expect(errorOf(result).status).toBe(504);
    expect(expectOneAccessLine(504).error).toMatchObject({
      name: 'UpstreamError',
      message: expect.stringMatching(/^Upstream inventory timed-out: .*reading its secret\) did not complete in time/),
    });
    expect(jamf!.stats().tokenRequests).toBe(0);
  });

  it('answers 503 with upstream Retry-After when rate limited', async () => {
    const handler = await withJamf({
      devices: generateJamfComputers(2500, 21),
      pageFaults: { 1: { kind: 'rate-limited', retryAfter: '17' } },
    });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('17');
    expect(errorOf(result)).toMatchObject({ status: 503, httpMessage: 'Service Unavailable' });
    expectOneAccessLine(503);
  });

  it('answers 503 with a default Retry-After when upstream gives none', async () => {
    const handler = await withJamf({ tokenFault: { kind: 'rate-limited' } });
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('5');
  });

  it('answers 502 when the inventory is unreachable', async () => {
    jamf = await startFakeJamf();
    const url = jamf.url;
    await jamf.close();
    jamf = undefined;
    const handler = await loadHandler(oauthEnv(url));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(502);
    // A refused connection is retried (the metric) before the read gives up.
    expectOneAccessLine(502, { metric: true });
  });

  it.each([
    ['INVENTORY_URL', (url: string) => ({ ...oauthEnv(url), INVENTORY_URL: '' })],
    ['LATEST_OS_VERSION', (url: string) => ({ ...oauthEnv(url), LATEST_OS_VERSION: '' })],
    ['INVENTORY_CLIENT_SECRET', (url: string) => ({ ...oauthEnv(url), INVENTORY_CLIENT_SECRET: '' })],
    ['INVENTORY_CLIENT_ID', (url: string) => ({ INVENTORY_URL: url, LATEST_OS_VERSION: '26.1' })],
  ])('answers 500 with a generic message when %s is missing, naming it only in the log', async (variable, env) => {
    const handler = await withJamf({}, env);
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(500);
    expect(errorOf(result)).toEqual({ message: 'Service misconfigured', status: 500, httpMessage: 'Internal Server Error' });
    expect(result.body).not.toContain(variable);
    const line = expectOneAccessLine(500);
    expect(JSON.stringify(line.error)).toContain(variable);
    expect(jamf!.stats().tokenRequests).toBe(0);
  });

  it('answers 500 naming LATEST_OS_VERSION in the log when it is not a version', async () => {
    const handler = await withJamf({}, (url) => ({ ...oauthEnv(url), LATEST_OS_VERSION: 'latest' }));
    const result = await getDevices(handler);
    expect(result.statusCode).toBe(500);
    expect(JSON.stringify(expectOneAccessLine(500).error)).toContain('LATEST_OS_VERSION');
  });

  it('answers POST /devices with 405 and Allow: GET (sample event)', async () => {
    const handler = await withJamf({});
    const result = await handler(await loadEvent('devices/wrong-method.json'), lambdaContext());
    expect(result.statusCode).toBe(405);
    expect(result.headers?.Allow).toBe('GET');
    expect(errorOf(result)).toMatchObject({ status: 405, httpMessage: 'Method Not Allowed' });
    expect(jamf!.stats().tokenRequests).toBe(0);
  });

  it('answers a second request from the container without another upstream read', async () => {
    const handler = await withJamf({ devices: generateJamfComputers(20, 22) });
    const first = await getDevices(handler);
    const second = await getDevices(handler);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(jamf!.stats().tokenRequests).toBe(1);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'memory']);
    expect(logs.lines()).toHaveLength(2);
  });
});
