// Fresh containers of the device list routes named in BENCH_HOLD (paths joined by ","), in a process
// of its own, for bench/devices-fleet.bench.ts: each reads its snapshot from the cluster and walks its
// whole list once, one request at a time, as a Lambda container serves it, so every chunk is decoded.
// Prints the lists' sizes and this process's RSS and peak RSS as one JSON line.
import { call, freshContainer, isDeviceListPath, nextAfter } from './devices-handler.ts';

const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;

const paths = (process.env.BENCH_HOLD ?? '/devices').split(',');
const totals: Record<string, number> = {};
for (const path of paths) {
  if (!isDeviceListPath(path)) throw new Error(`BENCH_HOLD names ${path}, which is no device list route`);
  const handler = await freshContainer(path);
  let after: string | undefined;
  for (let page = 0; page < 1_000; page += 1) {
    const result = await call(handler, after === undefined ? 'limit=1000' : `limit=1000&after=${after}`, [], path);
    totals[path] = Number(result.headers?.['X-Total-Count']);
    after = nextAfter(result);
    if (after === undefined) break;
  }
}
write(
  `${JSON.stringify({ totals, rss_mb: process.memoryUsage().rss / 1024 / 1024, peak_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
process.exit(0);
