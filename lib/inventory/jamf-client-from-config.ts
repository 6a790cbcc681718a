import type { InventoryAuthConfig, InventoryConfig } from '../config.ts';
import { resolveSecret } from '../runtime/secrets.ts';
import type { JamfAuth } from './jamf-auth.ts';
import { makeJamfClient, type JamfClient, type JamfInventoryEndpoint } from './jamf-client.ts';

/** The configured auth, with secrets resolved (SSM or inline) only when a token is requested. */
const jamfAuthFromConfig = (auth: InventoryAuthConfig): JamfAuth =>
  auth.kind === 'oauth'
    ? { kind: 'oauth', clientId: auth.clientId, clientSecret: (signal) => resolveSecret(auth.clientSecret, signal) }
    : { kind: 'basic', username: auth.username, password: (signal) => resolveSecret(auth.password, signal) };

export const makeJamfClientFromConfig = (
  config: InventoryConfig,
  onAuthFailure: () => void,
  inventory?: JamfInventoryEndpoint,
): JamfClient => makeJamfClient({ baseUrl: config.inventoryUrl, auth: jamfAuthFromConfig(config.auth), onAuthFailure, inventory });
