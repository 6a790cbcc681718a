import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { datedJamfComputer, generateJamfComputers, startFakeJamf, type FakeJamf, type JamfComputer } from '../../../demo/fake-jamf.ts';
import { partKey } from '../../../lib/cache/value-parts.ts';
import { startLocalRedisCluster, type LocalRedisCluster } from '../../../scripts/local/redis-cluster.ts';
import { makeThrowawayCa } from '../../../scripts/local/throwaway-ca.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { clearEnvironment, saveEnvironment } from '../../support/environment.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';

type Handler = (
  event: ReturnType<typeof httpEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<APIGatewayProxyStructuredResultV2>;
type RefreshHandler = (event: unknown, context?: ReturnType<typeof lambdaContext>) => Promise<{ outcome: string; devices?: number }>;

/** Large enough that the snapshot is stored in parts (over 1 MiB compressed). */
const FLEET = generateJamfComputers(30_000, 11).map((record, index) => ({ ...record, id: String(index + 1) }));
const CLIENT = { clientId: 'cluster-client', clientSecret: 'cluster-secret-value' };
const ENV_KEYS = [
  'INVENTORY_URL',
  'INVENTORY_CLIENT_ID',
  'INVENTORY_CLIENT_SECRET',
  'LATEST_OS_VERSION',
  'REDIS_URL',
  'REDIS_CLUSTER',
  'REDIS_TLS_CA_FILE',
  'DEVICES_CACHE_TTL_SECONDS',
  'DEVICES_CACHE_STALE_SECONDS',
] as const;

/** A new Lambda container: the handler module loaded afresh (own memory tier and Redis connection). */
const freshDevices = async (): Promise<Handler> => {
  vi.resetModules();
  return (await import('../../../functions/devices.ts')).handler as unknown as Handler;
};
/** A new refresh container; what it says of the computers' list (it refreshes the mobile devices' too, none here). */
const freshRefresh = async (): Promise<RefreshHandler> => {
  vi.resetModules();
  const { handler } = await import('../../../functions/refresh-devices.ts');
  return async (event, context) => (await handler(event, context)).computers;
};
/** The first page of 5,000: the whole list of 30,000 is more than one response may carry. */
const getDevices = (handler: Handler, query = 'limit=5000') =>
  handler({ ...httpEvent('GET', '/devices'), rawQueryString: query }, lambdaContext());
const totalOf = (response: APIGatewayProxyStructuredResultV2): number => Number(response.headers?.['X-Total-Count']);
const idsOf = (response: APIGatewayProxyStructuredResultV2): string[] =>
  (JSON.parse(String(response.body)) as { id: string }[]).map((device) => device.id);

describe('GET /devices and refreshDevices on a TLS Redis Cluster with an ACL user (as ElastiCache runs it)', () => {
  let cluster: LocalRedisCluster;
  let jamf: FakeJamf;
  let logs: CapturedLogs;
  let wrongCaDir: string;
  const restoreEnvironment = saveEnvironment(ENV_KEYS);
  /** REDIS_URL through a node other than `avoid`: ElastiCache's configuration endpoint always names live nodes. */
  const urlAvoiding = async (avoid?: number): Promise<string> => {
    const nodes = await cluster.nodes();
    const through = nodes.find((node) => node.running && node.port !== avoid)!;
    return `rediss://${cluster.user}:${cluster.password}@localhost:${through.port}`;
  };
  let ca: Buffer;
  /** A plain connection to one node, for looking at it or changing its settings. */
  const nodeClient = (port: number): Redis => {
    const client = new Redis({
      host: '127.0.0.1',
      port,
      tls: { ca, servername: 'localhost' },
      username: cluster.user,
      password: cluster.password,
    });
    client.on('error', () => undefined);
    return client;
  };
  /** Runs `work` on every running master, each through its own connection. */
  const onMasters = async <T>(work: (client: Redis) => Promise<T>): Promise<T[]> => {
    const masters = (await cluster.nodes()).filter((node) => node.running && node.role === 'master');
    return Promise.all(
      masters.map(async (node) => {
        const client = nodeClient(node.port);
        try {
          return await work(client);
        } finally {
          client.disconnect();
        }
      }),
    );
  };
  /** The device list's key (its name hashes the inventory), as the cluster holds it. */
  const listKey = async (): Promise<string | undefined> => {
    const keys = (await onMasters((client) => client.keys('devices:*'))).flat();
    return keys.find((key) => !key.endsWith(':refresh-lock') && !key.includes(':part:'));
  };
  const refreshLines = () =>
    logs
      .raw()
      .split('\n')
      .filter((line) => line.includes('"devices refresh"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    [cluster, jamf] = await Promise.all([startLocalRedisCluster(), startFakeJamf({ devices: FLEET, ...CLIENT })]);
    ca = await readFile(cluster.caFile);
    wrongCaDir = await mkdtemp(join(tmpdir(), 'wrong-ca-'));
  }, 60_000);
  afterAll(async () => {
    restoreEnvironment();
    await Promise.all([cluster?.stop(), jamf?.close(), rm(wrongCaDir, { recursive: true, force: true })]);
  });
  beforeEach(async () => {
    await cluster.waitUntilHealthy(20_000);
    await onMasters((client) => client.flushall());
    jamf.setDevices(FLEET);
    jamf.resetStats();
    clearEnvironment(ENV_KEYS);
    Object.assign(process.env, {
      INVENTORY_URL: jamf.url,
      INVENTORY_CLIENT_ID: CLIENT.clientId,
      INVENTORY_CLIENT_SECRET: CLIENT.clientSecret,
      LATEST_OS_VERSION: '26.1',
      REDIS_URL: await urlAvoiding(),
      REDIS_TLS_CA_FILE: cluster.caFile,
    });
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  it('refreshes into the cluster, in parts on the master of one hash slot, and a new container serves it without reading Jamf', async () => {
    const refreshed = await (await freshRefresh())({});
    expect(refreshed).toMatchObject({ outcome: 'refreshed', devices: FLEET.length });
    const key = (await listKey())!;
    expect(key).toMatch(/^devices:v6:\{[0-9a-f]{16}\}$/);
    const master = await cluster.masterPortFor(key);
    const owner = nodeClient(master);
    const head = await owner.getBuffer(key).finally(() => owner.disconnect());
    const gen = /"gen":"([\w-]+)"/.exec(head!.toString('latin1', 0, 200))?.[1];
    expect(gen).toBeDefined();
    expect(await cluster.masterPortFor(partKey(key, gen!, 1))).toBe(master);
    const readsBefore = jamf.stats().tokenRequests;

    const devices = await freshDevices();
    const first = await getDevices(devices);
    expect(first.statusCode).toBe(200);
    expect(totalOf(first)).toBe(FLEET.length);
    expect(idsOf(first)).toEqual(FLEET.slice(0, 5000).map((record) => record.id));
    const page = await getDevices(devices, 'limit=2&after=100');
    expect(idsOf(page)).toEqual(['101', '102']);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['cluster', 'memory']);
    expect(jamf.stats().tokenRequests).toBe(readsBefore);
    expect(logs.raw()).not.toContain(cluster.password);
  });

  it('refreshes incrementally from the list it stored in parts: the changes alone, merged into it', async () => {
    await (
      await freshRefresh()
    )({});
    const now = new Date().toISOString();
    const moved = (record: JamfComputer, index: number) =>
      datedJamfComputer({ ...record, general: { ...(record.general as object), name: `moved-${index}` } }, 'reportDate', now);
    jamf.setDevices(FLEET.map((record, index) => (index % 300 === 0 ? moved(record, index) : record)));
    jamf.resetStats();
    expect(await (await freshRefresh())({})).toMatchObject({ outcome: 'refreshed', devices: FLEET.length, read: 'incremental' });
    // The probe and one page of the 100 changed records.
    expect(jamf.stats().inventoryRequests).toBe(2);
    const page = await getDevices(await freshDevices(), 'limit=1&after=300');
    expect((JSON.parse(String(page.body)) as { name: string }[])[0]!.name).toBe('moved-300');
  });

  it('lets one refresh at a time hold the lock of an inventory in the cluster', async () => {
    jamf.setLatencyMs(300);
    try {
      const [first, second] = await Promise.all([(await freshRefresh())({}), (await freshRefresh())({})]);
      expect([first.outcome, second.outcome].sort()).toEqual(['refreshed', 'skipped']);
    } finally {
      jamf.setLatencyMs(0);
    }
  });

  it('answers every request 200 with the whole list while the master holding the list is killed, and serves from the cluster again after its replica takes over', async () => {
    await (
      await freshRefresh()
    )({});
    const key = (await listKey())!;
    const master = await cluster.masterPortFor(key);
    process.env.REDIS_URL = await urlAvoiding(master);
    // New containers keep arriving (each with an empty memory tier) while the master dies.
    const answers: { status: number | undefined; total: number; ids: number }[] = [];
    const load = async () => {
      for (let request = 0; request < 6; request += 1) {
        const response = await getDevices(await freshDevices());
        answers.push({ status: response.statusCode, total: totalOf(response), ids: idsOf(response).length });
      }
    };
    const killed = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await cluster.killNode(master);
    })();
    await Promise.all([load(), load(), killed]);
    expect(answers).toHaveLength(12);
    for (const answer of answers) expect(answer).toEqual({ status: 200, total: FLEET.length, ids: 5000 });

    await cluster.waitUntilHealthy(20_000);
    expect(await cluster.masterPortFor(key)).not.toBe(master);
    // Bounded: a new container's client learns the new slot map, then reads the list its replica kept.
    let tier: unknown;
    for (let attempt = 0; attempt < 20 && tier !== 'cluster'; attempt += 1) {
      const before = accessLines(logs).length;
      const response = await getDevices(await freshDevices());
      expect(response.statusCode).toBe(200);
      tier = accessLines(logs)[before]?.cache_tier;
      if (tier !== 'cluster') await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(tier).toBe('cluster');
    await cluster.restartNode(master);
  }, 90_000);

  it("degrades to Jamf with one line, never a 5xx, when the server's certificate is signed by another CA", async () => {
    const wrong = await makeThrowawayCa(wrongCaDir);
    process.env.REDIS_TLS_CA_FILE = wrong.caFile;
    const devices = await freshDevices();
    const response = await getDevices(devices);
    expect(response.statusCode).toBe(200);
    expect(totalOf(response)).toBe(FLEET.length);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream']);
    const degradedLines = () =>
      logs
        .raw()
        .split('\n')
        .filter((line) => line.includes('cache tier degraded'));
    // One line, naming the certificate; on a busy machine, a line saying it was slow may come first.
    for (let poll = 0; poll < 100 && !/certificate/i.test(degradedLines().at(-1) ?? ''); poll += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const degraded = degradedLines();
    expect(degraded.length).toBeGreaterThanOrEqual(1);
    expect(degraded.length).toBeLessThanOrEqual(2);
    expect(degraded.at(-1)).toMatch(/certificate/i);
    expect(logs.raw()).not.toContain(cluster.password);
  });

  it('degrades to Jamf, never a 5xx, on a wrong password, and logs no secret', async () => {
    process.env.REDIS_URL = `rediss://${cluster.user}:not-the-password-7@localhost:${(await cluster.nodes())[0]!.port}`;
    const response = await getDevices(await freshDevices());
    expect(response.statusCode).toBe(200);
    expect(accessLines(logs).map((line) => line.cache_tier)).toEqual(['upstream']);
    // On a busy machine the first lookup's budget may run out before the server refuses the password:
    // the degradation is then logged as slow, and once more, naming the refusal, when it comes.
    for (let poll = 0; poll < 100 && !/cache tier degraded.*WRONGPASS/.test(logs.raw()); poll += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(logs.raw()).toMatch(/cache tier degraded.*WRONGPASS/);
    expect(logs.raw()).not.toContain('not-the-password-7');
    expect(logs.raw()).not.toContain(cluster.password);
  });

  it('keeps the previous list in place and served when the master of its slot refuses writes (out of memory)', async () => {
    await (
      await freshRefresh()
    )({});
    const key = (await listKey())!;
    const node = nodeClient(await cluster.masterPortFor(key));
    await node.config('SET', 'maxmemory', '1');
    try {
      jamf.setDevices(FLEET.slice(0, 10));
      await expect((await freshRefresh())({})).rejects.toThrow(/refresh lock/);
      expect(refreshLines().at(-1)).toMatchObject({ outcome: 'failed' });
      expect(logs.raw()).toMatch(/cache tier degraded.*cluster writes.*write refused/);
      const served = await getDevices(await freshDevices());
      expect(totalOf(served)).toBe(FLEET.length);
    } finally {
      await node.config('SET', 'maxmemory', '0');
      node.disconnect();
    }
  });
});
