import { parseRetryAfter, UpstreamError, UpstreamFailure } from './upstream-error.ts';

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface CallLimits {
  /** The whole read's signal: its deadline, and the abort when a sibling request failed. */
  signal: AbortSignal;
  /** The most this one request (headers and body) may take. */
  timeoutMs: number;
}

const EXCERPT_CHARS = 200;

/** A short, single-line excerpt of an upstream body for the log. */
export const excerpt = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
};

/** The base URL as the log may show it: any user:password in it removed. */
export const loggableBase = (baseUrl: string): string => {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return '(invalid INVENTORY_URL)';
  }
};

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');

/**
 * One upstream HTTP exchange, body included, bounded by its own timeout and the read's signal.
 * `label` names the call in the log (method and path, never credentials).
 */
export const callUpstream = async (label: string, url: string, init: RequestInit, limits: CallLimits): Promise<UpstreamResponse> => {
  const signal = AbortSignal.any([limits.signal, AbortSignal.timeout(limits.timeoutMs)]);
  try {
    signal.throwIfAborted();
    // A redirect would carry the Authorization header elsewhere; INVENTORY_URL must name the server itself.
    const response = await fetch(url, { ...init, signal, redirect: 'error' });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (cause) {
    if (isAbort(cause) || signal.aborted) {
      throw new UpstreamError(UpstreamFailure.TimedOut, { detail: `${label} did not complete in time`, cause });
    }
    throw new UpstreamError(UpstreamFailure.Unavailable, { detail: `${label} failed: network error`, cause });
  }
};

/**
 * Work other than an HTTP exchange (reading a secret from SSM) bounded like one: by this call's
 * timeout and the read's signal, failing as TimedOut.
 */
export const withinDeadline = async <T>(label: string, limits: CallLimits, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
  const signal = AbortSignal.any([limits.signal, AbortSignal.timeout(limits.timeoutMs)]);
  try {
    return await work(signal);
  } catch (cause) {
    if (signal.aborted) throw new UpstreamError(UpstreamFailure.TimedOut, { detail: `${label} did not complete in time`, cause });
    throw cause;
  }
};

/**
 * The error for a status the caller did not expect. 401/403 (and a 400 from a token endpoint, as
 * OAuth answers `invalid_client`) mean our credentials or token were refused; a 404 means
 * INVENTORY_URL does not point at a Jamf Pro server.
 */
export const statusError = (label: string, response: UpstreamResponse, endpoint: 'token' | 'inventory'): UpstreamError => {
  const detail = `${label} answered ${response.status}: ${excerpt(response.text)}`;
  const { status } = response;
  if (status === 429) {
    const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
    return new UpstreamError(UpstreamFailure.RateLimited, { detail, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
  }
  if ((status === 400 && endpoint === 'token') || status === 401 || status === 403) return new UpstreamError(UpstreamFailure.CredentialsRejected, { detail });
  if (status === 404) return new UpstreamError(UpstreamFailure.Misconfigured, { detail });
  return new UpstreamError(UpstreamFailure.Unavailable, { detail });
};

/** Parses a JSON body; `showBody` is false where a body could hold a token. */
export const parseJsonBody = (label: string, response: UpstreamResponse, showBody: boolean): unknown => {
  try {
    return JSON.parse(response.text) as unknown;
  } catch (cause) {
    // JSON.parse quotes the body in its message, so the cause is kept only where the body may be shown.
    if (!showBody) throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label} sent a body that is not JSON` });
    throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label} sent a body that is not JSON: ${excerpt(response.text)}`, cause });
  }
};
