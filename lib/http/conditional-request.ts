import { gzipEtag } from './response-encoder.ts';

/** An entity tag without its weakness mark (`W/`): If-None-Match compares tags weakly. */
const opaqueTag = (tag: string): string => tag.replace(/^W\//, '');

/**
 * The entity tag a 304 answers with when an `If-None-Match` header names the body tagged `etag`
 * (RFC 9110 §13.1.2: a list of entity tags or `*`, compared weakly, so `W/"x"` matches `"x"`): `etag`,
 * or its gzip form (response-encoder.ts) when that is the copy the client holds. Undefined when the
 * header names neither: the client's copy is not current, and gets a 200.
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
