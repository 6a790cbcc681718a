import { afterEach, describe, expect, it } from 'vitest';
import { deadlineIn } from '../../../lib/async/deadline.ts';
import { inventoryIdOf } from '../../../lib/inventory/record-id.ts';
import type { JamfAuth } from '../../../lib/inventory/jamf-auth.ts';
import { makeJamfClient, type JamfClientOptions } from '../../../lib/inventory/jamf-client.ts';
import { COMPUTERS_INVENTORY } from '../../../lib/inventory/jamf-endpoints.ts';
import { UpstreamFailure } from '../../../lib/inventory/upstream-error.ts';
import {
  datedJamfComputer,
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  startFakeJamf,
  type FakeJamf,
  type FakeJamfOptions,
} from '../../../demo/fake-jamf.ts';
import { upstreamFailureOf } from '../../support/failure-of.ts';

const oauth: JamfAuth = {
  kind: 'oauth',
  clientId: DEMO_JAMF_CREDENTIALS.clientId,
  clientSecret: async () => DEMO_JAMF_CREDENTIALS.clientSecret,
};
const longDeadline = () => deadlineIn(15_000);

let jamf: FakeJamf | undefined;
afterEach(async () => {
  await jamf?.close();
  jamf = undefined;
});

const setUp = async (fake: FakeJamfOptions, client: Partial<JamfClientOptions> = {}) => {
  jamf = await startFakeJamf(fake);
  return makeJamfClient({ baseUrl: jamf.url, auth: oauth, inventory: COMPUTERS_INVENTORY, ...client });
};

