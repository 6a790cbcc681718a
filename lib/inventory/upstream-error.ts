import { AppError } from '../errors.ts';
import { retryAfterMs } from '../upstream/upstream-call.ts';

/** What went wrong with the upstream inventory, each variant with its status and generic message. */
export const UpstreamFailure = {
  CredentialsRejected: 'credentials-rejected',
  Unavailable: 'unavailable',
  TimedOut: 'timed-out',
  RateLimited: 'rate-limited',
  Unreadable: 'unreadable',
  Misconfigured: 'misconfigured',
} as const;
export type UpstreamFailure = (typeof UpstreamFailure)[keyof typeof UpstreamFailure];

const RESPONSES: Record<UpstreamFailure, { status: number; message: string }> = {
  'credentials-rejected': { status: 502, message: 'The device inventory rejected the service credentials' },
  unavailable: { status: 502, message: 'The device inventory is unavailable' },
  'timed-out': { status: 504, message: 'The device inventory did not answer in time' },
  'rate-limited': { status: 503, message: 'The device inventory is busy; retry later' },
  unreadable: { status: 502, message: 'The device inventory sent an unreadable response' },
  misconfigured: { status: 500, message: 'Service misconfigured' },
};

/** Seconds a caller is told to wait when upstream rate-limits us without saying for how long. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

export interface UpstreamErrorOptions {
  /** For the log only: what was called and what came back (never a token or secret). */
  detail: string;
  cause?: unknown;
  /** Rate limited only: upstream's `Retry-After` in seconds. */
  retryAfterSeconds?: number;
}

/**
 * The one error of the device layer's upstream reads. The caller sees the variant's status and
 * generic message (plus `Retry-After` when rate limited); `detail` and `cause` reach the server
 * log only.
 */
export class UpstreamError extends AppError {
  readonly failure: UpstreamFailure;

  constructor(failure: UpstreamFailure, options: UpstreamErrorOptions) {
    const { status, message } = RESPONSES[failure];
    const headers =
      failure === UpstreamFailure.RateLimited
        ? { 'Retry-After': String(options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) }
        : undefined;
    super(status, message, {
      cause: options.cause,
      ...(headers ? { headers } : {}),
      logMessage: `Upstream inventory ${failure}: ${options.detail}`,
    });
    this.failure = failure;
  }
}

/** The most a caller is told to wait, whatever upstream asked for. */
const MAX_RETRY_AFTER_SECONDS = 3600;

/** Upstream's `Retry-After` in whole seconds (capped at an hour), when it is usable. */
export const retryAfterSecondsOf = (header: string | null, now = Date.now()): number | undefined => {
  const ms = retryAfterMs(header, now);
  return ms === undefined ? undefined : Math.min(Math.ceil(ms / 1000), MAX_RETRY_AFTER_SECONDS);
};
