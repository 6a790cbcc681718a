// GET /devices over a warm cluster in a process of its own, for bench/devices-fleet.bench.ts: pages
// walked by concurrent clients from memory and from fresh containers' cluster reads, next to the
// same chain answering a constant page; prints the figures and this process's RSS as one JSON line.
import { makeLogger } from '../../lib/runtime/logger.ts';
import { makeHttpHandler } from '../../lib/http/make-http-handler.ts';
import { call, freshContainer, nextAfter, summary, type Handler } from './devices-handler.ts';

const CLIENTS = 16;
/** Walks of the whole list one request at a time: a Lambda container serves one request at once. */
const SERIAL_WALKS = 4;
const PAGE = 1_000;
const FRESH_CONTAINERS = 6;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;

/** Each client walks every page of `filter` from the first, following Link; all clients at once. */
const walk = async (
  handler: Handler,
  filter: string,
  latencies: number[],
  clients = CLIENTS,
): Promise<{ requests: number; seconds: number }> => {
  const started = performance.now();
  let requests = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      let after: string | undefined;
      for (let page = 0; page < 1_000; page += 1) {
        const query = [filter, `limit=${PAGE}`, after === undefined ? '' : `after=${after}`].filter(Boolean).join('&');
        const result = await call(handler, query, latencies);
        requests += 1;
        after = nextAfter(result);
        if (after === undefined) break;
      }
    }),
  );
  return { requests, seconds: (performance.now() - started) / 1000 };
};

const figures: Record<string, unknown> = {};

// One warm container: pages from memory.
const warm = await freshContainer();
const first = await call(warm, `limit=${PAGE}`, []);
const pageBody = first.body!;
const constant = makeHttpHandler({
  routes: ['GET /devices'],
  logger: makeLogger('bench'),
  handle: async () => ({ status: 200, json: pageBody }),
}) as unknown as Handler;
const baseline: number[] = [];
const baselineStarted = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    for (let request = 0; request < 100; request += 1) await call(constant, '', baseline);
  }),
);
figures.baseline_constant_page = summary(baseline, { requests: baseline.length, seconds: (performance.now() - baselineStarted) / 1000 });
const memory: number[] = [];
figures.memory_pages = summary(memory, await walk(warm, '', memory));
const filtered: number[] = [];
figures.memory_filtered_pages = summary(filtered, await walk(warm, 'os_is_latest=false&managed=true', filtered));

// The same one request at a time, as a deployed container serves them: a garbage collection pause
// then delays one request, where above it delays all 16 waiting in the one process.
const serialBaseline: number[] = [];
const serialBaselineStarted = performance.now();
for (let request = 0; request < 100 * SERIAL_WALKS; request += 1) await call(constant, '', serialBaseline);
figures.serial_baseline_constant_page = summary(serialBaseline, {
  requests: serialBaseline.length,
  seconds: (performance.now() - serialBaselineStarted) / 1000,
});
const serial: number[] = [];
const serialStarted = performance.now();
let serialRequests = 0;
for (let round = 0; round < SERIAL_WALKS; round += 1) serialRequests += (await walk(warm, '', serial, 1)).requests;
figures.serial_memory_pages = summary(serial, { requests: serialRequests, seconds: (performance.now() - serialStarted) / 1000 });
// The fleet summary one request at a time, after the pages above decided the snapshot: its body is
// kept by ETag, as a page's is.
for (const [key, query] of [
  ['serial_summary', ''],
  ['serial_filtered_summary', 'os_overdue=true&managed=true'],
] as const) {
  const latencies: number[] = [];
  const started = performance.now();
  for (let request = 0; request < 100 * SERIAL_WALKS; request += 1) await call(warm, query, latencies, '/devices/summary');
  figures[key] = summary(latencies, { requests: latencies.length, seconds: (performance.now() - started) / 1000 });
}
figures.page_kb = pageBody.length / 1024;
figures.total = Number(first.headers?.['X-Total-Count']);
// One container holding the snapshot, measured before the fresh containers below add theirs.
figures.container_rss_mb = process.memoryUsage().rss / 1024 / 1024;
figures.container_peak_rss_mb = process.resourceUsage().maxRSS / 1024;

// Fresh containers: the first requests of each read the snapshot from the cluster.
const clusterLatencies: number[] = [];
for (let index = 0; index < FRESH_CONTAINERS; index += 1) {
  const handler = await freshContainer();
  await Promise.all(
    Array.from({ length: CLIENTS }, (_, client) => call(handler, `limit=${PAGE}&after=${client * 5_000}`, clusterLatencies)),
  );
}
figures.cluster_fresh_container = summary(clusterLatencies);

write(`${JSON.stringify(figures)}\n`);
process.exit(0);
