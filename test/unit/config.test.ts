import { describe, expect, it } from 'vitest';
import {
  loadCreateUserConfig,
  loadDevicesConfig,
  loadImportConfig,
  loadMobileDevicesConfig,
  loadRefreshConfig,
  loadUsersConfig,
} from '../../lib/config.ts';
import { ConfigError } from '../../lib/errors.ts';

const devicesEnv = {
  INVENTORY_URL: 'https://jamf.example.test/',
  INVENTORY_CLIENT_ID: 'client',
  INVENTORY_CLIENT_SECRET: 'secret',
  LATEST_OS_VERSION: '26.1',
};

const configErrorOf = (load: () => unknown): ConfigError => {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('loadDevicesConfig', () => {
  it('reads OAuth credentials, trims the URL and defaults the TTL to 60 and no stale window with no cluster', () => {
    expect(loadDevicesConfig(devicesEnv)).toEqual({
      inventoryUrl: 'https://jamf.example.test',
      auth: { kind: 'oauth', clientId: 'client', clientSecret: { kind: 'value', value: 'secret' } },
      cacheTtlSeconds: 60,
      cacheStaleSeconds: 0,
      redis: undefined,
      latestOs: { version: '26.1', feed: undefined },
      patchSla: { exploitedDays: 14, securityDays: 21, otherDays: 28 },
    });
  });

  it('reads the latest-OS feed with its TTL (default an hour); LATEST_OS_VERSION is then optional', () => {
    const feedUrl = 'https://sofa.example.test/v1/macos_data_feed.json';
    expect(loadDevicesConfig({ ...devicesEnv, LATEST_OS_FEED_URL: feedUrl }).latestOs).toEqual({
      version: '26.1',
      feed: { url: feedUrl, ttlSeconds: 3600 },
    });
    expect(
      loadDevicesConfig({ ...devicesEnv, LATEST_OS_VERSION: undefined, LATEST_OS_FEED_URL: feedUrl, LATEST_OS_FEED_TTL_SECONDS: '600' })
        .latestOs,
    ).toEqual({
      version: undefined,
      feed: { url: feedUrl, ttlSeconds: 600 },
    });
  });

  it('needs no latest-OS reference for the scheduled refresh, which stores devices, not decisions', () => {
    const { LATEST_OS_VERSION: _version, ...inventoryOnly } = devicesEnv;
    expect(loadRefreshConfig({ ...inventoryOnly, REDIS_URL: 'redis://cache:6379' })).not.toHaveProperty('latestOs');
    expect(configErrorOf(() => loadDevicesConfig(inventoryOnly)).message).toBe(
      'Configuration error: LATEST_OS_VERSION is required but not set (or set LATEST_OS_FEED_URL)',
    );
  });

  it('serves stale lists for an hour by default with a cluster (kept warm by the schedule), or as configured', () => {
    expect(loadDevicesConfig({ ...devicesEnv, REDIS_URL: 'redis://cache:6379' }).cacheStaleSeconds).toBe(3600);
    expect(loadDevicesConfig({ ...devicesEnv, REDIS_URL: 'redis://cache:6379', DEVICES_CACHE_STALE_SECONDS: '0' }).cacheStaleSeconds).toBe(
      0,
    );
    expect(loadDevicesConfig({ ...devicesEnv, DEVICES_CACHE_STALE_SECONDS: '120' }).cacheStaleSeconds).toBe(120);
    expect(() => loadDevicesConfig({ ...devicesEnv, DEVICES_CACHE_STALE_SECONDS: '-1' })).toThrow(/DEVICES_CACHE_STALE_SECONDS/);
    // The largest whole number a double holds exactly is still taken as it is.
    expect(loadDevicesConfig({ ...devicesEnv, DEVICES_CACHE_TTL_SECONDS: ' 9007199254740991 ' }).cacheTtlSeconds).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it.each([
    ['a URL of another scheme', 'http://127.0.0.1:6379', 'must be a redis:// or rediss:// (TLS) URL'],
    ['text that is not a URL', 'cache internal', 'is not a valid URL'],
    ['a host without a scheme', 'localhost:6379', 'must be a redis:// or rediss:// (TLS) URL'],
  ])('refuses %s as REDIS_URL, naming it, for the devices and the refresh', (_label, url, problem) => {
    const refused = expect.objectContaining({ variable: 'REDIS_URL', status: 500, message: `Configuration error: REDIS_URL ${problem}` });
    expect(() => loadDevicesConfig({ ...devicesEnv, REDIS_URL: url })).toThrow(refused);
    expect(() => loadRefreshConfig({ ...devicesEnv, REDIS_URL: url })).toThrow(refused);
  });

  it('requires REDIS_URL for the scheduled refresh, naming it', () => {
    expect(() => loadRefreshConfig(devicesEnv)).toThrow(expect.objectContaining({ variable: 'REDIS_URL' }));
    expect(loadRefreshConfig({ ...devicesEnv, REDIS_URL: 'redis://cache:6379' }).redis).toEqual({
      url: 'redis://cache:6379',
      cluster: 'auto',
      tlsCaFile: undefined,
      password: undefined,
    });
  });

  it('reads a full read at least hourly for the scheduled refresh by default, or as DEVICES_FULL_REFRESH_SECONDS says (0: every time)', () => {
    const refreshEnv = { ...devicesEnv, REDIS_URL: 'redis://cache:6379' };
    expect(loadRefreshConfig(refreshEnv).fullRefreshSeconds).toBe(3600);
    expect(loadRefreshConfig({ ...refreshEnv, DEVICES_FULL_REFRESH_SECONDS: ' 600 ' }).fullRefreshSeconds).toBe(600);
    expect(loadRefreshConfig({ ...refreshEnv, DEVICES_FULL_REFRESH_SECONDS: '0' }).fullRefreshSeconds).toBe(0);
    expect(configErrorOf(() => loadRefreshConfig({ ...refreshEnv, DEVICES_FULL_REFRESH_SECONDS: 'hourly' })).variable).toBe(
      'DEVICES_FULL_REFRESH_SECONDS',
    );
  });

  it('reads the cluster mode, the TLS CA file and the ACL password in SSM beside REDIS_URL', () => {
    const url = 'rediss://devices-app@cache.example.test:6379';
    expect(
      loadDevicesConfig({
        ...devicesEnv,
        REDIS_URL: url,
        REDIS_CLUSTER: 'on',
        REDIS_TLS_CA_FILE: '/etc/ca.pem',
        REDIS_PASSWORD_SSM: '/cache/password',
      }).redis,
    ).toEqual({
      url,
      cluster: 'on',
      tlsCaFile: '/etc/ca.pem',
      password: { kind: 'ssm', parameterName: '/cache/password', variable: 'REDIS_PASSWORD_SSM' },
    });
    expect(loadRefreshConfig({ ...devicesEnv, REDIS_URL: url, REDIS_CLUSTER: 'off' }).redis.cluster).toBe('off');
  });

  it.each([
    ['REDIS_CLUSTER', { REDIS_URL: 'redis://cache:6379', REDIS_CLUSTER: 'yes' }, 'must be "auto", "on" or "off"'],
    [
      'REDIS_TLS_CA_FILE',
      { REDIS_URL: 'redis://cache:6379', REDIS_TLS_CA_FILE: '/etc/ca.pem' },
      'applies to a rediss:// (TLS) REDIS_URL only',
    ],
    [
      'REDIS_PASSWORD_SSM',
      { REDIS_URL: 'rediss://app@cache:6379', REDIS_PASSWORD_SSM: 'cache/password' },
      'must be the full path of an SSM parameter',
    ],
    [
      'REDIS_PASSWORD_SSM',
      { REDIS_URL: 'rediss://app:hunter2@cache:6379', REDIS_PASSWORD_SSM: '/cache/password' },
      'REDIS_URL carries a password too',
    ],
  ])('refuses a cluster tier setting that cannot work, naming %s and never the password', (variable, cache, problem) => {
    for (const load of [loadDevicesConfig, loadRefreshConfig]) {
      const error = configErrorOf(() => load({ ...devicesEnv, ...cache }));
      expect(error.variable).toBe(variable);
      expect(error.message).toContain(problem);
      expect(error.message).not.toContain('hunter2');
    }
  });

  it('ignores the cluster tier settings without REDIS_URL (memory tier only)', () => {
    expect(loadDevicesConfig({ ...devicesEnv, REDIS_CLUSTER: 'yes', REDIS_TLS_CA_FILE: '/etc/ca.pem' }).redis).toBeUndefined();
  });

  it('prefers an SSM parameter name over an inline secret', () => {
    const config = loadDevicesConfig({ ...devicesEnv, INVENTORY_CLIENT_SECRET_SSM: '/jamf/secret' });
    expect(config.auth).toEqual({
      kind: 'oauth',
      clientId: 'client',
      clientSecret: { kind: 'ssm', parameterName: '/jamf/secret', variable: 'INVENTORY_CLIENT_SECRET_SSM' },
    });
  });

  it.each(['jamf/secret', '/', '/jamf secret'])('refuses the SSM parameter name %j, naming the variable', (name) => {
    expect(() => loadDevicesConfig({ ...devicesEnv, INVENTORY_CLIENT_SECRET_SSM: name })).toThrow(
      /INVENTORY_CLIENT_SECRET_SSM must be the full path/,
    );
  });

  it('falls back to basic auth when no OAuth client is configured', () => {
    const { INVENTORY_CLIENT_ID: _id, INVENTORY_CLIENT_SECRET: _secret, ...rest } = devicesEnv;
    const config = loadDevicesConfig({ ...rest, INVENTORY_USERNAME: 'api', INVENTORY_PASSWORD: 'pw' });
    expect(config.auth).toEqual({ kind: 'basic', username: 'api', password: { kind: 'value', value: 'pw' } });
  });

  it.each([
    ['INVENTORY_URL', { ...devicesEnv, INVENTORY_URL: undefined }],
    ['INVENTORY_URL', { ...devicesEnv, INVENTORY_URL: '   ' }],
    ['INVENTORY_URL', { ...devicesEnv, INVENTORY_URL: 'not a url' }],
    ['INVENTORY_URL', { ...devicesEnv, INVENTORY_URL: 'ftp://jamf.example.test' }],
    ['INVENTORY_URL', { ...devicesEnv, INVENTORY_URL: 'https://admin:hunter2@jamf.example.test' }],
    ['INVENTORY_CLIENT_SECRET', { ...devicesEnv, INVENTORY_CLIENT_SECRET: undefined }],
    ['INVENTORY_CLIENT_ID', { ...devicesEnv, INVENTORY_CLIENT_ID: undefined }],
    ['LATEST_OS_VERSION', { ...devicesEnv, LATEST_OS_VERSION: '' }],
    ['LATEST_OS_VERSION', { ...devicesEnv, LATEST_OS_VERSION: 'latest' }],
    ['LATEST_OS_VERSION', { ...devicesEnv, LATEST_OS_VERSION: 'latest', LATEST_OS_FEED_URL: 'https://sofa.example.test/feed.json' }],
    ['LATEST_OS_FEED_URL', { ...devicesEnv, LATEST_OS_FEED_URL: 'sofa feed' }],
    ['LATEST_OS_FEED_URL', { ...devicesEnv, LATEST_OS_FEED_URL: 'https://reader:hunter2@sofa.example.test/feed.json' }],
    [
      'LATEST_OS_FEED_TTL_SECONDS',
      { ...devicesEnv, LATEST_OS_FEED_URL: 'https://sofa.example.test/feed.json', LATEST_OS_FEED_TTL_SECONDS: '0' },
    ],
    ['DEVICES_CACHE_TTL_SECONDS', { ...devicesEnv, DEVICES_CACHE_TTL_SECONDS: '0' }],
    ['DEVICES_CACHE_TTL_SECONDS', { ...devicesEnv, DEVICES_CACHE_TTL_SECONDS: '1.5' }],
    // Past 2^53 − 1 a double would round it.
    ['DEVICES_CACHE_TTL_SECONDS', { ...devicesEnv, DEVICES_CACHE_TTL_SECONDS: '9007199254740992' }],
    ['DEVICES_CACHE_STALE_SECONDS', { ...devicesEnv, DEVICES_CACHE_STALE_SECONDS: '99999999999999999999' }],
  ])('fails naming %s when it is missing or invalid', (variable, env) => {
    const error = configErrorOf(() => loadDevicesConfig(env));
    expect(error.variable).toBe(variable);
    expect(error.status).toBe(500);
    expect(error.publicMessage).toBe('Service misconfigured');
    expect(error.message).toContain(variable);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('upstream URLs', () => {
  const urlOf = (name: string, value: string) => {
    if (name === 'TICKETING_URL')
      return loadImportConfig({ TICKETING_URL: value, TICKETING_USERNAME: 'u', TICKETING_PASSWORD: 'p' }).ticketing?.url;
    if (name === 'LATEST_IOS_FEED_URL')
      return loadMobileDevicesConfig({ ...devicesEnv, LATEST_IOS_VERSION: '26.1', [name]: value }).latestOs.feed?.url;
    if (name === 'LATEST_TVOS_FEED_URL')
      return loadMobileDevicesConfig({ ...devicesEnv, LATEST_IOS_VERSION: '26.1', [name]: value }).latestTvos?.feed?.url;
    const config = loadDevicesConfig({ ...devicesEnv, [name]: value });
    return name === 'INVENTORY_URL' ? config.inventoryUrl : config.latestOs.feed?.url;
  };
  const names = ['INVENTORY_URL', 'TICKETING_URL', 'LATEST_OS_FEED_URL', 'LATEST_IOS_FEED_URL', 'LATEST_TVOS_FEED_URL'];

  it.each(
    names.flatMap((name) =>
      ['http://jamf.example.test', 'http://10.0.0.5:8443', 'http://127.evil.example', 'http://[::2]'].map((url) => [name, url]),
    ),
  )('refuses %s as plain http to a host off this machine (%s), naming the variable', (name, url) => {
    const error = configErrorOf(() => urlOf(name, url));
    expect(error.variable).toBe(name);
    expect(error.message).toContain('https://');
  });

  it.each(
    names.flatMap((name) =>
      [
        'https://jamf.example.test',
        'http://127.0.0.1:9',
        'http://127.8.9.10',
        'http://localhost:8080',
        'http://LOCALHOST',
        'http://[::1]:80',
      ].map((url) => [name, url]),
    ),
  )('accepts %s as https anywhere, or http on a loopback host (%s)', (name, url) => {
    expect(urlOf(name, url)).toBe(url.replace(/\/+$/, ''));
  });
});

describe('loadMobileDevicesConfig', () => {
  const { LATEST_OS_VERSION: _macOs, ...inventoryOnly } = devicesEnv;
  const feedUrl = 'https://sofa.example.test/v2/ios_data_feed.json';

  it("reads LATEST_IOS_VERSION and LATEST_IOS_FEED_URL (with the feeds' one TTL), not the macOS ones", () => {
    expect(loadMobileDevicesConfig({ ...devicesEnv, LATEST_IOS_VERSION: '26.6.1' }).latestOs).toEqual({
      version: '26.6.1',
      feed: undefined,
    });
    expect(
      loadMobileDevicesConfig({ ...inventoryOnly, LATEST_IOS_FEED_URL: `${feedUrl}/`, LATEST_OS_FEED_TTL_SECONDS: '600' }).latestOs,
    ).toEqual({
      version: undefined,
      feed: { url: feedUrl, ttlSeconds: 600 },
    });
    expect(loadMobileDevicesConfig({ ...inventoryOnly, LATEST_IOS_VERSION: '26.6.1' }).inventoryUrl).toBe('https://jamf.example.test');
  });

  it.each([
    ['LATEST_IOS_VERSION', devicesEnv, 'Configuration error: LATEST_IOS_VERSION is required but not set (or set LATEST_IOS_FEED_URL)'],
    [
      'LATEST_IOS_VERSION',
      { ...inventoryOnly, LATEST_IOS_VERSION: 'newest' },
      'Configuration error: LATEST_IOS_VERSION is not a dotted version such as 26.1',
    ],
    [
      'LATEST_IOS_FEED_URL',
      { ...inventoryOnly, LATEST_IOS_FEED_URL: 'ftp://sofa.example.test/feed.json' },
      'Configuration error: LATEST_IOS_FEED_URL must be an http(s) URL',
    ],
  ])('refuses a configuration naming %s', (variable, env, message) => {
    const error = configErrorOf(() => loadMobileDevicesConfig(env));
    expect(error.variable).toBe(variable);
    expect(error.message).toBe(message);
  });

  it('decides no Apple TV without LATEST_TVOS_VERSION or LATEST_TVOS_FEED_URL', () => {
    expect(loadMobileDevicesConfig({ ...inventoryOnly, LATEST_IOS_VERSION: '26.6.1' }).latestTvos).toBeUndefined();
  });

  it("reads LATEST_TVOS_VERSION and LATEST_TVOS_FEED_URL (with the feeds' one TTL), apart from the iOS ones", () => {
    const tvosFeed = 'https://sofa.example.test/v2/tvos_data_feed.json';
    const ios = { ...inventoryOnly, LATEST_IOS_VERSION: '26.6.1' };
    expect(loadMobileDevicesConfig({ ...ios, LATEST_TVOS_VERSION: '26.6' }).latestTvos).toEqual({ version: '26.6', feed: undefined });
    const both = loadMobileDevicesConfig({
      ...ios,
      LATEST_TVOS_FEED_URL: tvosFeed,
      LATEST_TVOS_VERSION: '26.6',
      LATEST_OS_FEED_TTL_SECONDS: '600',
    });
    expect(both.latestTvos).toEqual({ version: '26.6', feed: { url: tvosFeed, ttlSeconds: 600 } });
    expect(both.latestOs).toEqual({ version: '26.6.1', feed: undefined });
    expect(loadMobileDevicesConfig({ ...ios, LATEST_TVOS_FEED_URL: tvosFeed }).latestTvos).toEqual({
      version: undefined,
      feed: { url: tvosFeed, ttlSeconds: 3600 },
    });
  });

  it.each([
    [
      'LATEST_TVOS_VERSION',
      { LATEST_TVOS_VERSION: 'tvOS 26' },
      'Configuration error: LATEST_TVOS_VERSION is not a dotted version such as 26.1',
    ],
    [
      'LATEST_TVOS_FEED_URL',
      { LATEST_TVOS_FEED_URL: 'ftp://sofa.example.test/tvos_data_feed.json' },
      'Configuration error: LATEST_TVOS_FEED_URL must be an http(s) URL',
    ],
  ])('refuses a configuration naming %s', (variable, extra, message) => {
    const error = configErrorOf(() => loadMobileDevicesConfig({ ...inventoryOnly, LATEST_IOS_VERSION: '26.6.1', ...extra }));
    expect(error.variable).toBe(variable);
    expect(error.message).toBe(message);
  });
});

describe('the patch service levels (PATCH_SLA_*)', () => {
  const mobileEnv = { ...devicesEnv, LATEST_IOS_VERSION: '26.6.1' };
  const variables = ['PATCH_SLA_EXPLOITED_DAYS', 'PATCH_SLA_SECURITY_DAYS', 'PATCH_SLA_DAYS'] as const;

  it('defaults to 14, 21 and 28 days for both lists', () => {
    const defaults = { exploitedDays: 14, securityDays: 21, otherDays: 28 };
    expect(loadDevicesConfig(devicesEnv).patchSla).toEqual(defaults);
    expect(loadMobileDevicesConfig(mobileEnv).patchSla).toEqual(defaults);
  });

  it('reads each variable, whole days from 0 to 3650, surrounding space ignored', () => {
    const env = { PATCH_SLA_EXPLOITED_DAYS: '0', PATCH_SLA_SECURITY_DAYS: ' 3650 ', PATCH_SLA_DAYS: '30' };
    expect(loadDevicesConfig({ ...devicesEnv, ...env }).patchSla).toEqual({ exploitedDays: 0, securityDays: 3650, otherDays: 30 });
    expect(loadMobileDevicesConfig({ ...mobileEnv, ...env }).patchSla).toEqual({ exploitedDays: 0, securityDays: 3650, otherDays: 30 });
    expect(loadDevicesConfig({ ...devicesEnv, PATCH_SLA_DAYS: '' }).patchSla.otherDays).toBe(28);
  });

  it.each(variables.flatMap((name) => ['3651', '-1', '1.5', '14d', 'fourteen', '1e3', '0x10', '99999'].map((value) => [name, value])))(
    'refuses %s=%s with a configuration error naming it',
    (name, value) => {
      for (const load of [
        () => loadDevicesConfig({ ...devicesEnv, [name]: value }),
        () => loadMobileDevicesConfig({ ...mobileEnv, [name]: value }),
      ]) {
        const error = configErrorOf(load);
        expect(error.variable).toBe(name);
        expect(error.message).toBe(`Configuration error: ${name} must be a whole number of days from 0 to 3650`);
      }
    },
  );
});

describe('loadUsersConfig', () => {
  it('needs the users table alone (getUser), whatever USER_EMAIL_PATTERN holds', () => {
    expect(loadUsersConfig({ USERS_TABLE: 'users', USER_EMAIL_PATTERN: 'Strict' })).toEqual({ usersTable: 'users' });
    expect(configErrorOf(() => loadUsersConfig({})).variable).toBe('USERS_TABLE');
  });
});

describe('loadCreateUserConfig', () => {
  it('adds the idempotency table and the email pattern (strict by default) to the users configuration', () => {
    expect(loadCreateUserConfig({ USERS_TABLE: 'users', IDEMPOTENCY_TABLE: 'keys' })).toEqual({
      usersTable: 'users',
      emailPattern: 'strict',
      idempotencyTable: 'keys',
    });
    expect(configErrorOf(() => loadCreateUserConfig({ USERS_TABLE: 'users' })).variable).toBe('IDEMPOTENCY_TABLE');
    expect(configErrorOf(() => loadCreateUserConfig({ IDEMPOTENCY_TABLE: 'keys' })).variable).toBe('USERS_TABLE');
  });

  it('accepts off and refuses anything else, naming the variable', () => {
    const base = { USERS_TABLE: 'users', IDEMPOTENCY_TABLE: 'keys' };
    expect(loadCreateUserConfig({ ...base, USER_EMAIL_PATTERN: 'off' }).emailPattern).toBe('off');
    expect(configErrorOf(() => loadCreateUserConfig({ ...base, USER_EMAIL_PATTERN: 'loose' })).variable).toBe('USER_EMAIL_PATTERN');
  });
});

describe('loadImportConfig', () => {
  it('disables id resolution without TICKETING_URL', () => {
    expect(loadImportConfig({}).ticketing).toBeUndefined();
  });

  it('needs the username and a password (inline or SSM) once TICKETING_URL is set', () => {
    expect(configErrorOf(() => loadImportConfig({ TICKETING_URL: 'http://127.0.0.1:9' })).variable).toBe('TICKETING_USERNAME');
    expect(configErrorOf(() => loadImportConfig({ TICKETING_URL: 'http://127.0.0.1:9', TICKETING_USERNAME: 'u' })).variable).toBe(
      'TICKETING_PASSWORD',
    );
    expect(
      loadImportConfig({ TICKETING_URL: 'http://127.0.0.1:9', TICKETING_USERNAME: 'u', TICKETING_PASSWORD_SSM: '/t/pw' }).ticketing
        ?.password,
    ).toEqual({ kind: 'ssm', parameterName: '/t/pw', variable: 'TICKETING_PASSWORD_SSM' });
  });

  it('pages the listing by page number unless TICKETING_PAGINATION says cursor, and names the variable for anything else', () => {
    const base = { TICKETING_URL: 'http://127.0.0.1:9', TICKETING_USERNAME: 'u', TICKETING_PASSWORD: 'p' };
    expect(loadImportConfig(base).ticketing?.pagination).toBe('pages');
    expect(loadImportConfig({ ...base, TICKETING_PAGINATION: ' cursor ' }).ticketing?.pagination).toBe('cursor');
    expect(loadImportConfig({ ...base, TICKETING_PAGINATION: 'pages' }).ticketing?.pagination).toBe('pages');
    const error = configErrorOf(() => loadImportConfig({ ...base, TICKETING_PAGINATION: 'offset' }));
    expect(error.variable).toBe('TICKETING_PAGINATION');
    expect(error.message).toBe('Configuration error: TICKETING_PAGINATION must be "pages" or "cursor"');
    // A misspelt value is reported even while no listing is configured.
    expect(configErrorOf(() => loadImportConfig({ TICKETING_PAGINATION: 'Cursor' })).variable).toBe('TICKETING_PAGINATION');
  });

  it('fences nothing without IMPORT_BUCKET, and fences its bucket with the default prefixes when set', () => {
    expect(loadImportConfig({}).fence).toBeUndefined();
    expect(loadImportConfig({ IMPORT_INPUT_PREFIX: 'in/' }).fence).toBeUndefined();
    expect(loadImportConfig({ IMPORT_BUCKET: 'tickets-prod' }).fence).toEqual({
      bucket: 'tickets-prod',
      inputPrefix: 'incoming/',
      archivePrefix: 'archives/',
    });
    expect(
      loadImportConfig({ IMPORT_BUCKET: 'tickets-prod', IMPORT_INPUT_PREFIX: 'chat/in/', IMPORT_ARCHIVE_PREFIX: 'chat/out/' }).fence,
    ).toEqual({ bucket: 'tickets-prod', inputPrefix: 'chat/in/', archivePrefix: 'chat/out/' });
  });

  it.each([
    ['IMPORT_BUCKET', { IMPORT_BUCKET: 'Tickets_Prod' }, 'IMPORT_BUCKET is not a valid S3 bucket name'],
    ['a prefix without its trailing slash', { IMPORT_INPUT_PREFIX: 'incoming' }, 'IMPORT_INPUT_PREFIX must end with "/"'],
    ['a prefix with ".."', { IMPORT_ARCHIVE_PREFIX: 'archives/../x/' }, 'IMPORT_ARCHIVE_PREFIX must be a folder path'],
    ['a prefix starting with "/"', { IMPORT_INPUT_PREFIX: '/incoming/' }, 'IMPORT_INPUT_PREFIX must be a folder path'],
    ['a prefix with an empty part', { IMPORT_INPUT_PREFIX: 'a//b/' }, 'IMPORT_INPUT_PREFIX must be a folder path'],
    [
      'overlapping prefixes',
      { IMPORT_INPUT_PREFIX: 'data/', IMPORT_ARCHIVE_PREFIX: 'data/archives/' },
      'IMPORT_ARCHIVE_PREFIX must not overlap',
    ],
    ['an owner that is no account id', { IMPORT_BUCKET_OWNER: '12345' }, 'IMPORT_BUCKET_OWNER must be a 12-digit AWS account id'],
  ])('refuses %s, naming the variable (even without IMPORT_BUCKET)', (_label, env, message) => {
    const error = configErrorOf(() => loadImportConfig(env));
    expect(error.message).toContain(`Configuration error: ${message}`);
    expect(error.variable).toBe(message.split(' ')[0]);
  });

  it('names the bucket owner every S3 request carries when IMPORT_BUCKET_OWNER is set', () => {
    expect(loadImportConfig({}).bucketOwner).toBeUndefined();
    expect(loadImportConfig({ IMPORT_BUCKET_OWNER: '123456789012' }).bucketOwner).toBe('123456789012');
  });
});
