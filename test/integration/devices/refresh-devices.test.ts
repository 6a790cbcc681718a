import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { deviceSnapshotCodec } from '../../../lib/devices/device-snapshot-codec.ts';
import {} from '../../../lib/devices/build-snapshot.ts';
import { snapshotDevices, buildComputerSnapshot } from '../../support/snapshot-devices.ts';
import { datedJamfComputer, generateJamfComputers, startFakeJamf, type FakeJamf, type JamfComputer } from '../../../demo/fake-jamf.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';

type DevicesHandler = (event: ReturnType<typeof httpEvent>, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type RefreshHandler = (
  event: unknown,
  context?: Context,
) => Promise<{ outcome: string; devices?: number; read?: string; full_read_reason?: string; duration_ms: number }>;

const ENV_KEYS = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
  'DEVICES_FULL_REFRESH_SECONDS',
  'REDIS_URL',
] as const;
const CLIENT = { clientId: 'refresh-client', clientSecret: 'refresh-secret-value' };
const FLEET = generateJamfComputers(2_500, 13);
const scheduledEvent = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

/** A fresh Lambda container of each function: its module loaded anew (own memory and Redis client). */
const freshDevices = async (): Promise<DevicesHandler> => {
  vi.resetModules();
  return ((await import('../../../functions/devices.ts')) as { handler: DevicesHandler }).handler;
};
/** A fresh refresh container, whole: what it says of each inventory. */
const freshRefreshRun = async () => {
  vi.resetModules();
  return (await import('../../../functions/refresh-devices.ts')).handler;
};
/** A fresh refresh container, as what it says of the computers' list (the mobile devices' have tests of their own). */
const freshRefresh = async (): Promise<RefreshHandler> => {
  const run = await freshRefreshRun();
  return async (event, context) => (await run(event, context)).computers;
};
const namesOf = (result: APIGatewayProxyStructuredResultV2) =>
  (JSON.parse(result.body!) as { name?: string }[]).map((device) => device.name);
/** The first record renamed, its inventory report dated now as Jamf dates a change. */
const renamed = (records: readonly JamfComputer[], name: string): JamfComputer[] =>
  records.map((record, index) =>
    index === 0
      ? datedJamfComputer({ ...record, general: { ...(record.general as object), name } }, 'reportDate', new Date().toISOString())
      : record,
  );
