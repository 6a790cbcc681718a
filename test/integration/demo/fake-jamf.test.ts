import { afterEach, describe, expect, it } from 'vitest';
import {
  datedJamfComputer,
  datedJamfMobileDevice,
  DEMO_JAMF_CREDENTIALS,
  generalAs,
  generateJamfComputers,
  generateJamfMobileDevices,
  JAMF_PERSONALITIES,
  MOBILE_INVENTORY_PATH,
  startFakeJamf,
  type FakeJamf,
  type JamfComputer,
  type JamfMobileDevice,
  type JamfPersonality,
} from '../../../demo/fake-jamf.ts';

// The fake must speak Jamf's wire format, or the device-layer tests prove nothing.
let jamf: FakeJamf | undefined;
afterEach(async () => {
  await jamf?.close();
  jamf = undefined;
});

const PERSONALITIES = Object.keys(JAMF_PERSONALITIES) as JamfPersonality[];
const NOT_FOUND = { httpStatus: 404, errors: [{ code: 'NOT_FOUND', description: 'Not Found', id: '0', field: null }] };

const oauthToken = async (url: string, path: string, secret: string = DEMO_JAMF_CREDENTIALS.clientSecret) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: DEMO_JAMF_CREDENTIALS.clientId, client_secret: secret }),
  });

/** A bearer token from the fake's own OAuth endpoint. */
const tokenFor = async (fake: FakeJamf): Promise<string> =>
  ((await (await oauthToken(fake.url, JAMF_PERSONALITIES[fake.personality].oauthToken)).json()) as { access_token: string }).access_token;

const inventoryPage = async (fake: FakeJamf, query: string, token?: string) =>
  fetch(`${fake.url}${JAMF_PERSONALITIES[fake.personality].inventory}?${query}`, {
    headers: { Authorization: `Bearer ${token ?? (await tokenFor(fake))}` },
  });

