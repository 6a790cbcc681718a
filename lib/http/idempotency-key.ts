import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.ts';
import { headerValue } from './headers.ts';
import type { HttpEvent } from './http-types.ts';

const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * How long a key keeps its outcome (docs/api.md#safe-retries); after that the key is forgotten and a
 * request with it is new. Kept here, with the key and the origin, rather than with the Powertools
 * lifecycle, so that what an origin names (a user store's lock) can expire with it without loading
 * Powertools.
 */
export const IDEMPOTENCY_KEEP_SECONDS = 24 * 60 * 60;

/** 1 to 255 printable ASCII characters (space included), as docs/api.md#safe-retries says. */
const WELL_FORMED_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * The request's `Idempotency-Key`, or undefined without the header. A malformed key is a 422 naming
 * the header: it cannot be kept, and treating it as absent would silently drop the caller's safety.
 */
export const readIdempotencyKey = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const key = headerValue(headers, IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return undefined;
  if (!WELL_FORMED_KEY.test(key)) {
    throw new ValidationError('headers', [{ path: `/${IDEMPOTENCY_KEY_HEADER}`, message: 'must be 1 to 255 printable ASCII characters' }]);
  }
  return key;
};

/**
 * What the access line shows of a key: the first 16 hex digits of its SHA-256. A key may be made of
 * client data (an order number, an email), so it is never logged itself; the digest still ties a
 * request to its retries.
 */
export const idempotencyKeyDigest = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** Keys belong to a caller: the subject of the JWT that API Gateway's authorizer checked (none locally). */
export const callerOf = (event: HttpEvent): string | null => {
  const { authorizer } = event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } };
  const subject = authorizer?.jwt?.claims?.sub;
  return typeof subject === 'string' ? subject : null;
};

/**
 * Names a request with a key for the operation (HttpRequest.origin): the caller and its key, hashed.
 * A create stores it with what it made, so a retry whose first outcome was never kept (its function
 * timed out, the store failed) finds its own user instead of a conflict.
 */
export const requestOrigin = (caller: string | null, key: string): string =>
  createHash('sha256')
    .update(JSON.stringify([caller, key]))
    .digest('base64url');