describe('Jamf client against a Jamf-compatible server', () => {
  it('sends the exact inventory query: four sections, sort by id, page and one page size', async () => {
    const client = await setUp({ devices: generateJamfComputers(2500, 1) });
    await client.readInventory(longDeadline(), (record) => record);
    const log = jamf!.stats().inventoryLog;
    expect(log[0]!.query).toBe(
      'section=GENERAL&section=HARDWARE&section=OPERATING_SYSTEM&section=USER_AND_LOCATION&sort=id:asc&page=0&page-size=1000',
    );
    expect(log.map((entry) => entry.page).sort()).toEqual([0, 1, 2]);
    for (const entry of log) {
      expect(entry.sections).toEqual(['GENERAL', 'HARDWARE', 'OPERATING_SYSTEM', 'USER_AND_LOCATION']);
      expect(entry.sort).toBe('id:asc');
      expect(entry.pageSize).toBe(1000); // the documented page size (docs/architecture.md)
    }
  });

  it('keeps reading past a page size Jamf clamps at 2000, using totalCount', async () => {
    const client = await setUp({ devices: generateJamfComputers(4500, 2) }, { pageSize: 2500 });
    const records = await client.readInventory(longDeadline(), (record) => record);
    expect(records).toHaveLength(4500);
    const log = jamf!.stats().inventoryLog;
    expect(log).toHaveLength(3);
    expect(log.filter((entry) => entry.page > 0).every((entry) => entry.pageSize === 2000)).toBe(true);
  });

  it('reads the single page of a small inventory once', async () => {
    const client = await setUp({ devices: generateJamfComputers(7, 3) });
    expect(await client.readInventory(longDeadline(), (record) => record)).toHaveLength(7);
    expect(jamf!.stats().inventoryRequests).toBe(1);
  });

  it('reads an empty inventory as an empty list', async () => {
    const client = await setUp({ devices: [] });
    expect(await client.readInventory(longDeadline(), (record) => record)).toEqual([]);
  });

  it('reads the pages enrolled during the read when a later page reports a larger totalCount', async () => {
    const all = generateJamfComputers(350, 4);
    // Page 0 announces 200 devices; before page 1 is served, 150 more are enrolled.
    const client = await setUp(
      { devices: all.slice(0, 200), beforeInventoryRequest: (n) => n === 2 && jamf!.setDevices(all) },
      { pageSize: 100 },
    );
    const records = await client.readInventory(longDeadline(), (record) => record);
    expect(records).toHaveLength(350);
    expect(
      jamf!
        .stats()
        .inventoryLog.map((entry) => entry.page)
        .sort(),
    ).toEqual([0, 1, 2, 3]);
  });

  it('reads again when a device is removed during the read, so no other device is skipped by the shifted pages', async () => {
    const fleet = generateJamfComputers(20, 12);
    const removed = fleet[3]!;
    // Page 0 is served from 20 devices; then one is removed, and page 1 (served by offset) would
    // start one device later, skipping the device that moved onto page 0.
    const client = await setUp(
      { devices: fleet, beforeInventoryRequest: (n) => n === 2 && jamf!.setDevices(fleet.filter((device) => device !== removed)) },
      { pageSize: 10, concurrency: 1 },
    );
    const ids = (await client.readInventory(longDeadline(), (record) => record)).map((record) => inventoryIdOf(record));
    expect(ids).toEqual(fleet.filter((device) => device !== removed).map((device) => inventoryIdOf(device)));
    expect(jamf!.stats().inventoryLog.map((entry) => entry.page)).toEqual([0, 1, 0, 1]);
  });

  it("cancels the lost read's pages in flight rather than waiting on them before it reads again", async () => {
    const fleet = generateJamfComputers(60, 14);
    const removed = fleet[5]!;
    // Page 1 is answered after a removal; page 3 of that read would never be answered.
    const client = await setUp(
      {
        devices: fleet,
        pageFaults: { 3: { kind: 'hang', times: 1 } },
        beforeInventoryRequest: (n) => n === 2 && jamf!.setDevices(fleet.filter((device) => device !== removed)),
      },
      { pageSize: 10, concurrency: 4, requestTimeoutMs: 60_000 },
    );
    const started = performance.now();
    const records = await client.readInventory(longDeadline(), (record) => record);
    expect(records).toHaveLength(59);
    // Without the cancellation the read waits for the deadline (15 s) and fails.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('fails as unreadable, returning nothing partial, when devices are removed during every read', async () => {
    let devices = generateJamfComputers(60, 13);
    const client = await setUp(
      // Every request for page 2 finds one device fewer than the page 0 before it.
      { devices, beforeInventoryRequest: (n) => n % 3 === 0 && jamf!.setDevices((devices = devices.slice(1))) },
      { pageSize: 20, concurrency: 1 },
    );
    const error = await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).toMatch(/removed during each of 3 reads/);
    expect(jamf!.stats().inventoryRequests).toBe(9);
  });

  it('renews a refused token once for four concurrent pages and reports one auth failure', async () => {
    let failures = 0;
    const client = await setUp({ devices: generateJamfComputers(5000, 5), latencyMs: 20 }, { onAuthFailure: () => (failures += 1) });
    jamf!.invalidateTokensAtRequest(2);
    const records = await client.readInventory(longDeadline(), (record) => record);
    expect(records).toHaveLength(5000);
    expect(failures).toBe(1);
    expect(jamf!.stats().tokenRequests).toBe(2);
    expect(jamf!.stats().rejectedTokens).toBe(4);
  });

  it('renews a token each time it expires mid-read (each good for two pages here), reading every device once', async () => {
    let failures = 0;
    const fleet = generateJamfComputers(2_000, 9);
    const client = await setUp({ devices: fleet, tokenMaxUses: 2 }, { pageSize: 100, onAuthFailure: () => (failures += 1) });
    const records = await client.readInventory(longDeadline(), (record) => record);
    expect(records).toHaveLength(fleet.length);
    expect(new Set(records.map((record) => inventoryIdOf(record))).size).toBe(fleet.length);
    const { tokenRequests, inventoryRequests, rejectedTokens } = jamf!.stats();
    // 20 pages at two per token: at least ten tokens; every refusal was retried.
    expect(tokenRequests).toBeGreaterThanOrEqual(10);
    expect(tokenRequests).toBeLessThanOrEqual(21);
    expect(inventoryRequests - rejectedTokens).toBe(20);
    expect(failures).toBe(tokenRequests - 1);
  });

  it('fails with credentials-rejected when the renewed token is refused before serving a page', async () => {
    let failures = 0;
    const client = await setUp({ devices: generateJamfComputers(3000, 6), tokenMaxUses: 0 }, { onAuthFailure: () => (failures += 1) });
    const error = await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.CredentialsRejected);
    expect(jamf!.stats().tokenRequests).toBe(2);
    expect(failures).toBe(2);
  });

  it('authenticates with basic credentials for a bearer token', async () => {
    jamf = await startFakeJamf({ devices: generateJamfComputers(5, 7), username: 'api-reader', password: 'p@ss:word' });
    const client = makeJamfClient({
      baseUrl: jamf.url,
      auth: { kind: 'basic', username: 'api-reader', password: async () => 'p@ss:word' },
      inventory: COMPUTERS_INVENTORY,
    });
    expect(await client.readInventory(longDeadline(), (record) => record)).toHaveLength(5);
  });

  it('reports an unreachable upstream as unavailable', async () => {
    jamf = await startFakeJamf();
    const url = jamf.url;
    await jamf.close();
    jamf = undefined;
    const client = makeJamfClient({ baseUrl: url, auth: oauth, inventory: COMPUTERS_INVENTORY });
    expect((await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record))).failure).toBe(UpstreamFailure.Unavailable);
  });

  it('times out a single request that hangs, even with time left overall', async () => {
    const client = await setUp({ devices: generateJamfComputers(10, 8), pageFaults: { 0: { kind: 'hang' } } }, { requestTimeoutMs: 200 });
    const started = performance.now();
    expect((await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record))).failure).toBe(UpstreamFailure.TimedOut);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it.each([
    ['an empty page in the middle', 1, 0],
    ['a page in the middle missing one record', 1, 999],
    ['the last page missing its last record', 2, 999],
  ])('fails as unreadable rather than returning a partial list when upstream sends %s', async (_label, page, keep) => {
    const client = await setUp({ devices: generateJamfComputers(3000, 21), pageFaults: { [page]: { kind: 'short', keep } } });
    const error = await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).toMatch(/a page came back short/);
  });

  it('stops the other pages as soon as one fails', async () => {
    const client = await setUp(
      { devices: generateJamfComputers(500, 9), pageFaults: { 1: { kind: 'status', status: 500 }, 2: { kind: 'hang' } } },
      { pageSize: 100 },
    );
    const started = performance.now();
    expect((await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record))).failure).toBe(UpstreamFailure.Unavailable);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('treats a 404 from the token endpoint as a misconfigured INVENTORY_URL', async () => {
    const client = await setUp({ tokenFault: { kind: 'status', status: 404 } });
    expect((await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record))).failure).toBe(UpstreamFailure.Misconfigured);
  });

  it('refuses a token response without a token, without logging its body', async () => {
    const client = await setUp({
      tokenFault: { kind: 'status', status: 200, body: '{"token_type":"Bearer","leak":"fake-jamf-token-zzz"}' },
    });
    const error = await upstreamFailureOf(client.readInventory(longDeadline(), (record) => record));
    expect(error.failure).toBe(UpstreamFailure.Unreadable);
    expect(error.message).not.toContain('fake-jamf-token-zzz');
  });

  it('returns records each id once in ascending numeric order from a shuffled upstream with repeats', async () => {
    const base = generateJamfComputers(250, 10);
    const shuffled = [...base].reverse();
    shuffled.splice(40, 0, { ...base[3]!, general: { name: 'a repeat' } });
    const client = await setUp({ devices: shuffled, ignoreSort: true }, { pageSize: 100 });
    const ids = (await client.readInventory(longDeadline(), (record) => record)).map((record) => Number(inventoryIdOf(record)));
    expect(ids).toEqual(base.map((record) => Number(record.id)));
  });
});

