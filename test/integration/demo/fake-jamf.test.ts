import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_JAMF_CREDENTIALS, generateJamfComputers, startFakeJamf, type FakeJamf } from '../../../demo/fake-jamf.ts';

// The fake must speak Jamf's wire format, or the device-layer tests prove nothing.
let jamf: FakeJamf | undefined;
afterEach(async () => {
  await jamf?.close();
  jamf = undefined;
});

const oauthToken = async (url: string, secret: string = DEMO_JAMF_CREDENTIALS.clientSecret) =>
  fetch(`${url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: DEMO_JAMF_CREDENTIALS.clientId, client_secret: secret }),
  });

describe('fake Jamf Pro', () => {
  it('issues OAuth tokens in Jamf shape and refuses a wrong secret with Jamf error body', async () => {
    jamf = await startFakeJamf();
    const ok = (await (await oauthToken(jamf.url)).json()) as Record<string, unknown>;
    expect(ok).toMatchObject({ token_type: 'Bearer', expires_in: 299, scope: expect.any(String) });
    expect(typeof ok.access_token).toBe('string');
    const refused = await oauthToken(jamf.url, 'wrong');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ httpStatus: 401, errors: [{ code: 'INVALID_CLIENT', description: 'Client authentication failed', id: '0', field: null }] });
  });

  it('serves requested sections, nulls the others and sorts by numeric id', async () => {
    jamf = await startFakeJamf({ devices: [...generateJamfComputers(12, 5)].reverse() });
    const { access_token: token } = (await (await oauthToken(jamf.url)).json()) as { access_token: string };
    const response = await fetch(`${jamf.url}/api/v3/computers-inventory?section=GENERAL&sort=id:asc&page=1&page-size=5`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as { totalCount: number; results: Record<string, unknown>[] };
    expect(body.totalCount).toBe(12);
    expect(body.results).toHaveLength(5);
    const ids = body.results.map((record) => Number(record.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const source = new Map(generateJamfComputers(12, 5).map((record) => [record.id, record]));
    for (const record of body.results) {
      expect(record.general).toEqual(source.get(record.id as string)!.general);
      expect(record.hardware).toBeNull();
      expect(record.operatingSystem).toBeNull();
    }
  });

  it('leaves a requested section out of a record that lacks it, as some list responses do', async () => {
    const [first, second] = generateJamfComputers(2, 5);
    const { hardware: _hardware, ...withoutHardware } = first!;
    jamf = await startFakeJamf({ devices: [withoutHardware as typeof first & object, { ...second!, hardware: null }] });
    const { access_token: token } = (await (await oauthToken(jamf.url)).json()) as { access_token: string };
    const response = await fetch(`${jamf.url}/api/v3/computers-inventory?section=GENERAL&section=HARDWARE&sort=id:asc&page=0&page-size=5`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const { results } = (await response.json()) as { results: Record<string, unknown>[] };
    expect(results[0]).not.toHaveProperty('hardware');
    expect(results[1]).toHaveProperty('hardware', null);
    expect(results[0]!.operatingSystem).toBeNull();
  });

  it('answers an inventory request without a valid bearer token with 401 INVALID_TOKEN', async () => {
    jamf = await startFakeJamf();
    const response = await fetch(`${jamf.url}/api/v3/computers-inventory?page=0&page-size=10`, { headers: { Authorization: 'Bearer nope' } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('INVALID_TOKEN');
  });

});
