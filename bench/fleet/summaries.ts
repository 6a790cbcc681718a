// The fleet summary next to a page of 1,000, in a process of its own, for bench/devices-fleet.bench.ts:
// GET /devices' use case (lib/devices/device-list.ts) over a snapshot of the bench's 100,000 computers
// in memory, decided against the demo copy of the real SOFA v2 macOS feed. "First" is the first
// answer after a new snapshot (a new snapshot object: every device decided again, as when the tiers
// hand a container a new snapshot or a feed copy moves); "repeated" the same answer again, its body
// rendered each time (the HTTP layer serves a kept one: serve-pages.ts measures that). One request at a time, as a Lambda
// container serves them. Prints the figures as one JSON line.
import { CacheTier } from '../../lib/cache/tiered-cache.ts';
import { everyDevice } from '../../lib/devices/decide-latest.ts';
import { makeDeviceList } from '../../lib/devices/device-list.ts';
import { COMPUTER_QUERY, type DeviceQuery } from '../../lib/devices/device-query.ts';
import type { DeviceSnapshot } from '../../lib/devices/device-snapshot.ts';
import { feedReference } from '../../lib/latest-os/latest-reference.ts';
import { sofaReleases, type SofaReleases } from '../../lib/latest-os/sofa-feed.ts';
import { generateJamfComputers } from '../../demo/fake-jamf.ts';
import { readSofaFeed } from '../../demo/fake-sofa.ts';
import { mapComputer } from '../../test/support/inventory-records.ts';
import { buildComputerSnapshot } from '../../test/support/snapshot-devices.ts';
import { summary } from './devices-handler.ts';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 100_000);
const FIRST_ROUNDS = 25;
const REPEATED = 400;
const write = process.stdout.write.bind(process.stdout);

const built = buildComputerSnapshot(
  generateJamfComputers(DEVICES, 3).flatMap((record) => mapComputer(record) ?? []),
  Date.now(),
);
const reference = everyDevice(feedReference(sofaReleases(await readSofaFeed('v2')) as SofaReleases, '26.6.2'));
let current: DeviceSnapshot = built;
const list = makeDeviceList({
  snapshots: { get: async () => ({ value: current, tier: CacheTier.Memory }) },
  references: async () => reference,
  query: COMPUTER_QUERY,
  now: Date.now,
});
const request = { remainingTimeMs: () => 29_000 };

/** One answer, its body rendered as the response sends it (a flat string: its UTF-8 length read), timed. */
const timed = async (answer: () => Promise<{ body: () => string }>, latencies: number[]): Promise<number> => {
  const started = performance.now();
  const bytes = Buffer.byteLength((await answer()).body());
  latencies.push(performance.now() - started);
  return bytes;
};
const page = (query: DeviceQuery) => () => list.page({ limit: 1_000, ...query }, request);
const fleetSummary = (query: DeviceQuery) => () => list.summary(query, request);

const figures: Record<string, unknown> = { total: built.count };
const first = { page: [] as number[], summary: [] as number[], filtered_summary: [] as number[] };
for (let round = 0; round < FIRST_ROUNDS; round += 1) {
  for (const [key, answer] of [
    ['page', page({ after: String(round * 3_000) })],
    ['summary', fleetSummary({})],
    ['filtered_summary', fleetSummary({ os_overdue: true, managed: true })],
  ] as const) {
    // A new snapshot object with the same devices: the use case decides every device again.
    current = { ...built };
    await timed(answer, first[key]);
  }
}
figures.first_page = summary(first.page);
figures.first_summary = summary(first.summary);
figures.first_filtered_summary = summary(first.filtered_summary);

const repeated = { page: [] as number[], summary: [] as number[], filtered_summary: [] as number[] };
for (let request = 0; request < REPEATED; request += 1) {
  await timed(page({ after: String((request % 90) * 1_000) }), repeated.page);
  figures.summary_kb = (await timed(fleetSummary({}), repeated.summary)) / 1024;
  await timed(fleetSummary({ os_overdue: true, managed: true }), repeated.filtered_summary);
}
figures.repeated_page = summary(repeated.page);
figures.repeated_summary = summary(repeated.summary);
figures.repeated_filtered_summary = summary(repeated.filtered_summary);

write(`${JSON.stringify(figures)}\n`);
process.exit(0);