describe('fake Jamf Pro', () => {
  it('is a current Jamf Pro unless told otherwise', async () => {
    jamf = await startFakeJamf();
    expect(jamf.personality).toBe('current');
  });

  it.each(PERSONALITIES)('issues OAuth tokens in Jamf shape (%s) and refuses a wrong secret with Jamf error body', async (personality) => {
    jamf = await startFakeJamf({ personality });
    const path = JAMF_PERSONALITIES[personality].oauthToken;
    const ok = (await (await oauthToken(jamf.url, path)).json()) as Record<string, unknown>;
    expect(ok).toMatchObject({ token_type: 'Bearer', expires_in: 299, scope: expect.any(String) });
    expect(typeof ok.access_token).toBe('string');
    const refused = await oauthToken(jamf.url, path, 'wrong');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      httpStatus: 401,
      errors: [{ code: 'INVALID_CLIENT', description: 'Client authentication failed', id: '0', field: null }],
    });
  });

  it.each([
    ['current', '/api/oauth/token', '/api/v3/computers-inventory'],
    ['legacy', '/api/v1/oauth/token', '/api/v4/computers-inventory'],
  ] as const)(
    "as %s Jamf Pro answers the other version's paths 404 in Jamf's error shape, counting every request",
    async (personality, tokenPath, inventoryPath) => {
      jamf = await startFakeJamf({ personality });
      const token = await tokenFor(jamf);
      const missingToken = await oauthToken(jamf.url, tokenPath);
      expect(missingToken.status).toBe(404);
      expect(await missingToken.json()).toEqual(NOT_FOUND);
      const missingInventory = await fetch(`${jamf.url}${inventoryPath}?page=0&page-size=10`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(missingInventory.status).toBe(404);
      expect(await missingInventory.json()).toEqual(NOT_FOUND);
      expect((await inventoryPage(jamf, 'page=0&page-size=10', token)).status).toBe(200);
      const own = JAMF_PERSONALITIES[personality];
      expect(jamf.stats()).toMatchObject({
        // Only its own endpoints count as token and inventory requests; every request counts by path.
        tokenRequests: 1,
        inventoryRequests: 1,
        requests: { [`POST ${own.oauthToken}`]: 1, [`POST ${tokenPath}`]: 1, [`GET ${inventoryPath}`]: 1, [`GET ${own.inventory}`]: 1 },
      });
      jamf.resetStats();
      expect(jamf.stats().requests).toEqual({});
    },
  );

  it.each(PERSONALITIES)('serves requested sections, nulls the others and sorts by numeric id (%s)', async (personality) => {
    jamf = await startFakeJamf({ personality, devices: [...generateJamfComputers(12, 5)].reverse() });
    const response = await inventoryPage(jamf, 'section=GENERAL&sort=id:asc&page=1&page-size=5');
    const body = (await response.json()) as { totalCount: number; results: Record<string, unknown>[] };
    expect(body.totalCount).toBe(12);
    expect(body.results).toHaveLength(5);
    const ids = body.results.map((record) => Number(record.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const source = new Map(generateJamfComputers(12, 5).map((record) => [record.id, record]));
    for (const record of body.results) {
      expect(record.general).toEqual(generalAs(personality, source.get(record.id as string)!.general));
      expect(record.hardware).toBeNull();
      expect(record.operatingSystem).toBeNull();
    }
  });

  it("writes general in each version's shape: v4 lastCheckIn and lastContact, v3 lastContactTime", async () => {
    const fleet = generateJamfComputers(200, 6);
    const generals = async (personality: JamfPersonality) => {
      jamf = await startFakeJamf({ personality, devices: fleet });
      const { results } = (await (await inventoryPage(jamf, 'section=GENERAL&sort=id:asc&page=0&page-size=200')).json()) as {
        results: { general: Record<string, unknown> | null }[];
      };
      await jamf.close();
      jamf = undefined;
      return results.map((record) => record.general).filter((general): general is Record<string, unknown> => general !== null);
    };
    const v4 = await generals('current');
    const v3 = await generals('legacy');
    expect(v4.length).toBeGreaterThan(150);
    for (const general of v4) {
      expect(general).toHaveProperty('lastContact');
      expect(general).toHaveProperty('lastCheckIn');
      expect(general).not.toHaveProperty('lastContactTime');
    }
    for (const general of v3) {
      expect(general).toHaveProperty('lastContactTime');
      expect(general).not.toHaveProperty('lastContact');
      expect(general).not.toHaveProperty('lastCheckIn');
    }
    // The same contact time either way, and the v4 records of the fleet keep their own check-in.
    expect(v4.map((general) => general.lastContact)).toEqual(v3.map((general) => general.lastContactTime));
    expect(v4.some((general) => general.lastCheckIn !== general.lastContact)).toBe(true);
  });

  it('leaves a requested section out of a record that lacks it, as some list responses do', async () => {
    const [first, second] = generateJamfComputers(2, 5);
    const { hardware: _hardware, ...withoutHardware } = first!;
    jamf = await startFakeJamf({ devices: [withoutHardware as typeof first & object, { ...second!, hardware: null }] });
    const { results } = (await (await inventoryPage(jamf, 'section=GENERAL&section=HARDWARE&sort=id:asc&page=0&page-size=5')).json()) as {
      results: Record<string, unknown>[];
    };
    expect(results[0]).not.toHaveProperty('hardware');
    expect(results[1]).toHaveProperty('hardware', null);
    expect(results[0]!.operatingSystem).toBeNull();
  });

  it.each(PERSONALITIES)('answers an inventory request without a valid bearer token with 401 INVALID_TOKEN (%s)', async (personality) => {
    jamf = await startFakeJamf({ personality });
    const response = await inventoryPage(jamf, 'page=0&page-size=10', 'nope');
    expect(response.status).toBe(401);
    expect(((await response.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('INVALID_TOKEN');
  });

  it.each(PERSONALITIES)('issues bearer tokens for basic credentials at /api/v1/auth/token (%s)', async (personality) => {
    jamf = await startFakeJamf({ personality, username: 'api-reader', password: 'p@ss:word' });
    const response = await fetch(`${jamf.url}/api/v1/auth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from('api-reader:p@ss:word').toString('base64')}` },
    });
    const { token, expires } = (await response.json()) as { token: string; expires: string };
    expect(Number.isNaN(Date.parse(expires))).toBe(false);
    expect((await inventoryPage(jamf, 'page=0&page-size=10', token)).status).toBe(200);
  });

  describe('the RSQL filter on dates', () => {
    const OLD = '2026-10-01T00:00:00Z';
    const T = '2026-11-20T12:00:00Z';
    /** Four records dated long ago, then: 2 in contact after T, 3 reporting after T, 4 both; 1 neither. */
    const fleet = () => {
      const base = generateJamfComputers(4, 8).map((record) =>
        datedJamfComputer(datedJamfComputer({ ...record, general: {} }, 'lastContact', OLD), 'reportDate', OLD),
      );
      const [one, two, three, four] = base as [JamfComputer, JamfComputer, JamfComputer, JamfComputer];
      return [
        one,
        datedJamfComputer(two, 'lastContact', '2026-11-20T12:00:00.000Z'),
        datedJamfComputer(three, 'reportDate', '2026-11-21T08:00:00Z'),
        datedJamfComputer(datedJamfComputer(four, 'lastContact', '2026-11-22T00:00:00+01:00'), 'reportDate', '2026-11-23T00:00:00Z'),
      ];
    };
    const LAST_CONTACT = { current: 'general.lastContact', legacy: 'general.lastContactTime' } as const;
    const filtered = async (fake: FakeJamf, filter: string, paging = 'page=0&page-size=10') =>
      inventoryPage(fake, `section=GENERAL&sort=id:asc&${paging}&filter=${encodeURIComponent(filter)}`);

    it.each(PERSONALITIES)(
      'keeps the records either comparison (joined by ",": or) matches, counting them, in pages (%s)',
      async (personality) => {
        const devices = fleet();
        jamf = await startFakeJamf({ personality, devices });
        const filter = `${LAST_CONTACT[personality]}=ge=${T},general.reportDate=ge=${T}`;
        const all = (await (await filtered(jamf, filter)).json()) as { totalCount: number; results: { id: string }[] };
        expect(all.totalCount).toBe(3);
        expect(all.results.map((record) => record.id)).toEqual(devices.slice(1).map((record) => record.id));
        const second = (await (await filtered(jamf, filter, 'page=1&page-size=2')).json()) as {
          totalCount: number;
          results: { id: string }[];
        };
        expect(second).toEqual({ totalCount: 3, results: [expect.objectContaining({ id: devices[3]!.id })] });
        const later = (await (await filtered(jamf, `general.reportDate=gt="2026-11-21T08:00:00Z"`)).json()) as {
          totalCount: number;
          results: { id: string }[];
        };
        expect(later.results.map((record) => record.id)).toEqual([devices[3]!.id]);
        expect(jamf.stats().inventoryLog.map((entry) => entry.filter)).toEqual([
          filter,
          filter,
          'general.reportDate=gt="2026-11-21T08:00:00Z"',
        ]);
      },
    );

    it.each([
      ['current', 'general.lastContactTime=ge=2026-11-20T12:00:00Z', 'Cannot filter by field [general.lastContactTime]'],
      ['legacy', 'general.lastContact=ge=2026-11-20T12:00:00Z', 'Cannot filter by field [general.lastContact]'],
      ['current', 'general.lastContact=ge=yesterday', 'Invalid RSQL filter'],
      ['current', 'general.lastContact=ge=2026-11-20T12:00:00Z;general.reportDate=ge=2026-11-20T12:00:00Z', 'Invalid RSQL filter'],
    ] as const)("refuses, as %s Jamf Pro, the filter %s with 400 in Jamf's error shape", async (personality, filter, description) => {
      jamf = await startFakeJamf({ personality, devices: fleet() });
      const response = await filtered(jamf, filter);
      expect(response.status).toBe(400);
      const body = (await response.json()) as {
        httpStatus: number;
        errors: { code: string; description: string; id: string; field: string }[];
      };
      expect(body).toEqual({
        httpStatus: 400,
        errors: [{ code: expect.any(String), description: expect.stringContaining(description), id: '0', field: 'filter' }],
      });
    });

    it.each(PERSONALITIES)(
      'filters the mobile devices on general.lastInventoryUpdateDate the same way, and refuses any other field with 400 (%s)',
      async (personality) => {
        const [one, two, three, four] = generateJamfMobileDevices(4, 8) as [
          JamfMobileDevice,
          JamfMobileDevice,
          JamfMobileDevice,
          JamfMobileDevice,
        ];
        // Long ago; at T; after T in another offset; and a device Jamf could not type (no `general`, no date).
        const { general: _general, ...untyped } = four;
        const mobileDevices = [
          datedJamfMobileDevice(one, OLD),
          datedJamfMobileDevice(two, '2026-11-20T12:00:00.000Z'),
          datedJamfMobileDevice(three, '2026-11-21T09:00:00+01:00'),
          untyped,
        ];
        jamf = await startFakeJamf({ personality, mobileDevices });
        const token = await tokenFor(jamf);
        const mobilePage = async (filter: string, paging = 'page=0&page-size=10') =>
          fetch(
            `${jamf!.url}${MOBILE_INVENTORY_PATH}?section=GENERAL&sort=mobileDeviceId:asc&${paging}&filter=${encodeURIComponent(filter)}`,
            { headers: { Authorization: `Bearer ${token}` } },
          );
        const filter = `general.lastInventoryUpdateDate=ge=${T}`;
        const all = (await (await mobilePage(filter)).json()) as { totalCount: number; results: { mobileDeviceId: string }[] };
        expect(all).toEqual({
          totalCount: 2,
          results: [
            expect.objectContaining({ mobileDeviceId: two.mobileDeviceId }),
            expect.objectContaining({ mobileDeviceId: three.mobileDeviceId }),
          ],
        });
        const second = (await (await mobilePage(filter, 'page=1&page-size=1')).json()) as {
          totalCount: number;
          results: { mobileDeviceId: string }[];
        };
        expect(second).toEqual({ totalCount: 2, results: [expect.objectContaining({ mobileDeviceId: three.mobileDeviceId })] });
        const refused = await mobilePage(`general.reportDate=ge=${T}`);
        expect(refused.status).toBe(400);
        expect(await refused.json()).toEqual({
          httpStatus: 400,
          errors: [
            {
              code: expect.any(String),
              description: expect.stringContaining('Cannot filter by field [general.reportDate]'),
              id: '0',
              field: 'filter',
            },
          ],
        });
        expect(jamf.stats().mobileLog.map((entry) => entry.filter)).toEqual([filter, filter, `general.reportDate=ge=${T}`]);
        expect(jamf.stats().inventoryRequests).toBe(0);
      },
    );

    it("refuses the mobile devices' date where told it cannot filter by it, naming the fields it can", async () => {
      jamf = await startFakeJamf({ mobileDevices: generateJamfMobileDevices(3, 8), mobileFilterFields: ['general.lastEnrolledDate'] });
      const response = await fetch(
        `${jamf.url}${MOBILE_INVENTORY_PATH}?page=0&page-size=10&filter=${encodeURIComponent(`general.lastInventoryUpdateDate=ge=${T}`)}`,
        {
          headers: { Authorization: `Bearer ${await tokenFor(jamf)}` },
        },
      );
      expect(response.status).toBe(400);
      expect(JSON.stringify(await response.json())).toContain(
        'Cannot filter by field [general.lastInventoryUpdateDate]. Fields that can be used in filtering results of this endpoint: [general.lastEnrolledDate]',
      );
    });

    it("answers a probe of one record with the whole inventory's totalCount, and counts the bytes it sends", async () => {
      jamf = await startFakeJamf({ devices: generateJamfComputers(250, 9) });
      const response = await inventoryPage(jamf, 'section=GENERAL&sort=id:asc&page=0&page-size=1');
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ totalCount: 250, results: [expect.objectContaining({ id: '1' })] });
      const { bytesSent, bytesByRoute, requests } = jamf.stats();
      // The token's answer, then the page's.
      expect(requests).toEqual({ 'POST /api/v1/oauth/token': 1, 'GET /api/v4/computers-inventory': 1 });
      expect(bytesSent).toBeGreaterThan(Buffer.byteLength(text));
      expect(bytesSent).toBeLessThan(Buffer.byteLength(text) + 300);
      expect(bytesByRoute).toEqual({
        'POST /api/v1/oauth/token': bytesSent - Buffer.byteLength(text),
        'GET /api/v4/computers-inventory': Buffer.byteLength(text),
      });
    });
  });
});
