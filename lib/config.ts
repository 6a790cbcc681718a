import { parseVersion } from './latest-os/os-version.ts';
import type { ServiceLevels } from './latest-os/patch-compliance.ts';
import { ConfigError } from './errors.ts';
import { httpUrl, nonNegativeInt, optionalHttpUrl, positiveInt, present, required, requiredSecret, type Env } from './env-values.ts';
import type { SecretRef } from './runtime/secrets.ts';

/**
 * The only module that reads the environment (docs/configuration.md). Each Lambda loads the section it needs
 * once, memoized: tried at init (runtime/logger.ts logs a ConfigError naming the variable when the container
 * starts) and met again by every request, which answers a generic 500 rather than the init crashing.
 */
export type InventoryAuthConfig =
  { kind: 'oauth'; clientId: string; clientSecret: SecretRef } | { kind: 'basic'; username: string; password: SecretRef };

/** Whether the cluster tier speaks to a Redis Cluster: asked of the server (`auto`), or forced. */
export type RedisClusterMode = 'auto' | 'on' | 'off';

/** The shared cluster tier (docs/architecture.md#the-cluster-tiers-connection). */
export interface RedisConfig {
  /** `redis://` or `rediss://` (TLS), with an optional ACL user and password. */
  url: string;
  cluster: RedisClusterMode;
  /** A PEM file of the CAs that sign the server's certificate (`rediss://` only); unset: the system's. */
  tlsCaFile: string | undefined;
  /** The ACL password kept in SSM (REDIS_PASSWORD_SSM); unset: the URL's password, if any. */
  password: SecretRef | undefined;
}

/** The inventory and its cache: what GET /devices and the scheduled refresh share. */
export interface InventoryConfig {
  inventoryUrl: string;
  auth: InventoryAuthConfig;
  cacheTtlSeconds: number;
  /** How long past its TTL a device list is still served while a scheduled refresh brings a new one. */
  cacheStaleSeconds: number;
  /** Unset: the memory tier alone. */
  redis: RedisConfig | undefined;
}

/** What `os_is_latest` is decided against (docs/api.md). */
export interface LatestOsConfig {
  /** Required unless a feed is configured: then for majors the feed does not list, and while it has no good copy. */
  version: string | undefined;
  /** A SOFA-format feed of the latest version per major release, and how long a copy is kept. */
  feed: { url: string; ttlSeconds: number } | undefined;
}

export interface DevicesConfig extends InventoryConfig {
  latestOs: LatestOsConfig;
  /** PATCH_SLA_*: the days from a release to the deadline of a device that lacks it (docs/api.md#patch-compliance). */
  patchSla: ServiceLevels;
}

/** GET /mobile-devices: the same inventory, its iPhones and iPads decided against iOS (LATEST_IOS_*), its Apple TVs against tvOS. */
export interface MobileDevicesConfig extends DevicesConfig {
  /** LATEST_TVOS_*: unset, no Apple TV is decided (none is latest). */
  latestTvos: LatestOsConfig | undefined;
}

/** The scheduled refresh stores devices, not decisions: it needs no latest-OS reference. */
export type RefreshConfig = InventoryConfig & {
  redis: RedisConfig;
  /** A full read of the inventory at least this often; incremental refreshes in between (0: always full). */
  fullRefreshSeconds: number;
};

/** What reading users needs (getUser): the table alone. */
export interface UsersConfig {
  usersTable: string;
}

export interface CreateUserConfig extends UsersConfig {
  emailPattern: 'strict' | 'off';
  /** Where POST /api/users keeps the outcome of each Idempotency-Key (docs/api.md#safe-retries). */
  idempotencyTable: string;
}

export interface TicketingConfig {
  url: string;
  username: string;
  password: SecretRef;
  /** How the user listing is paged: by page number (switching to cursors past 10,000 users) or by cursor. */
  pagination: 'pages' | 'cursor';
}

