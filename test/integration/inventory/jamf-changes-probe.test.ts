import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadlineIn } from '../../../lib/async/deadline.ts';
import { inventoryIdOf } from '../../../lib/inventory/record-id.ts';
import { makeJamfClient } from '../../../lib/inventory/jamf-client.ts';
import { COMPUTERS_INVENTORY } from '../../../lib/inventory/jamf-endpoints.ts';
import { UpstreamFailure } from '../../../lib/inventory/upstream-error.ts';
import { datedJamfComputer, DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf } from '../../../demo/fake-jamf.ts';
import { upstreamFailureOf } from '../../support/failure-of.ts';

/**
 * The incremental read's probe (one unfiltered record, for the inventory's `totalCount`) and its
 * filtered pages, caught in flight: the probe is sent beside page 0, the later pages wait for it, and
 * the first failure of either ends the read.
 */

// After every date the generated fleet holds (1–21 November).
const SINCE = Date.parse('2026-11-25T12:00:00.750Z');
const FLEET = generateJamfComputers(2_500, 41);
/** Every 10th record in contact after SINCE: 250 changes, three pages of 100. */
const CHANGED_FLEET = FLEET.map((record, index) =>
  index % 10 === 0 ? datedJamfComputer(record, 'lastContact', '2026-11-26T00:00:00Z') : record,
);
const CHANGED_IDS = CHANGED_FLEET.filter((_record, index) => index % 10 === 0).map((record) => record.id);

type Pick = (url: URL) => boolean;
const isProbe: Pick = (url) => url.searchParams.get('page-size') === '1' && !url.searchParams.has('filter');
const isChangedPage0: Pick = (url) => url.searchParams.has('filter') && url.searchParams.get('page') === '0';

/** What a held request does once the test decides: go on to Jamf, or get this answer instead. */
type Decision = 'forward' | { status: number; body: string };

/**
 * A loopback pass-through to the fake Jamf that holds the requests a test picks: `arrived` resolves
 * once the picked request is held, and it waits until `decide` forwards it or answers it. A request
 * the client cancels meanwhile closes its connection (`cancelled`).
 */
