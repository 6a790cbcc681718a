import type { Logger } from '@aws-lambda-powertools/logger';

export interface AccessLogEntry {
  httpMethod: string;
  path: string;
  statusCode: number;
  durationMs: number;
  requestId: string | undefined;
  /** Extra keys the operation adds to its own line, e.g. `cache_tier` on GET /devices. */
  annotations: Record<string, unknown>;
  /** Server-side details of a failure; never part of the response. */
  error: unknown;
}

const describeError = (error: unknown, depth = 0): Record<string, unknown> | string => {
  if (!(error instanceof Error)) return String(error);
  return {
    name: error.name,
    message: error.message,
    ...(error.stack ? { stack: error.stack } : {}),
    ...(error.cause !== undefined && depth < 3 ? { cause: describeError(error.cause, depth + 1) } : {}),
  };
};

/** Writes the one access-log line of a request (CONTRACT §4). */
export const writeAccessLog = (logger: Logger, entry: AccessLogEntry): void => {
  const fields = {
    http_method: entry.httpMethod,
    path: entry.path,
    status_code: entry.statusCode,
    duration_ms: Math.round(entry.durationMs * 1000) / 1000,
    ...(entry.requestId ? { request_id: entry.requestId } : {}),
    ...entry.annotations,
    ...(entry.error === undefined ? {} : { error: describeError(entry.error) }),
  };
  // Always INFO: Powertools sends WARN/ERROR to stderr, and the access log is one stream whose
  // `status_code` (and `error` for 5xx) already says how the request ended.
  logger.info('request', fields);
};
