import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { buildComputerSnapshot } from '../test/support/snapshot-devices.ts';
import { deviceSnapshotCodec } from '../lib/devices/device-snapshot-codec.ts';
import {} from '../lib/devices/build-snapshot.ts';
import { deviceText } from '../lib/devices/device-snapshot.ts';
import { makeLogger } from '../lib/runtime/logger.ts';
import { makeHttpHandler } from '../lib/http/make-http-handler.ts';
import { generateJamfComputers, startFakeJamf } from '../demo/fake-jamf.ts';
import { httpEvent, lambdaContext } from '../test/support/http-events.ts';
import { startLocalRedisCluster } from '../scripts/local/redis-cluster.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { quietly } from './quietly.ts';
import { mapComputer } from '../test/support/inventory-records.ts';

/**
 * The real GET /devices handler (functions/devices.ts) per cache tier for 10,000 devices, in one
 * process so the ratios hold on a noisy machine: a memory hit (one container, repeated requests), a
 * cluster hit (a fresh container per request: its module loaded anew, empty memory, new Redis
 * connection) on a single redis-server and on a TLS Redis Cluster with an ACL user (three masters,
 * three replicas, as ElastiCache runs it), an upstream read (fresh containers without a cluster, fake
 * Jamf on loopback), next to the same Middy chain answering a constant body. The whole list and a
 * page of 1,000.
 */
const DEVICES = 10_000;
const CREDENTIALS = { clientId: 'bench-client', clientSecret: 'bench-secret' };