/** The first `count` records in contact now, as Jamf dates a check-in. */
const touched = (records: readonly JamfComputer[], count: number): JamfComputer[] => {
  const now = new Date().toISOString();
  return records.map((record, index) => (index < count ? datedJamfComputer(record, 'lastContact', now) : record));
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A loopback pass-through to the fake Jamf that can hold an inventory request: after `hold()`, the
 * next one waits (having resolved `arrived`) until the test calls `release()`; others pass. A
 * refresh caught mid-read, with its lock taken, for exactly as long as the test needs.
 */
const startHoldingJamf = async (target: string) => {
  let next: { arrived: PromiseWithResolvers<void>; gate: PromiseWithResolvers<void>; path: string } | undefined;
  const gates = new Set<PromiseWithResolvers<void>>();
  const server = createServer((incoming, response) => {
    void (async () => {
      const held = next;
      if (held !== undefined && (incoming.url ?? '').startsWith(held.path)) {
        next = undefined;
        held.arrived.resolve();
        await held.gate.promise;
      }
      const outgoing = httpRequest(
        new URL(incoming.url ?? '/', target),
        { method: incoming.method, headers: incoming.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      outgoing.on('error', () => response.destroy());
      incoming.pipe(outgoing);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const releaseAll = () => {
    for (const gate of gates) gate.resolve();
    gates.clear();
    next = undefined;
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Holds the next request to `path` (the computers' inventory); `arrived` resolves once it is held, `release` lets it through. */
    hold: (path = '/api/v4/computers-inventory') => {
      next = { arrived: Promise.withResolvers<void>(), gate: Promise.withResolvers<void>(), path };
      gates.add(next.gate);
      return { arrived: next.arrived.promise, release: next.gate.resolve };
    },
    releaseAll,
    close: async () => {
      releaseAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

describe('refreshDevices and stale-while-revalidate', () => {
  let redis: RedisServer;
  let raw: Redis;
  let jamf: FakeJamf;
  let holding: Awaited<ReturnType<typeof startHoldingJamf>>;
  let logs: CapturedLogs;
  const restoreEnvironment = saveEnvironment(ENV_KEYS);
  /** Reads of the computers' inventory: whole ones, and the incremental ones' probe (each starts at page 0, unfiltered). */
  const upstreamReads = () => jamf.stats().inventoryLog.filter((entry) => entry.page === 0 && entry.filter === null).length;
  /** The device list's key and its lock (their names hash the inventory). */
  const keys = async () => {
    const all = await raw.keys('devices:*');
    return { list: all.find((key) => !key.endsWith(':refresh-lock')), lock: all.find((key) => key.endsWith(':refresh-lock')) };
  };
  /** The `devices refresh` lines the refresh wrote (INFO to stdout, ERROR to stderr). */
  const refreshLines = () =>
    logs
      .raw()
      .split('\n')
      .filter((line) => line.includes('"devices refresh"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.inventory === 'computers');

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
    jamf = await startFakeJamf({ devices: FLEET, ...CLIENT });
    holding = await startHoldingJamf(jamf.url);
  });
  afterAll(async () => {
    restoreEnvironment();
    raw.disconnect();
    await holding.close();
    await jamf.close();
    await redis.stop();
  });
  beforeEach(async () => {
    await raw.flushall();
    jamf.setDevices(FLEET);
    jamf.setLatencyMs(0);
    for (const page of [0, 1, 2]) jamf.setPageFault(page, undefined);
    jamf.setTokenFault(undefined);
    jamf.resetStats();
    clearEnvironment(ENV_KEYS);
    Object.assign(process.env, {
      INVENTORY_URL: jamf.url,
      INVENTORY_CLIENT_ID: CLIENT.clientId,
      INVENTORY_CLIENT_SECRET: CLIENT.clientSecret,
      LATEST_OS_VERSION: '26.1',
      REDIS_URL: redis.url,
    });
    logs = captureStdout();
  });
  afterEach(() => {
    holding.releaseAll();
    logs.restore();
  });

  it('writes the cluster entry that a new devices container then serves without reading Jamf, with its line and metric', async () => {
    const refresh = await freshRefresh();
    const outcome = await refresh(scheduledEvent, lambdaContext(60_000));
    expect(outcome).toMatchObject({ outcome: 'refreshed', devices: FLEET.length });
    expect((await keys()).list).toBeDefined();
    expect((await keys()).lock).toBeUndefined();
    const [line] = refreshLines();
    expect(line).toMatchObject({ level: 'INFO', message: 'devices refresh', outcome: 'refreshed', devices: FLEET.length });
    expect(typeof line!.duration_ms).toBe('number');
    const metric = logs.lines().find((entry) => '_aws' in entry);
    expect(metric).toMatchObject({ DevicesRefreshSeconds: expect.any(Number) });
    expect(JSON.stringify(metric)).toContain('DevicesRefreshSeconds');

    jamf.resetStats();
    const devices = await freshDevices();
    const page = await devices({ ...httpEvent('GET', '/devices'), rawQueryString: 'limit=10' }, lambdaContext());
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['X-Total-Count']).toBe(String(FLEET.length));
    expect(accessLines(logs).map((entry) => entry.cache_tier)).toEqual(['cluster']);
    expect(upstreamReads()).toBe(0);
    expect(logs.raw()).not.toContain(CLIENT.clientSecret);
  });

  it('does nothing while another refresh of the same inventory holds the lock', async () => {
    process.env.INVENTORY_URL = holding.url;
    // The first refresh is held mid-read of Jamf, after taking the lock, until the second has run.
    const firstRead = holding.hold();
    const first = (await freshRefresh())(scheduledEvent, lambdaContext(60_000));
    await firstRead.arrived;
    const second = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000));
    expect(second.outcome).toBe('skipped');
    firstRead.release();
    expect((await first).outcome).toBe('refreshed');
    expect(upstreamReads()).toBe(1);
    expect(refreshLines().map((line) => line.outcome)).toEqual(['skipped', 'refreshed']);
  });

  it('starts no run while another is still reading, so Jamf never sees two runs at once: the later run skips both inventories', async () => {
    process.env.INVENTORY_URL = holding.url;
    // The first run has refreshed the computers and is held reading the mobile devices.
    const mobileRead = holding.hold('/api/v2/mobile-devices/detail');
    const first = (await freshRefreshRun())(scheduledEvent, lambdaContext(60_000));
    await mobileRead.arrived;
    const second = await (await freshRefreshRun())(scheduledEvent, lambdaContext(60_000));
    expect(second).toMatchObject({ outcome: 'skipped', computers: { outcome: 'skipped' }, mobile_devices: { outcome: 'skipped' } });
    mobileRead.release();
    expect(await first).toMatchObject({
      outcome: 'refreshed',
      computers: { outcome: 'refreshed' },
      mobile_devices: { outcome: 'refreshed' },
    });
    expect(upstreamReads()).toBe(1);
    // The run lock is freed by its holder: the next run refreshes.
    expect((await (await freshRefresh())(scheduledEvent, lambdaContext(60_000))).outcome).toBe('refreshed');
  });

  it("holds the lock with an expiry while it runs, and a crashed holder's lock expires", async () => {
    process.env.INVENTORY_URL = holding.url;
    const read = holding.hold();
    const running = (await freshRefresh())(scheduledEvent, lambdaContext(60_000));
    await read.arrived;
    const { lock } = await keys();
    expect(lock).toBeDefined();
    const pttl = await raw.pttl(lock!);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(15 * 60 * 1000);
    read.release();
    expect((await running).outcome).toBe('refreshed');
    expect((await keys()).lock).toBeUndefined();
    // A refresh that crashed holding the lock (its value is not ours): later refreshes skip until it expires.
    await raw.set(lock!, 'crashed-refresh', 'PX', 60_000);
    expect((await (await freshRefresh())(scheduledEvent, lambdaContext(60_000))).outcome).toBe('skipped');
    expect(await raw.get(lock!)).toBe('crashed-refresh');
    // Its expiry comes (brought forward; Redis drops it, no refresh does).
    await raw.pexpire(lock!, 50);
    for (let attempt = 0; attempt < 100 && (await raw.exists(lock!)) === 1; attempt += 1) await sleep(20);
    expect(await raw.exists(lock!)).toBe(0);
    expect((await (await freshRefresh())(scheduledEvent, lambdaContext(60_000))).outcome).toBe('refreshed');
  });

  it.each([
    ['a full read: Jamf answers 500', true, (fake: FakeJamf) => fake.setPageFault(1, { kind: 'status', status: 500 })],
    ['a full read: Jamf refuses the token twice', true, (fake: FakeJamf) => fake.setPageFault(1, { kind: 'unauthorized' })],
    ['a full read: a page never answers', true, (fake: FakeJamf) => fake.setPageFault(1, { kind: 'hang' })],
    // 1,500 changed records: the filtered read's second page fails.
    ['an incremental read: Jamf answers 500', false, (fake: FakeJamf) => fake.setPageFault(1, { kind: 'status', status: 500 })],
  ])('leaves the previous entry in place and served when the refresh fails: %s', async (_label, fullRead, fault) => {
    await (
      await freshRefresh()
    )(scheduledEvent, lambdaContext(60_000));
    const { list } = await keys();
    const before = await raw.getBuffer(list!);
    if (fullRead) process.env.DEVICES_FULL_REFRESH_SECONDS = '0';
    jamf.setDevices(fullRead ? renamed(FLEET, 'never-served') : touched(renamed(FLEET, 'never-served'), 1_500));
    jamf.resetStats();
    fault(jamf);
    const failure = await (await freshRefresh())(scheduledEvent, lambdaContext(3_000)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((await raw.getBuffer(list!))!.equals(before!)).toBe(true);
    expect((await keys()).lock).toBeUndefined();
    expect(refreshLines().at(-1)).toMatchObject({ level: 'ERROR', outcome: 'failed' });
    expect(jamf.stats().inventoryLog.some((entry) => entry.filter !== null)).toBe(!fullRead);
    const served = await (await freshDevices())(httpEvent('GET', '/devices'), lambdaContext());
    expect(served.statusCode).toBe(200);
    expect(namesOf(served)).not.toContain('never-served');
    expect(accessLines(logs).at(-1)).toMatchObject({ cache_tier: 'cluster' });
  });

  /** The retry lines of the computers' reads (WARN, on stderr). */
  const retryLines = () => logs.errorLines().filter((line) => line.message === 'upstream retried' && line.inventory === 'computers');

  it('refreshes the exact list through transient failures on a page of three and the token endpoint: one retry line, UpstreamRetries', async () => {
    jamf.setTokenFault({ kind: 'status', status: 500, times: 1 });
    jamf.setPageFault(1, { kind: 'drop', times: 2 });
    const run = await freshRefreshRun();
    const result = await run(scheduledEvent, lambdaContext(60_000));
    expect(result.computers).toMatchObject({ outcome: 'refreshed', devices: FLEET.length, read: 'full' });
    expect(jamf.stats().inventoryLog.filter((entry) => entry.page === 1)).toHaveLength(3);
    expect(retryLines()).toHaveLength(1);
    expect(retryLines()[0]).toMatchObject({ retries: 3, answers: { '500': 1, reset: 2 }, outcome: 'recovered' });
    expect(logs.raw()).toContain('"Name":"UpstreamRetries"');
    const served = await (await freshDevices())(httpEvent('GET', '/devices'), lambdaContext());
    expect(served.statusCode).toBe(200);
    // The exact list: every device once, in id order, none lost to a dropped page.
    expect((JSON.parse(served.body!) as { id: string }[]).map((device) => device.id)).toEqual(
      FLEET.map((record) => record.id).sort((a, b) => Number(a) - Number(b)),
    );
    expect(accessLines(logs).at(-1)).toMatchObject({ cache_tier: 'cluster' });
  });

  it('keeps the previous entry when a page never recovers, after exactly 4 attempts at it', async () => {
    await (
      await freshRefresh()
    )(scheduledEvent, lambdaContext(60_000));
    const { list } = await keys();
    const before = await raw.getBuffer(list!);
    process.env.DEVICES_FULL_REFRESH_SECONDS = '0';
    jamf.setDevices(renamed(FLEET, 'never-served'));
    jamf.resetStats();
    jamf.setPageFault(1, { kind: 'status', status: 503 });
    const failure = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(jamf.stats().inventoryLog.filter((entry) => entry.page === 1)).toHaveLength(4);
    expect((await raw.getBuffer(list!))!.equals(before!)).toBe(true);
    expect(retryLines()).toHaveLength(1);
    expect(retryLines()[0]).toMatchObject({ retries: 3, answers: { '503': 4 }, gave_up: 'attempts' });
    expect(refreshLines().at(-1)).toMatchObject({ level: 'ERROR', outcome: 'failed' });
  });

  it('refuses to run without REDIS_URL, naming it', async () => {
    delete process.env.REDIS_URL;
    const failure = await (await freshRefresh())(scheduledEvent, lambdaContext(60_000)).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/REDIS_URL/);
    expect(upstreamReads()).toBe(0);
  });

  it('serves a stale entry past its TTL without reading Jamf, then the newer one the schedule wrote', async () => {
    process.env.DEVICES_CACHE_TTL_SECONDS = '1';
    const devices = await freshDevices();
    const first = await devices(httpEvent('GET', '/devices'), lambdaContext());
    expect(upstreamReads()).toBe(1);
    // Bounded waits past the one-second TTL (and the container's one-second recheck interval).
    await sleep(1_100);
    const stale = await devices(httpEvent('GET', '/devices'), lambdaContext());
    expect(stale.body).toBe(first.body);
    expect(upstreamReads()).toBe(1);
    jamf.setDevices(renamed(FLEET, 'refreshed-mac'));
    await (
      await freshRefresh()
    )(scheduledEvent, lambdaContext(60_000));
    await sleep(1_100);
    const renewed = await devices(httpEvent('GET', '/devices'), lambdaContext());
    expect(namesOf(renewed)[0]).toBe('refreshed-mac');
    expect(accessLines(logs).map((entry) => entry.cache_tier)).toEqual(['upstream', 'memory', 'cluster']);
    // The refresh read Jamf once more; the requests never did after the first.
    expect(upstreamReads()).toBe(2);
  });

  it('reads Jamf again once the entry is past its stale window', async () => {
    process.env.DEVICES_CACHE_TTL_SECONDS = '1';
    process.env.DEVICES_CACHE_STALE_SECONDS = '1';
    const devices = await freshDevices();
    await devices(httpEvent('GET', '/devices'), lambdaContext());
    await sleep(2_100);
    await devices(httpEvent('GET', '/devices'), lambdaContext());
    expect(accessLines(logs).map((entry) => entry.cache_tier)).toEqual(['upstream', 'upstream']);
    expect(upstreamReads()).toBe(2);
  });

  describe('incremental refreshes', () => {
    const refreshOnce = async () => (await freshRefresh())(scheduledEvent, lambdaContext(60_000));
    /** The entry the last refresh (or request) wrote, decoded. */
    const stored = async () => (await deviceSnapshotCodec.decode((await raw.getBuffer((await keys()).list!))!))!;
    /**
     * Each inventory request as its page size and whether it was filtered; the first two by size, as
     * an incremental read sends its probe (one record) and its first filtered page side by side.
     */
    const requestsAt = (fake: FakeJamf) => {
      const log = fake.stats().inventoryLog.map((entry) => [entry.pageSize, entry.filter === null ? 'all' : 'changed'] as const);
      return [...log.slice(0, 2).sort((a, b) => a[0] - b[0]), ...log.slice(2)];
    };

    it('reads after a full read only what Jamf dates as changed, in exactly the filtered pages and one probe, and writes what a full read would', async () => {
      expect(await refreshOnce()).toMatchObject({ outcome: 'refreshed', read: 'full', full_read_reason: 'no previous snapshot' });
      jamf.setDevices(touched(renamed(FLEET, 'incremental-mac'), 1_500));
      jamf.resetStats();
      expect(await refreshOnce()).toMatchObject({ outcome: 'refreshed', devices: FLEET.length, read: 'incremental' });
      const line = refreshLines().at(-1)!;
      expect(line).toMatchObject({
        level: 'INFO',
        message: 'devices refresh',
        outcome: 'refreshed',
        devices: FLEET.length,
        read: 'incremental',
      });
      expect(line).not.toHaveProperty('full_read_reason');
      // One record for the inventory's size, beside the first of the 1,500 changes' two pages of 1,000, under one token.
      expect(requestsAt(jamf)).toEqual([
        [1, 'all'],
        [1000, 'changed'],
        [1000, 'changed'],
      ]);
      // One token for the computers' read, one for the mobile devices' (none: their probe and one empty filtered page).
      expect(jamf.stats()).toMatchObject({ inventoryRequests: 3, tokenRequests: 2, mobileRequests: 2 });
      const merged = await stored();

      process.env.DEVICES_FULL_REFRESH_SECONDS = '0';
      expect(await refreshOnce()).toMatchObject({ read: 'full', full_read_reason: 'full read due' });
      expect((await stored()).id).toBe(merged.id);
      const served = await (await freshDevices())({ ...httpEvent('GET', '/devices'), rawQueryString: 'limit=1' }, lambdaContext());
      expect(namesOf(served)).toEqual(['incremental-mac']);
    });

    it('reads in full when Jamf refuses the filter, and says so on its line', async () => {
      const refusing = await startFakeJamf({ devices: FLEET, ...CLIENT, filterFields: ['general.reportDate'] });
      try {
        process.env.INVENTORY_URL = refusing.url;
        await refreshOnce();
        refusing.setDevices(touched(FLEET, 10));
        refusing.resetStats();
        expect(await refreshOnce()).toMatchObject({ outcome: 'refreshed', read: 'full', full_read_reason: 'filter refused' });
        expect(refreshLines().at(-1)).toMatchObject({ outcome: 'refreshed', read: 'full', full_read_reason: 'filter refused' });
        expect(requestsAt(refusing)).toEqual([
          [1, 'all'],
          [1000, 'changed'],
          [1000, 'all'],
          [1000, 'all'],
          [1000, 'all'],
        ]);
      } finally {
        await refusing.close();
      }
    });

    it("reads in full when the inventory's size is not the merged list's: a device removed, with or without another enrolled", async () => {
      await refreshOnce();
      const withoutOne = FLEET.filter((_record, index) => index !== 1_234);
      jamf.setDevices(withoutOne);
      expect(await refreshOnce()).toMatchObject({ devices: FLEET.length - 1, read: 'full', full_read_reason: 'count changed' });
      expect(refreshLines().at(-1)).toMatchObject({ read: 'full', full_read_reason: 'count changed' });
      // One removed and one enrolled: the same totalCount, but the merged list holds one more.
      const now = new Date().toISOString();
      const enrolled = datedJamfComputer(datedJamfComputer({ ...FLEET[5]!, id: '999999' }, 'lastContact', now), 'reportDate', now);
      jamf.setDevices([...withoutOne.filter((_record, index) => index !== 10), enrolled]);
      expect(await refreshOnce()).toMatchObject({ devices: FLEET.length - 1, read: 'full', full_read_reason: 'count changed' });
      expect((await stored()).ids.at(-1)).toBe('999999');
    });

    it('reads in full once the last full read is DEVICES_FULL_REFRESH_SECONDS old, keeping its time through the incremental ones', async () => {
      process.env.DEVICES_FULL_REFRESH_SECONDS = '600';
      await refreshOnce();
      const first = await stored();
      expect(first.fullReadAt).toBe(first.readAt);
      expect(await refreshOnce()).toMatchObject({ read: 'incremental' });
      const second = await stored();
      expect(second.fullReadAt).toBe(first.fullReadAt);
      expect(second.readAt).toBeGreaterThan(first.readAt);
      /** The entry as it is, its last full read dated `ago` ms before now. */
      const lastFullRead = async (ago: number) => {
        const entry = await stored();
        await raw.set(
          (await keys()).list!,
          deviceSnapshotCodec.encode(buildComputerSnapshot(snapshotDevices(entry), entry.readAt, Date.now() - ago)),
          'PX',
          60_000,
        );
      };
      await lastFullRead(590_000);
      expect(await refreshOnce()).toMatchObject({ read: 'incremental' });
      await lastFullRead(600_000);
      expect(await refreshOnce()).toMatchObject({ read: 'full', full_read_reason: 'full read due' });
      expect(refreshLines().at(-1)).toMatchObject({ read: 'full', full_read_reason: 'full read due' });
      const third = await stored();
      expect(third.fullReadAt).toBe(third.readAt);
    });

    it('filters on general.lastContactTime on a Jamf Pro before 11.30', async () => {
      const legacy = await startFakeJamf({ personality: 'legacy', devices: FLEET, ...CLIENT });
      try {
        process.env.INVENTORY_URL = legacy.url;
        await refreshOnce();
        legacy.setDevices(touched(FLEET, 10));
        legacy.resetStats();
        expect(await refreshOnce()).toMatchObject({ devices: FLEET.length, read: 'incremental' });
        // The probe and the one filtered page, side by side.
        expect(
          legacy
            .stats()
            .inventoryLog.map((entry) => entry.filter)
            .sort(),
        ).toEqual([expect.stringMatching(/^general\.lastContactTime=ge=[\d-]+T[\d:]+Z,general\.reportDate=ge=[\d-]+T[\d:]+Z$/), null]);
      } finally {
        await legacy.close();
      }
    });

    it('reads Jamf in full for a request no tier answers, and the next refresh merges into what that read wrote', async () => {
      await refreshOnce();
      await raw.flushall();
      jamf.resetStats();
      const served = await (await freshDevices())({ ...httpEvent('GET', '/devices'), rawQueryString: 'limit=1' }, lambdaContext());
      expect(served.statusCode).toBe(200);
      expect(accessLines(logs).at(-1)).toMatchObject({ cache_tier: 'upstream' });
      expect(requestsAt(jamf)).toEqual([
        [1000, 'all'],
        [1000, 'all'],
        [1000, 'all'],
      ]);
      const filled = await stored();
      expect(filled.fullReadAt).toBe(filled.readAt);
      expect(await refreshOnce()).toMatchObject({ read: 'incremental' });
    });
  });
});
