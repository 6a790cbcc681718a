import { gzipSync } from 'node:zlib';
import { ResponseTooLargeError } from '../errors.ts';
import type { HttpResult as Result } from './http-types.ts';
import { RecentEntries } from '../values/recent-entries.ts';

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
 * (RFC 9110 §8.8.3), from which `notModifiedEtag` still recognises the body.
 */
export const gzipEtag = (etag: string): string => (etag.endsWith('"') ? `${etag.slice(0, -1)}-gzip"` : etag);

/** An entity tag without its weakness mark (`W/`): If-None-Match compares tags weakly. */
const opaqueTag = (tag: string): string => tag.replace(/^W\//, '');

/**
 * The entity tag a 304 answers with when an `If-None-Match` header names the body tagged `etag`
 * (RFC 9110 §13.1.2: a list of entity tags or `*`, compared weakly, so `W/"x"` matches `"x"`): `etag`,
 * or its gzip form when that is the copy the client holds. Undefined when the header names neither:
 * the client's copy is not current, and gets a 200.
 */
export const notModifiedEtag = (header: string | undefined, etag: string): string | undefined => {
  if (header === undefined) return undefined;
  const plain = opaqueTag(etag);
  const gzip = gzipEtag(plain);
  for (const tag of header.split(',')) {
    const named = opaqueTag(tag.trim());
    if (named === '*' || named === plain) return etag;
    if (named === gzip) return gzip;
  }
  return undefined;
};

interface Encoded {
  /** The body's entity tag, when it has one: a tagged body is found by it, before it is rendered. */
  etag: string | undefined;
  body: string;
  plainBytes?: number;
  gzipBase64?: string;
}

/**
 * Bodies kept with their sizes and compressed forms: clients walking pages side by side (or a page
 * asked for again) find theirs instead of each request rendering, measuring and gzipping 400 KiB
 * again. A body longer than KEPT_MAX_CHARS (a whole large list) is not kept.
 */
const ENCODED_KEPT = 16;
const KEPT_MAX_CHARS = 8 * 1024 * 1024;

/**
 * Whether a result's representation depends on `Accept-Encoding`: a text body large enough to be sent
 * gzip-compressed to a client that accepts it (the way out says `Vary` for it, response-encoding.ts).
 */
export const negotiatesEncoding = (result: Result): boolean =>
  typeof result.body === 'string' && result.isBase64Encoded !== true && result.body.length >= COMPRESS_MIN_BYTES;

export interface ResponseEncoder {
  (result: Result, acceptEncoding: string | undefined): Result;
  /** The body kept for `etag`, if one was encoded lately: what a tagged response need not render again. */
  kept: (etag: string) => string | undefined;
}

/**
 * Fits large JSON responses into what Lambda can return: gzip (base64, as API Gateway expects binary
 * bodies) for clients that accept it, a clear 500 instead of a bare upstream 502 for those that do not.
 * The last ENCODED_KEPT bodies are kept, tagged ones by their ETag and large untagged ones by the
 * string itself, with their sizes and compressed forms, so a body asked for again is neither rendered,
 * measured nor compressed again.
 */
export const makeResponseEncoder = (
  /** How a body is gzipped (injectable: the tests count how often). */
  gzip: (body: string) => Buffer = (body) => gzipSync(body, { level: GZIP_LEVEL }),
): ResponseEncoder => {
  // Tagged bodies by their ETag, untagged ones by their text.
  const kept = new RecentEntries<string, Encoded>(ENCODED_KEPT);
  const encodedOf = (body: string, etag: string | undefined): Encoded => {
    const found = kept.get(etag ?? body);
    if (found !== undefined && found.body === body) return found;
    const entry: Encoded = { etag, body };
    return entry.body.length > KEPT_MAX_CHARS ? entry : kept.set(etag ?? body, entry);
  };

  const encode = (result: Result, acceptEncoding: string | undefined): Result => {
    const { body } = result;
    const etag = typeof result.headers?.ETag === 'string' ? result.headers.ETag : undefined;
    if (typeof body !== 'string' || result.isBase64Encoded === true) return result;
    if (body.length < COMPRESS_MIN_BYTES) {
      if (etag !== undefined) encodedOf(body, etag);
      return result;
    }
    const encoded = encodedOf(body, etag);
    encoded.plainBytes ??= Buffer.byteLength(body);
    const { headers } = result;
    if (!acceptsGzip(acceptEncoding)) {
      if (encoded.plainBytes > BODY_LIMIT_BYTES) throw new ResponseTooLargeError(encoded.plainBytes, false);
      return result;
    }
    encoded.gzipBase64 ??= gzip(body).toString('base64');
    if (encoded.gzipBase64.length > BODY_LIMIT_BYTES) throw new ResponseTooLargeError(encoded.plainBytes, true);
    return {
      ...result,
      headers: { ...headers, 'Content-Encoding': 'gzip', ...(etag === undefined ? {} : { ETag: gzipEtag(etag) }) },
      body: encoded.gzipBase64,
      isBase64Encoded: true,
    };
  };
  return Object.assign(encode, { kept: (etag: string) => kept.get(etag)?.body });
};