type Handler = (
  event: ReturnType<typeof httpEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<APIGatewayProxyStructuredResultV2>;

let containers = 0;
/** A new container: functions/devices.ts evaluated afresh (its configuration, tiers and clients). */
const freshContainer = async (): Promise<Handler> => {
  containers += 1;
  const module = (await import(`../functions/devices.ts?container=${containers}`)) as { handler: Handler };
  return module.handler;
};

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;

interface Figures {
  label: string;
  runs: number;
  p50: number;
  p99: number;
}

/** `runs` requests (after five to warm up), each on the handler `handlerFor` gives, checking the tier on the line. */
const measure = async (label: string, handlerFor: () => Promise<Handler>, query: string, runs: number): Promise<Figures> =>
  quietly(async () => {
    const samples: number[] = [];
    for (let index = 0; index < runs + 5; index += 1) {
      const handler = await handlerFor();
      const started = performance.now();
      const result = await handler({ ...httpEvent('GET', '/devices'), rawQueryString: query }, lambdaContext());
      const elapsed = performance.now() - started;
      if (result.statusCode !== 200) throw new Error(`${label}: status ${result.statusCode}`);
      if (index >= 5) samples.push(elapsed);
    }
    samples.sort((a, b) => a - b);
    return { label, runs, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
  });

const ms = (value: number) => `${value.toFixed(value < 1 ? 3 : 1)} ms`;

export const run = async (): Promise<void> => {
  const [redis, redisCluster] = await Promise.all([startRedisServer(), startLocalRedisCluster()]);
  const records = generateJamfComputers(DEVICES, 11);
  const jamf = await startFakeJamf({ devices: records, ...CREDENTIALS });
  const saved = { ...process.env };
  Object.assign(process.env, {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: '26.1',
    DEVICES_CACHE_TTL_SECONDS: '3600',
    REDIS_URL: redis.url,
  });
  try {
    const warm = await freshContainer();
    // Fills memory and the cluster (an upstream read): later fresh containers hit the cluster.
    const whole = await quietly(() => warm(httpEvent('GET', '/devices'), lambdaContext()));
    const page = await quietly(() => warm({ ...httpEvent('GET', '/devices'), rawQueryString: 'limit=1000' }, lambdaContext()));
    const logger = makeLogger('devices-bench');
    const constant = (body: string): (() => Promise<Handler>) => {
      const handler = makeHttpHandler({
        routes: ['GET /devices'],
        logger,
        handle: async () => ({ status: 200, json: body }),
      }) as unknown as Handler;
      return async () => handler;
    };

    const results: Figures[] = [];
    results.push(await measure('baseline: the chain answering the whole list as a constant', constant(whole.body!), '', 200));
    results.push(await measure('memory hit, whole list', async () => warm, '', 200));
    results.push(await measure('baseline: the chain answering a 1,000-device page as a constant', constant(page.body!), '', 200));
    results.push(await measure('memory hit, page of 1,000 (limit=1000&after=…)', async () => warm, 'limit=1000&after=4000', 200));
    results.push(
      await measure(
        'memory hit, filtered page (os_is_latest=false&managed=true&limit=1000)',
        async () => warm,
        'os_is_latest=false&managed=true&limit=1000',
        200,
      ),
    );
    results.push(await measure('cluster hit, page of 1,000, fresh container per request (single node)', freshContainer, 'limit=1000', 40));
    // The same against the TLS Redis Cluster: one container fills it, then fresh ones read it.
    Object.assign(process.env, { REDIS_URL: redisCluster.url, REDIS_TLS_CA_FILE: redisCluster.caFile });
    await quietly(async () => (await freshContainer())({ ...httpEvent('GET', '/devices'), rawQueryString: 'limit=1' }, lambdaContext()));
    results.push(
      await measure(
        'cluster hit, page of 1,000, fresh container per request (TLS Redis Cluster, ACL user)',
        freshContainer,
        'limit=1000',
        40,
      ),
    );
    delete process.env.REDIS_URL;
    delete process.env.REDIS_TLS_CA_FILE;
    results.push(await measure('upstream read, page of 1,000, fresh container per request (no cluster)', freshContainer, 'limit=1000', 20));

    process.stdout.write(
      `${DEVICES} devices, whole list ${(whole.body!.length / 1e6).toFixed(2)} MB, page of 1,000 ${(page.body!.length / 1e3).toFixed(0)} kB\n`,
    );
    process.stdout.write('| handler path | runs | p50 | p99 | p99 ÷ its baseline |\n|---|---|---|---|---|\n');
    for (const [index, figures] of results.entries()) {
      const baseline = index < 2 ? results[0]! : results[2]!;
      process.stdout.write(
        `| ${figures.label} | ${figures.runs} | ${ms(figures.p50)} | ${ms(figures.p99)} | ${(figures.p99 / baseline.p99).toFixed(1)}× |\n`,
      );
    }
    const [single, clustered] = [results[5]!, results[6]!];
    process.stdout.write(
      `TLS Redis Cluster ÷ single node, fresh container's cluster hit: p50 ${(clustered.p50 / single.p50).toFixed(2)}×, p99 ${(clustered.p99 / single.p99).toFixed(2)}× (aim ≤ 1.5×)\n`,
    );

    // Where a cluster hit of a fresh container spends its time (p50 of 20).
    const snapshot = buildComputerSnapshot(
      records.map((record) => mapComputer(record)!),
      Date.now(),
    );
    const encoded = deviceSnapshotCodec.encode(snapshot);
    const decodeMs: number[] = [];
    for (let index = 0; index < 20; index += 1) {
      const started = performance.now();
      await deviceSnapshotCodec.decode(encoded);
      decodeMs.push(performance.now() - started);
    }
    process.stdout.write(
      `cluster value ${(encoded.length / 1e6).toFixed(2)} MB (zstd) for ${(Buffer.byteLength(deviceText(snapshot, 0, snapshot.count)) / 1e6).toFixed(2)} MB of rendered devices; ` +
        `decode (decompress, checksum, columns, structure) p50 ${ms(
          percentile(
            decodeMs.sort((a, b) => a - b),
            0.5,
          ),
        )}\n`,
    );
  } finally {
    process.env = saved;
    await jamf.close();
    await Promise.all([redis.stop(), redisCluster.stop()]);
  }
};
