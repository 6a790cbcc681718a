import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { makeHttpHandler } from '../../../lib/http/make-http-handler.ts';
import { jsonAccept } from '../../../lib/http/json-accept.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';

describe('the shared HTTP chain', () => {
  let logs: CapturedLogs;
  beforeEach(() => {
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  it('answers 504 in the envelope, with one access line, when the invocation deadline arrives first', async () => {
    const handler = makeHttpHandler({
      routes: ['GET /devices'],
      logger: new Logger({ serviceName: 'test' }),
      handle: ({ annotate }) => {
        annotate({ cache_tier: 'upstream' });
        return new Promise(() => undefined);
      },
    });
    const result = await handler(httpEvent('GET', '/devices'), lambdaContext(400));
    expect(result.statusCode).toBe(504);
    expect(JSON.parse(result.body!)).toEqual({
      error: { message: 'The request took too long to complete', status: 504, httpMessage: 'Gateway Timeout' },
    });
    const lines = accessLines(logs);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ status_code: 504, cache_tier: 'upstream' });
  });

  it('answers 504 once 200 ms are left before the deadline, and not sooner (docs/architecture.md)', async () => {
    const finishingAfter = (ms: number) =>
      makeHttpHandler({
        routes: ['GET /devices'],
        logger: new Logger({ serviceName: 'test' }),
        handle: () => new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: [] }), ms)),
      });
    // The deadline is 1000 ms away when the request starts, so the 504 is due 800 ms in: a handler
    // done at 500 ms answers, one done at 900 ms is too late. The handler's own timer starts after the
    // 504's, so a stall of the machine in between moves it later: hence 300 ms of room on that side.
    const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 1000 };
    expect((await finishingAfter(500)(httpEvent('GET', '/devices'), context)).statusCode).toBe(200);
    expect((await finishingAfter(900)(httpEvent('GET', '/devices'), context)).statusCode).toBe(504);
  });

  it('answers 406 in the envelope, before the operation, when a route answering JSON only meets an Accept without JSON', async () => {
    let handled = 0;
    const handlerOf = (answersJsonOnly: boolean) =>
      makeHttpHandler({
        routes: ['GET /devices'],
        logger: new Logger({ serviceName: 'test' }),
        ...(answersJsonOnly ? { accept: jsonAccept() } : {}),
        handle: async () => {
          handled += 1;
          return { status: 200, body: [] };
        },
      });
    const htmlOnly = { headers: { accept: 'text/html' } };
    const refused = await handlerOf(true)(httpEvent('GET', '/devices', htmlOnly), lambdaContext());
    expect(refused.statusCode).toBe(406);
    expect(JSON.parse(refused.body!)).toEqual({
      error: { message: 'This endpoint only produces application/json', status: 406, httpMessage: 'Not Acceptable' },
    });
    expect(handled).toBe(0);
    expect(accessLines(logs)).toMatchObject([{ status_code: 406 }]);
    expect(
      (await handlerOf(true)(httpEvent('GET', '/devices', { headers: { accept: 'application/json' } }), lambdaContext())).statusCode,
    ).toBe(200);
    expect((await handlerOf(false)(httpEvent('GET', '/devices', htmlOnly), lambdaContext())).statusCode).toBe(200);
    expect(handled).toBe(2);
  });

  it('says Vary: Accept-Encoding once, and only for a body whose encoding the client chooses', async () => {
    const answering = (json: string) =>
      makeHttpHandler({
        routes: ['POST /credentials'],
        logger: new Logger({ serviceName: 'test' }),
        handle: async () => ({ status: 200, json }),
      });
    const large = JSON.stringify(Array.from({ length: 20_000 }, (_, index) => ({ id: String(index), name: `device-${index}` })));
    for (const acceptEncoding of ['gzip', 'identity']) {
      const result = await answering(large)(
        httpEvent('POST', '/credentials', { headers: { 'accept-encoding': acceptEncoding } }),
        lambdaContext(),
      );
      expect(result.headers?.Vary, acceptEncoding).toBe('Accept-Encoding');
      expect(result.headers?.['Content-Encoding'], acceptEncoding).toBe(acceptEncoding === 'gzip' ? 'gzip' : undefined);
    }
    const small = await answering('{"ok":true}')(
      httpEvent('POST', '/credentials', { headers: { 'accept-encoding': 'gzip' } }),
      lambdaContext(),
    );
    expect(small.headers).not.toHaveProperty('Vary');
  });

  it('writes the access line even when the log level filters INFO out', async () => {
    const handler = makeHttpHandler({
      routes: ['GET /devices'],
      logger: new Logger({ serviceName: 'test', logLevel: 'ERROR' }),
      handle: async () => ({ status: 200, body: [] }),
    });
    await handler(httpEvent('GET', '/devices'), lambdaContext());
    expect(accessLines(logs)).toHaveLength(1);
  });

  it('maps an unexpected error to a generic 500 and keeps its message on the log line only', async () => {
    const handler = makeHttpHandler({
      routes: ['GET /devices'],
      logger: new Logger({ serviceName: 'test' }),
      handle: async () => {
        throw new Error('internal detail: host db-7 refused the connection');
      },
    });
    const result = await handler(httpEvent('GET', '/devices'), lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('db-7');
    expect(JSON.parse(result.body!).error).toEqual({ message: 'Internal Server Error', status: 500, httpMessage: 'Internal Server Error' });
    const [line] = accessLines(logs);
    expect(JSON.stringify(line?.error)).toContain('db-7');
  });
});
