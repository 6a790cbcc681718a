import { createHash } from 'node:crypto';
import type { InventoryConfig } from '../config.ts';

/**
 * The cluster key of an inventory's device list (`devices:…` for the computers, `mobile-devices:…`
 * for the mobile devices, whose lists share the inventory's hash slot). Its version names the
 * value's format (the codec's FORMAT_VERSION, changed together), so code writing another format
 * never reads this one; its scope names the inventory (base URL and the API client or user reading
 * it), so stages or services sharing one cluster never serve each other's lists. The scope is the
 * key's hash tag, so its parts and its refresh lock share one hash slot of a Redis Cluster.
 */
export const deviceListClusterKey = (config: InventoryConfig, prefix: 'devices' | 'mobile-devices' = 'devices'): string => {
  const principal = config.auth.kind === 'oauth' ? config.auth.clientId : config.auth.username;
  return `${prefix}:v6:{${createHash('sha256').update(`${config.inventoryUrl}\n${principal}`).digest('hex').slice(0, 16)}}`;
};
