import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { datedJamfComputer, DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamfStats } from '../demo/fake-jamf.ts';
import { startLocalRedisCluster } from '../scripts/local/redis-cluster.ts';
import { startRedisServer } from '../test/support/redis-server.ts';

/**
 * A fleet of 100,000 devices behind a fake Jamf Pro that takes 300 ms + 1.5 ms per record for each
 * inventory page, and a local redis-server:
 * - the scheduled refresh (functions/refresh-devices.ts) in a process of its own: its duration and
 *   peak RSS; then, with 1 % of the records changed (dated as Jamf dates them), the next refresh,
 *   an incremental one: its duration, Jamf requests and bytes next to the full read's;
 * - then GET /devices in another process, with nothing but that refresh behind it: 16 concurrent
 *   clients walking pages of 1,000 (`limit=1000`, following `Link`) from one container's memory,
 *   the same for a filtered query, and the first requests of fresh containers (each reads the
 *   snapshot from the cluster), next to the same handler chain answering a constant page; p50/p99,
 *   requests/s, and the RSS of a container holding the snapshot; then the memory pages again one
 *   request at a time, as a deployed container (one request at once) serves them. Jamf is watched throughout: in
 *   steady state no request reads it;
 * - then the same refresh into a TLS Redis Cluster with an ACL user (three masters, three replicas,
 *   as ElastiCache runs it), and the first page of fresh containers from each, one at a time: the
 *   cluster's figures as ratios of the single node's, measured in the same run.
 */
const DEVICES = 100_000;
const PAGE_DELAY = { baseMs: 300, perRecordMs: 1.5 };
/** Every CHANGED_EVERY-th record changes between the full refresh and the incremental one: 1 %. */
const CHANGED_EVERY = 100;

interface ChildResult {
  [key: string]: unknown;
}

const runChild = (script: string, env: Record<string, string>): Promise<ChildResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = output.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as ChildResult);
      } catch {
        reject(new Error(`${script} exited ${code} without figures: ${output.slice(-500)}`));
      }
    });
  });

const fixed = (value: unknown, digits = 1) => (typeof value === 'number' ? value.toFixed(digits) : String(value));

