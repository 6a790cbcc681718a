import type { Context } from 'aws-lambda';

/**
 * The origin of the request an invocation serves (idempotency-key.ts `requestOrigin`), set by safe
 * retries while the request carries an `Idempotency-Key` and handed to the operation as
 * `HttpRequest.origin`. Found by the invocation's Lambda context, like the access line.
 */
const origins = new WeakMap<Context, string>();

export const setRequestOrigin = (context: Context, origin: string): void => {
  origins.set(context, origin);
};

export const requestOriginOf = (context: Context): string | undefined => origins.get(context);
