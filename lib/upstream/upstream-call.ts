/**
 * One exchange with an upstream HTTP API (the Jamf Pro inventory, the ticketing destination's user
 * listing), the same way for every client: bounded by its own timeout and by the caller's signal,
 * body included, and the body by its size cap, checked as it streams in; redirects are not followed (an `Authorization` header must not travel to
 * another host), so a 3xx comes back as a status like any other, unless a caller that sends no
 * credentials asks for them (`redirect: 'follow'`). What a status means is the client's to decide.
 */
export interface UpstreamResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The most a response body may hold, and what the error calls that cap (`a Jamf page`). */
export interface BodyCap {
  name: string;
  bytes: number;
}

export interface CallLimits {
  /** The caller's signal: its deadline, or its abort when a sibling request failed. */
  signal?: AbortSignal | undefined;
  /** The most this one exchange (headers and body) may take. */
  timeoutMs: number;
  /** Past it the body is not read further: a runaway upstream never fills the Lambda's memory. */
  bodyCap: BodyCap;
}

/**
 * `timed-out`: this call's own timeout; `aborted`: the caller's signal; `unreachable`: a network
 * failure; `too-large`: the body passed its cap.
 */
export type UpstreamCallFailure = 'timed-out' | 'aborted' | 'unreachable' | 'too-large';

/** How an unreachable upstream failed, where the platform says: refused, or cut off (reset, closed mid-answer). */
export type ConnectionLoss = 'refused' | 'reset';

/** The exchange did not complete. The message names the URL without credentials. */
export class UpstreamCallError extends Error {
  readonly failure: UpstreamCallFailure;
  /** `unreachable` only: the connection was refused or reset, which a retry may get past. */
  readonly connection: ConnectionLoss | undefined;

  constructor(failure: UpstreamCallFailure, message: string, cause: unknown, connection?: ConnectionLoss) {
    super(message, { cause });
    this.name = 'UpstreamCallError';
    this.failure = failure;
    this.connection = connection;
  }
}

const MIB = 1024 * 1024;

/** A cap as messages write it: `64 MiB`, else in bytes. */
const capText = (bytes: number): string => (bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`);

// The platform's codes (Node's and undici's) for a connection refused, or lost before the answer was whole.
const CONNECTION_CODES: Readonly<Record<string, ConnectionLoss>> = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
};

/** The platform's own timeouts (connecting, the OS's, undici's for headers and body): an attempt that timed out. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The first platform code a fetch failure's causes name that `wanted` knows (fetch wraps them, happy eyeballs aggregates them); a bounded walk. */
const platformCodeOf = (error: unknown, wanted: (code: string) => boolean): string | undefined => {
  const queue: unknown[] = [error];
  for (let seen = 0; seen < 16 && queue.length > 0; seen += 1) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null) continue;
    const { code, cause, errors } = next as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && wanted(code)) return code;
    queue.push(cause, ...(Array.isArray(errors) ? errors : []));
  }
  return undefined;
};

/** The body passed its cap: thrown by `readCapped`, turned into the call's `too-large`. */
class BodyTooLarge extends Error {
  readonly detail: string;
  constructor(detail: string) {
    super(detail);
    this.name = 'BodyTooLarge';
    this.detail = detail;
  }
}

/**
 * The body as text, read chunk by chunk and decoded as it comes (UTF-8, as `text()` would), never
 * more than `cap.bytes`: a `Content-Length` above it is refused before any of it is read, and a
 * stream that passes it is cancelled there.
 */
const readCapped = async (response: Response, cap: BodyCap): Promise<string> => {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > cap.bytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLarge(`its Content-Length ${declared} is over the ${capText(cap.bytes)} cap of ${cap.name}`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let received = 0;
  // Ends with the stream, at the cap, or when the call's signal aborts the read.
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > cap.bytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge(`its body passed the ${capText(cap.bytes)} cap of ${cap.name}`);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
};

/** The call's own timeout, and the signal that ends it: that timeout or the caller's signal, whichever fires first. */
export const callSignals = (limits: Pick<CallLimits, 'signal' | 'timeoutMs'>): { timeout: AbortSignal; signal: AbortSignal } => {
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
    return { status: response.status, headers: response.headers, text: await readCapped(response, limits.bodyCap) };
  } catch (cause) {
    const shown = redactUrl(url);
    if (cause instanceof BodyTooLarge) throw new UpstreamCallError('too-large', `${shown} was not read: ${cause.detail}`, undefined);
    if (limits.signal?.aborted) throw new UpstreamCallError('aborted', `${shown} was abandoned`, cause);
    if (timeout.aborted) throw new UpstreamCallError('timed-out', `${shown} timed out after ${limits.timeoutMs} ms`, cause);
    const platformTimeout = platformCodeOf(cause, (code) => TIMEOUT_CODES.has(code));
    if (platformTimeout !== undefined) throw new UpstreamCallError('timed-out', `${shown} timed out (${platformTimeout})`, cause);
    const lossCode = platformCodeOf(cause, (code) => CONNECTION_CODES[code] !== undefined);
    const connection = lossCode === undefined ? undefined : CONNECTION_CODES[lossCode];
    const how = connection === 'refused' ? ' (connection refused)' : connection === 'reset' ? ' (connection lost)' : '';
    throw new UpstreamCallError('unreachable', `${shown} was unreachable${how}`, cause, connection);
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