export const run = async (): Promise<void> => {
  const [redis, redisCluster] = await Promise.all([startRedisServer(), startLocalRedisCluster()]);
  const fleet = generateJamfComputers(DEVICES, 3);
  const jamf = await startFakeJamf({ devices: fleet, pageDelay: PAGE_DELAY });
  const env = {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: '26.1',
    DEVICES_CACHE_TTL_SECONDS: '3600',
    REDIS_URL: redis.url,
  };
  try {
    const refresh = await runChild('./fleet/refresh-once.ts', env);
    const fullRead = jamf.stats();
    process.stdout.write(
      `refresh of ${DEVICES.toLocaleString('en')} devices (Jamf: ${PAGE_DELAY.baseMs} ms + ${PAGE_DELAY.perRecordMs} ms per record per page): ` +
        `${refresh.outcome} (${refresh.read}), ${fixed(Number(refresh.duration_ms) / 1000)} s, ${fullRead.inventoryRequests} pages, at most ${fullRead.maxConcurrentInventory} at once, ` +
        `peak RSS ${fixed(refresh.peak_rss_mb, 0)} MB\n`,
    );

    // 1 % of the fleet reports an OS update: the next refresh reads those records alone.
    const now = new Date().toISOString();
    const updated = (record: (typeof fleet)[number]) =>
      datedJamfComputer({ ...record, operatingSystem: { ...(record.operatingSystem as object), version: '26.6.2', build: '25G83' } }, 'reportDate', now);
    jamf.setDevices(fleet.map((record, index) => (index % CHANGED_EVERY === 0 ? updated(record) : record)));
    jamf.resetStats();
    const incremental = await runChild('./fleet/refresh-once.ts', env);
    const changes = jamf.stats();
    const requestsOf = (stats: FakeJamfStats) => Object.values(stats.requests).reduce((sum, count) => sum + count, 0);
    const row = (label: string, figures: ChildResult, stats: FakeJamfStats) =>
      `| ${label} | ${figures.read} | ${fixed(Number(figures.duration_ms) / 1000, 2)} s | ${requestsOf(stats)} | ${fixed(stats.bytesSent / 1024 / 1024)} MB | ${fixed(figures.peak_rss_mb, 0)} MB |\n`;
    process.stdout.write(
      `| refresh | read | time | Jamf requests | bytes from Jamf | peak RSS |\n|---|---|---|---|---|---|\n` +
        row('first (nothing in the cluster)', refresh, fullRead) +
        row(`next, ${100 / CHANGED_EVERY} % of the records changed`, incremental, changes) +
        `incremental ÷ full: time ${fixed(Number(incremental.duration_ms) / Number(refresh.duration_ms), 3)}, ` +
        `requests ${fixed(requestsOf(changes) / requestsOf(fullRead), 3)}, bytes ${fixed(changes.bytesSent / fullRead.bytesSent, 3)} (aim ≤ 0.1 for time and requests)\n`,
    );
    jamf.resetStats();
    const serve = await runChild('./fleet/serve-pages.ts', env);
    const upstream = jamf.stats().tokenRequests + jamf.stats().inventoryRequests;
    /** A table of `rows` ([label, key in the child's figures]), p99 as a ratio to the first row's. */
    const table = (title: string, rows: readonly (readonly [string, string])[]): void => {
      const baselineP99 = (serve[rows[0]![1]] as { p99_ms: number }).p99_ms;
      process.stdout.write(`${title}\n| path | requests | p50 | p99 | requests/s | p99 ÷ baseline |\n|---|---|---|---|---|---|\n`);
      for (const [label, key] of rows) {
        const figures = serve[key] as { requests: number; p50_ms: number; p99_ms: number; per_second?: number };
        process.stdout.write(
          `| ${label} | ${figures.requests} | ${fixed(figures.p50_ms, 2)} ms | ${fixed(figures.p99_ms, 2)} ms | ${figures.per_second === undefined ? '—' : fixed(figures.per_second, 0)} | ${fixed(figures.p99_ms / baselineP99, 1)}× |\n`,
        );
      }
    };
    table(`GET /devices, ${serve.total} devices, pages of ${fixed(serve.page_kb, 0)} KiB, 16 concurrent clients:`, [
      ['baseline: the chain answering a constant page', 'baseline_constant_page'],
      ['pages of 1,000 from memory, walking after', 'memory_pages'],
      ['filtered pages (os_is_latest=false&managed=true)', 'memory_filtered_pages'],
      ['first requests of fresh containers (cluster)', 'cluster_fresh_container'],
    ]);
    table('The same one request at a time (a Lambda container serves one at once):', [
      ['baseline: the chain answering a constant page', 'serial_baseline_constant_page'],
      ['pages of 1,000 from memory, walking after', 'serial_memory_pages'],
    ]);
    process.stdout.write(
      `container holding the snapshot: RSS ${fixed(serve.container_rss_mb, 0)} MB (peak ${fixed(serve.container_peak_rss_mb, 0)} MB); ` +
        `Jamf requests while serving: ${upstream}\n`,
    );

    // The single node next to the TLS Redis Cluster: a refresh into each, then fresh containers' first pages.
    const clusterEnv = { ...env, REDIS_URL: redisCluster.url, REDIS_TLS_CA_FILE: redisCluster.caFile };
    const clusterRefresh = await runChild('./fleet/refresh-once.ts', clusterEnv);
    const singleFirst = (await runChild('./fleet/first-pages.ts', env)).first_page as { p50_ms: number; p99_ms: number };
    const clusterFirst = (await runChild('./fleet/first-pages.ts', clusterEnv)).first_page as { p50_ms: number; p99_ms: number };
    process.stdout.write(
      `| cluster tier | refresh | first page of a fresh container p50 | p99 |\n|---|---|---|---|\n` +
        `| single redis-server | ${fixed(Number(refresh.duration_ms) / 1000)} s | ${fixed(singleFirst.p50_ms, 0)} ms | ${fixed(singleFirst.p99_ms, 0)} ms |\n` +
        `| TLS Redis Cluster, ACL user | ${fixed(Number(clusterRefresh.duration_ms) / 1000)} s | ${fixed(clusterFirst.p50_ms, 0)} ms | ${fixed(clusterFirst.p99_ms, 0)} ms |\n` +
        `cluster ÷ single node: refresh ${fixed(Number(clusterRefresh.duration_ms) / Number(refresh.duration_ms), 2)}×, ` +
        `first page p50 ${fixed(clusterFirst.p50_ms / singleFirst.p50_ms, 2)}×, p99 ${fixed(clusterFirst.p99_ms / singleFirst.p99_ms, 2)}× (aim ≤ 1.5×)\n`,
    );
  } finally {
    await jamf.close();
    await Promise.all([redis.stop(), redisCluster.stop()]);
  }
};
