import { gzipSync } from 'node:zlib';
import { ResponseTooLargeError } from '../errors.ts';
import type { HttpResult as Result } from './http-types.ts';

/** Lambda refuses a synchronous response above 6 MB (the whole result's JSON); API Gateway then answers a bare 502. */
const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;
/** Room kept for the rest of the result around the body: status, headers, flags. */
const RESULT_OVERHEAD_BYTES = 16 * 1024;
const BODY_LIMIT_BYTES = LAMBDA_RESPONSE_LIMIT_BYTES - RESULT_OVERHEAD_BYTES;
/** Bodies from this size on are sent gzip-compressed to clients that accept it. */
const COMPRESS_MIN_BYTES = 256 * 1024;
/** Level 1: 4 MB of device JSON in ~18 ms to ~0.8 MB; higher levels cost twice the time for ~15 % less. */
const GZIP_LEVEL = 1;

/** Whether an `Accept-Encoding` header admits gzip (`gzip`, `x-gzip` or `*`, with a q-value above 0). */
const acceptsGzip = (header: string | undefined): boolean => {
  if (header === undefined) return false;
  let gzip: boolean | undefined;
  let wildcard = false;
  for (const part of header.split(',')) {
    const [coding = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') gzip = allowed;
    else if (coding === '*') wildcard = allowed;
  }
  return gzip ?? wildcard;
};

/**
 * The entity tag of a body's gzip form: another representation of it, so another strong tag
 * (RFC 9110 §8.8.3), from which conditional-request.ts still recognises the body.
 */
export const gzipEtag = (etag: string): string => (etag.endsWith('"') ? `${etag.slice(0, -1)}-gzip"` : etag);

interface Encoded {
  body: string;
  plainBytes: number;
  gzipBase64?: string;
}

/**
 * Large bodies whose sizes and compressed form are kept: as many as GET /devices keeps rendered
 * pages (lib/devices/device-list.ts), so clients walking pages side by side (or a page asked for
 * again) find theirs instead of each request measuring, and gzipping, 400 KiB again.
 */
const ENCODED_KEPT = 16;

/**
 * Fits large JSON responses into what Lambda can return: gzip (base64, as API Gateway expects binary
 * bodies) for clients that accept it, a clear 500 instead of a bare upstream 502 for those that do not.
 * The sizes and compressed forms of the last ENCODED_KEPT bodies are kept, so a cache hit returning
 * the same string is neither measured nor compressed again.
 */
export const makeResponseEncoder = (
  /** How a body is gzipped (injectable: the tests count how often). */
  gzip: (body: string) => Buffer = (body) => gzipSync(body, { level: GZIP_LEVEL }),
) => {
  // Most recently used last; a body is found by the string itself (the same object on a cache hit).
  const kept: Encoded[] = [];
  const encodedOf = (body: string): Encoded => {
    const index = kept.findIndex((entry) => entry.body === body);
    const encoded = index === -1 ? { body, plainBytes: Buffer.byteLength(body) } : kept.splice(index, 1)[0]!;
    kept.push(encoded);
    if (kept.length > ENCODED_KEPT) kept.shift();
    return encoded;
  };

  return (result: Result, acceptEncoding: string | undefined): Result => {
    const { body } = result;
    if (typeof body !== 'string' || result.isBase64Encoded === true || body.length < COMPRESS_MIN_BYTES) return result;
    const encoded = encodedOf(body);
    const headers = { ...result.headers, Vary: 'Accept-Encoding' };
    if (!acceptsGzip(acceptEncoding)) {
      if (encoded.plainBytes > BODY_LIMIT_BYTES) throw new ResponseTooLargeError(encoded.plainBytes, false);
      return { ...result, headers };
    }
    encoded.gzipBase64 ??= gzip(body).toString('base64');
    if (encoded.gzipBase64.length > BODY_LIMIT_BYTES) throw new ResponseTooLargeError(encoded.plainBytes, true);
    const etag = result.headers?.ETag;
    return {
      ...result,
      headers: { ...headers, 'Content-Encoding': 'gzip', ...(typeof etag === 'string' ? { ETag: gzipEtag(etag) } : {}) },
      body: encoded.gzipBase64,
      isBase64Encoded: true,
    };
  };
};
