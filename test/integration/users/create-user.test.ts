import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { freePort } from '../../support/free-port.ts';
import { startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { LOCAL_AWS } from '../../../scripts/local/local-aws.ts';
import { httpEvent, lambdaContext, loadEvent } from '../../support/http-events.ts';
import { createUserTables, loadUserHandlers, localDynamoEnv, type UserHandlers } from '../../support/load-handlers.ts';

const VALIDATION_MESSAGE = 'Request validation failed: Parameter (user) failed schema validation';
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/users and GET /api/users/{id} (handlers against dynalite)', () => {
  let dynalite: Dynalite;
  let scanner: DynamoDBDocumentClient;
  let tableName: string;
  let handlers: UserHandlers;
  let logs: CapturedLogs;

  const post = (body: string, headers: Record<string, string> = JSON_HEADERS) =>
    handlers.createUser(httpEvent('POST', '/api/users', { body, headers }), lambdaContext());
  const get = (id: string, headers: Record<string, string> = { accept: 'application/json' }) =>
    handlers.getUser(
      httpEvent('GET', `/api/users/${id}`, { pathParameters: { id }, headers, routeKey: 'GET /api/users/{id}' }),
      lambdaContext(),
    );
  const items = async () => (await scanner.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? [];
  const envelopeOf = (result: { body?: string }) => JSON.parse(result.body!) as { error: Record<string, unknown> };

  beforeAll(async () => {
    dynalite = await startDynalite();
    scanner = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL_AWS, endpoint: dynalite.endpoint }));
  });
  afterAll(async () => {
    scanner.destroy();
    await dynalite.stop();
  });
  beforeEach(async () => {
    const tables = await createUserTables(dynalite.endpoint);
    tableName = tables.USERS_TABLE;
    handlers = await loadUserHandlers({ ...localDynamoEnv(dynalite.endpoint), ...tables, USER_EMAIL_PATTERN: undefined });
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
    handlers.restore();
  });

  it('creates a user from the sample event: 201, Location and the documented record', async () => {
    const result = await handlers.createUser(await loadEvent('createUser/success.json'), lambdaContext());
    expect(result.statusCode).toBe(201);
    const user = JSON.parse(result.body!);
    expect(user).toEqual({
      id: expect.stringMatching(UUID),
      email: 'jane.doe@example.com',
      username: 'jane.doe@example.com',
      firstName: 'Jane',
      lastName: 'Doe',
      active: true,
      created: expect.stringMatching(ISO_MILLIS),
      lastUpdated: user.created,
    });
    expect(result.headers?.Location).toBe(`/api/users/${user.id}`);
    expect(result.headers?.['Content-Type']).toBe('application/json');
  });

  it('reads a created user back with 200', async () => {
    const created = JSON.parse(
      (await post(JSON.stringify({ email: 'Read.Back@Example.com', first_name: 'Read', last_name: 'Back' }))).body!,
    );
    const result = await get(created.id);
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual(created);
    expect(created).toMatchObject({
      email: 'Read.Back@Example.com',
      username: 'Read.Back@Example.com',
      firstName: 'Read',
      lastName: 'Back',
    });
  });

  it('creates a user from the alias sample event', async () => {
    const result = await handlers.createUser(await loadEvent('createUser/alias-names.json'), lambdaContext());
    expect(result.statusCode).toBe(201);
    expect(JSON.parse(result.body!)).toMatchObject({ firstName: 'John', lastName: 'Roe' });
  });

  it('answers 409 to the same email in another case and changes nothing', async () => {
    expect((await post(JSON.stringify({ email: 'dup@example.com', firstName: 'First', lastName: 'One' }))).statusCode).toBe(201);
    const before = await items();
    const result = await post(JSON.stringify({ email: 'DUP@Example.COM', firstName: 'Second', lastName: 'Two' }));
    expect(result.statusCode).toBe(409);
    expect(envelopeOf(result).error).toMatchObject({
      status: 409,
      httpMessage: 'Conflict',
      message: 'A user with this email already exists',
    });
    expect(await items()).toEqual(before);
  });

  it('lets exactly one of 50 concurrent creates of one email through', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        post(JSON.stringify({ email: index % 2 ? 'same@example.com' : 'Same@Example.com', firstName: `N${index}`, lastName: 'X' })),
      ),
    );
    const statuses = results.map((result) => result.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    const users = (await items()).filter((item) => String(item.pk).startsWith('USER#'));
    expect(users).toHaveLength(1);
    const winner = JSON.parse(results.find((result) => result.statusCode === 201)!.body!);
    expect(users[0]!.id).toBe(winner.id);
  });

  it('answers 422 with the exact envelope for jdoe@intranet under the strict pattern (sample event)', async () => {
    const result = await handlers.createUser(await loadEvent('createUser/invalid-email.json'), lambdaContext());
    expect(result.statusCode).toBe(422);
    expect(JSON.parse(result.body!)).toEqual({
      error: {
        message: VALIDATION_MESSAGE,
        status: 422,
        httpMessage: 'Unprocessable Entity',
        details: [{ path: '/email', message: 'must be a valid email address' }],
      },
    });
    expect(await items()).toEqual([]);
  });

  it('answers 422 naming both fields when an alias contradicts its twin', async () => {
    const result = await post(JSON.stringify({ email: 'a@example.com', firstName: 'Jane', first_name: 'Janet', lastName: 'Doe' }));
    expect(result.statusCode).toBe(422);
    const { error } = envelopeOf(result);
    expect(error.message).toBe(VALIDATION_MESSAGE);
    expect(error.details).toEqual([{ path: '/firstName', message: expect.stringContaining('first_name') }]);
  });

  it.each([
    ['dotted runs', 'a.'.repeat(25_000)],
    ['an unterminated quoted local part', `"${'a'.repeat(50_000)}`],
    ['a dashed domain', `a@${'a-'.repeat(25_000)}`],
  ])('refuses an adversarial email of %s under 64 KiB with 422', { timeout: 5_000 }, async (_label, email) => {
    const result = await post(JSON.stringify({ email, firstName: 'A', lastName: 'B' }));
    expect(result.statusCode).toBe(422);
    // The length alone: the address rule never runs its pattern on so long an input, and says nothing more.
    expect(envelopeOf(result).error.details).toEqual([{ path: '/email', message: 'must NOT have more than 254 characters' }]);
  });

  it.each([
    ['an array', '[{"email":"a@example.com","firstName":"A","lastName":"B"}]'],
    ['a string', '"a@example.com"'],
    ['null', 'null'],
  ])('answers 422 in the envelope when the body is %s', async (_label, body) => {
    const result = await post(body);
    expect(result.statusCode).toBe(422);
    expect(envelopeOf(result).error).toMatchObject({
      message: VALIDATION_MESSAGE,
      status: 422,
      details: [{ path: '/', message: 'must be object' }],
    });
  });

  it('answers 400 in the envelope to a body that is not JSON', async () => {
    const result = await post('{"email": "a@example.com",');
    expect(result.statusCode).toBe(400);
    expect(envelopeOf(result).error).toMatchObject({ status: 400, httpMessage: 'Bad Request' });
  });

  it('answers 415 in the envelope to JSON sent with another content type, or none', async () => {
    const body = JSON.stringify({ email: 'a@example.com', firstName: 'A', lastName: 'B' });
    const headerSets: Record<string, string>[] = [{ 'content-type': 'text/plain' }, { accept: 'application/json' }];
    for (const headers of headerSets) {
      const result = await post(body, headers);
      expect(result.statusCode).toBe(415);
      expect(envelopeOf(result).error).toMatchObject({ status: 415, httpMessage: 'Unsupported Media Type' });
    }
    expect(await items()).toEqual([]);
  });

  it.each([
    ['text/plain and a body that is not JSON', 'x', { 'content-type': 'text/plain' }],
    ['no Content-Type and an empty body', '', { accept: 'application/json' }],
  ])('answers 400 in the envelope, not 415, to %s, and creates nothing', async (_label, body, headers) => {
    const result = await post(body, headers);
    expect(result.statusCode).toBe(400);
    expect(envelopeOf(result)).toEqual({ error: { message: 'Request body is not valid JSON', status: 400, httpMessage: 'Bad Request' } });
    expect(await items()).toEqual([]);
  });

  it('answers 400 to a base64-encoded body whose bytes are not UTF-8, and creates nothing', async () => {
    // "Zoë" in Latin-1: the 0xEB byte is no UTF-8 sequence, and must not become U+FFFD in the table.
    const latin1 = Buffer.from('{"email":"zoe@example.com","firstName":"Zo\xeb","lastName":"B"}', 'latin1');
    const event = { ...httpEvent('POST', '/api/users', { body: latin1.toString('base64'), headers: JSON_HEADERS }), isBase64Encoded: true };
    const result = await handlers.createUser(event, lambdaContext());
    expect(result.statusCode).toBe(400);
    expect(envelopeOf(result)).toEqual({
      error: { message: 'Request body is not valid JSON: it is not UTF-8', status: 400, httpMessage: 'Bad Request' },
    });
    expect(await items()).toEqual([]);
    // The same text as UTF-8 bytes is taken, the ë intact.
    const utf8 = Buffer.from('{"email":"zoe@example.com","firstName":"Zo\u00eb","lastName":"B"}', 'utf8');
    const created = await handlers.createUser({ ...event, body: utf8.toString('base64') }, lambdaContext());
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body!)).toMatchObject({ firstName: 'Zoë' });
  });

  it('answers 400 to a POST with neither a body nor a Content-Type', async () => {
    const result = await handlers.createUser(httpEvent('POST', '/api/users'), lambdaContext());
    expect(result.statusCode).toBe(400);
    expect(envelopeOf(result).error).toMatchObject({ message: 'Request body is not valid JSON', status: 400 });
  });

  it('answers 413 in the envelope to a 1 MB body', async () => {
    const result = await post(JSON.stringify({ email: 'a@example.com', firstName: 'x'.repeat(1_000_000), lastName: 'B' }));
    expect(result.statusCode).toBe(413);
    expect(envelopeOf(result).error).toMatchObject({ status: 413, httpMessage: 'Payload Too Large' });
  });

  it('answers 406 in the envelope when Accept rules out JSON, and creates nothing', async () => {
    const result = await post(JSON.stringify({ email: 'a@example.com', firstName: 'A', lastName: 'B' }), {
      'content-type': 'application/json',
      accept: 'text/html',
    });
    expect(result.statusCode).toBe(406);
    expect(envelopeOf(result).error).toMatchObject({ status: 406, httpMessage: 'Not Acceptable' });
    expect(await items()).toEqual([]);
  });

  it('answers an invalid body its 422 even when Accept rules out JSON: Accept is checked after the body (docs/api.md)', async () => {
    const result = await post(JSON.stringify({ email: 'not-an-email', firstName: 'A', lastName: 'B' }), {
      'content-type': 'application/json',
      accept: 'text/html',
    });
    expect(result.statusCode).toBe(422);
    expect(envelopeOf(result).error).toMatchObject({ status: 422, message: VALIDATION_MESSAGE });
    expect(await items()).toEqual([]);
  });

  it('answers 406 to a read whose Accept rules out JSON, before any lookup', async () => {
    const created = JSON.parse((await post(JSON.stringify({ email: 'html@example.com', firstName: 'A', lastName: 'B' }))).body!);
    const result = await get(created.id, { accept: 'text/html' });
    expect(result.statusCode).toBe(406);
    expect(envelopeOf(result).error).toMatchObject({ status: 406, httpMessage: 'Not Acceptable' });
    expect((await get(created.id, { accept: '*/*' })).statusCode).toBe(200);
  });

  it('creates without an Accept header', async () => {
    const result = await post(JSON.stringify({ email: 'noaccept@example.com', firstName: 'A', lastName: 'B' }), {
      'content-type': 'application/json',
    });
    expect(result.statusCode).toBe(201);
  });

  it('answers 404 for an unknown id and for an id that is not a UUID (sample events)', async () => {
    for (const event of ['getUser/not-found.json', 'getUser/invalid-id.json']) {
      const result = await handlers.getUser(await loadEvent(event), lambdaContext());
      expect(result.statusCode).toBe(404);
      expect(envelopeOf(result).error).toMatchObject({ status: 404, httpMessage: 'Not Found' });
    }
  });

  it('writes one access-log line per request, without cache_tier', async () => {
    await post(JSON.stringify({ email: 'log@example.com', firstName: 'A', lastName: 'B' }));
    await post(JSON.stringify({ email: 'log@example.com', firstName: 'A', lastName: 'B' }));
    await post('nope');
    await get('not-a-uuid');
    const lines = accessLines(logs);
    expect(lines.map((line) => [line.http_method, line.status_code])).toEqual([
      ['POST', 201],
      ['POST', 409],
      ['POST', 400],
      ['GET', 404],
    ]);
    for (const line of lines) expect(line).not.toHaveProperty('cache_tier');
  });
});

