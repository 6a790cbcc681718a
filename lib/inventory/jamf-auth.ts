import { isPlainObject } from '../values/plain-object.ts';
import { callJamf, loggableBase, parseJsonBody, statusError, withinDeadline } from './jamf-call.ts';
import type { BodyCap, CallLimits } from '../upstream/upstream-call.ts';
import type { RetryContext } from '../upstream/upstream-retry.ts';
import { UpstreamError, UpstreamFailure } from './upstream-error.ts';
import { afterNotFound, makeVersionedEndpoint, OAUTH_TOKEN_PATHS } from './jamf-endpoints.ts';

/**
 * Jamf Pro's bearer tokens: how one is obtained (`makeTokenSource`), and how a read's token is renewed
 * when Jamf refuses it, for the pages read under it (`withReauthentication`).
 */

/** Basic credentials for a token: the same path in every Jamf Pro version this service reads. */
const BASIC_TOKEN_PATH = '/api/v1/auth/token';

/** A token endpoint answers a few hundred bytes; anything near this is not a token. */
const TOKEN_BODY_CAP: BodyCap = { name: 'a Jamf token answer', bytes: 1024 * 1024 };

/** How the service proves itself to Jamf Pro; secrets are fetched only when a token is needed. */
export type JamfAuth =
  | { kind: 'oauth'; clientId: string; clientSecret: (signal: AbortSignal) => Promise<string> }
  | { kind: 'basic'; username: string; password: (signal: AbortSignal) => Promise<string> };

const tokenFrom = (body: unknown, field: 'access_token' | 'token'): string | undefined => {
  const value = isPlainObject(body) ? body[field] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * Obtains bearer tokens: OAuth client credentials at `/api/v1/oauth/token`, or at `/api/oauth/token`
 * on a Jamf Pro that answers 404 there, or basic auth at `/api/v1/auth/token`. The path that issued
 * a token is kept for the source's life. Token endpoint bodies never reach the log when the call
 * succeeded, as they hold the token.
 */
export const makeTokenSource = (
  baseUrl: string,
  auth: JamfAuth,
): ((limits: Omit<CallLimits, 'bodyCap'>, retry: RetryContext) => Promise<string>) => {
  const endpoint = makeVersionedEndpoint(auth.kind === 'oauth' ? OAUTH_TOKEN_PATHS : [BASIC_TOKEN_PATH]);
  const labelOf = (path: string) => `POST ${loggableBase(baseUrl)}${path}`;

  return async (callLimits, retry) => {
    const limits: CallLimits = { ...callLimits, bodyCap: TOKEN_BODY_CAP };
    // Read once for every path tried (and every retry).
    const secret = await withinDeadline(`${labelOf(endpoint.first())} (reading its secret)`, limits, (signal) =>
      auth.kind === 'oauth' ? auth.clientSecret(signal) : auth.password(signal),
    );
    const init = (): RequestInit =>
      auth.kind === 'oauth'
        ? {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
            body: new URLSearchParams({ grant_type: 'client_credentials', client_id: auth.clientId, client_secret: secret }),
          }
        : {
            method: 'POST',
            headers: { Authorization: `Basic ${Buffer.from(`${auth.username}:${secret}`).toString('base64')}`, Accept: 'application/json' },
          };
    const answer = await endpoint.send((path) => callJamf(labelOf(path), `${baseUrl}${path}`, init(), limits, retry));
    const { response } = answer;
    const label = `${labelOf(answer.path)}${afterNotFound(answer.notFound)}`;
    if (response.status < 200 || response.status >= 300) throw statusError(label, response, 'token-endpoint', { known: answer.known });
    const token = tokenFrom(parseJsonBody(label, response, 'token-endpoint'), auth.kind === 'oauth' ? 'access_token' : 'token');
    if (token === undefined) throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label} answered 200 without a token` });
    endpoint.answered(answer.path);
    return token;
  };
};

/** A page of one of Jamf Pro's inventories: the inventory's size and the page's records. */
export interface JamfPage {
  totalCount: number;
  results: unknown[];
}

/**
 * An inventory page, or the news that upstream refused the token (401), which the read handles, or
 * refused a filter (400 to a filtered request).
 */
export type JamfPageResult =
  { kind: 'page'; page: JamfPage } | { kind: 'token-rejected'; detail: string } | { kind: 'filter-refused'; detail: string };

/** Jamf answered a filtered request 400: it cannot filter by those fields. */
export class FilterRefusedError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'FilterRefusedError';
  }
}

/** One page of a read, under the read's current token. */
export type PageReader = (page: number, size: number, signal: AbortSignal) => Promise<JamfPage>;

export interface ReauthenticationDeps {
  authenticate: (signal: AbortSignal) => Promise<string>;
  fetchPage: (token: string, page: number, size: number, signal: AbortSignal, since?: string) => Promise<JamfPageResult>;
  onAuthFailure: (() => void) | undefined;
  signal: AbortSignal;
}

/**
 * One read's token, renewed when upstream refuses it, shared by concurrent pages so four
 * simultaneous 401s renew it once. A token that served a page and is then refused has expired (a
 * long refresh outlives several short-lived tokens): it is renewed, as often as that happens. Two
 * tokens in a row refused before either served a page fail the read, since upstream then refuses the
 * credentials themselves; one alone may have expired on its way, or been refused for a page while
 * another page it served was still being answered. So renewals stay below two per page served.
 */
export const withReauthentication = (deps: ReauthenticationDeps) => {
  const tokens: { token: Promise<string>; served: boolean }[] = [];
  const issue = (): void => {
    const token = deps.authenticate(deps.signal);
    // Every page awaits the current token; this only keeps a failure from being "unhandled" meanwhile.
    token.catch(() => undefined);
    tokens.push({ token, served: false });
  };
  issue();

  return async (page: number, size: number, signal: AbortSignal, since?: string): Promise<JamfPage> => {
    for (;;) {
      const generation = tokens.length - 1;
      const current = tokens[generation]!;
      const result = await deps.fetchPage(await current.token, page, size, signal, since);
      if (result.kind === 'page') {
        current.served = true;
        return result.page;
      }
      if (result.kind === 'filter-refused') throw new FilterRefusedError(result.detail);
      // Reported once per refused token, however many pages it failed.
      if (generation === tokens.length - 1) {
        deps.onAuthFailure?.();
        if (generation > 0 && !current.served && !tokens[generation - 1]!.served) {
          throw new UpstreamError(UpstreamFailure.CredentialsRejected, {
            detail: `token refused after re-authentication: ${result.detail}`,
          });
        }
        issue();
      }
    }
  };
};
