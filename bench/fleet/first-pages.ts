// The first request of fresh containers over a warm cluster, one container at a time, in a process
// of its own, for bench/devices-fleet.bench.ts: what a new Lambda container waits for its first page
// (the cluster read and decode of the whole snapshot). Prints the figures as one JSON line.
import { call, freshContainer, summary } from './devices-handler.ts';

const CONTAINERS = 12;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;

const latencies: number[] = [];
let total = 0;
for (let index = 0; index < CONTAINERS; index += 1) {
  const result = await call(await freshContainer(), `limit=1000&after=${index * 5_000}`, latencies);
  total = Number(result.headers?.['X-Total-Count']);
}
write(`${JSON.stringify({ total, first_page: summary(latencies) })}\n`);
process.exit(0);
