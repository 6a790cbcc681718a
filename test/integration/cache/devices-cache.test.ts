import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as credentialsHandler } from '../../../functions/credentials.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { generateJamfComputers, startFakeJamf, type FakeJamf, type JamfComputer } from '../../../demo/fake-jamf.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { saveEnvironment } from '../../support/environment.ts';

type Handler = (
  event: ReturnType<typeof httpEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<APIGatewayProxyStructuredResultV2>;
interface DeviceOut {
  id: string;
  os_version?: string;
  os_is_latest: boolean;
}

const computer = (id: string, version: string | null): JamfComputer => ({
  id,
  udid: `UDID-${id}`,
  general: { name: `mac-${id}`, supervised: true, remoteManagement: { managed: true }, reportDate: '2026-11-20T10:00:00Z' },
  hardware: { model: 'MacBook Air (M2, 2022)', modelIdentifier: 'Mac14,2', serialNumber: `C02${id}` },
  operatingSystem: version === null ? null : { name: 'macOS', version, build: 'X' },
  userAndLocation: null,
});

// Known versions first (asserted by hand), then a realistic fleet for volume.
const FLEET: JamfComputer[] = [
  computer('1', '26.1'),
  computer('2', '15.7.2'),
  computer('3', '26.0.1'),
  computer('4', null),
  ...generateJamfComputers(300, 7).map((record, index) => ({ ...record, id: String(100 + index) })),
];
const flagsOf = (body: string) => (JSON.parse(body) as DeviceOut[]).slice(0, 4).map((device) => [device.id, device.os_is_latest]);

const ENV_KEYS = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'REDIS_URL',
] as const;
const restoreEnvironment = saveEnvironment(ENV_KEYS);

/** A new Lambda container: the handler module loaded afresh (own memory tier and Redis client). */
const freshContainer = async (): Promise<Handler> => {
  vi.resetModules();
  return (await import('../../../functions/devices.ts')).handler as unknown as Handler;
};
const getDevices = (handler: Handler) => handler(httpEvent('GET', '/devices'), lambdaContext());

const timed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> => {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
};

