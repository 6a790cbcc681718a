import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it, vi } from 'vitest';
import { apiRouteKeys } from '../../support/api-routes.ts';
import { captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { startDynalite, type Dynalite } from '../../../scripts/local/dynalite.ts';
import { createUserTables } from '../../support/load-handlers.ts';
import {
  DEMO_JAMF_CREDENTIALS,
  generateJamfComputers,
  generateJamfMobileDevices,
  startFakeJamf,
  type FakeJamf,
} from '../../../demo/fake-jamf.ts';
import { startFakeSofa } from '../../../demo/fake-sofa.ts';
import { httpEvent, lambdaContext, loadEvent } from '../../support/http-events.ts';
import {
  allRefs,
  deref,
  HTTP_METHODS,
  loadOpenApi,
  makeSchemaCompiler,
  responseProblems,
  type OpenApiDocument,
} from '../../support/openapi-spec.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { setEnvironment } from '../../support/environment.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * Handlers read their configuration on first use: set the environment, then import fresh copies.
 * Handlers used together load under one reset: a module a handler imports lazily (the idempotency
 * lifecycle) must be of the same copy as the errors it recognises, as in a real container.
 */
const loadHandlers = async (modules: readonly string[], env: Record<string, string | undefined>): Promise<Handler[]> => {
  setEnvironment(env);
  vi.resetModules();
  return Promise.all(modules.map(async (module) => (await import(`../../../functions/${module}.ts`)).handler as Handler));
};
const loadHandler = async (module: string, env: Record<string, string | undefined>): Promise<Handler> =>
  (await loadHandlers([module], env))[0]!;

describe('openapi.yaml', () => {
  let document: OpenApiDocument;
  let compile: ReturnType<typeof makeSchemaCompiler>;
  let logs: CapturedLogs;

  /** Fails with every problem listed, so a mismatch reads as the reason. */
  const expectDocumented = (request: { method: string; path: string | undefined }, result: APIGatewayProxyStructuredResultV2) =>
    expect(
      responseProblems(document, compile, request, result),
      `${request.method} ${request.path} → ${result.statusCode} ${result.body?.slice(0, 300)}`,
    ).toEqual([]);

  beforeAll(async () => {
    document = await loadOpenApi();
    compile = makeSchemaCompiler(document);
  });
  beforeEach(() => {
    // Handlers write access-log lines; keep them out of the test output.
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  describe('the document', () => {
    it('is OpenAPI 3.1 describing exactly the routes of lib/http/routes.ts, with no dangling $ref', () => {
      expect(document.openapi).toMatch(/^3\.1\.\d+$/);
      const documented = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => (HTTP_METHODS as readonly string[]).includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
      );
      expect(documented.sort()).toEqual(apiRouteKeys().sort());
      for (const ref of allRefs(document)) expect(() => deref(document, { $ref: ref }), ref).not.toThrow();
    });

    it('documents 400/415/413/422 for every route with a body, 405 and 401 for every route, and 5xx for each', () => {
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const statuses = Object.keys(operation.responses);
          expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['401', '405', '500']));
          if (operation.requestBody) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
        }
      }
    });

    it('describes request bodies the way the handlers take them: sample bodies pass, refused ones fail', async () => {
      const requestSchema = (path: string) => compile(document.paths[path]!.post!.requestBody!.content!['application/json']!.schema!);
      const credentials = requestSchema('/credentials');
      expect(credentials(JSON.parse((await loadEvent('credentials/success.json')).body!))).toBe(true);
      expect(credentials(JSON.parse((await loadEvent('credentials/invalid-extra-property.json')).body!))).toBe(false);
      const user = requestSchema('/api/users');
      expect(user(JSON.parse((await loadEvent('createUser/success.json')).body!))).toBe(true);
      expect(user(JSON.parse((await loadEvent('createUser/alias-names.json')).body!))).toBe(true);
      expect(user({ email: 'a@b.co', firstName: 'A' })).toBe(false);
      expect(user({ email: 'a@b.co', firstName: 'A', lastName: 'B', admin: true })).toBe(false);
      expect(user({ email: 'a@b.co', firstName: '', lastName: 'B' })).toBe(false);
      expect(user({ email: 'a@b.co', firstName: 'A\u0000', lastName: 'B' })).toBe(false);
      expect(user({ email: 'a\u2028@b.co', firstName: 'A', lastName: 'B' })).toBe(false);
      expect(user({ email: 'a@b.co', firstName: '😀', last_name: 'Zoë' })).toBe(true);
    });

    it('flags responses that break it: an undocumented status, a null device field, a wrong envelope status', () => {
      const ok = { statusCode: 200, headers: { 'Content-Type': 'application/json' } };
      expect(responseProblems(document, compile, { method: 'GET', path: '/devices' }, { ...ok, statusCode: 418, body: '[]' })).not.toEqual(
        [],
      );
      expect(
        responseProblems(
          document,
          compile,
          { method: 'GET', path: '/devices' },
          { ...ok, body: JSON.stringify([{ id: '1', os_is_latest: true, name: null }]) },
        ),
      ).not.toEqual([]);
      expect(
        responseProblems(document, compile, { method: 'GET', path: '/devices' }, { ...ok, body: JSON.stringify([{ id: '1' }]) }),
      ).not.toEqual([]);
      const envelope = (status: number) => JSON.stringify({ error: { message: 'x', status, httpMessage: 'Bad Gateway' } });
      expect(
        responseProblems(document, compile, { method: 'GET', path: '/devices' }, { ...ok, statusCode: 502, body: envelope(500) }),
      ).not.toEqual([]);
      expect(
        responseProblems(document, compile, { method: 'GET', path: '/devices' }, { ...ok, statusCode: 502, body: envelope(502) }),
      ).toEqual([]);
      expect(
        responseProblems(document, compile, { method: 'GET', path: '/devices' }, { ...ok, statusCode: 503, body: envelope(503) }),
      ).toContain('header Retry-After is missing');
    });
  });

  describe('POST /credentials and the $default route', () => {
    let credentials: Handler;
    beforeAll(async () => {
      credentials = await loadHandler('credentials', {});
    });
    const post = (body: string, headers: Record<string, string> = JSON_HEADERS) =>
      credentials(httpEvent('POST', '/credentials', { body, headers }), lambdaContext());
    const request = { method: 'POST', path: '/credentials' };

    it('answers 200 and 422 as documented (sample events)', async () => {
      const ok = await credentials(await loadEvent('credentials/success.json'), lambdaContext());
      expect(ok.statusCode).toBe(200);
      expectDocumented(request, ok);
      const invalid = await credentials(await loadEvent('credentials/invalid-extra-property.json'), lambdaContext());
      expect(invalid.statusCode).toBe(422);
      expectDocumented(request, invalid);
    });

    it('answers 400, 415 and 413 as documented', async () => {
      const cases = [
        [400, await post('{"client_id":')],
        [400, await post('x', { 'content-type': 'text/plain' })],
        [415, await post('{"client_id":"a","client_secret":"b"}', { 'content-type': 'text/plain' })],
        [413, await post(JSON.stringify({ client_id: 'a', client_secret: 'x'.repeat(70_000) }))],
      ] as const;
      for (const [status, result] of cases) {
        expect(result.statusCode).toBe(status);
        expectDocumented(request, result);
      }
    });

    it('answers an unknown path with 404 and a known path with another method with 405 and Allow, as documented', async () => {
      const unknown = await credentials(httpEvent('GET', '/nowhere', { routeKey: '$default' }), lambdaContext());
      expect(unknown.statusCode).toBe(404);
      expectDocumented({ method: 'GET', path: undefined }, unknown);
      for (const [method, path, template] of [
        ['DELETE', '/credentials', '/credentials'],
        ['POST', '/devices', '/devices'],
        ['DELETE', `/api/users/${randomUUID()}`, '/api/users/{id}'],
      ] as const) {
        const result = await credentials(httpEvent(method, path, { routeKey: '$default' }), lambdaContext());
        expect(result.statusCode, `${method} ${path}`).toBe(405);
        expectDocumented({ method, path: template }, result);
      }
    });
  });

  describe('GET /devices against a fake Jamf Pro', () => {
    let jamf: FakeJamf;
    let faulty: FakeJamf;
    const jamfEnv = (url: string | undefined) => ({
      INVENTORY_URL: url,
      INVENTORY_CLIENT_ID: DEMO_JAMF_CREDENTIALS.clientId,
      INVENTORY_CLIENT_SECRET: DEMO_JAMF_CREDENTIALS.clientSecret,
      INVENTORY_CLIENT_SECRET_SSM: undefined,
      LATEST_OS_VERSION: '26.1',
      REDIS_URL: undefined,
    });
    const request = { method: 'GET', path: '/devices' };

    beforeAll(async () => {
      jamf = await startFakeJamf({ devices: generateJamfComputers(250, 7) });
      faulty = await startFakeJamf({ devices: generateJamfComputers(10, 3) });
    });
    afterAll(async () => {
      await jamf?.close();
      await faulty?.close();
    });

    it('answers 200 with every device in the documented shape (sparse and null upstream fields included)', async () => {
      const devices = await loadHandler('devices', jamfEnv(jamf.url));
      const result = await devices(await loadEvent('devices/success.json'), lambdaContext());
      expect(result.statusCode).toBe(200);
      expect(JSON.parse(result.body!)).toHaveLength(250);
      expectDocumented(request, result);
    });

    it('answers a page with ETag, X-Total-Count and Link, a 304 to its ETag, and 422 to a bad query, as documented', async () => {
      const devices = await loadHandler('devices', jamfEnv(jamf.url));
      const page = await devices(await loadEvent('devices/page.json'), lambdaContext());
      expect(page.statusCode).toBe(200);
      expect(page.headers?.Link).toBeDefined();
      expectDocumented(request, page);
      const again = await devices(
        { ...(await loadEvent('devices/page.json')), headers: { 'if-none-match': String(page.headers?.ETag) } },
        lambdaContext(),
      );
      expect(again.statusCode).toBe(304);
      expectDocumented(request, again);
      const refused = await devices(await loadEvent('devices/invalid-query.json'), lambdaContext());
      expect(refused.statusCode).toBe(422);
      expectDocumented(request, refused);
    });

    it.each([
      ['an upstream 5xx', 502, { kind: 'status', status: 500 }],
      ['an unreadable upstream answer', 502, { kind: 'malformed' }],
      ['upstream rate limiting (with Retry-After)', 503, { kind: 'rate-limited', retryAfter: '7' }],
    ] as const)('answers %s with %i as documented', async (_label, status, fault) => {
      faulty.setPageFault(0, fault);
      const devices = await loadHandler('devices', jamfEnv(faulty.url));
      const result = await devices(httpEvent('GET', '/devices'), lambdaContext());
      faulty.setPageFault(0, undefined);
      expect(result.statusCode).toBe(status);
      expectDocumented(request, result);
    });

    it('answers 504 as documented when the inventory does not answer within the invocation budget', async () => {
      faulty.setPageFault(0, { kind: 'hang' });
      const devices = await loadHandler('devices', jamfEnv(faulty.url));
      const result = await devices(httpEvent('GET', '/devices'), lambdaContext(1_500));
      faulty.setPageFault(0, undefined);
      expect(result.statusCode).toBe(504);
      expectDocumented(request, result);
    });

    it('answers both lists and their summaries with the patch-compliance fields in the documented shapes', async () => {
      const sofa = await startFakeSofa();
      const mobileJamf = await startFakeJamf({ devices: [], mobileDevices: generateJamfMobileDevices(120, 4) });
      try {
        const feeds = {
          LATEST_OS_FEED_URL: sofa.feedUrl('v2'),
          LATEST_IOS_FEED_URL: sofa.feedUrl('ios-v2'),
          LATEST_TVOS_FEED_URL: sofa.feedUrl('tvos-v2'),
          LATEST_IOS_VERSION: '26.6.1',
        };
        for (const [module, path, url] of [
          ['devices', '/devices', jamf.url],
          ['mobile-devices', '/mobile-devices', mobileJamf.url],
        ] as const) {
          const handler = await loadHandler(module, { ...jamfEnv(url), ...feeds });
          const list = await handler(httpEvent('GET', path), lambdaContext());
          expect(list.body).toContain('"os_missing_releases"');
          expect(list.body).toContain('"os_exploited_cves"');
          expectDocumented({ method: 'GET', path }, list);
          const summaryRequest = { method: 'GET', path: `${path}/summary` };
          // The sample event `npm run invoke -- <function> summary` sends (managed=true).
          const event = await loadEvent(`${module === 'devices' ? 'devices' : 'mobileDevices'}/summary.json`);
          const summary = await handler(event, lambdaContext());
          expect(summary.statusCode).toBe(200);
          expectDocumented(summaryRequest, summary);
          const again = await handler(
            { ...event, headers: { ...event.headers, 'if-none-match': String(summary.headers?.ETag) } },
            lambdaContext(),
          );
          expect(again.statusCode).toBe(304);
          expectDocumented(summaryRequest, again);
          const refused = await handler({ ...httpEvent('GET', summaryRequest.path), rawQueryString: 'limit=5' }, lambdaContext());
          expect(refused.statusCode).toBe(422);
          expectDocumented(summaryRequest, refused);
        }
      } finally {
        await Promise.all([sofa.close(), mobileJamf.close()]);
      }
    });

    it('answers 500 in the envelope when misconfigured', async () => {
      const devices = await loadHandler('devices', jamfEnv(undefined));
      const result = await devices(httpEvent('GET', '/devices'), lambdaContext());
      expect(result.statusCode).toBe(500);
      expectDocumented(request, result);
    });
  });

  describe('POST /api/users and GET /api/users/{id} against dynalite', () => {
    let dynalite: Dynalite;
    let createUser: Handler;
    let getUser: Handler;
    const create = (body: unknown, headers: Record<string, string> = JSON_HEADERS) =>
      createUser(
        httpEvent('POST', '/api/users', { body: typeof body === 'string' ? body : JSON.stringify(body), headers }),
        lambdaContext(),
      );
    const get = (id: string, headers: Record<string, string> = { accept: 'application/json' }) =>
      getUser(httpEvent('GET', `/api/users/${id}`, { pathParameters: { id }, headers, routeKey: 'GET /api/users/{id}' }), lambdaContext());
    const postRequest = { method: 'POST', path: '/api/users' };
    const getRequest = { method: 'GET', path: '/api/users/{id}' };

    beforeAll(async () => {
      dynalite = await startDynalite();
      const env = {
        ...(await createUserTables(dynalite.endpoint)),
        USER_EMAIL_PATTERN: undefined,
        AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
        ...LOCAL_AWS_ENV,
        AWS_SESSION_TOKEN: undefined,
        AWS_PROFILE: undefined,
      };
      [createUser, getUser] = (await loadHandlers(['create-user', 'get-user'], env)) as [Handler, Handler];
    });
    afterAll(async () => {
      await dynalite?.stop();
    });

    it('answers 201 with Location, then 200 for the record and 409 for the same email, as documented', async () => {
      const created = await createUser(await loadEvent('createUser/success.json'), lambdaContext());
      expect(created.statusCode).toBe(201);
      expectDocumented(postRequest, created);
      const { id, email } = JSON.parse(created.body!) as { id: string; email: string };
      const read = await get(id);
      expect(read.statusCode).toBe(200);
      expectDocumented(getRequest, read);
      const duplicate = await create({ email: email.toUpperCase(), firstName: 'Other', lastName: 'Person' });
      expect(duplicate.statusCode).toBe(409);
      expectDocumented(postRequest, duplicate);
    });

    it('accepts the snake_case aliases and answers in the documented camelCase record', async () => {
      const created = await createUser(await loadEvent('createUser/alias-names.json'), lambdaContext());
      expect(created.statusCode).toBe(201);
      expectDocumented(postRequest, created);
    });

    it.each([
      ['a body failing the schema', 422, () => create({ email: 'jdoe@intranet', firstName: '', lastName: 'Doe', extra: 1 })],
      ['conflicting alias values', 422, () => create({ email: 'x@example.com', firstName: 'A', first_name: 'B', lastName: 'C' })],
      ['a body that is not JSON', 400, () => create('{"email":')],
      ['another content type', 415, () => create('{}', { 'content-type': 'text/plain', accept: 'application/json' })],
      [
        'an Accept header without JSON',
        406,
        () => create({ email: 'y@example.com', firstName: 'A', lastName: 'B' }, { ...JSON_HEADERS, accept: 'text/html' }),
      ],
    ] as const)('answers %s with %i as documented', async (_label, status, send) => {
      const result = await send();
      expect(result.statusCode).toBe(status);
      expectDocumented(postRequest, result);
    });

    it('answers a repeated Idempotency-Key (201, 409 and 422 replayed), a reused one and a malformed one as documented', async () => {
      const keyed = (key: string) => ({ ...JSON_HEADERS, 'idempotency-key': key });
      const body = { email: 'keyed@example.com', firstName: 'Key', lastName: 'Ed' };
      const results: APIGatewayProxyStructuredResultV2[] = [];
      for (const [key, sent] of [
        ['openapi-201', body],
        ['openapi-409', { ...body, firstName: 'Other' }],
        ['openapi-422', { ...body, email: 'keyed@intranet' }],
      ] as const) {
        await create(sent, keyed(key));
        results.push(await create(sent, keyed(key)));
      }
      results.push(await create({ ...body, lastName: 'Changed' }, keyed('openapi-201')));
      results.push(await create(body, keyed('x'.repeat(256))));
      expect(results.map((result) => [result.statusCode, result.headers?.['Idempotent-Replayed']])).toEqual([
        [201, 'true'],
        [409, 'true'],
        [422, 'true'],
        [422, undefined],
        [422, undefined],
      ]);
      for (const result of results) expectDocumented(postRequest, result);
    });

    it('answers 503 as documented when the user store cannot be reached', async () => {
      const closedPort = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as AddressInfo;
          server.close(() => resolve(port));
        });
      });
      const unreachable = await loadHandler('create-user', { AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${closedPort}` });
      const body = JSON.stringify({ email: 'z@example.com', firstName: 'Z', lastName: 'Z' });
      // The handler builds its client on the first request: the endpoint goes back only afterwards.
      let result: APIGatewayProxyStructuredResultV2;
      try {
        result = await unreachable(httpEvent('POST', '/api/users', { body, headers: JSON_HEADERS }), lambdaContext());
      } finally {
        process.env.AWS_ENDPOINT_URL_DYNAMODB = dynalite.endpoint;
      }
      expect(result.statusCode).toBe(503);
      expectDocumented(postRequest, result);
    });

    it('answers an unknown id (and a malformed one) with 404 as documented', async () => {
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const result = await get(id);
        expect(result.statusCode, id).toBe(404);
        expectDocumented(getRequest, result);
      }
    });
  });
});
