import { callUpstreamRetrying, type RetryContext } from '../upstream/upstream-retry.ts';
import { callSignals, excerpt, redactUrl, UpstreamCallError, type CallLimits, type UpstreamResponse } from '../upstream/upstream-call.ts';
import { retryAfterSecondsOf, UpstreamError, UpstreamFailure } from './upstream-error.ts';

/** The base URL as the log may show it: any user:password in it removed. */
export const loggableBase = (baseUrl: string): string => redactUrl(baseUrl).replace(/\/+$/, '');

/**
 * One request to Jamf Pro (the shared upstream call, retried while it ends transiently), failing as
 * the device layer's UpstreamError: out of time (its own timeout, or the read's deadline) as
 * TimedOut, a body over its cap as Unreadable (naming the cap), anything else as Unavailable.
 * `label` names the call in the log (method and path, never credentials).
 */
export const callJamf = async (
  label: string,
  url: string,
  init: RequestInit,
  limits: CallLimits,
  retry: RetryContext,
): Promise<UpstreamResponse> => {
  try {
    return await callUpstreamRetrying(url, init, limits, retry);
  } catch (cause) {
    if (cause instanceof UpstreamCallError && cause.failure === 'too-large') {
      throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label}: ${cause.message}`, cause });
    }
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
export const withinDeadline = async <T>(
  label: string,
  limits: Pick<CallLimits, 'signal' | 'timeoutMs'>,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> => {
  const { signal } = callSignals(limits);
  try {
    return await work(signal);
  } catch (cause) {
    if (signal.aborted) throw new UpstreamError(UpstreamFailure.TimedOut, { detail: `${label} did not complete in time`, cause });
    throw cause;
  }
};

/** An error code as OAuth (`invalid_client`) and Jamf (`INVALID_TOKEN`) write them: nothing else. */
const ERROR_CODE = /^(?:[a-z_]{1,64}|[A-Z_]{1,64})$/;

/**
 * What the log shows of a token endpoint's error body: its error codes alone (OAuth's `error`, Jamf's
 * `errors[].code`). A server or proxy answering a failed token request may repeat the request, and
 * that holds the client secret or the basic credentials, so no other text of it is kept.
 */
const tokenErrorCodes = (text: string): string => {
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  const record = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; errors?: unknown };
  const codes = [
    record.error,
    ...(Array.isArray(record.errors) ? record.errors.map((entry: unknown) => (entry as { code?: unknown } | null)?.code) : []),
  ].filter((code): code is string => typeof code === 'string' && ERROR_CODE.test(code));
  return codes.length > 0 ? `error ${codes.join(', ')}` : '(body not logged: it may repeat the credentials)';
};

/**
 * Which response a body belongs to, for what of it the log may show: a token endpoint's (it may
 * repeat the request, credentials included), or an inventory page's with the request's own values
 * (its bearer token) to hide.
 */
export type BodyOrigin = 'token-endpoint' | { hiding: readonly string[] };

/**
 * The error for a status the caller did not expect. 401/403 (and a 400 from a token endpoint, as
 * OAuth answers `invalid_client`) mean our credentials or token were refused; a 404 means
 * INVENTORY_URL does not point at a Jamf Pro server, unless the path answered this client before
 * (`known`): then the server failed. The log gets a token endpoint's error codes only, and an
 * inventory body with the request's values hidden.
 */
export const statusError = (label: string, response: UpstreamResponse, origin: BodyOrigin, { known = false } = {}): UpstreamError => {
  const shown = origin === 'token-endpoint' ? tokenErrorCodes(response.text) : excerpt(response.text, origin.hiding);
  const detail = `${label} answered ${response.status}: ${shown}`;
  const { status } = response;
  if (status === 429) {
    const retryAfterSeconds = retryAfterSecondsOf(response.headers.get('retry-after'));
    return new UpstreamError(UpstreamFailure.RateLimited, { detail, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
  }
  if ((status === 400 && origin === 'token-endpoint') || status === 401 || status === 403)
    return new UpstreamError(UpstreamFailure.CredentialsRejected, { detail });
  if (status === 404 && known) return new UpstreamError(UpstreamFailure.Unavailable, { detail: `${detail} (this path answered before)` });
  if (status === 404) return new UpstreamError(UpstreamFailure.Misconfigured, { detail });
  return new UpstreamError(UpstreamFailure.Unavailable, { detail });
};

/**
 * Parses a JSON body. Nothing of a token endpoint's body is excerpted (it could hold a token); an
 * inventory body is, with the request's values hidden. JSON.parse quotes the body in its message,
 * so that error is never kept as a cause.
 */
export const parseJsonBody = (label: string, response: UpstreamResponse, origin: BodyOrigin): unknown => {
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    const excerpted = origin === 'token-endpoint' ? '' : `: ${excerpt(response.text, origin.hiding)}`;
    throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label} sent a body that is not JSON${excerpted}` });
  }
};