/**
 * Where a deployed import may read and write (IMPORT_BUCKET and its two prefixes): the source under
 * `inputPrefix`, the archive and the rejects under `archivePrefix`, all in `bucket`.
 */
export interface ImportFence {
  bucket: string;
  /** Ends in "/": a folder, so that `incoming/` never lets `incoming-evil/…` through. */
  inputPrefix: string;
  archivePrefix: string;
}

export interface ImportConfig {
  /** Unset: no user id is resolved against the destination (the summary says so). */
  ticketing: TicketingConfig | undefined;
  /** An S3 endpoint override (a local S3-compatible server) needs path-style requests. */
  s3ForcePathStyle: boolean;
  /** Unset (the CLI, local use): no fence applies. */
  fence: ImportFence | undefined;
  /** The account every S3 request of the import names as the bucket's owner (ExpectedBucketOwner); unset: none. */
  bucketOwner: string | undefined;
}

/** A misconfigured cache is an operator error to report loudly, not a cache to skip quietly. */
const redisConfig = (env: Env): RedisConfig | undefined => {
  const value = present(env, 'REDIS_URL');
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a valid URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// (TLS) URL');
  const cluster = present(env, 'REDIS_CLUSTER')?.trim() ?? 'auto';
  if (cluster !== 'auto' && cluster !== 'on' && cluster !== 'off') throw new ConfigError('REDIS_CLUSTER', 'must be "auto", "on" or "off"');
  const tlsCaFile = present(env, 'REDIS_TLS_CA_FILE');
  if (tlsCaFile !== undefined && url.protocol !== 'rediss:')
    throw new ConfigError('REDIS_TLS_CA_FILE', 'applies to a rediss:// (TLS) REDIS_URL only');
  const passwordSsm = present(env, 'REDIS_PASSWORD_SSM');
  let password: SecretRef | undefined;
  if (passwordSsm !== undefined) {
    if (!/^\/\S+$/.test(passwordSsm))
      throw new ConfigError('REDIS_PASSWORD_SSM', 'must be the full path of an SSM parameter, starting with "/"');
    // One password, in one place: which of two would win is not something to guess in production.
    if (url.password !== '') throw new ConfigError('REDIS_PASSWORD_SSM', 'is set but REDIS_URL carries a password too (keep one)');
    password = { kind: 'ssm', parameterName: passwordSsm, variable: 'REDIS_PASSWORD_SSM' };
  }
  return { url: value, cluster, tlsCaFile, password };
};

const osVersion = (env: Env, name: string): string | undefined => {
  const value = present(env, name);
  if (value !== undefined && parseVersion(value) === undefined) throw new ConfigError(name, 'is not a dotted version such as 26.1');
  return value;
};

const inventoryAuth = (env: Env): InventoryAuthConfig => {
  const clientId = present(env, 'INVENTORY_CLIENT_ID');
  if (clientId !== undefined) {
    return { kind: 'oauth', clientId, clientSecret: requiredSecret(env, 'INVENTORY_CLIENT_SECRET') };
  }
  const username = present(env, 'INVENTORY_USERNAME');
  if (username !== undefined) {
    return { kind: 'basic', username, password: requiredSecret(env, 'INVENTORY_PASSWORD') };
  }
  throw new ConfigError('INVENTORY_CLIENT_ID', 'or INVENTORY_USERNAME is required but neither is set');
};

/**
 * Without a cluster nothing refreshes the list in the background, so by default nothing stale is
 * served either; with one, a scheduled refresh keeps it warm and a stale list bridges its gaps.
 */
const DEFAULT_STALE_SECONDS_WITH_CLUSTER = 3600;

const loadInventoryConfig = (env: Env): InventoryConfig => {
  const redis = redisConfig(env);
  return {
    inventoryUrl: httpUrl(env, 'INVENTORY_URL'),
    auth: inventoryAuth(env),
    cacheTtlSeconds: positiveInt(env, 'DEVICES_CACHE_TTL_SECONDS', 60),
    cacheStaleSeconds: nonNegativeInt(env, 'DEVICES_CACHE_STALE_SECONDS', redis === undefined ? 0 : DEFAULT_STALE_SECONDS_WITH_CLUSTER),
    redis,
  };
};

