import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { LOCAL_AWS } from '../../../scripts/local/local-aws.ts';
import { httpEvent, lambdaContext, loadEvent } from '../../support/http-events.ts';
import { startFaultProxy, type DynamoCall, type FaultDecision, type FaultProxy } from '../../support/fault-proxy.ts';
import { createUserTables, loadUserHandlers, localDynamoEnv, type UserHandlers } from '../../support/load-handlers.ts';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const VALIDATION_MESSAGE = 'Request validation failed: Parameter (user) failed schema validation';
const REUSED = 'Idempotency-Key was used with a different request';
const IN_PROGRESS = 'A request with this Idempotency-Key is in progress';
const DAY_MS = 24 * 60 * 60 * 1000;

type Result = APIGatewayProxyStructuredResultV2;
const envelopeOf = (result: Result) => JSON.parse(result.body!).error as { message: string; status: number; details?: unknown[] };
const replayedOf = (result: Result) => result.headers?.['Idempotent-Replayed'];
const tableOf = (call: DynamoCall): string => (JSON.parse(call.body) as { TableName?: string }).TableName ?? '';

describe('POST /api/users with Idempotency-Key (handlers against dynalite, through a fault proxy)', () => {
  let dynalite: Dynalite;
  let proxy: FaultProxy;
  let scanner: DynamoDBDocumentClient;
  let tables: { USERS_TABLE: string; IDEMPOTENCY_TABLE: string };
  let handlers: UserHandlers;
  let logs: CapturedLogs;

  const event = (
    body: unknown,
    key: string | undefined,
    options: { headers?: Record<string, string>; subject?: string } = {},
  ): APIGatewayProxyEventV2 => {
    const headers = { ...JSON_HEADERS, ...(key === undefined ? {} : { 'idempotency-key': key }), ...options.headers };
    const built = httpEvent('POST', '/api/users', { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
    // API Gateway's JWT authorizer puts the token's claims here.
    if (options.subject !== undefined)
      Object.assign(built.requestContext, { authorizer: { jwt: { claims: { sub: options.subject }, scopes: [] } } });
    return built;
  };
  const post = (body: unknown, key?: string, options?: { headers?: Record<string, string>; subject?: string }) =>
    handlers.createUser(event(body, key, options), lambdaContext());
  const users = async () =>
    ((await scanner.send(new ScanCommand({ TableName: tables.USERS_TABLE, ConsistentRead: true }))).Items ?? []).filter((item) =>
      String(item.pk).startsWith('USER#'),
    );
  const records = async () =>
    (await scanner.send(new ScanCommand({ TableName: tables.IDEMPOTENCY_TABLE, ConsistentRead: true }))).Items ?? [];
  /** Fails (or holds) the calls to one table, passing everything else. */
  const onTable = (table: string, decision: (call: DynamoCall) => FaultDecision | Promise<FaultDecision>) =>
    proxy.decide((call) => (tableOf(call) === table ? decision(call) : 'pass'));

  beforeAll(async () => {
    dynalite = await startDynalite();
    proxy = await startFaultProxy(dynalite.endpoint);
    scanner = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint: dynalite.endpoint }));
  });
  afterAll(async () => {
    scanner.destroy();
    await proxy.close();
    await dynalite.stop();
  });
  beforeEach(async () => {
    tables = await createUserTables(dynalite.endpoint);
    proxy.decide(() => 'pass');
    proxy.calls.length = 0;
    handlers = await loadUserHandlers({ ...localDynamoEnv(proxy.endpoint), ...tables, USER_EMAIL_PATTERN: undefined });
    logs = captureStdout();
  });
  afterEach(() => {
    vi.useRealTimers();
    logs.restore();
    handlers.restore();
  });

  it('answers a repeat with the first 201 again, body and Location, marked replayed, and stores one user (sample event)', async () => {
    const first = await handlers.createUser(await loadEvent('createUser/idempotent-replay.json'), lambdaContext());
    const second = await handlers.createUser(await loadEvent('createUser/idempotent-replay.json'), lambdaContext());
    expect(first.statusCode).toBe(201);
    expect(replayedOf(first)).toBeUndefined();
    expect(second).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(second.headers?.Location).toBe(`/api/users/${JSON.parse(first.body!).id}`);
    expect(await users()).toHaveLength(1);
  });

  it('treats bodies that fold to the same user as one request: aliases, key order, white space', async () => {
    const first = await post({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }, 'key-fold');
    for (const body of [
      { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
      { lastName: 'Lovelace', first_name: 'Ada', email: 'ada@example.com' },
      '{ "email" : "ada@example.com",\n "firstName": "Ada", "lastName": "Lovelace", "last_name": "Lovelace" }',
    ]) {
      const again = await post(body, 'key-fold');
      expect(again.statusCode, JSON.stringify(body)).toBe(201);
      expect(replayedOf(again)).toBe('true');
      expect(again.body).toBe(first.body);
    }
    expect(await users()).toHaveLength(1);
  });

  it.each([
    ['another email', { email: 'grace@example.com', firstName: 'Ada', lastName: 'Lovelace' }],
    ['the same email in another case', { email: 'ADA@example.com', firstName: 'Ada', lastName: 'Lovelace' }],
    ['another name', { email: 'ada@example.com', firstName: 'Augusta', lastName: 'Lovelace' }],
    ['an alias that contradicts its twin', { email: 'ada@example.com', firstName: 'Ada', first_name: 'Augusta', lastName: 'Lovelace' }],
    ['a body that is not an object', [{ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }]],
  ])('answers the same key with %s 422 "used with a different request", changing nothing', async (_label, body) => {
    const first = await post({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }, 'key-reused');
    expect(first.statusCode).toBe(201);
    const stored = await users();
    const reused = await post(body, 'key-reused');
    expect(reused.statusCode).toBe(422);
    expect(JSON.parse(reused.body!)).toEqual({ error: { message: REUSED, status: 422, httpMessage: 'Unprocessable Entity' } });
    expect(replayedOf(reused)).toBeUndefined();
    expect(await users()).toEqual(stored);
    // The key still holds its first outcome.
    expect(replayedOf(await post({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }, 'key-reused'))).toBe('true');
  });

  it('lets exactly one of 20 concurrent requests with one key run: the others get its replay or 409 in progress, never a second user', async () => {
    const body = { email: 'rush@example.com', firstName: 'Rush', lastName: 'Hour' };
    const results = await Promise.all(Array.from({ length: 20 }, () => post(body, 'key-rush')));
    const fresh = results.filter((result) => result.statusCode === 201 && replayedOf(result) === undefined);
    expect(fresh).toHaveLength(1);
    for (const result of results.filter((candidate) => candidate !== fresh[0])) {
      if (result.statusCode === 201) {
        expect(replayedOf(result)).toBe('true');
        expect(result.body).toBe(fresh[0]!.body);
        expect(result.headers?.Location).toBe(fresh[0]!.headers?.Location);
      } else {
        expect(result.statusCode).toBe(409);
        expect(envelopeOf(result).message).toBe(IN_PROGRESS);
      }
    }
    expect(await users()).toHaveLength(1);
    const after = await post(body, 'key-rush');
    expect([after.statusCode, replayedOf(after), after.body]).toEqual([201, 'true', fresh[0]!.body]);
  });

  it('answers 409 in progress while the first request with the key still runs, then its outcome', async () => {
    let release!: () => void;
    const held = new Promise<FaultDecision>((resolve) => (release = () => resolve('pass')));
    // Hold the user's writes: the first request has claimed the key and waits inside the create.
    onTable(tables.USERS_TABLE, (call) => (call.operation === 'PutItem' ? held : 'pass'));
    const body = { email: 'slow@example.com', firstName: 'Slow', lastName: 'Poke' };
    const first = post(body, 'key-slow');
    await vi.waitFor(() => expect(proxy.calls.some((call) => tableOf(call) === tables.USERS_TABLE)).toBe(true));
    const during = await post(body, 'key-slow');
    expect(during.statusCode).toBe(409);
    expect(JSON.parse(during.body!)).toEqual({ error: { message: IN_PROGRESS, status: 409, httpMessage: 'Conflict' } });
    release();
    expect((await first).statusCode).toBe(201);
    const after = await post(body, 'key-slow');
    expect([after.statusCode, replayedOf(after), after.body]).toEqual([201, 'true', (await first).body]);
  });

  it('keeps an outcome 24 hours: a day later the key is free, and a different body under it is a new request', async () => {
    const first = await post({ email: 'day@example.com', firstName: 'Day', lastName: 'One' }, 'key-day');
    expect(first.statusCode).toBe(201);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + DAY_MS - 60_000);
    expect(replayedOf(await post({ email: 'day@example.com', firstName: 'Day', lastName: 'One' }, 'key-day'))).toBe('true');
    vi.setSystemTime(Date.now() + 2 * 60_000);
    const later = await post({ email: 'day2@example.com', firstName: 'Day', lastName: 'Two' }, 'key-day');
    expect(later.statusCode).toBe(201);
    expect(replayedOf(later)).toBeUndefined();
    expect(JSON.parse(later.body!).email).toBe('day2@example.com');
    expect(await users()).toHaveLength(2);
  });

  it("keeps an outcome with its expiry on `expiration`, in seconds since the epoch, 24 hours ahead: what the table's TTL reads (docs/operations.md)", async () => {
    const before = Math.floor(Date.now() / 1000);
    expect((await post({ email: 'ttl@example.com', firstName: 'Tee', lastName: 'Tee' }, 'key-ttl')).statusCode).toBe(201);
    const after = Math.ceil(Date.now() / 1000);
    const [record, ...others] = await records();
    expect(others).toEqual([]);
    expect(record?.expiration).toBeGreaterThanOrEqual(before + DAY_MS / 1000);
    expect(record?.expiration).toBeLessThanOrEqual(after + DAY_MS / 1000);
  });

  it.each([
    ['the email in another case', { email: 'AGAIN@example.com', firstName: 'Day', lastName: 'One' }],
    ['other names', { email: 'again@example.com', firstName: 'Other', lastName: 'Names' }],
  ])('answers a key reused after 24 hours with %s as a new request: 409 for the taken email, nothing changed', async (_label, body) => {
    const first = await post({ email: 'again@example.com', firstName: 'Day', lastName: 'One' }, 'key-again');
    expect(first.statusCode).toBe(201);
    const stored = await users();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + DAY_MS + 60_000);
    const later = await post(body, 'key-again');
    expect(later.statusCode).toBe(409);
    expect(envelopeOf(later).message).toBe('A user with this email already exists');
    expect(replayedOf(later)).toBeUndefined();
    expect(await users()).toEqual(stored);
  });

  it('keeps a 409 (email taken) and replays it, marked', async () => {
    expect((await post({ email: 'taken@example.com', firstName: 'First', lastName: 'One' })).statusCode).toBe(201);
    const body = { email: 'Taken@example.com', firstName: 'Second', lastName: 'Two' };
    const first = await post(body, 'key-409');
    const again = await post(body, 'key-409');
    expect(first.statusCode).toBe(409);
    expect(envelopeOf(first).message).toBe('A user with this email already exists');
    expect(replayedOf(first)).toBeUndefined();
    expect(again).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(await users()).toHaveLength(1);
  });

  it('keeps a 422 of the body rules and replays it, even where the rules would now let the body through', async () => {
    const body = { email: 'jdoe@intranet', firstName: 'John', lastName: 'Doe' };
    const first = await post(body, 'key-422');
    expect(first.statusCode).toBe(422);
    expect(envelopeOf(first)).toMatchObject({
      message: VALIDATION_MESSAGE,
      details: [{ path: '/email', message: 'must be a valid email address' }],
    });
    expect(replayedOf(await post(body, 'key-422'))).toBe('true');
    // The same tables behind a function whose email rule admits the address: the kept 422 still answers.
    handlers.restore();
    handlers = await loadUserHandlers({ ...localDynamoEnv(proxy.endpoint), ...tables, USER_EMAIL_PATTERN: 'off' });
    const replayed = await post(body, 'key-422');
    expect(replayed).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(await users()).toHaveLength(0);
    expect((await post(body, 'another-key')).statusCode).toBe(201);
  });

  it('keeps the 422 of a lone surrogate and of contradicting aliases like any other 422', async () => {
    for (const [key, body] of [
      ['key-surrogate', '{"email":"s@example.com","firstName":"\\ud800","lastName":"S"}'],
      ['key-alias', { email: 'a@example.com', firstName: 'A', first_name: 'B', lastName: 'C' }],
    ] as const) {
      const first = await post(body, key);
      const again = await post(body, key);
      expect(first.statusCode).toBe(422);
      expect(again).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    }
  });

  it.each([
    ['406 (an Accept header without JSON)', { headers: { accept: 'text/html' } }, 406],
    ['400 (a body that is not JSON)', { body: '{"email":' }, 400],
    ['415 (another content type)', { headers: { 'content-type': 'text/plain' } }, 415],
  ] as const)('keeps nothing for a %s: the key is still free for the corrected request', async (_label, change, status) => {
    const body = { email: 'fixed@example.com', firstName: 'Fix', lastName: 'Ed' };
    const first = await post('body' in change ? change.body : body, 'key-fix', 'headers' in change ? { headers: change.headers } : {});
    expect(first.statusCode).toBe(status);
    const corrected = await post(body, 'key-fix');
    expect(corrected.statusCode).toBe(201);
    expect(replayedOf(corrected)).toBeUndefined();
  });

  it('keeps nothing for a 503 of the user store: the retry with the key creates the user', async () => {
    onTable(tables.USERS_TABLE, (call) => (call.operation === 'PutItem' ? 'fail' : 'pass'));
    const body = { email: 'retry@example.com', firstName: 'Re', lastName: 'Try' };
    const failed = await post(body, 'key-503');
    expect(failed.statusCode).toBe(503);
    expect(await records()).toEqual([]);
    proxy.decide(() => 'pass');
    const retried = await post(body, 'key-503');
    expect(retried.statusCode).toBe(201);
    expect(replayedOf(retried)).toBeUndefined();
    expect(await users()).toHaveLength(1);
  });

  it('lets the retry with the key create the user after a 503 whose clean-up failed too (the email lock was left behind)', async () => {
    onTable(tables.USERS_TABLE, (call) => {
      if (call.operation === 'PutItem' && call.body.includes('"USER#')) return 'fail';
      return call.operation === 'DeleteItem' && call.body.includes('"EMAIL#') ? 'fail' : 'pass';
    });
    const body = { email: 'leftover@example.com', firstName: 'Left', lastName: 'Over' };
    const failed = await post(body, 'key-leftover');
    expect(failed.statusCode).toBe(503);
    const left = (await scanner.send(new ScanCommand({ TableName: tables.USERS_TABLE, ConsistentRead: true }))).Items ?? [];
    expect(left.map((item) => String(item.pk))).toEqual(['EMAIL#leftover@example.com']);
    proxy.decide(() => 'pass');
    const retried = await post(body, 'key-leftover');
    expect(retried.statusCode).toBe(201);
    expect(JSON.parse(retried.body!)).toMatchObject(body);
    expect(await users()).toEqual([expect.objectContaining({ id: JSON.parse(retried.body!).id, email: 'leftover@example.com' })]);
    // The 201 is what the key keeps, and the email is now taken for any other create.
    expect(replayedOf(await post(body, 'key-leftover'))).toBe('true');
    expect((await post(body, 'another-key')).statusCode).toBe(409);
  });

  it('answers 503 when the idempotency store fails, with nothing created and nothing said about why', async () => {
    onTable(tables.IDEMPOTENCY_TABLE, () => 'fail');
    const result = await post({ email: 'down@example.com', firstName: 'Down', lastName: 'Time' }, 'key-down');
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!)).toEqual({
      error: { message: 'Service Unavailable', status: 503, httpMessage: 'Service Unavailable' },
    });
    expect(proxy.calls.filter((call) => tableOf(call) === tables.USERS_TABLE)).toEqual([]);
    expect(await users()).toEqual([]);
    const [line] = accessLines(logs);
    expect(JSON.stringify(line!.error)).toContain('Idempotency store failed');
  });

  it('logs an AWS refusal by name and status only: its text quotes the signed request, session token included', async () => {
    const session = 'SESSION-TOKEN-MARKER-7';
    handlers.restore();
    handlers = await loadUserHandlers({
      ...localDynamoEnv(proxy.endpoint),
      ...tables,
      USER_EMAIL_PATTERN: undefined,
      AWS_SESSION_TOKEN: session,
    });
    onTable(tables.USERS_TABLE, () => 'refuse-signature');
    const refusedUsers = await post({ email: 'signed@example.com', firstName: 'Sig', lastName: 'Ned' }, 'key-signed');
    onTable(tables.IDEMPOTENCY_TABLE, () => 'refuse-signature');
    const refusedKeys = await post({ email: 'signed2@example.com', firstName: 'Sig', lastName: 'Ned' }, 'key-signed-2');
    expect([refusedUsers.statusCode, refusedKeys.statusCode]).toEqual([503, 503]);
    expect(proxy.calls.length).toBeGreaterThan(0);
    expect(logs.raw()).toContain('InvalidSignatureException');
    expect(logs.raw()).toContain('HTTP 400, request id REFUSED1');
    expect(logs.raw()).not.toContain(session);
    expect(logs.raw()).not.toContain('Canonical String');
  });

  it('still answers the 201 when the outcome cannot be kept afterwards, and says so on the access line', async () => {
    onTable(tables.IDEMPOTENCY_TABLE, (call) => (call.operation === 'UpdateItem' ? 'fail' : 'pass'));
    const result = await post({ email: 'kept@example.com', firstName: 'Not', lastName: 'Kept' }, 'key-unkept');
    expect(result.statusCode).toBe(201);
    expect(await users()).toHaveLength(1);
    const [line] = accessLines(logs);
    expect(line).toMatchObject({ status_code: 201, idempotency_error: expect.stringContaining('IdempotencyPersistenceLayerError') });
  });

  it('turns no success into a 409: when the outcome could not be kept, a retry after the claim lapsed gets the same user', async () => {
    onTable(tables.IDEMPOTENCY_TABLE, (call) => (call.operation === 'UpdateItem' ? 'fail' : 'pass'));
    const body = { email: 'lapsed@example.com', firstName: 'Not', lastName: 'Kept' };
    const first = await post(body, 'key-lapsed');
    expect(first.statusCode).toBe(201);
    proxy.decide(() => 'pass');
    // Until its deadline the claim stands: the retry is told to wait.
    expect((await post(body, 'key-lapsed')).statusCode).toBe(409);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5 * 60_000);
    const retry = await post(body, 'key-lapsed');
    expect(retry.statusCode).toBe(201);
    expect(JSON.parse(retry.body!)).toEqual(JSON.parse(first.body!));
    expect(retry.headers?.Location).toBe(first.headers?.Location);
    expect(await users()).toHaveLength(1);
    // Another caller with the same key and email is another request: the email is taken.
    expect((await post(body, 'key-lapsed', { subject: 'someone-else' })).statusCode).toBe(409);
  });

  it('keeps keys apart per caller (the JWT subject): another caller with the same key makes its own request', async () => {
    const mine = await post({ email: 'mine@example.com', firstName: 'Mine', lastName: 'Own' }, 'shared-key', { subject: 'client-a' });
    const theirs = await post({ email: 'theirs@example.com', firstName: 'Theirs', lastName: 'Own' }, 'shared-key', { subject: 'client-b' });
    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(replayedOf(theirs)).toBeUndefined();
    expect(
      replayedOf(await post({ email: 'mine@example.com', firstName: 'Mine', lastName: 'Own' }, 'shared-key', { subject: 'client-a' })),
    ).toBe('true');
  });

  it('behaves as without the feature when the header is absent: no replay, no call to the idempotency table', async () => {
    const body = { email: 'plain@example.com', firstName: 'Plain', lastName: 'Post' };
    const first = await post(body);
    const second = await post(body);
    expect([first.statusCode, second.statusCode]).toEqual([201, 409]);
    for (const result of [first, second]) expect(replayedOf(result)).toBeUndefined();
    expect(proxy.calls.filter((call) => tableOf(call) === tables.IDEMPOTENCY_TABLE)).toEqual([]);
    onTable(tables.IDEMPOTENCY_TABLE, () => 'fail');
    expect((await post({ email: 'plain2@example.com', firstName: 'Plain', lastName: 'Two' })).statusCode).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['256 characters long', 'k'.repeat(256)],
    ['not ASCII', 'clé-1'],
    ['holding a tab', 'key\t1'],
    ['holding DEL', 'key\u007f1'],
  ])('answers a key that is %s with 422 naming the header, before any store call', async (_label, key) => {
    const result = await post({ email: 'bad-key@example.com', firstName: 'Bad', lastName: 'Key' }, key);
    expect(result.statusCode).toBe(422);
    expect(JSON.parse(result.body!)).toEqual({
      error: {
        message: 'Request validation failed: Parameter (headers) failed schema validation',
        status: 422,
        httpMessage: 'Unprocessable Entity',
        details: [{ path: '/Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      },
    });
    expect(proxy.calls).toEqual([]);
  });

  it('refuses the malformed key of the sample event, and takes any printable key of 1 to 255 characters, spaces included', async () => {
    const refused = await handlers.createUser(await loadEvent('createUser/invalid-idempotency-key.json'), lambdaContext());
    expect(refused.statusCode).toBe(422);
    expect(envelopeOf(refused).details).toEqual([{ path: '/Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }]);
    for (const [index, key] of ['~'.repeat(255), 'a b c', '"quoted:key/1"', 'x'].entries()) {
      expect((await post({ email: `ok${index}@example.com`, firstName: 'O', lastName: 'K' }, key)).statusCode, key).toBe(201);
    }
  });

  it('writes one access line per request, replays included, with a digest of the key and never the key itself', async () => {
    const key = 'order-4711-for-jane.doe@example.com';
    const body = { email: 'lines@example.com', firstName: 'Line', lastName: 'Count' };
    await post(body, key);
    await post(body, key);
    await post({ ...body, firstName: 'Other' }, key);
    const lines = accessLines(logs);
    expect(lines.map((line) => [line.status_code, line.idempotent_replayed])).toEqual([
      [201, undefined],
      [201, true],
      [422, undefined],
    ]);
    const digests = new Set(lines.map((line) => line.idempotency_key_hash));
    expect([...digests]).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(logs.raw()).not.toContain('order-4711');
    expect(JSON.stringify(await records())).not.toContain('order-4711');
  });
});