describe('users handlers under other configurations', () => {
  let dynalite: Dynalite;
  let handlers: UserHandlers | undefined;
  let logs: CapturedLogs | undefined;

  beforeAll(async () => {
    dynalite = await startDynalite();
  });
  afterAll(async () => {
    await dynalite.stop();
  });
  afterEach(() => {
    logs?.restore();
    handlers?.restore();
    logs = undefined;
    handlers = undefined;
  });

  it('creates jdoe@intranet with USER_EMAIL_PATTERN=off, and still refuses an address without a domain', async () => {
    handlers = await loadUserHandlers({
      ...localDynamoEnv(dynalite.endpoint),
      ...(await createUserTables(dynalite.endpoint)),
      USER_EMAIL_PATTERN: 'off',
    });
    logs = captureStdout();
    const created = await handlers.createUser(await loadEvent('createUser/invalid-email.json'), lambdaContext());
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body!).email).toBe('jdoe@intranet');
    const refused = await handlers.createUser(
      httpEvent('POST', '/api/users', { body: JSON.stringify({ email: 'jdoe@', firstName: 'A', lastName: 'B' }), headers: JSON_HEADERS }),
      lambdaContext(),
    );
    expect(refused.statusCode).toBe(422);
  });

  it('answers a generic 500 when USERS_TABLE is missing and names the variable in the log only', async () => {
    const startup = captureStdout();
    handlers = await loadUserHandlers({
      ...localDynamoEnv(dynalite.endpoint),
      USERS_TABLE: undefined,
      IDEMPOTENCY_TABLE: 'keys',
      USER_EMAIL_PATTERN: undefined,
    });
    startup.restore();
    // Reported when each container starts, before any request (Powertools writes errors to stderr).
    expect(startup.raw().match(/configuration error at startup.*USERS_TABLE/g)).toHaveLength(2);
    logs = captureStdout();
    const created = await handlers.createUser(await loadEvent('createUser/success.json'), lambdaContext());
    const read = await handlers.getUser(await loadEvent('getUser/invalid-id.json'), lambdaContext());
    for (const result of [created, read]) {
      expect(result.statusCode).toBe(500);
      expect(JSON.parse(result.body!)).toEqual({
        error: { message: 'Service misconfigured', status: 500, httpMessage: 'Internal Server Error' },
      });
      expect(result.body).not.toContain('USERS_TABLE');
    }
    const lines = accessLines(logs);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(JSON.stringify(line.error)).toContain('USERS_TABLE');
  });

  it('answers a generic 503 with nothing leaked when the storage endpoint is down', async () => {
    const tableName = `secret-table-${randomUUID()}`;
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    handlers = await loadUserHandlers({
      ...localDynamoEnv(endpoint),
      USERS_TABLE: tableName,
      IDEMPOTENCY_TABLE: 'keys',
      USER_EMAIL_PATTERN: undefined,
    });
    logs = captureStdout();
    const created = await handlers.createUser(await loadEvent('createUser/success.json'), lambdaContext());
    const read = await handlers.getUser(
      httpEvent('GET', `/api/users/${randomUUID()}`, { pathParameters: { id: randomUUID() }, routeKey: 'GET /api/users/{id}' }),
      lambdaContext(),
    );
    for (const result of [created, read]) {
      expect(result.statusCode).toBe(503);
      expect(JSON.parse(result.body!)).toEqual({
        error: { message: 'Service Unavailable', status: 503, httpMessage: 'Service Unavailable' },
      });
      for (const leak of [tableName, endpoint, '127.0.0.1', 'ECONNREFUSED', 'dynamo'])
        expect(result.body!.toLowerCase()).not.toContain(leak.toLowerCase());
    }
    const lines = accessLines(logs);
    expect(lines.map((line) => line.status_code)).toEqual([503, 503]);
    expect(JSON.stringify(lines[0]!.error)).toContain('User storage failed');
  });

  it('answers 404 to an id that is not a UUID without asking the (unreachable) store', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    handlers = await loadUserHandlers({ ...localDynamoEnv(endpoint), USERS_TABLE: 'users', USER_EMAIL_PATTERN: undefined });
    logs = captureStdout();
    const result = await handlers.getUser(await loadEvent('getUser/invalid-id.json'), lambdaContext());
    expect(result.statusCode).toBe(404);
  });

  it('answers a generic 500 to an unknown USER_EMAIL_PATTERN and names the variable in the log only', async () => {
    handlers = await loadUserHandlers({
      ...localDynamoEnv(dynalite.endpoint),
      USERS_TABLE: 'users',
      IDEMPOTENCY_TABLE: 'keys',
      USER_EMAIL_PATTERN: 'loose',
    });
    logs = captureStdout();
    const result = await handlers.createUser(await loadEvent('createUser/success.json'), lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body!).error.message).toBe('Service misconfigured');
    expect(JSON.stringify(accessLines(logs)[0]!.error)).toContain('USER_EMAIL_PATTERN');
  });

  it('answers 503 once a running store is stopped', async () => {
    const local = await startDynalite();
    handlers = await loadUserHandlers({
      ...localDynamoEnv(local.endpoint),
      ...(await createUserTables(local.endpoint)),
      USER_EMAIL_PATTERN: undefined,
    });
    logs = captureStdout();
    expect((await handlers.createUser(await loadEvent('createUser/success.json'), lambdaContext())).statusCode).toBe(201);
    await local.stop();
    const result = await handlers.createUser(
      httpEvent('POST', '/api/users', {
        body: JSON.stringify({ email: 'after@example.com', firstName: 'A', lastName: 'B' }),
        headers: JSON_HEADERS,
      }),
      lambdaContext(),
    );
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!).error).toEqual({ message: 'Service Unavailable', status: 503, httpMessage: 'Service Unavailable' });
  });
});
