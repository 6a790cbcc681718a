import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { makeRedisClusterTier } from '../lib/cache/cluster-tier.ts';
import { makeMemoryTier } from '../lib/cache/memory-tier.ts';
import { cacheTierName } from '../lib/cache/provenance.ts';
import { deviceListTemplateCodec, prepareDeviceList, renderDeviceListTemplate } from '../lib/cache/device-list-template.ts';
import { makeCachedDeviceListSource } from '../lib/devices/cached-device-list-source.ts';

const DEVICES_CLUSTER_KEY = 'devices:v1:bench';
import type { DeviceListSource } from '../lib/devices/device-list-source.ts';
import { renderDeviceList, withLatestFlag } from '../lib/devices/map-inventory-record.ts';
import { makeReadDevices } from '../lib/devices/read-devices.ts';
import { makeLogger } from '../lib/http/logger.ts';
import { makeHttpHandler, type HttpResponse } from '../lib/http/make-http-handler.ts';
import { makeJamfClient } from '../lib/inventory/jamf-client.ts';
import { generateJamfComputers, startFakeJamf } from '../demo/fake-jamf.ts';
import { httpEvent, lambdaContext } from '../test/support/http-events.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { quietly } from './quietly.ts';

/**
 * GET /devices handler latency per cache tier for 10,000 devices, all in one process so the ratios
 * hold on a noisy machine: a memory hit, a cluster hit (warm Redis connection, empty memory tier),
 * an upstream read (fake Jamf on loopback, no added latency), and what serving the pre-serialized
 * body saves over stringifying cached devices per request. Every handler runs the real Middy chain
 * with its access-log line (written to a discarding stdout while measuring).
 */
const DEVICES = 10_000;
const REFERENCE = '26.1';
const CREDENTIALS = { clientId: 'bench-client', clientSecret: 'bench-secret' };

