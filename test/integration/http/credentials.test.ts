import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/credentials.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext, loadEvent } from '../../support/http-events.ts';

const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  handler(httpEvent('POST', '/credentials', { body, headers }), lambdaContext());

const VALIDATION_MESSAGE = 'Request validation failed: Parameter (credentials) failed schema validation';

describe('POST /credentials', () => {
  let logs: CapturedLogs;
  beforeEach(() => {
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  it('echoes a valid body with 200 (sample event from events/)', async () => {
    const result = await handler(await loadEvent('credentials/success.json'), lambdaContext());
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ client_id: 'demo-client', client_secret: 'demo-secret-value' });
    // The body holds a secret: no cache may keep it.
    expect(result.headers?.['Cache-Control']).toBe('no-store');
  });

  it.each([
    ['a missing client_secret', { client_id: 'a' }, '/client_secret'],
    ['a missing client_id', { client_secret: 'a' }, '/client_id'],
    ['a number client_id', { client_id: 7, client_secret: 'a' }, '/client_id'],
    ['an empty client_id', { client_id: '', client_secret: 'a' }, '/client_id'],
    ['a client_id over 256 chars', { client_id: 'x'.repeat(257), client_secret: 'a' }, '/client_id'],
    ['a client_secret over 1024 chars', { client_id: 'a', client_secret: 'x'.repeat(1025) }, '/client_secret'],
    ['an extra property', { client_id: 'a', client_secret: 'b', scope: 'admin' }, '/scope'],
  ])('returns 422 in the envelope for %s', async (_label, body, path) => {
    const result = await post(JSON.stringify(body));
    expect(result.statusCode).toBe(422);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    const envelope = JSON.parse(result.body!);
    expect(envelope.error).toMatchObject({ message: VALIDATION_MESSAGE, status: 422, httpMessage: 'Unprocessable Entity' });
    expect(envelope.error.details.map((detail: { path: string }) => detail.path)).toContain(path);
  });

  it.each([
    ['an array', '[1,2]'],
    ['a string', '"client"'],
    ['null', 'null'],
  ])('returns 422 when the body is %s', async (_label, body) => {
    const result = await post(body);
    expect(result.statusCode).toBe(422);
    expect(JSON.parse(result.body!).error.message).toBe(VALIDATION_MESSAGE);
  });

  it.each([
    ['not JSON', '{"client_id": "a",', { 'content-type': 'application/json' }, 400],
    ['JSON under another content type', '{"client_id":"a","client_secret":"b"}', { 'content-type': 'text/plain' }, 415],
    ['an array', '[1,2]', { 'content-type': 'application/json' }, 422],
    ['a 2 MB body', JSON.stringify({ client_id: 'a', client_secret: 'x'.repeat(2_000_000) }), { 'content-type': 'application/json' }, 413],
  ])('answers a body that is %s with the bare envelope: no stack, no internals', async (_label, body, headers, status) => {
    const result = await post(body, headers);
    expect(result.statusCode).toBe(status);
    const envelope = JSON.parse(result.body!) as { error: Record<string, unknown> };
    expect(Object.keys(envelope)).toEqual(['error']);
    expect(
      Object.keys(envelope.error)
        .filter((key) => key !== 'details')
        .sort(),
    ).toEqual(['httpMessage', 'message', 'status']);
    expect(result.body).not.toMatch(/\bat \S+ \(|node_modules|\.ts:\d+/);
  });

  it('returns 422, not 400, for valid JSON carrying a __proto__ key', async () => {
    const result = await post('{"client_id":"a","client_secret":"b","__proto__":{"admin":true}}');
    expect(result.statusCode).toBe(422);
    const envelope = JSON.parse(result.body!);
    expect(envelope.error.message).toBe(VALIDATION_MESSAGE);
    expect(envelope.error.details).toEqual([{ path: '/__proto__', message: 'must NOT have additional properties' }]);
  });

  it('returns 400 for a body that is not JSON', async () => {
    const result = await post('{"client_id": "a",');
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!).error).toMatchObject({ status: 400, httpMessage: 'Bad Request' });
  });

  it('returns 415 for a JSON body sent with another content type', async () => {
    const result = await post('{"client_id":"a","client_secret":"b"}', { 'content-type': 'text/plain' });
    expect(result.statusCode).toBe(415);
    expect(JSON.parse(result.body!).error.httpMessage).toBe('Unsupported Media Type');
  });

  it.each([
    ['text that is not JSON under text/plain', 'x', { 'content-type': 'text/plain' }],
    ['half a JSON object under text/plain', '{"client_id":', { 'content-type': 'text/plain' }],
    ['an empty body without a Content-Type', '', {}],
    ['text that is not JSON without a Content-Type', 'client_id=a', {}],
  ])('returns 400 "not valid JSON", not 415, for %s', async (_label, body, headers) => {
    const result = await post(body, headers);
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!)).toEqual({
      error: { message: 'Request body is not valid JSON', status: 400, httpMessage: 'Bad Request' },
    });
  });

  it('returns 400 for a POST without a body or a Content-Type', async () => {
    const result = await handler(httpEvent('POST', '/credentials'), lambdaContext());
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!).error.message).toBe('Request body is not valid JSON');
  });

  it.each([
    ['an object under text/plain', '{"a":1}', { 'content-type': 'text/plain' }],
    ['an object without a Content-Type', '{"client_id":"a","client_secret":"b"}', {}],
    ['a bare JSON string under application/x-www-form-urlencoded', '"client"', { 'content-type': 'application/x-www-form-urlencoded' }],
  ])('returns 415 for JSON sent as %s', async (_label, body, headers) => {
    const result = await post(body, headers);
    expect(result.statusCode).toBe(415);
    expect(JSON.parse(result.body!)).toEqual({
      error: { message: 'Content-Type must be application/json', status: 415, httpMessage: 'Unsupported Media Type' },
    });
  });

  it('tells JSON from text in a base64-encoded body of another content type', async () => {
    const send = (text: string) =>
      handler(
        {
          ...httpEvent('POST', '/credentials', { body: Buffer.from(text).toString('base64'), headers: { 'content-type': 'text/plain' } }),
          isBase64Encoded: true,
        },
        lambdaContext(),
      );
    expect((await send('{"a":1}')).statusCode).toBe(415);
    expect((await send('x')).statusCode).toBe(400);
  });

  it('answers 400 to a base64-encoded JSON body whose bytes are not UTF-8, whatever charset it claims', async () => {
    const latin1 = Buffer.from('{"client_id":"caf\xe9","client_secret":"b"}', 'latin1').toString('base64');
    for (const contentType of ['application/json', 'application/json; charset=iso-8859-1', 'text/plain']) {
      const result = await handler(
        { ...httpEvent('POST', '/credentials', { body: latin1, headers: { 'content-type': contentType } }), isBase64Encoded: true },
        lambdaContext(),
      );
      expect(result.statusCode).toBe(400);
      expect(JSON.parse(result.body!).error).toMatchObject({ status: 400, httpMessage: 'Bad Request' });
      expect(result.body).not.toContain('caf');
    }
  });

  it.each(['CONTENT-TYPE', 'Content-type', 'content-Type'])('parses JSON whose %s header is named in any case', async (name) => {
    const result = await post('{"client_id":"a","client_secret":"b"}', { [name]: 'application/json' });
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ client_id: 'a', client_secret: 'b' });
    expect((await post('{"client_id":', { [name]: 'application/json' })).statusCode).toBe(400);
    expect((await post('{"a":1}', { [name]: 'text/plain' })).statusCode).toBe(415);
  });

  it('returns 413 for a huge body without parsing it', async () => {
    const result = await post(JSON.stringify({ client_id: 'a', client_secret: 'x'.repeat(2_000_000) }));
    expect(result.statusCode).toBe(413);
    expect(JSON.parse(result.body!).error.status).toBe(413);
  });

  it('returns 422 for valid JSON nested thousands of levels deep (never a parser stack overflow)', async () => {
    const deep = JSON.stringify({ client_id: 'a', client_secret: 'b' }).replace('}', `,"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
    const result = await post(deep);
    expect(result.statusCode).toBe(422);
    expect(JSON.parse(result.body!).error.message).toBe(VALIDATION_MESSAGE);
  });

  it('returns 400 for deeply nested text that is not JSON', async () => {
    const result = await post('['.repeat(20_000));
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!).error.status).toBe(400);
  });

  it('returns 404 for an unknown path and 405 with Allow for a known path with another method', async () => {
    const unknown = await handler(httpEvent('GET', '/nope', { routeKey: '$default' }), lambdaContext());
    expect(unknown.statusCode).toBe(404);
    expect(JSON.parse(unknown.body!).error).toMatchObject({ status: 404, httpMessage: 'Not Found' });
    const wrongMethod = await handler(httpEvent('DELETE', '/credentials', { routeKey: '$default' }), lambdaContext());
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers?.Allow).toBe('POST');
  });

  describe('the $default route (a valid token, no scope) never runs the echo', () => {
    const body = JSON.stringify({ client_id: 'side-door', client_secret: 'side-door-secret' });
    const viaDefault = (method: string, path: string) => handler(httpEvent(method, path, { body, routeKey: '$default' }), lambdaContext());

    it.each([
      ['a trailing slash', '/credentials/'],
      ['two trailing slashes', '/credentials//'],
      ['a doubled leading slash', '//credentials'],
      ['another case', '/Credentials'],
      ['an encoded slash', '/credentials%2F'],
      ['a dot segment', '/./credentials'],
      ['a query-like suffix', '/credentials;x'],
      ['the exact path itself', '/credentials'],
    ])('answers POST with %s 404 in the envelope, echoing nothing', async (_label, path) => {
      const result = await viaDefault('POST', path);
      expect(result.statusCode).toBe(404);
      expect(result.headers?.['Content-Type']).toBe('application/json');
      expect(JSON.parse(result.body!).error).toEqual({ message: 'Not Found', status: 404, httpMessage: 'Not Found' });
      expect(result.body).not.toContain('side-door');
    });

    it('answers 405 with Allow for a route path with another method, and 404 for a trailing slash with it', async () => {
      const wrongMethod = await viaDefault('PUT', '/credentials');
      expect(wrongMethod.statusCode).toBe(405);
      expect(wrongMethod.headers?.Allow).toBe('POST');
      expect((await viaDefault('PUT', '/credentials/')).statusCode).toBe(404);
      expect((await viaDefault('GET', '/devices/')).statusCode).toBe(404);
    });

    it('answers a request named for another function 404 (a routing mistake never serves it here)', async () => {
      const result = await handler(httpEvent('POST', '/credentials', { body, routeKey: 'GET /devices' }), lambdaContext());
      expect(result.statusCode).toBe(404);
    });
  });

  it('writes exactly one access-log line per request and never the secret', async () => {
    await post(JSON.stringify({ client_id: 'id-1', client_secret: 'top-secret-value' }));
    await post(JSON.stringify({ client_id: 'id-2', client_secret: 'other-secret-value', extra: 1 }));
    await post('not json top-secret-value');
    const lines = accessLines(logs);
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.status_code)).toEqual([200, 422, 400]);
    for (const line of lines) {
      expect(line).toMatchObject({ http_method: 'POST', path: '/credentials' });
      expect(typeof line.duration_ms).toBe('number');
      expect(line).not.toHaveProperty('cache_tier');
    }
    expect(logs.raw()).not.toContain('secret-value');
  });
});
