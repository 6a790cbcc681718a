import { afterEach, describe, expect, it } from 'vitest';
import { deadlineIn } from '../../../lib/async/deadline.ts';
import type { JamfAuth } from '../../../lib/inventory/jamf-auth.ts';
import { makeJamfClient, type JamfClientOptions } from '../../../lib/inventory/jamf-client.ts';
import { COMPUTERS_INVENTORY } from '../../../lib/inventory/jamf-endpoints.ts';
import { inventoryIdOf } from '../../../lib/inventory/record-id.ts';
import { UpstreamFailure } from '../../../lib/inventory/upstream-error.ts';
import type { RetrySummary } from '../../../lib/upstream/upstream-retry.ts';
import {
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  startFakeJamf,
  type FakeJamf,
  type FakeJamfOptions,
  type JamfFault,
} from '../../../demo/fake-jamf.ts';
import { upstreamFailureOf } from '../../support/failure-of.ts';

const oauth: JamfAuth = {
  kind: 'oauth',
  clientId: DEMO_JAMF_CREDENTIALS.clientId,
  clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret,
};
/** The production policy's shape with short waits: the tests wait for answers, not for backoffs. */
const QUICK = { attempts: 4, backoff: { baseMs: 5, maxMs: 40, fullJitter: true } };
const FLEET = generateJamfComputers(3_000, 31);
const PAGE_SIZE = 100;
const MIB = 1024 * 1024;

let jamf: FakeJamf | undefined;
afterEach(async () => {
  await jamf?.close();
  jamf = undefined;
});

/** A client of a fresh fake, with what its reads report: retried attempts, and one summary per read that retried. */
const setUp = async (fake: FakeJamfOptions, client: Partial<JamfClientOptions> = {}) => {
  jamf = await startFakeJamf({ devices: FLEET, ...fake });
  const reported = { retries: 0, summaries: [] as RetrySummary[] };
  const jamfClient = makeJamfClient({
    baseUrl: jamf.url,
    auth: oauth,
    inventory: COMPUTERS_INVENTORY,
    pageSize: PAGE_SIZE,
    retry: QUICK,
    onRetry: () => (reported.retries += 1),
    onRetried: (summary) => reported.summaries.push(summary),
    ...client,
  });
  return { client: jamfClient, reported, fake: jamf };
};

const idsOf = (records: unknown[]) => records.map((record) => inventoryIdOf(record));
const expectedIds = () => idsOf([...FLEET].sort((a, b) => Number(a.id) - Number(b.id)));
/** Requests the fake received for inventory page `page`. */
const requestsFor = (fake: FakeJamf, page: number) => fake.stats().inventoryLog.filter((entry) => entry.page === page);