const DEFAULT_FEED_TTL_SECONDS = 3600;

/** A fixed version, a feed (kept for LATEST_OS_FEED_TTL_SECONDS, shared by both feeds), or both; one is required. */
const latestOsConfig = (
  env: Env,
  version: string | undefined,
  feedUrl: string | undefined,
  names: { version: string; feed: string },
): LatestOsConfig => {
  const feed =
    feedUrl === undefined
      ? undefined
      : { url: feedUrl, ttlSeconds: positiveInt(env, 'LATEST_OS_FEED_TTL_SECONDS', DEFAULT_FEED_TTL_SECONDS) };
  if (version === undefined && feed === undefined) throw new ConfigError(names.version, `is required but not set (or set ${names.feed})`);
  return { version, feed };
};

/** A service level: whole days, 0 (due on the release's day) to 3650 (ten years). */
const slaDays = (env: Env, name: string, fallback: number): number => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (!/^\s*\d{1,4}\s*$/.test(raw) || Number(raw) > 3650) throw new ConfigError(name, 'must be a whole number of days from 0 to 3650');
  return Number(raw);
};

const patchSla = (env: Env): ServiceLevels => ({
  exploitedDays: slaDays(env, 'PATCH_SLA_EXPLOITED_DAYS', 14),
  securityDays: slaDays(env, 'PATCH_SLA_SECURITY_DAYS', 21),
  otherDays: slaDays(env, 'PATCH_SLA_DAYS', 28),
});

export const loadDevicesConfig = (env: Env = process.env): DevicesConfig => ({
  ...loadInventoryConfig(env),
  latestOs: latestOsConfig(env, osVersion(env, 'LATEST_OS_VERSION'), optionalHttpUrl(env, 'LATEST_OS_FEED_URL'), {
    version: 'LATEST_OS_VERSION',
    feed: 'LATEST_OS_FEED_URL',
  }),
  patchSla: patchSla(env),
});

/** Apple TVs are decided only when LATEST_TVOS_VERSION or LATEST_TVOS_FEED_URL is set. */
const latestTvosConfig = (env: Env): LatestOsConfig | undefined => {
  const version = osVersion(env, 'LATEST_TVOS_VERSION');
  const feedUrl = optionalHttpUrl(env, 'LATEST_TVOS_FEED_URL');
  if (version === undefined && feedUrl === undefined) return undefined;
  return latestOsConfig(env, version, feedUrl, { version: 'LATEST_TVOS_VERSION', feed: 'LATEST_TVOS_FEED_URL' });
};

export const loadMobileDevicesConfig = (env: Env = process.env): MobileDevicesConfig => ({
  ...loadInventoryConfig(env),
  latestOs: latestOsConfig(env, osVersion(env, 'LATEST_IOS_VERSION'), optionalHttpUrl(env, 'LATEST_IOS_FEED_URL'), {
    version: 'LATEST_IOS_VERSION',
    feed: 'LATEST_IOS_FEED_URL',
  }),
  latestTvos: latestTvosConfig(env),
  patchSla: patchSla(env),
});

/** The scheduled refresh writes the cluster entry: without REDIS_URL it has nothing to do. */
export const loadRefreshConfig = (env: Env = process.env): RefreshConfig => {
  const config = loadInventoryConfig(env);
  if (config.redis === undefined)
    throw new ConfigError('REDIS_URL', 'is required by refreshDevices (it keeps the cluster tier warm) but not set');
  return { ...config, redis: config.redis, fullRefreshSeconds: nonNegativeInt(env, 'DEVICES_FULL_REFRESH_SECONDS', 3600) };
};

