import { isPlainObject } from '../values/plain-object.ts';
import { callJamf, loggableBase, parseJsonBody, statusError, withinDeadline } from './jamf-call.ts';
import type { BodyCap, CallLimits } from '../upstream/upstream-call.ts';
import type { RetryContext } from '../upstream/upstream-retry.ts';
import { UpstreamError, UpstreamFailure } from './upstream-error.ts';
import { afterNotFound, makeVersionedEndpoint, OAUTH_TOKEN_PATHS } from './jamf-endpoints.ts';

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
