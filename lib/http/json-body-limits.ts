import { BadRequestError, PayloadTooLargeError, ValidationError } from '../errors.ts';
import type { HttpEvent, HttpMiddleware } from './http-types.ts';
import { headerValue } from './headers.ts';
import { exceedsJsonDepth } from './json-depth.ts';

/** Bodies above this are refused before parsing; every body of this API is a few hundred bytes. */
const MAX_BODY_BYTES = 64 * 1024;
/** No body of this API nests; deeper JSON is a schema failure, refused before the recursive parser. */
const MAX_JSON_DEPTH = 64;
/** The content types @middy/http-json-body-parser parses (it answers others with 415). */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

const bodyBytes = (event: HttpEvent): number => {
  if (typeof event.body !== 'string') return 0;
  return event.isBase64Encoded ? Math.floor((event.body.length * 3) / 4) : Buffer.byteLength(event.body);
};

/**
 * Decodes strictly: JSON text is UTF-8, and bytes that are not would otherwise become U+FFFD and be
 * stored as if the caller had sent them.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body as text, decoded when API Gateway passed it base64-encoded; a BadRequestError when those
 * bytes are not UTF-8. A body API Gateway passed as text was decoded by API Gateway.
 */
export const bodyText = (event: HttpEvent): string => {
  if (!event.isBase64Encoded) return event.body ?? '';
  try {
    return utf8.decode(Buffer.from(event.body ?? '', 'base64'));
  } catch (cause) {
    throw new BadRequestError('Request body is not valid JSON: it is not UTF-8', cause);
  }
};

/**
 * What a JSON body must be before the body parser sees it: at most MAX_BODY_BYTES (413), JSON text
 * (400) nested no deeper than MAX_JSON_DEPTH (a 422 naming `parameterName`). The parser's own
 * prototype guard walks the parsed value recursively and would overflow the stack on deep input.
 * Checking the syntax here also leaves the parser one reason to refuse a JSON body: a forbidden
 * key (see parserErrors in body-errors.ts). Bodies of another content type are the parser's to refuse, and
 * body-errors.ts then tells a JSON body (415) from one that is not JSON (400).
 */
export const jsonBodyLimits = (parameterName: string): HttpMiddleware => ({
  before: ({ event }) => {
    if (bodyBytes(event) > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
    if (!JSON_CONTENT_TYPE.test(headerValue(event.headers ?? {}, 'content-type') ?? '')) return;
    if (typeof event.body !== 'string') throw new BadRequestError();
    const text = bodyText(event);
    try {
      JSON.parse(text); // V8's parser is iterative: no reviver, no recursion, whatever the depth
    } catch (cause) {
      throw new BadRequestError(undefined, cause);
    }
    if (exceedsJsonDepth(text, MAX_JSON_DEPTH)) {
      throw new ValidationError(parameterName, [{ path: '/', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }]);
    }
  },
});