describe('Jamf client retries transient failures', () => {
  it('reads the exact list through failures on a third of the pages and on the token endpoint, each page read once when it answers', async () => {
    const kinds: (JamfFault & { times: number })[] = [
      { kind: 'status', status: 500, times: 1 },
      { kind: 'status', status: 502, gateway: true, times: 2 },
      { kind: 'status', status: 503, times: 3 },
      { kind: 'status', status: 504, gateway: true, times: 1 },
      { kind: 'rate-limited', retryAfter: '0', times: 1 },
      { kind: 'rate-limited', rateLimitReset: '0', times: 1 },
      { kind: 'drop', times: 1 },
      { kind: 'delay', ms: 6_000, times: 1 },
    ];
    // 30 pages; every third (0, 3, …, 27) fails first, in each of the ways above in turn.
    const pageFaults = Object.fromEntries(Array.from({ length: 10 }, (_, index) => [index * 3, { ...kinds[index % kinds.length]! }]));
    const { client, reported, fake } = await setUp(
      { pageFaults, tokenFault: { kind: 'status', status: 503, times: 2 } },
      // Far above what a page takes on a busy machine, far below the slow page's delay.
      { requestTimeoutMs: 2_000 },
    );
    const records = await client.readInventory(deadlineIn(15_000), (record) => record);
    expect(idsOf(records)).toEqual(expectedIds());
    const expectedRetries = 2 + Object.values(pageFaults).reduce((sum, fault) => sum + fault.times, 0);
    expect(reported.retries).toBe(expectedRetries);
    expect(fake.stats().tokenRequests).toBe(3);
    // Each page asked once more per failure, and never again once it answered.
    for (let page = 0; page < 30; page += 1) expect(requestsFor(fake, page)).toHaveLength(1 + (pageFaults[page]?.times ?? 0));
    expect(reported.summaries).toHaveLength(1);
    expect(reported.summaries[0]).toEqual({
      retries: expectedRetries,
      answers: { '500': 2, '502': 4, '503': 5, '504': 1, '429': 2, reset: 1, 'timed-out': 1 },
    });
  });

  it('fails the read after exactly 4 attempts at a page that never recovers, and returns no partial list', async () => {
    const { client, reported, fake } = await setUp({ pageFaults: { 7: { kind: 'status', status: 503 } } });
    const error = await upstreamFailureOf(client.readInventory(deadlineIn(15_000), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unavailable);
    expect(error.status).toBe(502);
    expect(requestsFor(fake, 7)).toHaveLength(4);
    expect(reported.retries).toBe(3);
    expect(reported.summaries).toEqual([{ retries: 3, answers: { '503': 4 }, gaveUp: 'attempts' }]);
  });

  it('fails as rate limited, with the last Retry-After, when the token endpoint keeps answering 429', async () => {
    const { client, fake } = await setUp({ tokenFault: { kind: 'rate-limited', retryAfter: '0' } });
    const error = await upstreamFailureOf(client.readInventory(deadlineIn(15_000), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.RateLimited);
    expect(error.status).toBe(503);
    expect(fake.stats().tokenRequests).toBe(4);
    expect(fake.stats().inventoryRequests).toBe(0);
  });

  it.each([
    ['Retry-After', { kind: 'rate-limited', retryAfter: '1', times: 1 } as const],
    ['x-ratelimit-reset', { kind: 'rate-limited', rateLimitReset: '1', times: 1 } as const],
  ])('asks again no sooner than %s says', async (_label, fault) => {
    const { client, fake } = await setUp({ pageFaults: { 2: fault } });
    expect(idsOf(await client.readInventory(deadlineIn(15_000), (record) => record))).toEqual(expectedIds());
    const [first, second] = requestsFor(fake, 2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_000);
  });

  it('does not wait past the deadline: a Retry-After that cannot fit fails the read at once, with that Retry-After', async () => {
    const { client, reported, fake } = await setUp({ pageFaults: { 1: { kind: 'rate-limited', retryAfter: '30' } } });
    const started = Date.now();
    const error = await upstreamFailureOf(client.readInventory(deadlineIn(5_000), (record) => record));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error.failure).toBe(UpstreamFailure.RateLimited);
    expect(error.headers).toEqual({ 'Retry-After': '30' });
    expect(requestsFor(fake, 1)).toHaveLength(1);
    // Nothing retried, yet the read's one line says why it gave up.
    expect(reported.summaries).toEqual([{ retries: 0, answers: { '429': 1 }, gaveUp: 'deadline' }]);
  });

  it('retries only while a wait and one more attempt (its timeout) fit the deadline', async () => {
    // Every answer takes 0.7 s and an attempt may take 4 s: the 500 at ≥ 1.4 s (after the token) leaves
    // room in 6 s for one more attempt; the second 500, at ≥ 2.1 s, does not.
    const { client, reported, fake } = await setUp(
      { pageFaults: { 0: { kind: 'status', status: 500 } }, latencyMs: 700 },
      { requestTimeoutMs: 4_000 },
    );
    const error = await upstreamFailureOf(client.readInventory(deadlineIn(6_000), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unavailable);
    expect(requestsFor(fake, 0)).toHaveLength(2);
    expect(reported.summaries).toEqual([{ retries: 1, answers: { '500': 2 }, gaveUp: 'deadline' }]);
  });

  it.each([
    ['streamed past it, without a Content-Length', { kind: 'oversize', bytes: 65 * MIB } as const],
    ['announced by its Content-Length', { kind: 'oversize', bytes: 65 * MIB, declared: true } as const],
  ])('fails a page over the 64 MiB cap as unreadable, naming the cap, without retrying: %s', async (_label, fault) => {
    const { client, fake } = await setUp({ devices: FLEET.slice(0, 50), pageFaults: { 0: fault } });
    const error = await upstreamFailureOf(client.readInventory(deadlineIn(15_000), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).toContain('64 MiB cap of a Jamf page');
    expect(requestsFor(fake, 0)).toHaveLength(1);
  });
});
