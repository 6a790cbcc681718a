import { isPlainObject } from '../plain-object.ts';
import { callJamf, loggableBase, parseJsonBody, statusError, withinDeadline } from './jamf-call.ts';
import type { CallLimits } from '../upstream/upstream-call.ts';
import { UpstreamError, UpstreamFailure } from './upstream-error.ts';

/** How the service proves itself to Jamf Pro; secrets are fetched only when a token is needed. */
export type JamfAuth =
  | { kind: 'oauth'; clientId: string; clientSecret: (signal: AbortSignal) => Promise<string> }
  | { kind: 'basic'; username: string; password: (signal: AbortSignal) => Promise<string> };

const tokenFrom = (body: unknown, field: 'access_token' | 'token'): string | undefined => {
  const value = isPlainObject(body) ? body[field] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * Obtains a bearer token: OAuth client credentials at `/api/oauth/token`, or basic
 * auth at `/api/v1/auth/token`. Token endpoint bodies never reach the log when the call succeeded,
 * as they hold the token.
 */
export const requestToken = async (baseUrl: string, auth: JamfAuth, limits: CallLimits): Promise<string> => {
  const label = `POST ${loggableBase(baseUrl)}${auth.kind === 'oauth' ? '/api/oauth/token' : '/api/v1/auth/token'}`;
  const secret = () => withinDeadline(`${label} (reading its secret)`, limits, (signal) =>
    auth.kind === 'oauth' ? auth.clientSecret(signal) : auth.password(signal),
  );
  const response =
    auth.kind === 'oauth'
      ? await callJamf(
          label,
          `${baseUrl}/api/oauth/token`,
          {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
            body: new URLSearchParams({ grant_type: 'client_credentials', client_id: auth.clientId, client_secret: await secret() }),
          },
          limits,
        )
      : await callJamf(
          label,
          `${baseUrl}/api/v1/auth/token`,
          {
            method: 'POST',
            headers: {
              Authorization: `Basic ${Buffer.from(`${auth.username}:${await secret()}`).toString('base64')}`,
              Accept: 'application/json',
            },
          },
          limits,
        );
  if (response.status < 200 || response.status >= 300) throw statusError(label, response, 'token-endpoint');
  const token = tokenFrom(parseJsonBody(label, response, 'token-endpoint'), auth.kind === 'oauth' ? 'access_token' : 'token');
  if (token === undefined) throw new UpstreamError(UpstreamFailure.Unreadable, { detail: `${label} answered 200 without a token` });
  return token;
};
