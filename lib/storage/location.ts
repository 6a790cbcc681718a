import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JobError } from '../errors.ts';

/** Where an import reads from or writes to: a local file or an S3 object. */
export type Location = { kind: 'file'; path: string } | { kind: 's3'; bucket: string; key: string };

/** A source or destination that cannot be used as written. */
export class LocationError extends JobError {}

// S3 bucket naming rules: 3–63 chars of lower-case letters, digits, dots and hyphens, alphanumeric at both ends.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** S3 refuses longer object keys (UTF-8 bytes). */
const MAX_KEY_BYTES = 1024;

/** A location as an error quotes it: a very long one shortened, so the message stays one readable line. */
export const quoteLocation = (text: string): string => {
  // By code point, so no character is cut in half; both ends kept, where a stray space would be.
  const characters = [...text];
  return JSON.stringify(characters.length > 120 ? `${characters.slice(0, 80).join('')}…${characters.slice(-30).join('')}` : text);
};

const parseS3 = (text: string): Location => {
  const rest = text.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const key = slash === -1 ? '' : rest.slice(slash + 1);
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new LocationError(`${quoteLocation(text)} does not name a valid S3 bucket (expected s3://bucket/key)`);
  if (key === '') throw new LocationError(`${quoteLocation(text)} has no object key (expected s3://bucket/key)`);
  if (key.endsWith('/')) throw new LocationError(`${quoteLocation(text)} names a folder, not an object`);
  const keyBytes = Buffer.byteLength(key);
  if (keyBytes > MAX_KEY_BYTES)
    throw new LocationError(`${quoteLocation(text)} has an object key of ${keyBytes} bytes; S3 allows at most ${MAX_KEY_BYTES}`);
  return { kind: 's3', bucket, key };
};

/**
 * Parses a local path, a `file:` URL or `s3://bucket/key`; anything else is a LocationError. A
 * location is taken as written: white space at either end is refused rather than trimmed, since an
 * object key or a file name may end in a space, and trimming would then read or replace another one.
 */
export const parseLocation = (text: string): Location => {
  if (text.trim() === '') throw new LocationError('A location is empty (expected a file path or s3://bucket/key)');
  if (text !== text.trim()) {
    throw new LocationError(
      `${quoteLocation(text)} starts or ends with white space, which a location may not have (trimmed, it would name another object or file)`,
    );
  }
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === 's3') {
    if (!text.slice(0, 5).toLowerCase().startsWith('s3://'))
      throw new LocationError(`${quoteLocation(text)} is not an S3 URL (expected s3://bucket/key)`);
    return parseS3(`s3://${text.slice(5)}`);
  }
  if (scheme === 'file') {
    try {
      return { kind: 'file', path: fileURLToPath(text) };
    } catch {
      throw new LocationError(`${quoteLocation(text)} is not a valid file URL`);
    }
  }
  // One-letter "schemes" are Windows drive letters, so only longer ones are refused.
  if (scheme !== undefined && scheme.length > 1)
    throw new LocationError(`${quoteLocation(text)} uses an unsupported scheme (expected a file path or s3://bucket/key)`);
  if (/[/\\]$/.test(text)) throw new LocationError(`${quoteLocation(text)} names a directory, not a file`);
  return { kind: 'file', path: resolve(text) };
};

export const formatLocation = (location: Location): string =>
  location.kind === 's3' ? `s3://${location.bucket}/${location.key}` : location.path;
