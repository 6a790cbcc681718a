/**
 * One exchange with an upstream HTTP API (the Jamf Pro inventory, the ticketing destination's user
 * listing), the same way for every client: bounded by its own timeout and by the caller's signal,
 * body included; redirects are not followed (an `Authorization` header must not travel to
 * another host), so a 3xx comes back as a status like any other, unless a caller that sends no
 * credentials asks for them (`redirect: 'follow'`). What a status means is the client's to decide.
 */
export interface UpstreamResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface CallLimits {
  /** The caller's signal: its deadline, or its abort when a sibling request failed. */
  signal?: AbortSignal | undefined;
  /** The most this one exchange (headers and body) may take. */
  timeoutMs: number;
}

/** `timed-out`: this call's own timeout; `aborted`: the caller's signal; `unreachable`: a network failure. */
export type UpstreamCallFailure = 'timed-out' | 'aborted' | 'unreachable';

/** The exchange did not complete. The message names the URL without credentials. */
export class UpstreamCallError extends Error {
  readonly failure: UpstreamCallFailure;

  constructor(failure: UpstreamCallFailure, message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'UpstreamCallError';
    this.failure = failure;
  }
}

/** The call's own timeout, and the signal that ends it: that timeout or the caller's signal, whichever fires first. */
export const callSignals = (limits: CallLimits): { timeout: AbortSignal; signal: AbortSignal } => {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  return { timeout, signal: limits.signal === undefined ? timeout : AbortSignal.any([limits.signal, timeout]) };
};

/**
 * How every upstream request names the service (unless a caller names it otherwise): public feeds
 * such as SOFA ask integrations to identify themselves, and an operator reading Jamf's or the
 * ticketing destination's access log can tell these requests apart.
 */
const USER_AGENT = 'device-users-import-bundle';

export const callUpstream = async (url: string, init: RequestInit, limits: CallLimits): Promise<UpstreamResponse> => {
  const { timeout, signal } = callSignals(limits);
  let headers: Headers;
  try {
    headers = new Headers(init.headers);
  } catch {
    // The platform's message quotes the offending value, which may be a token: none of it is kept.
    throw new UpstreamCallError('unreachable', `${redactUrl(url)} was not called: a request header is not a valid header value`, undefined);
  }
  if (!headers.has('user-agent')) headers.set('user-agent', USER_AGENT);
  try {
    signal.throwIfAborted();
    const response = await fetch(url, { ...init, headers, signal, redirect: init.redirect ?? 'manual' });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (cause) {
    const shown = redactUrl(url);
    if (limits.signal?.aborted) throw new UpstreamCallError('aborted', `${shown} was abandoned`, cause);
    if (timeout.aborted) throw new UpstreamCallError('timed-out', `${shown} timed out after ${limits.timeoutMs} ms`, cause);
    throw new UpstreamCallError('unreachable', `${shown} was unreachable`, cause);
  }
};

// Query parameters that carry credentials by their name (a feed mirror's `?token=`, a presigned
// `X-Amz-Signature`, an OAuth `code`, a `jwt`, a `pwd`).
const SECRET_PARAMETER = /token|secret|pass|pwd|jwt|key|sig|auth|credential|session|code/i;

/**
 * A URL as messages and logs may show it: any `user:password@` and `#fragment` removed, and the value
 * of any query parameter whose name says it is a credential replaced by `redacted`. Other parameters
 * (Jamf's `page`) stay: they say which request failed.
 */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.hash = '';
    for (const name of new Set(parsed.searchParams.keys())) if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, 'redacted');
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
};

const EXCERPT_CHARS = 200;

/**
 * A short, single-line excerpt of an upstream body for the log. `hidden` are values the request sent
 * (its bearer token) that an error page may repeat: each is replaced before anything is cut, so not
 * even a part of one is kept. A body that may repeat more than that (a token endpoint's answer to a
 * request holding the secret) is never excerpted at all.
 */
export const excerpt = (text: string, hidden: readonly string[] = []): string => {
  const shown = hidden.reduce((body, value) => (value === '' ? body : body.replaceAll(value, '[redacted]')), text);
  const flat = shown.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
};

/**
 * `Retry-After` (RFC 9110 §10.2.3: delta-seconds or an HTTP date) as milliseconds from `now`;
 * undefined when absent or unreadable. An HTTP date names its weekday first: bare numbers such as
 * `-5` would otherwise parse as years.
 */
export const retryAfterMs = (header: string | null, now = Date.now()): number | undefined => {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = /^[A-Za-z]{3}/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};
