import type { Env } from './offline-params.ts';
import { present } from '../../lib/env-values.ts';
import { LOCAL_AWS_ENV } from './local-aws.ts';

/** What a caller of the local stack needs: the HTTP API needs all three, one invoked function fewer. */
export type LocalService = 'inventory' | 'users' | 'storage';
export const ALL_SERVICES: ReadonlySet<LocalService> = new Set(['inventory', 'users', 'storage']);

/** The newest macOS of the demo feed's copy, so the demo inventory has latest Macs without the feed too. */
const DEFAULT_LATEST_OS_VERSION = '26.6.2';
/** The newest iOS of the demo iOS feed, so the demo mobile devices have latest iPhones and iPads without the feed too. */
const DEFAULT_LATEST_IOS_VERSION = '26.6.1';
/**
 * `LATEST_OS_FEED_URL=demo` (`LATEST_IOS_FEED_URL=demo`, `LATEST_TVOS_FEED_URL=demo`): serve the
 * demo SOFA feeds (demo/sofa/) and point the devices (the mobile devices) at the macOS (iOS, tvOS) one.
 */
const DEMO_FEED_VALUE = 'demo';
export const DEFAULT_USERS_TABLE = 'users-local';
export const DEFAULT_IDEMPOTENCY_TABLE = 'idempotency-local';
export const DEFAULT_IMPORT_BUCKET = 'import-local';

/**
 * A variable of the local stack that picks one of `choices` (value → what it means): unset or blank
 * is none, and anything else stops the start with a message naming each choice.
 */
const localChoice = <Choice extends string>(env: Env, name: string, choices: Readonly<Record<Choice, string>>): Choice | undefined => {
  const value = env[name]?.trim() ?? '';
  if (value === '') return undefined;
  if (!Object.hasOwn(choices, value)) {
    const named = Object.entries(choices).map(([choice, meaning]) => `"${choice}" (${String(meaning)})`);
    throw new Error(`${name} must be ${named.join(' or ')}, got "${value}"`);
  }
  return value as Choice;
};

/**
 * `LOCAL_REDIS`: a local Redis for the devices to cache in, where REDIS_URL is unset: `cluster`, a
 * TLS Redis Cluster with an ACL user as ElastiCache runs one (scripts/local/redis-cluster.ts), or
 * `node`, one plain redis-server.
 */
export type LocalRedisKind = 'cluster' | 'node';
export const localRedisKind = (env: Env): LocalRedisKind | undefined =>
  localChoice<LocalRedisKind>(env, 'LOCAL_REDIS', { cluster: 'a local TLS Redis Cluster', node: 'one plain redis-server' });

/**
 * `DEMO_JAMF_VERSION`: which Jamf Pro the demo inventory is (demo/fake-jamf.ts): `current` (11.30
 * and later, the default) or `legacy` (before 11.30), to see the service find an older one's paths.
 */
export type DemoJamfVersion = 'current' | 'legacy';
export const demoJamfVersion = (env: Env): DemoJamfVersion | undefined =>
  localChoice<DemoJamfVersion>(env, 'DEMO_JAMF_VERSION', { current: 'Jamf Pro 11.30 and later', legacy: 'before 11.30' });

export interface DefaultsPlan {
  /** A demo Jamf-compatible inventory, because INVENTORY_URL is unset: the Jamf Pro version it is. */
  inventory: DemoJamfVersion | undefined;
  /** A local DynamoDB-compatible store, because no DynamoDB endpoint and no table name is set. */
  users: boolean;
  /** A local S3-compatible store, because no S3 endpoint is set. */
  storage: boolean;
  /** The demo latest-OS feed, because LATEST_OS_FEED_URL is `demo`. */
  feed: boolean;
  /** The demo latest-iOS feed, because LATEST_IOS_FEED_URL is `demo`. */
  iosFeed: boolean;
  /** The demo latest-tvOS feed, because LATEST_TVOS_FEED_URL is `demo`. */
  tvosFeed: boolean;
  /** A local Redis, because LOCAL_REDIS asks for one, the devices run and REDIS_URL is unset. */
  redis: LocalRedisKind | undefined;
  /** Plain values used where the variable is unset. */
  values: Record<string, string>;
}

/** Decides which embedded servers to start: each only where its variable is unset (docs/local-stack.md). */
export const planDefaults = (env: Env, needs: ReadonlySet<LocalService>): DefaultsPlan => {
  const anyEndpoint = present(env, 'AWS_ENDPOINT_URL');
  // A misspelt LOCAL_REDIS (or DEMO_JAMF_VERSION) fails whatever runs, rather than quietly starting nothing.
  const localRedis = localRedisKind(env);
  const jamfVersion = demoJamfVersion(env) ?? 'current';
  const plan: DefaultsPlan = {
    inventory: needs.has('inventory') && !present(env, 'INVENTORY_URL') ? jamfVersion : undefined,
    // A table name without an endpoint names a real table in AWS.
    users:
      needs.has('users') &&
      !anyEndpoint &&
      !present(env, 'AWS_ENDPOINT_URL_DYNAMODB') &&
      !present(env, 'USERS_TABLE') &&
      !present(env, 'IDEMPOTENCY_TABLE'),
    storage: needs.has('storage') && !anyEndpoint && !present(env, 'AWS_ENDPOINT_URL_S3'),
    feed: needs.has('inventory') && env.LATEST_OS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    iosFeed: needs.has('inventory') && env.LATEST_IOS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    tvosFeed: needs.has('inventory') && env.LATEST_TVOS_FEED_URL?.trim() === DEMO_FEED_VALUE,
    // A REDIS_URL that is set wins: nothing is started.
    redis: needs.has('inventory') && !present(env, 'REDIS_URL') ? localRedis : undefined,
    values: {},
  };
  if (needs.has('inventory') && !present(env, 'LATEST_OS_VERSION')) plan.values.LATEST_OS_VERSION = DEFAULT_LATEST_OS_VERSION;
  if (needs.has('inventory') && !present(env, 'LATEST_IOS_VERSION')) plan.values.LATEST_IOS_VERSION = DEFAULT_LATEST_IOS_VERSION;
  if (needs.has('users') && !present(env, 'USERS_TABLE')) plan.values.USERS_TABLE = DEFAULT_USERS_TABLE;
  if (needs.has('users') && !present(env, 'IDEMPOTENCY_TABLE')) plan.values.IDEMPOTENCY_TABLE = DEFAULT_IDEMPOTENCY_TABLE;
  // Local servers accept any credentials, but the SDK refuses to sign without some.
  if ((plan.users || plan.storage) && !present(env, 'AWS_ACCESS_KEY_ID') && !present(env, 'AWS_PROFILE')) {
    Object.assign(plan.values, {
      AWS_ACCESS_KEY_ID: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    });
  }
  if ((plan.users || plan.storage) && !present(env, 'AWS_REGION')) plan.values.AWS_REGION = LOCAL_AWS_ENV.AWS_REGION;
  return plan;
};
