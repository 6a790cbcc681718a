import type { Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { NotAcceptableError } from '../../../lib/errors.ts';
import type { HttpEvent, HttpResult } from '../../../lib/http/http-types.ts';
import { jsonAccept } from '../../../lib/http/json-accept.ts';

/** Runs the middleware on a request with these headers: undefined when it lets the request through, else what it threw. */
const refusalOf = (headers: Record<string, string>): unknown => {
  const request = { event: { headers } as unknown as HttpEvent } as Request<HttpEvent, HttpResult, Error, Context>;
  try {
    void jsonAccept().before!(request);
    return undefined;
  } catch (error) {
    return error;
  }
};

/** Whether the middleware lets a request with this `Accept` header through (no NotAcceptableError). */
const acceptsJson = (header: string | undefined): boolean => {
  const refusal = refusalOf(header === undefined ? {} : { accept: header });
  if (refusal === undefined) return true;
  if (refusal instanceof NotAcceptableError) return false;
  throw refusal;
};

describe('Accept header admitting JSON', () => {
  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['application/json', 'application/json'],
    ['application/json with a charset', 'application/json; charset=utf-8'],
    ['application/*', 'application/*'],
    ['*/*', '*/*'],
    ['a browser-style list', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['mixed case', 'Application/JSON'],
    ['JSON with a low but positive weight', 'text/html, application/json;q=0.1'],
  ])('admits JSON for %s', (_label, header) => {
    expect(acceptsJson(header)).toBe(true);
  });

  it.each([
    ['text/html only', 'text/html'],
    ['application/xml only', 'application/xml'],
    ['JSON refused with q=0', 'application/json;q=0'],
    ['everything but JSON', '*/*, application/json;q=0'],
    ['application/* refused', 'text/plain, application/*;q=0'],
    ['garbage', 'nonsense'],
  ])('refuses JSON for %s', (_label, header) => {
    expect(acceptsJson(header)).toBe(false);
  });

  it('finds the Accept header whatever its case and answers 406 when it excludes JSON', () => {
    expect(refusalOf({ Accept: 'text/html' })).toBeInstanceOf(NotAcceptableError);
    expect(refusalOf({ accept: 'text/html' })).toMatchObject({
      status: 406,
      publicMessage: 'This endpoint only produces application/json',
    });
    expect(refusalOf({ accept: 'application/json' })).toBeUndefined();
    expect(refusalOf({})).toBeUndefined();
  });
});