describe('GET /devices through the cache tiers', () => {
  let redis: RedisServer;
  let raw: Redis;
  let jamf: FakeJamf;
  let logs: CapturedLogs;
  const upstreamReads = () => jamf.stats().tokenRequests;
  /** The device list's key: the one key the devices function writes (its name hashes the inventory). */
  const clusterKey = async (): Promise<string | undefined> => (await raw.keys('devices:*')).find((key) => !key.endsWith(':refresh-lock'));
  let DEVICES_CLUSTER_KEY = '';
  /** The upstream fill awaits its cluster write; this only guards against a slow loopback. */
  const clusterWritten = async (): Promise<void> => {
    for (let attempt = 0; attempt < 100 && (await clusterKey()) === undefined; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    DEVICES_CLUSTER_KEY = (await clusterKey()) ?? '';
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
    jamf = await startFakeJamf({ devices: FLEET, clientId: 'cache-client', clientSecret: 'cache-secret-value' });
  });
  afterAll(async () => {
    restoreEnvironment();
    raw.disconnect();
    await jamf.close();
    await redis.stop();
  });
  beforeEach(async () => {
    redis.resume();
    if ((await raw.ping().catch(() => 'down')) !== 'PONG') {
      await redis.restart();
      await raw.ping();
    }
    await raw.flushall();
    jamf.resetStats();
    Object.assign(process.env, {
      INVENTORY_URL: jamf.url,
      INVENTORY_CLIENT_ID: 'cache-client',
      INVENTORY_CLIENT_SECRET: 'cache-secret-value',
      LATEST_OS_VERSION: '26.1',
      DEVICES_CACHE_TTL_SECONDS: '60',
      REDIS_URL: redis.url,
    });
    delete process.env.DEVICES_CACHE_STALE_SECONDS;
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
    redis.resume();
  });

  it('answers upstream, then memory, then cluster in a fresh container, then upstream again after the TTL (no stale window)', async () => {
    process.env.DEVICES_CACHE_TTL_SECONDS = '1';
    process.env.DEVICES_CACHE_STALE_SECONDS = '0';
    const first = await freshContainer();
    const a = await getDevices(first);
    const b = await getDevices(first);
    await clusterWritten();
    const second = await freshContainer();
    const c = await getDevices(second);
    const d = await getDevices(second);
    // Bounded wait for the 1-second TTL to run out in both tiers.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const e = await getDevices(second);
    expect([a, b, c, d, e].map((result) => result.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'memory', 'cluster', 'memory', 'upstream']);
    for (const later of [b, c, d, e]) expect(later.body).toBe(a.body);
    expect(JSON.parse(a.body!)).toHaveLength(FLEET.length);
    expect(upstreamReads()).toBe(2);
  });

  it('writes exactly one access-log line per request and no other line, with cache_tier only on GET /devices', async () => {
    const devices = await freshContainer();
    await getDevices(devices);
    await getDevices(devices);
    await credentialsHandler(
      httpEvent('POST', '/credentials', { body: JSON.stringify({ client_id: 'a', client_secret: 'b' }) }),
      lambdaContext(),
    );
    await clusterWritten();
    await getDevices(await freshContainer());
    const lines = accessLines(logs);
    expect(logs.lines()).toHaveLength(4);
    expect(logs.raw().trim().split('\n')).toHaveLength(4);
    expect(lines.map((line) => [line.http_method, line.path, line.status_code])).toEqual([
      ['GET', '/devices', 200],
      ['GET', '/devices', 200],
      ['POST', '/credentials', 200],
      ['GET', '/devices', 200],
    ]);
    expect(lines.map((line) => line.cache_tier)).toEqual(['upstream', 'memory', undefined, 'cluster']);
    expect(lines[2]).not.toHaveProperty('cache_tier');
    expect(logs.raw()).not.toContain('cache-secret-value');
  });

  it('makes one upstream read for ten concurrent misses in one container', async () => {
    const devices = await freshContainer();
    const results = await Promise.all(Array.from({ length: 10 }, () => getDevices(devices)));
    expect(upstreamReads()).toBe(1);
    expect(jamf.stats().inventoryRequests).toBe(1);
    expect(new Set(results.map((result) => result.body)).size).toBe(1);
    expect(results.every((result) => result.statusCode === 200)).toBe(true);
    expect(accessLines(logs)).toHaveLength(10);
  });

  it('flags devices against the new LATEST_OS_VERSION in a fresh container served from a warm cluster', async () => {
    process.env.LATEST_OS_VERSION = '15.7';
    const before = await getDevices(await freshContainer());
    expect(flagsOf(before.body!)).toEqual([
      ['1', true],
      ['2', true],
      ['3', true],
      ['4', false],
    ]);
    await clusterWritten();
    process.env.LATEST_OS_VERSION = '26.1';
    const after = await getDevices(await freshContainer());
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'cluster']);
    expect(flagsOf(after.body!)).toEqual([
      ['1', true],
      ['2', false],
      ['3', false],
      ['4', false],
    ]);
    expect(upstreamReads()).toBe(1);
  });

  it('never serves one inventory the list cached for another sharing the same Redis', async () => {
    await getDevices(await freshContainer());
    const other = await startFakeJamf({ devices: [computer('77', '26.1')], clientId: 'cache-client', clientSecret: 'cache-secret-value' });
    try {
      process.env.INVENTORY_URL = other.url;
      const result = await getDevices(await freshContainer());
      expect((JSON.parse(result.body!) as DeviceOut[]).map((device) => device.id)).toEqual(['77']);
      expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'upstream']);
      expect(other.stats().tokenRequests).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('still answers 200 with the right devices, from upstream and in bounded time, after Redis is killed', async () => {
    const warm = await getDevices(await freshContainer());
    await clusterWritten();
    await redis.kill();
    const devices = await freshContainer();
    const { result, ms } = await timed(() => getDevices(devices));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(warm.body);
    expect(ms).toBeLessThan(3_000);
    expect((await getDevices(devices)).statusCode).toBe(200);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'upstream', 'memory']);
    // The failed lookup and the failed background write are reported once, as one transition.
    expect(logs.raw().match(/cache tier degraded/g)).toHaveLength(1);
  });

  it('still answers 200 with the right devices in bounded time while Redis hangs (SIGSTOP)', async () => {
    const warm = await getDevices(await freshContainer());
    await clusterWritten();
    redis.pause();
    const { result, ms } = await timed(async () => getDevices(await freshContainer()));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(warm.body);
    expect(ms).toBeLessThan(3_000);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'upstream']);
    expect(logs.raw().match(/cache tier degraded/g)).toHaveLength(1);
  });

  /** The content hash in a cluster value's header line (the snapshot's id), or undefined. */
  const snapshotIdOf = (value: Buffer | null): unknown => {
    try {
      return (JSON.parse(value!.subarray(0, value!.indexOf(10)).toString('utf8')) as { id?: unknown }).id;
    } catch {
      return undefined;
    }
  };

  const flipByte = (value: Buffer, at: number): Buffer => {
    const copy = Buffer.from(value);
    copy[at] = copy[at]! ^ 0xff;
    return copy;
  };

  it.each([
    ['bytes that are not the cluster format', () => Buffer.from('{"v":1,"devices":[{"id":"1"')],
    ['another format version', (good: Buffer) => Buffer.concat([Buffer.from('{"v":2,'), good.subarray('{"v":3,'.length)])],
    ['a value with one corrupted byte', (good: Buffer) => flipByte(good, good.length - 50)],
    ['a truncated value', (good: Buffer) => good.subarray(0, Math.floor(good.length / 2))],
  ])('serves the right devices from upstream when the cluster holds %s, and repairs the entry', async (_label, corrupt) => {
    const reference = await getDevices(await freshContainer());
    await clusterWritten();
    let good: Buffer | null = null;
    for (let attempt = 0; attempt < 50 && good === null; attempt += 1) {
      good = await raw.getBuffer(DEVICES_CLUSTER_KEY);
      if (good === null) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const garbage = corrupt(good!);
    expect(garbage.equals(good!)).toBe(false);
    await raw.set(DEVICES_CLUSTER_KEY, garbage, 'PX', 60_000);
    const result = await getDevices(await freshContainer());
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(reference.body);
    let repaired = false;
    for (let attempt = 0; attempt < 50 && !repaired; attempt += 1) {
      // Rewritten from a new read: a new stamp, the same devices.
      const now = await raw.getBuffer(DEVICES_CLUSTER_KEY);
      repaired = now !== null && !now.equals(garbage) && snapshotIdOf(now) === snapshotIdOf(good);
      if (!repaired) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(repaired).toBe(true);
    expect((await getDevices(await freshContainer())).body).toBe(reference.body);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'upstream', 'cluster']);
  });

  it('caches in memory only, per container, without REDIS_URL', async () => {
    delete process.env.REDIS_URL;
    const first = await freshContainer();
    await getDevices(first);
    await getDevices(first);
    await getDevices(await freshContainer());
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream', 'memory', 'upstream']);
    expect(await clusterKey()).toBeUndefined();
  });

  it('answers 500 with a generic message and logs the variable when REDIS_URL is not a Redis URL', async () => {
    process.env.REDIS_URL = 'https://user:hunter2-password@cache.example.internal';
    const result = await getDevices(await freshContainer());
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body!).error).toMatchObject({ status: 500, message: 'Service misconfigured' });
    const [line] = accessLines(logs);
    expect(JSON.stringify(line?.error)).toContain('REDIS_URL');
    expect(logs.raw()).not.toContain('hunter2-password');
    expect(upstreamReads()).toBe(0);
  });

  it('caches nothing from a failed upstream read and reads upstream again on the next request', async () => {
    const devices = await freshContainer();
    // Four 500s: the read's every attempt at page 0.
    jamf.setPageFault(0, { kind: 'status', status: 500, times: 4 });
    const failed = await getDevices(devices);
    expect(failed.statusCode).toBe(502);
    const recovered = await getDevices(devices);
    expect(recovered.statusCode).toBe(200);
    expect(accessLines(logs).map((line) => [line.status_code, line.cache_tier])).toEqual([
      [502, 'upstream'],
      [200, 'upstream'],
    ]);
    jamf.setPageFault(0, undefined);
  });
});
