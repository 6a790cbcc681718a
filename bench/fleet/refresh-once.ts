// One refreshDevices run (both inventories, computers first) in a process of its own, for
// bench/devices-fleet.bench.ts: prints its outcome, this process's peak RSS, and the peak when the
// computers' refresh was done, as one JSON line (the configuration comes from the environment).
import { handler } from '../../functions/refresh-devices.ts';
import { lambdaContext } from '../../test/support/http-events.ts';

const write = process.stdout.write.bind(process.stdout);
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
let computersPeakRssMb: number | undefined;
// The refresh's own log and metric lines are not the figures; the computers' line ends their part.
process.stdout.write = ((chunk: unknown) => {
  if (computersPeakRssMb === undefined && String(chunk).includes('"inventory":"computers"')) computersPeakRssMb = peakRssMb();
  return true;
}) as typeof process.stdout.write;
const started = performance.now();
const outcome = await handler({ source: 'aws.events' }, lambdaContext(15 * 60 * 1000));
write(
  `${JSON.stringify({ ...outcome, wall_ms: performance.now() - started, peak_rss_mb: peakRssMb(), computers_peak_rss_mb: computersPeakRssMb })}\n`,
);
process.exit(0);