describe('Jamf client against each Jamf Pro version', () => {
  const V4 = 'GET /api/v4/computers-inventory';
  const V3 = 'GET /api/v3/computers-inventory';
  const OAUTH_V1 = 'POST /api/v1/oauth/token';
  const OAUTH_OLD = 'POST /api/oauth/token';
  const readAll = (client: ReturnType<typeof makeJamfClient>) => client.readInventory(longDeadline(), (record) => record);

  it('goes straight to /api/v4 and /api/v1/oauth/token on a current Jamf Pro', async () => {
    const client = await setUp({ personality: 'current', devices: generateJamfComputers(30, 25) });
    expect(await readAll(client)).toHaveLength(30);
    expect(await readAll(client)).toHaveLength(30);
    expect(jamf!.stats().requests).toEqual({ [OAUTH_V1]: 2, [V4]: 2 });
  });

  it('finds an older Jamf Pro once per client (v4 then v3, the v1 OAuth path then the old one) and remembers it', async () => {
    const client = await setUp({ personality: 'legacy', devices: generateJamfComputers(30, 25) });
    for (let read = 0; read < 3; read += 1) expect(await readAll(client)).toHaveLength(30);
    expect(jamf!.stats().requests).toEqual({ [OAUTH_V1]: 1, [OAUTH_OLD]: 3, [V4]: 1, [V3]: 3 });
    // Another client (another container) learns it again.
    expect(await readAll(makeJamfClient({ baseUrl: jamf!.url, auth: oauth, inventory: COMPUTERS_INVENTORY }))).toHaveLength(30);
    expect(jamf!.stats().requests).toEqual({ [OAUTH_V1]: 2, [OAUTH_OLD]: 4, [V4]: 2, [V3]: 4 });
  });

  it('renews expiring tokens at the remembered old OAuth path, never probing again', async () => {
    let failures = 0;
    const client = await setUp(
      { personality: 'legacy', devices: generateJamfComputers(100, 26), tokenMaxUses: 2 },
      { pageSize: 10, onAuthFailure: () => (failures += 1) },
    );
    expect(await readAll(client)).toHaveLength(100);
    const { requests, tokenRequests } = jamf!.stats();
    expect(tokenRequests).toBeGreaterThanOrEqual(5);
    expect(failures).toBe(tokenRequests - 1);
    expect(requests[OAUTH_V1]).toBe(1);
    expect(requests[V4]).toBe(1);
    expect(requests[OAUTH_OLD]).toBe(tokenRequests);
  });

  it.each([
    ['current', V4, OAUTH_V1],
    ['legacy', V3, OAUTH_OLD],
  ] as const)(
    'fails as unavailable, trying no other path, when the inventory of a %s Jamf Pro answers 404 where it answered before',
    async (personality, known, tokenPath) => {
      const client = await setUp({ personality, devices: generateJamfComputers(30, 27) });
      await readAll(client);
      jamf!.setPageFault(0, { kind: 'status', status: 404 });
      const before = jamf!.stats().requests;
      const error = await upstreamFailureOf(readAll(client));
      expect(error.failure).toBe(UpstreamFailure.Unavailable);
      expect(error.message).toContain(`${known.slice(4)} page 0 (page-size 1000) answered 404`);
      expect(error.message).toContain('this path answered before');
      // One token and the one page at the remembered paths: nothing else.
      expect(jamf!.stats().requests).toEqual({ ...before, [tokenPath]: before[tokenPath]! + 1, [known]: before[known]! + 1 });
    },
  );

  it('fails as unavailable when the remembered OAuth path answers 404, trying no other', async () => {
    const client = await setUp({ personality: 'legacy', devices: generateJamfComputers(30, 28) });
    await readAll(client);
    jamf!.setTokenFault({ kind: 'status', status: 404 });
    const error = await upstreamFailureOf(readAll(client));
    expect(error.failure).toBe(UpstreamFailure.Unavailable);
    expect(error.message).toMatch(/\/api\/oauth\/token answered 404: .*this path answered before/);
    expect(jamf!.stats().requests).toMatchObject({ [OAUTH_V1]: 1, [OAUTH_OLD]: 2 });
  });

  it('treats a 404 at both inventory paths, before either answered, as a misconfigured INVENTORY_URL, naming both', async () => {
    const client = await setUp({
      personality: 'current',
      devices: generateJamfComputers(30, 29),
      pageFaults: { 0: { kind: 'status', status: 404 } },
    });
    for (let read = 1; read <= 2; read += 1) {
      const error = await upstreamFailureOf(readAll(client));
      expect(error.failure).toBe(UpstreamFailure.Misconfigured);
      expect(error.message).toContain(
        '/api/v3/computers-inventory page 0 (page-size 1000) (after a 404 at /api/v4/computers-inventory) answered 404',
      );
      // Nothing was learnt from the failure: each read probes both.
      expect(jamf!.stats().requests).toMatchObject({ [V4]: read, [V3]: read });
    }
  });

  it.each(['current', 'legacy'] as const)(
    'authenticates with basic credentials at /api/v1/auth/token on a %s Jamf Pro',
    async (personality) => {
      jamf = await startFakeJamf({ personality, devices: generateJamfComputers(5, 7), username: 'api-reader', password: 'p@ss:word' });
      const client = makeJamfClient({
        baseUrl: jamf.url,
        auth: { kind: 'basic', username: 'api-reader', password: async () => 'p@ss:word' },
        inventory: COMPUTERS_INVENTORY,
      });
      expect(await readAll(client)).toHaveLength(5);
      expect(await readAll(client)).toHaveLength(5);
      const inventory = personality === 'current' ? { [V4]: 2 } : { [V4]: 1, [V3]: 2 };
      expect(jamf.stats().requests).toEqual({ 'POST /api/v1/auth/token': 2, ...inventory });
    },
  );
});