export const loadUsersConfig = (env: Env = process.env): UsersConfig => ({ usersTable: required(env, 'USERS_TABLE') });

export const loadCreateUserConfig = (env: Env = process.env): CreateUserConfig => {
  const users = loadUsersConfig(env);
  const pattern = present(env, 'USER_EMAIL_PATTERN') ?? 'strict';
  if (pattern !== 'strict' && pattern !== 'off') throw new ConfigError('USER_EMAIL_PATTERN', 'must be "strict" or "off"');
  return { ...users, emailPattern: pattern, idempotencyTable: required(env, 'IDEMPOTENCY_TABLE') };
};

// S3 bucket naming rules (as storage/location.ts checks an event's): 3–63 lower-case letters, digits, dots and hyphens.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * A key prefix naming a folder: it ends in "/" (a bare `incoming` would admit `incoming-evil/…`),
 * does not start with one, and has no empty, `.` or `..` segment (S3 keys are literal, but tools
 * that copy them to disk are not).
 */
const keyPrefix = (env: Env, name: string, fallback: string): string => {
  const value = present(env, name) ?? fallback;
  if (!value.endsWith('/'))
    throw new ConfigError(name, `must end with "/" (a folder such as "${fallback}"), so that it is a whole path prefix`);
  const segments = value.slice(0, -1).split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.trim() !== segment)) {
    throw new ConfigError(
      name,
      'must be a folder path such as "a/b/" (no leading "/", no empty, "." or ".." parts, no surrounding spaces)',
    );
  }
  return value;
};

/** IMPORT_BUCKET and its prefixes; the prefixes are checked even without the bucket, so a misspelt value is reported. */
const importFence = (env: Env): ImportFence | undefined => {
  const inputPrefix = keyPrefix(env, 'IMPORT_INPUT_PREFIX', 'incoming/');
  const archivePrefix = keyPrefix(env, 'IMPORT_ARCHIVE_PREFIX', 'archives/');
  // Overlapping, an archive could be written where sources are read (or the other way round).
  if (inputPrefix.startsWith(archivePrefix) || archivePrefix.startsWith(inputPrefix)) {
    throw new ConfigError('IMPORT_ARCHIVE_PREFIX', `must not overlap IMPORT_INPUT_PREFIX ("${archivePrefix}", "${inputPrefix}")`);
  }
  const bucket = present(env, 'IMPORT_BUCKET');
  if (bucket === undefined) return undefined;
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) throw new ConfigError('IMPORT_BUCKET', 'is not a valid S3 bucket name');
  return { bucket, inputPrefix, archivePrefix };
};

const bucketOwner = (env: Env): string | undefined => {
  const value = present(env, 'IMPORT_BUCKET_OWNER');
  if (value !== undefined && !/^\d{12}$/.test(value)) throw new ConfigError('IMPORT_BUCKET_OWNER', 'must be a 12-digit AWS account id');
  return value;
};

export const loadImportConfig = (env: Env = process.env): ImportConfig => {
  const s3ForcePathStyle = present(env, 'AWS_ENDPOINT_URL_S3') !== undefined || present(env, 'AWS_ENDPOINT_URL') !== undefined;
  // Checked even without TICKETING_URL: a misspelt value is reported, not left to surprise later.
  const pagination = present(env, 'TICKETING_PAGINATION')?.trim() ?? 'pages';
  if (pagination !== 'pages' && pagination !== 'cursor') throw new ConfigError('TICKETING_PAGINATION', 'must be "pages" or "cursor"');
  const s3 = { s3ForcePathStyle, fence: importFence(env), bucketOwner: bucketOwner(env) };
  if (present(env, 'TICKETING_URL') === undefined) return { ticketing: undefined, ...s3 };
  return {
    ...s3,
    ticketing: {
      url: httpUrl(env, 'TICKETING_URL'),
      username: required(env, 'TICKETING_USERNAME'),
      password: requiredSecret(env, 'TICKETING_PASSWORD'),
      pagination,
    },
  };
};
