import { headerValue } from './headers.ts';
import type { HttpMiddleware } from './http-types.ts';
import { makeResponseEncoder } from './response-encoder.ts';

/** The response encoder as a middleware: every successful response goes through it on its way out. */
export const responseEncoding = (): HttpMiddleware => {
  const encode = makeResponseEncoder();
  return {
    after: (request) => {
      request.response = encode(request.response!, headerValue(request.event.headers ?? {}, 'accept-encoding'));
    },
  };
};