const startHoldingProxy = async (target: string) => {
  const holds: {
    pick: Pick;
    arrived: PromiseWithResolvers<void>;
    decision: PromiseWithResolvers<Decision>;
    cancelled: PromiseWithResolvers<void>;
  }[] = [];
  const server: Server = createServer((incoming, response) => {
    void (async () => {
      const url = new URL(incoming.url ?? '/', target);
      const held = holds.find((hold) => hold.pick(url));
      if (held !== undefined) {
        holds.splice(holds.indexOf(held), 1);
        response.once('close', () => held.cancelled.resolve());
        held.arrived.resolve();
        const decision = await held.decision.promise;
        if (decision !== 'forward') {
          response.writeHead(decision.status, { 'Content-Type': 'application/json' }).end(decision.body);
          return;
        }
      }
      const outgoing = httpRequest(url, { method: incoming.method, headers: incoming.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      outgoing.on('error', () => response.destroy());
      incoming.pipe(outgoing);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const decisions = new Set<PromiseWithResolvers<Decision>>();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: (pick: Pick) => {
      const hold = {
        pick,
        arrived: Promise.withResolvers<void>(),
        decision: Promise.withResolvers<Decision>(),
        cancelled: Promise.withResolvers<void>(),
      };
      holds.push(hold);
      decisions.add(hold.decision);
      return { arrived: hold.arrived.promise, cancelled: hold.cancelled.promise, decide: hold.decision.resolve };
    },
    close: async () => {
      for (const decision of decisions) decision.resolve('forward');
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

let jamf: FakeJamf | undefined;
let proxy: Awaited<ReturnType<typeof startHoldingProxy>> | undefined;
afterEach(async () => {
  await proxy?.close();
  await jamf?.close();
  proxy = undefined;
  jamf = undefined;
});

const setUp = async (filterFields?: readonly string[]) => {
  jamf = await startFakeJamf({ devices: CHANGED_FLEET, ...(filterFields === undefined ? {} : { filterFields }) });
  proxy = await startHoldingProxy(jamf.url);
  const client = makeJamfClient({
    baseUrl: proxy.url,
    auth: { kind: 'oauth', clientId: DEMO_JAMF_CREDENTIALS.clientId, clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret },
    inventory: COMPUTERS_INVENTORY,
    pageSize: 100,
  });
  return { client, proxy, jamf };
};

/** The read, and whether it has settled yet. */
const started = <T>(promise: Promise<T>) => {
  const read = { settled: false, promise };
  promise.then(
    () => (read.settled = true),
    () => (read.settled = true),
  );
  return read;
};

const NOT_JSON = { status: 200, body: '<html>maintenance</html>' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Jamf client reading the changes: the probe beside the filtered pages', () => {
  it('sends page 0 without waiting for the probe, the later pages only once it is in, and reads what it read before', async () => {
    const { client, proxy, jamf } = await setUp();
    const probe = proxy.hold(isProbe);
    const read = started(client.readChanges(deadlineIn(15_000), (record) => inventoryIdOf(record), SINCE));
    await probe.arrived;
    // Page 0 reaches Jamf and is answered while the probe is held; no other page is asked for meanwhile.
    await vi.waitFor(() => expect(jamf.stats().inventoryLog.map((entry) => entry.page)).toEqual([0]));
    await sleep(200);
    expect(jamf.stats().inventoryLog).toHaveLength(1);
    expect(read.settled).toBe(false);
    probe.decide('forward');
    expect(await read.promise).toEqual({ kind: 'changes', changed: CHANGED_IDS, totalCount: FLEET.length });
    const log = jamf.stats().inventoryLog;
    expect(log.map((entry) => [entry.page, entry.pageSize, entry.filter === null])).toEqual([
      [0, 100, false],
      [0, 1, true],
      [1, 100, false],
      [2, 100, false],
    ]);
    expect(jamf.stats().tokenRequests).toBe(1);
  });

  it('fails as the probe failed, cancelling page 0 in flight', async () => {
    const { client, proxy } = await setUp();
    const page0 = proxy.hold(isChangedPage0);
    const probe = proxy.hold(isProbe);
    const read = client.readChanges(deadlineIn(15_000), (record) => record, SINCE);
    await Promise.all([page0.arrived, probe.arrived]);
    probe.decide(NOT_JSON);
    const error = await upstreamFailureOf(read);
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).toMatch(/page 0 \(page-size 1\) sent a body that is not JSON/);
    // Page 0 was never let through: the read's end cancelled it.
    await page0.cancelled;
  });

  it('fails as page 0 failed, cancelling the probe in flight', async () => {
    const { client, proxy } = await setUp();
    const probe = proxy.hold(isProbe);
    const page0 = proxy.hold(isChangedPage0);
    const read = client.readChanges(deadlineIn(15_000), (record) => record, SINCE);
    await Promise.all([page0.arrived, probe.arrived]);
    page0.decide(NOT_JSON);
    const error = await upstreamFailureOf(read);
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).toMatch(/page 0 \(page-size 100, changed since 2026-11-25T12:00:00Z\) sent a body that is not JSON/);
    await probe.cancelled;
  });

  it.each([
    ['reports a filter Jamf refuses (400) once the probe is in', 'forward'],
    ['fails, as when the probe was sent first, when Jamf refuses the filter and the probe then fails', NOT_JSON],
  ] as const)('%s', async (_title, probeAnswer) => {
    // A Jamf Pro that cannot filter on the last contact.
    const { client, proxy, jamf } = await setUp(['general.reportDate']);
    const probe = proxy.hold(isProbe);
    const read = started(client.readChanges(deadlineIn(15_000), (record) => record, SINCE));
    await probe.arrived;
    // The filtered page 0 is refused while the probe is held; the read waits for the probe.
    await vi.waitFor(() => expect(jamf.stats().inventoryLog).toHaveLength(1));
    await sleep(100);
    expect(read.settled).toBe(false);
    probe.decide(probeAnswer);
    if (probeAnswer === 'forward') {
      expect(await read.promise).toEqual({
        kind: 'filter-refused',
        detail: expect.stringMatching(/answered 400: .*Cannot filter by field/),
      });
    } else {
      expect((await upstreamFailureOf(read.promise)).failure).toBe(UpstreamFailure.Unreadable);
    }
  });
});
