import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  datedJamfComputer,
  datedJamfMobileDevice,
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  generateJamfMobileDevices,
  JAMF_PERSONALITIES,
  MOBILE_INVENTORY_PATH,
  startFakeJamf,
  type FakeJamfStats,
} from '../demo/fake-jamf.ts';
import { startFakeSofa } from '../demo/fake-sofa.ts';
import { startLocalRedisCluster } from '../scripts/local/redis-cluster.ts';
import { startRedisServer } from '../test/support/redis-server.ts';

/**
 * A fleet of 100,000 computers and 100,000 mobile devices behind a fake Jamf Pro that takes 300 ms
 * + 1.5 ms per record for each page of either inventory, and a local redis-server:
 * - the scheduled refresh (functions/refresh-devices.ts: the computers, then the mobile devices) in
 *   a process of its own: each inventory's duration, and the run's peak RSS; then, with 1 % of each
 *   inventory's records changed (dated as Jamf dates them), the next refresh, an incremental one:
 *   its durations, Jamf requests and bytes next to the full read's;
 * - then GET /devices in another process, with nothing but that refresh behind it: 16 concurrent
 *   clients walking pages of 1,000 (`limit=1000`, following `Link`) from one container's memory,
 *   the same for a filtered query, and the first requests of fresh containers (each reads the
 *   snapshot from the cluster), next to the same handler chain answering a constant page; p50/p99,
 *   requests/s, and the RSS of a container holding the snapshot; then the memory pages again one
 *   request at a time, as a deployed container (one request at once) serves them, and the fleet
 *   summary repeated beside them. Jamf is watched throughout: in steady state no request reads it;
 *   the devices are decided against the demo copy of the real SOFA v2 feed, so pages carry the
 *   patch-compliance fields;
 * - then the summary's first answer after a new snapshot (every device decided again) beside a
 *   page's, from the use case (bench/fleet/summaries.ts);
 * - then processes holding the computers' snapshot, the mobile devices', and both, each walked once
 *   one page at a time: their RSS and peak RSS;
 * - then the same refresh into a TLS Redis Cluster with an ACL user (three masters, three replicas,
 *   as ElastiCache runs it), and the first page of fresh containers from each, one at a time: the
 *   cluster's figures as ratios of the single node's, measured in the same run (the computers' alone:
 *   the mobile inventory is emptied for it).
 */
