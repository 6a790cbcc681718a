import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.ts';
import { headerValue } from './headers.ts';

const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

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
