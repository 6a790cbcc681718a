import { headerValue } from './headers.ts';
import type { HttpMiddleware } from './http-types.ts';
import { makeResponseEncoder, negotiatesEncoding, notModifiedEtag } from './response-encoder.ts';

export interface ResponseEncodingOptions {
  /**
   * The route answers conditional GETs: a 200 carrying an `ETag` is answered 304 (ETag and Vary, no
   * body, no Content-Type: RFC 9110) when `If-None-Match` names it or its gzip form, and every answer
   * says `Vary: Accept-Encoding`, since a large body goes out gzip-compressed under another tag.
   */
  conditional: boolean;
}

/**
 * The response's way out, in one place: conditional GET (the 304, `Vary`, the gzip form's tag), a
 * body the operation left to render (`renderBody`) rendered only when it is sent and not kept
 * already, and the encoding (response-encoder.ts) with its one bounded cache keyed by ETag.
 */
/** The one place `Vary` is said: a representation chosen by `Accept-Encoding`. */
const varyingByEncoding = <R extends { headers?: Record<string, string | number | boolean> | undefined }>(result: R): R => ({
  ...result,
  headers: { ...result.headers, Vary: 'Accept-Encoding' },
});

export const responseEncoding = (options: ResponseEncodingOptions): HttpMiddleware => {
  const encode = makeResponseEncoder();
  return {
    after: (request) => {
      const { renderBody, ...response } = request.response!;
      const headers = request.event.headers ?? {};
      const etag = typeof response.headers?.ETag === 'string' ? response.headers.ETag : undefined;
      const conditional = options.conditional && response.statusCode === 200 && etag !== undefined;
      if (conditional) {
        const held = notModifiedEtag(headerValue(headers, 'if-none-match'), etag);
        if (held !== undefined) {
          request.response = varyingByEncoding({ statusCode: 304, headers: { ETag: held } });
          return;
        }
      }
      if (renderBody !== undefined) response.body = (etag === undefined ? undefined : encode.kept(etag)) ?? renderBody();
      const encoded = encode(response, headerValue(headers, 'accept-encoding'));
      request.response = conditional || negotiatesEncoding(response) ? varyingByEncoding(encoded) : encoded;
    },
  };
};
