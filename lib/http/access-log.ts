import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import type { HttpMiddleware } from './http-types.ts';
import { hasLoggableStack, loggableMessage } from '../errors.ts';
import { readableStack } from '../runtime/stack-trace.ts';
import { requestMethod, requestPath } from './routes.ts';

interface RequestLine {
  startedAt: number;
  /** Keys the operation adds to its own line, e.g. `cache_tier` on GET /devices. */
  fields: Record<string, unknown>;
  written: boolean;
}

// One line in the making per invocation, found by its Lambda context (the object the handler sees too).
const lines = new WeakMap<Context, RequestLine>();

/** Adds keys to the current request's access line; set them before throwing to keep them on a failure's line. */
export const addAccessLogFields = (context: Context, fields: Record<string, unknown>): void => {
  const line = lines.get(context);
  if (line !== undefined) Object.assign(line.fields, fields);
};

/**
 * A 5xx's error as the line carries it: name, message, its stack in source positions, the cause
 * chain (an AWS service's reply without its text: lib/errors.ts, loggableMessage).
 */
const errorFields = (error: unknown, depth = 0): Record<string, unknown> | string => {
  if (!(error instanceof Error)) return String(error);
  return {
    name: error.name,
    message: loggableMessage(error),
    ...(error.stack && hasLoggableStack(error) ? { stack: readableStack(error.stack) } : {}),
    ...(error.cause !== undefined && depth < 3 ? { cause: errorFields(error.cause, depth + 1) } : {}),
  };
};

/**
 * Exactly one structured line per request, `"message": "request"`, when it completes: method, path,
 * status, duration, request id, the operation's own keys, and for a 5xx the server-side error (name,
 * message, cause chain), which never reaches the caller. Registered first, so it sees the final
 * response of both the success and the error path.
 */
export const accessLog = (logger: Logger): HttpMiddleware => {
  // Fixed at INFO whatever POWERTOOLS_LOG_LEVEL says: the line is the access record, not a diagnostic
  // to filter away (and Powertools would send WARN/ERROR to stderr, splitting one stream in two).
  const accessLogger = logger.createChild({ logLevel: 'INFO' });
  const write = (request: Parameters<NonNullable<HttpMiddleware['after']>>[0]): void => {
    let line = lines.get(request.context);
    if (line === undefined) lines.set(request.context, (line = { startedAt: performance.now(), fields: {}, written: false }));
    if (line.written) return;
    line.written = true;
    const status = request.response?.statusCode ?? 200;
    const requestId = request.context.awsRequestId;
    accessLogger.info('request', {
      http_method: requestMethod(request.event),
      path: requestPath(request.event),
      status_code: status,
      duration_ms: Math.round((performance.now() - line.startedAt) * 1000) / 1000,
      ...(requestId ? { request_id: requestId } : {}),
      ...line.fields,
      ...(status >= 500 && request.error !== undefined && request.error !== null ? { error: errorFields(request.error) } : {}),
    });
  };
  return {
    before: (request) => {
      lines.set(request.context, { startedAt: performance.now(), fields: {}, written: false });
    },
    after: write,
    onError: write,
  };
};
