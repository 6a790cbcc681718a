import { callSignals, callUpstream, excerpt, redactUrl, UpstreamCallError, type CallLimits, type UpstreamResponse } from '../upstream/upstream-call.ts';
import { retryAfterSecondsOf, UpstreamError, UpstreamFailure } from './upstream-error.ts';

/** The base URL as the log may show it: any user:password in it removed. */
export const loggableBase = (baseUrl: string): string => redactUrl(baseUrl).replace(/\/+$/, '');

/**
 * One exchange with Jamf Pro (the shared upstream call), failing as the device layer's UpstreamError:
 * out of time (its own timeout, or the read's deadline) as TimedOut, anything else as Unavailable.
 * `label` names the call in the log (method and path, never credentials).
 */
export const callJamf = async (label: string, url: string, init: RequestInit, limits: CallLimits): Promise<UpstreamResponse> => {
  try {
    return await callUpstream(url, init, limits);
  } catch (cause) {
    if (cause instanceof UpstreamCallError && cause.failure !== 'unreachable') {
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
  const { signal } = callSignals(limits);
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
    const retryAfterSeconds = retryAfterSecondsOf(response.headers.get('retry-after'));
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
