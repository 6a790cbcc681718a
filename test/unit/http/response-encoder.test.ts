import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError } from '../../../lib/errors.ts';
import { gzipEtag, makeResponseEncoder, negotiatesEncoding, notModifiedEtag } from '../../../lib/http/response-encoder.ts';

/** Lambda cannot return more than 6 MB (docs/api.md). */
const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;
/** Bodies of 256 KiB or more go out gzip-compressed to clients that accept it (docs/api.md). */
const COMPRESS_MIN_BYTES = 256 * 1024;

const jsonResult = (body: string) => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body });
/** A JSON array of at least `bytes` bytes that compresses well, like a device list. */
const bigJson = (bytes: number) => {
  const json = JSON.stringify(
    Array.from({ length: Math.ceil(bytes / 40) }, (_, id) => ({ id: String(id), os_version: '26.1', managed: true })),
  );
  expect(json.length).toBeGreaterThanOrEqual(bytes);
  return json;
};

/** Whether the encoder sends a large body gzip-compressed to a client sending this `Accept-Encoding`. */
const acceptsGzip = (header: string | undefined): boolean =>
  makeResponseEncoder()(jsonResult(bigJson(COMPRESS_MIN_BYTES)), header).headers?.['Content-Encoding'] === 'gzip';

describe('Accept-Encoding admitting gzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, GZIP;q=0.5', true],
    ['x-gzip', true],
    ['*', true],
    ['gzip;q=0', false],
    ['*, gzip;q=0', false],
    ['deflate, br', false],
    ['identity', false],
    ['', false],
    [undefined, false],
  ])('reads %j as %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('makeResponseEncoder', () => {
  it('leaves a body under the compression threshold as it is, whatever the client accepts', () => {
    const result = jsonResult('[{"id":"1"}]');
    expect(makeResponseEncoder()(result, 'gzip')).toBe(result);
  });

  it('sends a large body gzip-compressed and base64-encoded to a client that accepts gzip', () => {
    const body = bigJson(COMPRESS_MIN_BYTES * 4);
    const encoded = makeResponseEncoder()(jsonResult(body), 'gzip, deflate');
    expect(encoded).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    expect(encoded.headers).toEqual({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect(gunzipSync(Buffer.from(encoded.body!, 'base64')).toString('utf8')).toBe(body);
    expect(encoded.body!.length).toBeLessThan(body.length / 3);
  });

  it('compresses each body once while it is among the last 16, however they alternate (pages walked side by side)', () => {
    let compressed = 0;
    const encode = makeResponseEncoder((body) => {
      compressed += 1;
      return gzipSync(body);
    });
    const pages = Array.from({ length: 16 }, (_, page) => bigJson(COMPRESS_MIN_BYTES + page * 1000));
    const first = pages.map((page) => encode(jsonResult(page), 'gzip').body);
    for (let round = 0; round < 3; round += 1) {
      pages.forEach((page, index) => expect(encode(jsonResult(page), 'gzip').body).toBe(first[index]));
    }
    expect(compressed).toBe(16);
    // A seventeenth body pushes out the least recently used one, which is compressed again later.
    encode(jsonResult(bigJson(COMPRESS_MIN_BYTES + 99_000)), 'gzip');
    encode(jsonResult(pages[0]!), 'gzip');
    expect(compressed).toBe(18);
  });

  it("gives a large body's gzip form a tag of its own, and leaves a plain body's tag as it is", () => {
    const body = bigJson(COMPRESS_MIN_BYTES);
    const tagged = { ...jsonResult(body), headers: { 'Content-Type': 'application/json', ETag: '"abc"' } };
    const encode = makeResponseEncoder();
    expect(encode(tagged, 'gzip').headers?.ETag).toBe('"abc-gzip"');
    expect(encode(tagged, undefined).headers?.ETag).toBe('"abc"');
    expect(gzipEtag('"abc"')).toBe('"abc-gzip"');
  });

  it('sends a large body plainly to a client that does not accept gzip, and says either way depends on Accept-Encoding', () => {
    const body = bigJson(COMPRESS_MIN_BYTES * 2);
    const encoded = makeResponseEncoder()(jsonResult(body), undefined);
    expect(encoded.body).toBe(body);
    expect(encoded.isBase64Encoded).toBeUndefined();
    expect(encoded.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(negotiatesEncoding(jsonResult(body))).toBe(true);
    expect(negotiatesEncoding(jsonResult('[{"id":"1"}]'))).toBe(false);
  });

  it('refuses a body over the Lambda response limit without gzip, saying how to get it', () => {
    const body = bigJson(LAMBDA_RESPONSE_LIMIT_BYTES + 1024);
    const encode = makeResponseEncoder();
    expect(() => encode(jsonResult(body), 'identity')).toThrow(ResponseTooLargeError);
    expect(() => encode(jsonResult(body), 'identity')).toThrow(
      expect.objectContaining({
        publicMessage: expect.stringMatching(/page through it with the limit parameter, or request it with Accept-Encoding: gzip/),
      }),
    );
    // The same body fits compressed.
    expect(encode(jsonResult(body), 'gzip').isBase64Encoded).toBe(true);
  });

  it('refuses a body that is over the limit even compressed', () => {
    const body = JSON.stringify(randomBytes(6 * 1024 * 1024).toString('base64'));
    let thrown: unknown;
    try {
      makeResponseEncoder()(jsonResult(body), 'gzip');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ResponseTooLargeError);
    expect((thrown as ResponseTooLargeError).status).toBe(500);
    expect((thrown as Error).message).toMatch(/even gzip-compressed/);
    expect((thrown as ResponseTooLargeError).publicMessage).toMatch(/page through it with the limit parameter/);
  });
});

describe('notModifiedEtag', () => {
  it.each([
    ['"abc"', '"abc"'],
    ['W/"abc"', '"abc"'],
    ['"x", "abc"', '"abc"'],
    ['*', '"abc"'],
    ['"abc-gzip"', '"abc-gzip"'],
    ['W/"abc-gzip", "y"', '"abc-gzip"'],
  ])('answers If-None-Match %s with 304 under %s', (header, tag) => {
    expect(notModifiedEtag(header, '"abc"')).toBe(tag);
  });

  it.each([undefined, '', '"abcd"', '"ab"', '"abc-br"', 'abc'])('answers If-None-Match %j with a 200', (header) => {
    expect(notModifiedEtag(header, '"abc"')).toBeUndefined();
  });
});
