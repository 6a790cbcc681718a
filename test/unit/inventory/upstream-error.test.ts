import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeLogger } from '../../../lib/runtime/logger.ts';
import { makeHttpHandler } from '../../../lib/http/make-http-handler.ts';
import { retryAfterSecondsOf, UpstreamError, UpstreamFailure } from '../../../lib/inventory/upstream-error.ts';
import { accessLines, captureStdout, type CapturedLogs } from '../../support/capture-logs.ts';
import { httpEvent, lambdaContext } from '../../support/http-events.ts';

const UPSTREAM_DETAIL = 'GET https://jamf.internal.example/api/v3/computers-inventory answered 500: {"secretish":"stack trace here"}';

/** The real Middy chain with a handle that fails the way the device layer does. */
const failingWith = (error: Error) =>
  makeHttpHandler({
    routes: ['GET /devices'],
    logger: makeLogger('devices-test'),
    handle: async () => {
      throw error;
    },
  });

const call = (error: Error) => failingWith(error)(httpEvent('GET', '/devices'), lambdaContext());

describe('UpstreamError through the HTTP chain', () => {
  let logs: CapturedLogs;
  beforeEach(() => {
    logs = captureStdout();
  });
  afterEach(() => {
    logs.restore();
  });

  it.each([
    [UpstreamFailure.CredentialsRejected, 502, 'Bad Gateway'],
    [UpstreamFailure.Unavailable, 502, 'Bad Gateway'],
    [UpstreamFailure.Unreadable, 502, 'Bad Gateway'],
    [UpstreamFailure.TimedOut, 504, 'Gateway Timeout'],
    [UpstreamFailure.RateLimited, 503, 'Service Unavailable'],
    [UpstreamFailure.Misconfigured, 500, 'Internal Server Error'],
  ])('answers %s with %i in the envelope and a generic message', async (failure, status, httpMessage) => {
    const result = await call(new UpstreamError(failure, { detail: UPSTREAM_DETAIL, cause: new Error('socket hang up') }));
    expect(result.statusCode).toBe(status);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    const body = JSON.parse(result.body!) as { error: { message: string; status: number; httpMessage: string } };
    expect(body.error).toMatchObject({ status, httpMessage });
    expect(Object.keys(body.error).sort()).toEqual(['httpMessage', 'message', 'status']);
    expect(result.body).not.toContain('jamf.internal');
    expect(result.body).not.toContain('stack trace');
    expect(result.body).not.toContain('socket hang up');
  });

  it('gives each variant its own generic message', () => {
    const messages = Object.values(UpstreamFailure).map((failure) => new UpstreamError(failure, { detail: 'x' }).publicMessage);
    expect(new Set(messages).size).toBe(messages.length);
  });

  it('sends Retry-After from upstream when rate limited', async () => {
    const result = await call(new UpstreamError(UpstreamFailure.RateLimited, { detail: 'x', retryAfterSeconds: 17 }));
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('17');
  });

  it('sends a default Retry-After when upstream gave none', async () => {
    const result = await call(new UpstreamError(UpstreamFailure.RateLimited, { detail: 'x' }));
    expect(result.headers?.['Retry-After']).toBe('5');
  });

  it('sends Retry-After only when rate limited', async () => {
    const result = await call(new UpstreamError(UpstreamFailure.Unavailable, { detail: 'x', retryAfterSeconds: 17 }));
    expect(result.headers?.['Retry-After']).toBeUndefined();
  });

  it('puts the upstream detail and cause on the one access line for the operator', async () => {
    await call(new UpstreamError(UpstreamFailure.Unavailable, { detail: UPSTREAM_DETAIL, cause: new Error('socket hang up') }));
    const lines = accessLines(logs);
    expect(lines).toHaveLength(1);
    const error = lines[0]!.error as { name: string; message: string; cause: { message: string } };
    expect(error.name).toBe('UpstreamError');
    expect(error.message).toContain('unavailable');
    expect(error.message).toContain('jamf.internal.example');
    expect(error.cause.message).toBe('socket hang up');
  });
});

describe('retryAfterSecondsOf', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    ['30', 30],
    [' 7 ', 7],
    ['0', 0],
    ['Sun, 22 Nov 2026 10:01:00 GMT', 60],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['999999', 3600],
  ])('reads %j as %i seconds', (header, expected) => {
    expect(retryAfterSecondsOf(header, now)).toBe(expected);
  });

  it.each([null, 'soon', '-5', '1.5'])('ignores %j', (header) => {
    expect(retryAfterSecondsOf(header, now)).toBeUndefined();
  });
});
