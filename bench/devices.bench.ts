import {} from '../lib/devices/build-snapshot.ts';
import { buildComputerSnapshot } from '../test/support/snapshot-devices.ts';
import { decideLatest, decisionsAt, everyDevice, renderDevices } from '../lib/devices/decide-latest.ts';
import type { InventoryDevice } from '../lib/devices/map-inventory-record.ts';
import { feedReference, fixedReference } from '../lib/latest-os/latest-reference.ts';
import { sofaReleases, type SofaReleases } from '../lib/latest-os/sofa-feed.ts';
import { JAMF_CONCURRENCY, JAMF_PAGE_SIZE, makeJamfClient, type JamfClient } from '../lib/inventory/jamf-client.ts';
import { COMPUTERS_INVENTORY } from '../lib/inventory/jamf-endpoints.ts';
import { deadlineIn } from '../lib/async/deadline.ts';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf } from '../demo/fake-jamf.ts';
import { readSofaFeed } from '../demo/fake-sofa.ts';
import { mapComputer } from '../test/support/inventory-records.ts';

/**
 * Full upstream read of 10,000 devices behind a Jamf-compatible server adding 20 ms per request:
 * this client (page 0, then the rest at bounded concurrency) against the naive way (sequential
 * pages of 100, the same client code with concurrency 1), alternated in the same process. Then
 * mapping throughput against plain serialization of the raw records as the baseline. Last, the
 * latest-OS decision of a 100,000-device snapshot against the feed (per major, response levels)
 * against one fixed version as the baseline, and reading the feed itself.
 */
const DEVICES = 10_000;
const LATENCY_MS = 20;
const RUNS = 3;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const time = async (action: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await action();
  return performance.now() - started;
};

const readOnce = async (client: JamfClient): Promise<void> => {
  const records = await client.readInventory(deadlineIn(60_000), (record) => record);
  if (records.length !== DEVICES) throw new Error(`read ${records.length} records, expected ${DEVICES}`);
};

export const run = async (): Promise<void> => {
  const records = generateJamfComputers(DEVICES, 7);
  const jamf = await startFakeJamf({ devices: records, latencyMs: LATENCY_MS });
  try {
    const auth = {
      kind: 'oauth',
      clientId: DEMO_JAMF_CREDENTIALS.clientId,
      clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret,
    } as const;
    const ours = makeJamfClient({ baseUrl: jamf.url, auth, inventory: COMPUTERS_INVENTORY });
    const naive = makeJamfClient({ baseUrl: jamf.url, auth, inventory: COMPUTERS_INVENTORY, pageSize: 100, concurrency: 1 });
    await readOnce(ours); // warm-up: JIT, sockets
    const oursMs: number[] = [];
    const naiveMs: number[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      oursMs.push(await time(() => readOnce(ours)));
      naiveMs.push(await time(() => readOnce(naive)));
    }
    jamf.resetStats();
    await readOnce(ours);
    const { inventoryRequests, maxConcurrentInventory } = jamf.stats();
    const oursMedian = median(oursMs);
    const naiveMedian = median(naiveMs);
    process.stdout.write(
      `upstream read, ${DEVICES} devices, +${LATENCY_MS} ms per request (median of ${RUNS}):\n` +
        `  client (page-size ${JAMF_PAGE_SIZE}, concurrency ${JAMF_CONCURRENCY}): ${oursMedian.toFixed(0)} ms ` +
        `(${inventoryRequests} inventory requests, max ${maxConcurrentInventory} concurrent)\n` +
        `  naive (page-size 100, sequential):       ${naiveMedian.toFixed(0)} ms\n` +
        `  speed-up: ${(naiveMedian / oursMedian).toFixed(1)}x\n`,
    );
  } finally {
    await jamf.close();
  }

  // Records as the inventory serves them (through JSON, like the client sees them).
  const served = JSON.parse(JSON.stringify(records)) as unknown[];
  const mapMs: number[] = [];
  const baselineMs: number[] = [];
  let bytes = 0;
  for (let index = 0; index < 5; index += 1) {
    baselineMs.push(await time(async () => JSON.stringify(served)));
    mapMs.push(
      await time(async () => {
        const devices: InventoryDevice[] = [];
        for (const record of served) {
          const device = mapComputer(record);
          if (device !== undefined) devices.push(device);
        }
        const snapshot = buildComputerSnapshot(devices, Date.now());
        const all = Array.from({ length: snapshot.count }, (_, index) => index);
        bytes = renderDevices(snapshot, decisionsAt(decideLatest(snapshot, everyDevice(fixedReference('26.6.2'))), Date.now()), all).length;
      }),
    );
  }
  const perSecond = (ms: number) => Math.round((DEVICES / ms) * 1000);
  process.stdout.write(
    `mapping + snapshot + rendering ${DEVICES} records (median of 5): ${median(mapMs).toFixed(1)} ms = ${perSecond(median(mapMs)).toLocaleString('en')} records/s ` +
      `(${(bytes / 1024).toFixed(0)} KiB body)\n` +
      `  baseline JSON.stringify of the raw records: ${median(baselineMs).toFixed(1)} ms; mapping costs ${(median(mapMs) / median(baselineMs)).toFixed(2)}x of it\n`,
  );

  await benchLatestDecision();
};

const FLEET = 100_000;

/** Deciding every device of a fleet-size snapshot: what a container does when the feed moves. */
const benchLatestDecision = async (): Promise<void> => {
  const snapshot = buildComputerSnapshot(
    generateJamfComputers(FLEET, 11).flatMap((record) => mapComputer(record) ?? []),
    Date.now(),
  );
  const feedText = JSON.stringify(await readSofaFeed('v2'));
  const fixed = fixedReference('26.6.2');
  const perDevice = feedReference(sofaReleases(JSON.parse(feedText)) as SofaReleases, '26.6.2');
  const fixedMs: number[] = [];
  const feedMs: number[] = [];
  const readMs: number[] = [];
  let latest = 0;
  for (let index = 0; index < 7; index += 1) {
    fixedMs.push(await time(async () => decideLatest(snapshot, everyDevice(fixed))));
    feedMs.push(
      await time(async () => {
        latest = decideLatest(snapshot, everyDevice(perDevice)).flags.reduce((sum, flag) => sum + flag, 0);
      }),
    );
    readMs.push(await time(async () => feedReference(sofaReleases(JSON.parse(feedText)) as SofaReleases, '26.6.2')));
  }
  process.stdout.write(
    `latest-OS decision, ${FLEET.toLocaleString('en')} devices (median of 7): against the feed, per device ${median(feedMs).toFixed(1)} ms (${latest.toLocaleString('en')} latest), ` +
      `against one version ${median(fixedMs).toFixed(1)} ms: ${(median(feedMs) / median(fixedMs)).toFixed(2)}x\n` +
      `  reading the feed (${(feedText.length / 1024).toFixed(0)} KiB copy): ${median(readMs).toFixed(2)} ms\n`,
  );
};