type Handler = (event: ReturnType<typeof httpEvent>, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;

const logger = makeLogger('devices-bench');
/** The tier behind each measured response, so a figure is never labelled with the wrong tier. */
const answeredBy: string[] = [];

/** The same handle as functions/devices.ts, over a source chosen per request. */
const handlerOver = (sourceForRequest: () => DeviceListSource): Handler =>
  makeHttpHandler({
    route: 'GET /devices',
    logger,
    handle: async ({ remainingTimeMs, annotate }) => {
      const result = await sourceForRequest()({ remainingTimeMs });
      annotate({ cache_tier: cacheTierName(result.tier) });
      answeredBy.push(cacheTierName(result.tier));
      return { status: 200, json: result.json };
    },
  }) as unknown as Handler;

const handlerAnswering = (respond: () => HttpResponse): Handler =>
  makeHttpHandler({ route: 'GET /devices', logger, handle: async () => respond() }) as unknown as Handler;

interface Figures {
  label: string;
  runs: number;
  p50: number;
  p99: number;
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;

const measure = async (label: string, handler: Handler, runs: number, expectTier?: string): Promise<Figures> =>
  quietly(async () => {
    const samples: number[] = [];
    answeredBy.length = 0;
    for (let index = 0; index < runs + 5; index += 1) {
      const started = performance.now();
      const result = await handler(httpEvent('GET', '/devices'), lambdaContext());
      const ms = performance.now() - started;
      if (result.statusCode !== 200) throw new Error(`${label}: status ${result.statusCode}`);
      if (index >= 5) samples.push(ms); // the first five warm the path up
    }
    samples.sort((a, b) => a - b);
    const wrong = answeredBy.filter((tier) => tier !== expectTier);
    if (expectTier !== undefined && wrong.length > 0) throw new Error(`${label}: ${wrong.length} responses came from ${wrong[0]}`);
    return { label, runs, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
  });

const timeOnce = async (work: () => unknown, repeat = 20): Promise<number> => {
  const samples: number[] = [];
  for (let index = 0; index < repeat; index += 1) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return percentile(samples.sort((a, b) => a - b), 0.5);
};

const ms = (value: number) => `${value.toFixed(value < 1 ? 3 : 1)} ms`;

export const run = async (): Promise<void> => {
  const redis = await startRedisServer();
  const jamf = await startFakeJamf({ devices: generateJamfComputers(DEVICES, 11), ...CREDENTIALS });
  const cluster = makeRedisClusterTier({ url: redis.url, logger, commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 });
  try {
    const inventory = makeJamfClient({
      baseUrl: jamf.url,
      auth: { kind: 'oauth', clientId: CREDENTIALS.clientId, clientSecret: async () => CREDENTIALS.clientSecret },
    });
    const readDevices = makeReadDevices({ inventory });
    const devices = await readDevices({ remainingTimeMs: () => 60_000 });
    const cachedSource = (memory = makeMemoryTier<string>()) =>
      makeCachedDeviceListSource({ readDevices, latestOsVersion: REFERENCE, ttlSeconds: 3_600, clusterKey: DEVICES_CLUSTER_KEY, cluster, memory });

    // Warm container: one upstream fill, then every request is a memory hit.
    const warm = cachedSource();
    await quietly(() => warm({ remainingTimeMs: () => 60_000 }));
    const clusterValue = deviceListTemplateCodec.encode(prepareDeviceList(devices));
    await cluster.write(DEVICES_CLUSTER_KEY, clusterValue, 3_600_000);
    const body = renderDeviceList(devices, REFERENCE);
    const flagged = devices.map((device) => withLatestFlag(device, REFERENCE));

    const results: Figures[] = [];
    results.push(await measure('baseline: chain only, body "[]"', handlerAnswering(() => ({ status: 200, json: '[]' })), 200));
    results.push(await measure('memory hit (pre-serialized body)', handlerOver(() => warm), 200, 'memory'));
    results.push(await measure('memory hit, stringify cached devices per request', handlerAnswering(() => ({ status: 200, body: flagged })), 200));
    results.push(await measure('cluster hit (fresh memory tier per request)', handlerOver(() => cachedSource()), 200, 'cluster'));
    const upstreamSource = () => makeCachedDeviceListSource({ readDevices, latestOsVersion: REFERENCE, ttlSeconds: 60, clusterKey: DEVICES_CLUSTER_KEY });
    results.push(await measure('upstream read (fake Jamf, no cluster)', handlerOver(upstreamSource), 50, 'upstream'));

    const memoryP50 = results[1]!.p50;
    process.stdout.write(`${DEVICES} devices, body ${(body.length / 1e6).toFixed(2)} MB, cluster value ${(clusterValue.length / 1e6).toFixed(2)} MB (zstd)\n`);
    process.stdout.write('| handler path | runs | p50 | p99 | p50 ÷ memory hit |\n|---|---|---|---|---|\n');
    for (const figures of results) {
      process.stdout.write(`| ${figures.label} | ${figures.runs} | ${ms(figures.p50)} | ${ms(figures.p99)} | ${(figures.p50 / memoryP50).toFixed(1)}× |\n`);
    }

    // Where a cluster hit spends its time, and what the template format saves over storing the
    // devices as plain JSON (parse, shape check, render with flags) — p50 of 20 each.
    const { Redis } = await import('ioredis');
    const raw = new Redis(redis.url);
    try {
      const get = await timeOnce(() => raw.getBuffer(DEVICES_CLUSTER_KEY));
      const decode = await timeOnce(() => deviceListTemplateCodec.decode(clusterValue));
      const template = deviceListTemplateCodec.decode(clusterValue)!;
      const splice = await timeOnce(() => renderDeviceListTemplate(template, REFERENCE).length);
      const plainJson = JSON.stringify({ v: 1, devices });
      const parseAndRender = await timeOnce(() => renderDeviceList((JSON.parse(plainJson) as { devices: typeof devices }).devices, REFERENCE).length);
      process.stdout.write(
        `cluster hit breakdown (p50): Redis GET ${ms(get)}, decompress + checksum ${ms(decode)}, splice flags ${ms(splice)}; ` +
          `plain-JSON alternative: parse + renderDeviceList ${ms(parseAndRender)}\n`,
      );
    } finally {
      raw.disconnect();
    }
  } finally {
    await cluster.close();
    await jamf.close();
    await redis.stop();
  }
};
