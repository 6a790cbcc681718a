// One refreshDevices run in a process of its own, for bench/devices-fleet.bench.ts: prints its
// outcome and this process's peak RSS as one JSON line (the configuration comes from the environment).
import { handler } from '../../functions/refresh-devices.ts';
import { lambdaContext } from '../../test/support/http-events.ts';

const write = process.stdout.write.bind(process.stdout);
// The refresh's own log and metric lines are not the figures.
process.stdout.write = (() => true) as typeof process.stdout.write;
const started = performance.now();
const outcome = await handler({ source: 'aws.events' }, lambdaContext(15 * 60 * 1000));
write(`${JSON.stringify({ ...outcome, wall_ms: performance.now() - started, peak_rss_mb: process.resourceUsage().maxRSS / 1024 })}\n`);
process.exit(0);