describe('Jamf client reading the changes since an instant', () => {
  // After every date the generated fleet holds (1–21 November).
  const SINCE = Date.parse('2026-11-25T12:00:00.750Z');
  const fleet = generateJamfComputers(2_500, 40);
  /** Every 10th record in contact after SINCE, every 25th reporting after it (some both). */
  const changedFleet = fleet.map((record, index) => {
    const contacted = index % 10 === 0 ? datedJamfComputer(record, 'lastContact', '2026-11-26T00:00:00Z') : record;
    return index % 25 === 0 ? datedJamfComputer(contacted, 'reportDate', '2026-11-25T12:00:00Z') : contacted;
  });
  const changedIds = changedFleet.filter((_record, index) => index % 10 === 0 || index % 25 === 0).map((record) => record.id);

  it.each([
    ['current', 'general.lastContact', '/api/v4/computers-inventory'],
    ['legacy', 'general.lastContactTime', '/api/v3/computers-inventory'],
  ] as const)(
    'asks a %s Jamf Pro once for its size (the probe), beside the first page of the records dated since, filtering on %s, under one token',
    async (personality, field, path) => {
      const client = await setUp({ personality, devices: changedFleet }, { pageSize: 100 });
      const answer = await client.readChanges(longDeadline(), (record) => inventoryIdOf(record), SINCE);
      expect(answer).toEqual({ kind: 'changes', changed: changedIds, totalCount: fleet.length });
      const { inventoryLog, tokenRequests, requests } = jamf!.stats();
      // The instant to the second below, and the filter sent encoded.
      const filter = `${field}=ge=2026-11-25T12:00:00Z,general.reportDate=ge=2026-11-25T12:00:00Z`;
      const [count, ...changed] = [...inventoryLog].sort((a, b) => a.pageSize - b.pageSize);
      expect(count).toMatchObject({ page: 0, pageSize: 1, filter: null });
      // The probe and page 0 side by side, so Jamf may see either first; the later pages after both.
      expect(inventoryLog.slice(0, 2)).toContain(count);
      expect(changed.every((entry) => entry.filter === filter && entry.pageSize === 100)).toBe(true);
      expect(changed[0]!.query).toContain(`&filter=${encodeURIComponent(filter)}`);
      expect(inventoryLog).toHaveLength(1 + Math.ceil(changedIds.length / 100));
      expect(tokenRequests).toBe(1);
      expect(requests[`GET ${path}`]).toBe(inventoryLog.length);
    },
  );

  it('reports a filter Jamf refuses (400) as refused, after the probe and that one page', async () => {
    // A Jamf Pro that cannot filter on the last contact.
    const client = await setUp({ devices: changedFleet, filterFields: ['general.reportDate'] });
    const answer = await client.readChanges(longDeadline(), (record) => record, SINCE);
    expect(answer).toEqual({
      kind: 'filter-refused',
      detail: expect.stringMatching(
        /page 0 \(page-size 1000, changed since 2026-11-25T12:00:00Z\) answered 400: .*Cannot filter by field \[general.lastContact\]/,
      ),
    });
    expect(
      jamf!
        .stats()
        .inventoryLog.map((entry) => entry.filter === null)
        .sort(),
    ).toEqual([false, true]);
  });

  it('fails as unavailable when Jamf answers the unfiltered probe 400: only a filtered request is refused for its filter', async () => {
    // Page 0 too is answered 400, if it reaches Jamf before the probe's failure cancels it: the probe's fails the read.
    const client = await setUp({ devices: changedFleet, pageFaults: { 0: { kind: 'status', status: 400 } } });
    const failure = await upstreamFailureOf(client.readChanges(longDeadline(), (record) => record, SINCE));
    expect(failure.failure).toBe(UpstreamFailure.Unavailable);
    expect(failure.message).toMatch(/page 0 \(page-size 1\) answered 400/);
  });
});