/** Of each inventory. */
const DEVICES = 100_000;
const PAGE_DELAY = { baseMs: 300, perRecordMs: 1.5 };
/** Every CHANGED_EVERY-th record changes between the full refresh and the incremental one: 1 %. */
const CHANGED_EVERY = 100;
const INVENTORIES = [
  { name: 'computers', label: 'computers', route: `GET ${JAMF_PERSONALITIES.current.inventory}` },
  { name: 'mobile_devices', label: 'mobile devices', route: `GET ${MOBILE_INVENTORY_PATH}` },
] as const;

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
  const mobileFleet = generateJamfMobileDevices(DEVICES, 4);
  const jamf = await startFakeJamf({ devices: fleet, mobileDevices: mobileFleet, pageDelay: PAGE_DELAY });
  // The devices are decided against the demo copy of the real SOFA v2 feed: pages carry the compliance fields.
  const sofa = await startFakeSofa();
  const env = {
    INVENTORY_URL: jamf.url,
    INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
    INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
    LATEST_OS_VERSION: '26.1',
    LATEST_OS_FEED_URL: sofa.feedUrl('v2'),
    LATEST_IOS_VERSION: '26.6.1',
    LATEST_IOS_FEED_URL: sofa.feedUrl('ios-v2'),
    LATEST_OS_FEED_TTL_SECONDS: '3600',
    DEVICES_CACHE_TTL_SECONDS: '3600',
    REDIS_URL: redis.url,
  };
  /** One inventory's part of a refresh run: its line's fields. */
  const partOf = (figures: ChildResult, name: (typeof INVENTORIES)[number]['name']) =>
    figures[name] as { outcome: string; read?: string; duration_ms: number };
  try {
    const refresh = await runChild('./fleet/refresh-once.ts', env);
    const fullRead = jamf.stats();
    process.stdout.write(
      `refresh of ${DEVICES.toLocaleString('en')} computers and ${DEVICES.toLocaleString('en')} mobile devices (Jamf: ${PAGE_DELAY.baseMs} ms + ${PAGE_DELAY.perRecordMs} ms per record per page): ` +
        `${refresh.outcome}; ` +
        INVENTORIES.map(
          ({ name, label, route }) =>
            `${label} ${partOf(refresh, name).read}, ${fixed(partOf(refresh, name).duration_ms / 1000)} s, ${fullRead.requests[route]} pages`,
        ).join('; ') +
        `; computers' pages at most ${fullRead.maxConcurrentInventory} at once; peak RSS ${fixed(refresh.peak_rss_mb, 0)} MB (${fixed(refresh.computers_peak_rss_mb, 0)} MB when the computers' part was done)\n`,
    );

    // 1 % of each inventory reports an OS update: the next refresh reads those records alone.
    const now = new Date().toISOString();
    const updated = (record: (typeof fleet)[number]) =>
      datedJamfComputer(
        { ...record, operatingSystem: { ...(record.operatingSystem as object), version: '26.6.2', build: '25G83' } },
        'reportDate',
        now,
      );
    const updatedMobile = (record: (typeof mobileFleet)[number]) =>
      datedJamfMobileDevice({ ...record, general: { ...(record.general as object), osVersion: '26.6.1', osBuild: '23G93' } }, now);
    jamf.setDevices(fleet.map((record, index) => (index % CHANGED_EVERY === 0 ? updated(record) : record)));
    jamf.setMobileDevices(mobileFleet.map((record, index) => (index % CHANGED_EVERY === 0 ? updatedMobile(record) : record)));
    jamf.resetStats();
    const incremental = await runChild('./fleet/refresh-once.ts', env);
    const changes = jamf.stats();
    // Each inventory's pages and its one token (a client of its own).
    const requestsOf = (stats: FakeJamfStats, route: string) => (stats.requests[route] ?? 0) + 1;
    const bytesOf = (stats: FakeJamfStats, route: string) => stats.bytesByRoute[route] ?? 0;
    const row = (label: string, figures: ChildResult, stats: FakeJamfStats) =>
      INVENTORIES.map(
        ({ name, label: inventory, route }) =>
          `| ${label} | ${inventory} | ${partOf(figures, name).read} | ${fixed(partOf(figures, name).duration_ms / 1000, 2)} s | ${requestsOf(stats, route)} | ${fixed(bytesOf(stats, route) / 1024 / 1024)} MB |\n`,
      ).join('');
    process.stdout.write(
      `| refresh | inventory | read | time | Jamf requests | bytes from Jamf |\n|---|---|---|---|---|---|\n` +
        row('first (nothing in the cluster)', refresh, fullRead) +
        row(`next, ${100 / CHANGED_EVERY} % of the records changed`, incremental, changes) +
        `peak RSS of each run (both inventories): first ${fixed(refresh.peak_rss_mb, 0)} MB, next ${fixed(incremental.peak_rss_mb, 0)} MB ` +
        `(when the computers' part was done: ${fixed(refresh.computers_peak_rss_mb, 0)} MB, ${fixed(incremental.computers_peak_rss_mb, 0)} MB)\n` +
        INVENTORIES.map(
          ({ name, label, route }) =>
            `${label}, incremental ÷ full: time ${fixed(partOf(incremental, name).duration_ms / partOf(refresh, name).duration_ms, 3)}, ` +
            `requests ${fixed(requestsOf(changes, route) / requestsOf(fullRead, route), 3)}, bytes ${fixed(bytesOf(changes, route) / bytesOf(fullRead, route), 3)}`,
        ).join('; ') +
        ` (aim ≤ 0.1 for time and requests)\n` +
        `mobile devices ÷ computers, full read: time ${fixed(partOf(refresh, 'mobile_devices').duration_ms / partOf(refresh, 'computers').duration_ms, 2)}, ` +
        `bytes ${fixed(bytesOf(fullRead, INVENTORIES[1].route) / bytesOf(fullRead, INVENTORIES[0].route), 2)}\n`,
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
      ['GET /devices/summary, repeated', 'serial_summary'],
      ['GET /devices/summary?os_overdue=true&managed=true, repeated', 'serial_filtered_summary'],
    ]);
    const summaryP99 = (key: string) => (serve[key] as { p99_ms: number }).p99_ms;
    process.stdout.write(
      `summary p99 repeated ${fixed(summaryP99('serial_summary'), 2)} ms, filtered ${fixed(summaryP99('serial_filtered_summary'), 2)} ms ` +
        `(aim ≤ 10 ms); ÷ a page of 1,000: ${fixed(summaryP99('serial_summary') / summaryP99('serial_memory_pages'), 2)}×\n`,
    );

    // The summary's first answer after a new snapshot, beside a page's, from the use case in a process of its own.
    const summaries = await runChild('./fleet/summaries.ts', {});
    const summaryRow = (label: string, key: string) => {
      const figures = summaries[key] as { p50_ms: number; p99_ms: number };
      return `| ${label} | ${fixed(figures.p50_ms, 2)} ms | ${fixed(figures.p99_ms, 2)} ms | ${fixed(figures.p99_ms / (summaries.first_page as { p99_ms: number }).p99_ms, 2)}× |\n`;
    };
    process.stdout.write(
      `GET /devices' use case over ${summaries.total} computers and the SOFA v2 feed, one request at a time (the first after a new snapshot decides every device):\n` +
        `| answer | p50 | p99 | p99 ÷ first page |\n|---|---|---|---|\n` +
        summaryRow('first page of 1,000 after a new snapshot', 'first_page') +
        summaryRow('first summary after a new snapshot (aim ≤ 100 ms)', 'first_summary') +
        summaryRow('first summary, os_overdue=true&managed=true', 'first_filtered_summary') +
        summaryRow('page of 1,000, repeated (body rendered each time)', 'repeated_page') +
        summaryRow('summary, repeated (body rendered each time)', 'repeated_summary') +
        summaryRow('summary, filtered, repeated', 'repeated_filtered_summary'),
    );
    process.stdout.write(
      `container holding the snapshot: RSS ${fixed(serve.container_rss_mb, 0)} MB (peak ${fixed(serve.container_peak_rss_mb, 0)} MB); ` +
        `Jamf requests while serving: ${upstream}\n`,
    );

    // A devices container holds one snapshot, a mobileDevices container the other; a process holding both bounds them.
    const held = async (paths: string) => runChild('./fleet/hold-snapshots.ts', { ...env, BENCH_HOLD: paths });
    const holding = [
      [`GET /devices (${DEVICES.toLocaleString('en')} computers)`, await held('/devices')],
      [`GET /mobile-devices (${DEVICES.toLocaleString('en')} mobile devices)`, await held('/mobile-devices')],
      ['both', await held('/devices,/mobile-devices')],
    ] as const;
    const largest = Math.max(Number(holding[0][1].peak_rss_mb), Number(holding[1][1].peak_rss_mb));
    process.stdout.write(
      `| process holding the snapshot of | RSS after walking every page once | peak RSS |\n|---|---|---|\n` +
        holding
          .map(([label, figures]) => `| ${label} | ${fixed(figures.rss_mb, 0)} MB | ${fixed(figures.peak_rss_mb, 0)} MB |\n`)
          .join('') +
        `both ÷ the larger alone, peak: ${fixed(Number(holding[2][1].peak_rss_mb) / largest, 2)} (aim < 1 GB)\n`,
    );

    // The single node next to the TLS Redis Cluster: a refresh into each, then fresh containers' first
    // pages. The computers' alone: with no mobile devices their part is one page.
    jamf.setMobileDevices([]);
    const clusterEnv = { ...env, REDIS_URL: redisCluster.url, REDIS_TLS_CA_FILE: redisCluster.caFile };
    const clusterRefresh = await runChild('./fleet/refresh-once.ts', clusterEnv);
    const singleFirst = (await runChild('./fleet/first-pages.ts', env)).first_page as { p50_ms: number; p99_ms: number };
    const clusterFirst = (await runChild('./fleet/first-pages.ts', clusterEnv)).first_page as { p50_ms: number; p99_ms: number };
    process.stdout.write(
      `| cluster tier | refresh | first page of a fresh container p50 | p99 |\n|---|---|---|---|\n` +
        `| single redis-server | ${fixed(partOf(refresh, 'computers').duration_ms / 1000)} s | ${fixed(singleFirst.p50_ms, 0)} ms | ${fixed(singleFirst.p99_ms, 0)} ms |\n` +
        `| TLS Redis Cluster, ACL user | ${fixed(partOf(clusterRefresh, 'computers').duration_ms / 1000)} s | ${fixed(clusterFirst.p50_ms, 0)} ms | ${fixed(clusterFirst.p99_ms, 0)} ms |\n` +
        `cluster ÷ single node: refresh ${fixed(partOf(clusterRefresh, 'computers').duration_ms / partOf(refresh, 'computers').duration_ms, 2)}×, ` +
        `first page p50 ${fixed(clusterFirst.p50_ms / singleFirst.p50_ms, 2)}×, p99 ${fixed(clusterFirst.p99_ms / singleFirst.p99_ms, 2)}× (aim ≤ 1.5×)\n`,
    );
  } finally {
    await Promise.all([jamf.close(), sofa.close()]);
    await Promise.all([redis.stop(), redisCluster.stop()]);
  }
};
