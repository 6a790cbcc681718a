import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readSofaFeed } from '../../../demo/fake-sofa.ts';
import { startEmbeddedDefaults } from '../../../scripts/local/embedded-defaults.ts';
import { ALL_SERVICES, type LocalService } from '../../../scripts/local/embedded-plan.ts';
import type { Env } from '../../../scripts/local/offline-params.ts';

/** The LATEST_OS_VERSION the local stack uses when it is unset (docs/local-stack.md, docs/configuration.md). */
const DOCUMENTED_LATEST_OS_VERSION = '26.6.2';
/** The LATEST_IOS_VERSION it uses when that is unset. */
const DOCUMENTED_LATEST_IOS_VERSION = '26.6.1';

const only = (...services: LocalService[]) => new Set(services);

/** The variables each embedded server sets when it runs; the first points the stack at it. */
const SERVER_VARIABLES = {
  inventory: ['INVENTORY_URL', 'INVENTORY_CLIENT_ID', 'INVENTORY_CLIENT_SECRET'],
  users: ['AWS_ENDPOINT_URL_DYNAMODB'],
  storage: ['AWS_ENDPOINT_URL_S3'],
  feed: ['LATEST_OS_FEED_URL'],
  iosFeed: ['LATEST_IOS_FEED_URL'],
} as const;

/**
 * Starts the embedded defaults for `env` and stops them again. Says which servers started (seen by
 * the variables that point at them) and which plain values were added where a variable was unset.
 */
const defaultsFor = async (env: Env, needs: ReadonlySet<LocalService>) => {
  const defaults = await startEmbeddedDefaults(env, needs);
  await defaults.stop();
  const values: Record<string, string> = { ...defaults.env };
  const started = (server: keyof typeof SERVER_VARIABLES): boolean => {
    const running = values[SERVER_VARIABLES[server][0]] !== undefined;
    if (running) for (const name of SERVER_VARIABLES[server]) delete values[name];
    return running;
  };
  return {
    inventory: started('inventory'),
    users: started('users'),
    storage: started('storage'),
    feed: started('feed'),
    iosFeed: started('iosFeed'),
    values,
  };
};

describe('startEmbeddedDefaults (each embedded server only where its variable is unset)', () => {
  it('starts all three with nothing configured, with the default table, OS reference and local credentials', async () => {
    const plan = await defaultsFor({}, ALL_SERVICES);
    expect(plan).toMatchObject({ inventory: true, users: true, storage: true });
    expect(plan.values).toEqual({
      LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION,
      LATEST_IOS_VERSION: DOCUMENTED_LATEST_IOS_VERSION,
      USERS_TABLE: 'users-local',
      IDEMPOTENCY_TABLE: 'idempotency-local',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    });
  });

  it('uses a configured inventory instead of the demo one, and keeps its LATEST_OS_VERSION', async () => {
    const plan = await defaultsFor({ INVENTORY_URL: 'https://jamf.example.com', LATEST_OS_VERSION: '15.7' }, ALL_SERVICES);
    expect(plan.inventory).toBe(false);
    expect(plan.values.LATEST_OS_VERSION).toBeUndefined();
  });

  it('treats USERS_TABLE without an endpoint as a real table: no local store, no fake credentials for it', async () => {
    const plan = await defaultsFor({ USERS_TABLE: 'prod-users', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' }, ALL_SERVICES);
    expect(plan.users).toBe(false);
    expect(plan.storage).toBe(false);
    expect(plan.values).toEqual({
      LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION,
      LATEST_IOS_VERSION: DOCUMENTED_LATEST_IOS_VERSION,
      IDEMPOTENCY_TABLE: 'idempotency-local',
    });
  });

  it('treats IDEMPOTENCY_TABLE without an endpoint as a real table too', async () => {
    const plan = await defaultsFor({ IDEMPOTENCY_TABLE: 'prod-keys' }, only('users'));
    expect(plan.users).toBe(false);
    expect(plan.values).toEqual({ USERS_TABLE: 'users-local' });
  });

  it('uses a configured DynamoDB endpoint with the default table name', async () => {
    const plan = await defaultsFor({ AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' }, only('users'));
    expect(plan.users).toBe(false);
    expect(plan.values).toMatchObject({ USERS_TABLE: 'users-local', IDEMPOTENCY_TABLE: 'idempotency-local' });
  });

  it('lets the global AWS_ENDPOINT_URL replace both local stores', async () => {
    const plan = await defaultsFor({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }, ALL_SERVICES);
    expect(plan).toMatchObject({ users: false, storage: false });
  });

  it('keeps configured AWS credentials and region', async () => {
    const plan = await defaultsFor({ AWS_PROFILE: 'dev', AWS_REGION: 'eu-west-1' }, only('storage'));
    expect(plan.storage).toBe(true);
    expect(plan.values).toEqual({});
  });

  it('starts only what the invoked function needs', async () => {
    expect(await defaultsFor({}, only())).toEqual({
      inventory: false,
      users: false,
      storage: false,
      feed: false,
      iosFeed: false,
      values: {},
    });
    expect(await defaultsFor({}, only('inventory'))).toEqual({
      inventory: true,
      users: false,
      storage: false,
      feed: false,
      iosFeed: false,
      values: { LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION, LATEST_IOS_VERSION: DOCUMENTED_LATEST_IOS_VERSION },
    });
  });

  it('counts a blank variable as unset', async () => {
    expect((await defaultsFor({ INVENTORY_URL: ' ' }, only('inventory'))).inventory).toBe(true);
  });

  it('serves the demo latest-OS feed only when LATEST_OS_FEED_URL asks for it and the devices run', async () => {
    expect((await defaultsFor({ LATEST_OS_FEED_URL: 'demo' }, ALL_SERVICES)).feed).toBe(true);
    expect((await defaultsFor({ LATEST_OS_FEED_URL: ' demo ' }, only('inventory'))).feed).toBe(true);
    expect((await defaultsFor({ LATEST_OS_FEED_URL: 'demo' }, only('users'))).feed).toBe(false);
    expect((await defaultsFor({ LATEST_OS_FEED_URL: 'https://sofa.example.com/v1/macos_data_feed.json' }, ALL_SERVICES)).feed).toBe(false);
    expect((await defaultsFor({}, ALL_SERVICES)).feed).toBe(false);
  });
});

describe('startEmbeddedDefaults with LATEST_OS_FEED_URL=demo', () => {
  it('serves the copy of the SOFA feed on loopback, points the devices at it and says so, then stops it', async () => {
    const defaults = await startEmbeddedDefaults({ LATEST_OS_FEED_URL: 'demo' }, new Set(['inventory']));
    let feedUrl: string | undefined;
    try {
      feedUrl = defaults.env.LATEST_OS_FEED_URL;
      expect(feedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/macos_data_feed\.json$/);
      expect(defaults.env.LATEST_OS_VERSION).toBe(DOCUMENTED_LATEST_OS_VERSION);
      const response = await fetch(feedUrl!);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(await readSofaFeed('v2'));
      expect(defaults.notes.join('\n')).toMatch(/LATEST_OS_FEED_URL +http:\/\/127\.0\.0\.1:\d+\/v2\/macos_data_feed\.json — DEMO DATA/);
    } finally {
      await defaults.stop();
    }
    await expect(fetch(feedUrl!)).rejects.toThrow();
  });

  it('serves the demo iOS feed for LATEST_IOS_FEED_URL=demo, alone or from the one server beside the macOS feed', async () => {
    for (const env of [{ LATEST_IOS_FEED_URL: ' demo ' }, { LATEST_IOS_FEED_URL: 'demo', LATEST_OS_FEED_URL: 'demo' }]) {
      const defaults = await startEmbeddedDefaults(env, new Set(['inventory']));
      let feedUrl: string | undefined;
      try {
        feedUrl = defaults.env.LATEST_IOS_FEED_URL;
        expect(feedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/ios_data_feed\.json$/);
        expect(defaults.env.LATEST_IOS_VERSION).toBe(DOCUMENTED_LATEST_IOS_VERSION);
        expect(defaults.env.LATEST_OS_FEED_URL === undefined).toBe(env.LATEST_OS_FEED_URL === undefined);
        if (defaults.env.LATEST_OS_FEED_URL !== undefined)
          expect(new URL(defaults.env.LATEST_OS_FEED_URL).origin).toBe(new URL(feedUrl!).origin);
        const response = await fetch(feedUrl!);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual(await readSofaFeed('ios-v2'));
        expect(defaults.notes.join('\n')).toMatch(/LATEST_IOS_FEED_URL +http:\/\/127\.0\.0\.1:\d+\/v2\/ios_data_feed\.json — DEMO DATA/);
      } finally {
        await defaults.stop();
      }
      await expect(fetch(feedUrl!)).rejects.toThrow();
    }
    expect((await defaultsFor({ LATEST_IOS_FEED_URL: 'demo' }, only('users'))).iosFeed).toBe(false);
    expect((await defaultsFor({ LATEST_IOS_FEED_URL: 'https://sofa.example.com/v2/ios_data_feed.json' }, ALL_SERVICES)).iosFeed).toBe(
      false,
    );
  });

  it('leaves a real feed URL alone', async () => {
    const defaults = await startEmbeddedDefaults(
      { INVENTORY_URL: 'https://jamf.example.com', LATEST_OS_FEED_URL: 'https://sofa.example.com/feed.json' },
      new Set(['inventory']),
    );
    try {
      expect(defaults.env).not.toHaveProperty('LATEST_OS_FEED_URL');
      expect(defaults.notes.join('\n')).not.toContain('LATEST_OS_FEED_URL');
    } finally {
      await defaults.stop();
    }
  });
});

describe('startEmbeddedDefaults with DEMO_JAMF_VERSION', () => {
  /** The status of each path at the demo inventory (404 where its Jamf Pro version has none). */
  const statuses = async (url: string) => {
    const post = async (path: string) => (await fetch(`${url}${path}`, { method: 'POST' })).status;
    const get = async (path: string) => (await fetch(`${url}${path}?page=0&page-size=1`)).status;
    return {
      v1OAuth: await post('/api/v1/oauth/token'),
      oldOAuth: await post('/api/oauth/token'),
      v4: await get('/api/v4/computers-inventory'),
      v3: await get('/api/v3/computers-inventory'),
    };
  };

  it.each([
    [{}, 'current (default)', { v1OAuth: 400, oldOAuth: 404, v4: 401, v3: 404 }],
    [{ DEMO_JAMF_VERSION: 'current' }, 'current', { v1OAuth: 400, oldOAuth: 404, v4: 401, v3: 404 }],
    [{ DEMO_JAMF_VERSION: ' legacy ' }, 'legacy', { v1OAuth: 404, oldOAuth: 400, v4: 404, v3: 401 }],
  ])('with %o serves the demo inventory as that Jamf Pro (%s) and says so', async (env, shown, expected) => {
    const defaults = await startEmbeddedDefaults(env, only('inventory'));
    try {
      // 400 and 401: the endpoint is there, refusing a request without credentials.
      expect(await statuses(defaults.env.INVENTORY_URL!)).toEqual(expected);
      expect(defaults.notes.join('\n')).toMatch(new RegExp(`DEMO_JAMF_VERSION +${shown.replace(/[()]/g, '\\$&')} — as Jamf Pro`));
    } finally {
      await defaults.stop();
    }
  });

  it('is ignored, saying so, when INVENTORY_URL is set, and refuses an unknown value', async () => {
    const configured = await startEmbeddedDefaults(
      { DEMO_JAMF_VERSION: 'legacy', INVENTORY_URL: 'https://jamf.example.com' },
      only('inventory'),
    );
    await configured.stop();
    expect(configured.env).toEqual({ LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION, LATEST_IOS_VERSION: DOCUMENTED_LATEST_IOS_VERSION });
    expect(configured.notes.join('\n')).toMatch(/DEMO_JAMF_VERSION +legacy ignored: INVENTORY_URL is set/);
    await expect(startEmbeddedDefaults({ DEMO_JAMF_VERSION: '11.29' }, only())).rejects.toThrow(
      /DEMO_JAMF_VERSION must be "current" .* or "legacy" .*, got "11.29"/,
    );
  });
});

describe('startEmbeddedDefaults with LOCAL_REDIS', () => {
  it('=cluster starts a local TLS Redis Cluster for the devices, hands the handlers its URL, CA and REDIS_CLUSTER, never shows the password, and stops it', async () => {
    const defaults = await startEmbeddedDefaults(
      { LOCAL_REDIS: 'cluster', REDIS_TLS_CA_FILE: '/elsewhere/ca.pem' },
      new Set(['inventory']),
    );
    let caFile: string | undefined;
    try {
      const url = new URL(defaults.env.REDIS_URL!);
      expect(url).toMatchObject({ protocol: 'rediss:', hostname: 'localhost', username: 'devices-app' });
      expect(url.password).not.toBe('');
      caFile = defaults.env.REDIS_TLS_CA_FILE;
      expect(caFile).not.toBe('/elsewhere/ca.pem');
      expect(defaults.env.REDIS_CLUSTER).toBe('auto');
      const banner = defaults.notes.join('\n');
      expect(banner).not.toContain(url.password);
      expect(banner).toMatch(/REDIS_URL +rediss:\/\/localhost:\d+\/? — local Redis Cluster/);
      expect(banner).toMatch(/masters on 127\.0\.0\.1:\d+, \d+, \d+, replicas on \d+, \d+, \d+/);
      expect(banner).toContain(`REDIS_TLS_CA_FILE          ${caFile}`);
      expect(banner).not.toMatch(/memory cache only/);
      // What a handler does with those three: a cluster client, each node checked against the URL's host name.
      const client = new Cluster([{ host: url.hostname, port: Number(url.port) }], {
        dnsLookup: (address, callback) => callback(null, address),
        redisOptions: {
          tls: { ca: await readFile(caFile!), servername: url.hostname },
          username: url.username,
          password: decodeURIComponent(url.password),
        },
      });
      client.on('error', () => undefined);
      try {
        await client.set('embedded:{check}', 'ok');
        expect(await client.get('embedded:{check}')).toBe('ok');
      } finally {
        client.disconnect();
      }
    } finally {
      await defaults.stop();
    }
    expect(existsSync(caFile!)).toBe(false);
  });

  it('=cluster keeps a REDIS_CLUSTER of the environment', async () => {
    const defaults = await startEmbeddedDefaults(
      { LOCAL_REDIS: 'cluster', REDIS_CLUSTER: 'on', INVENTORY_URL: 'https://jamf.example.com' },
      new Set(['inventory']),
    );
    try {
      expect(defaults.env).not.toHaveProperty('REDIS_CLUSTER');
      expect(defaults.env.REDIS_URL).toMatch(/^rediss:/);
    } finally {
      await defaults.stop();
    }
  });

  it('=node starts one plain redis-server', async () => {
    const defaults = await startEmbeddedDefaults(
      { LOCAL_REDIS: 'node', INVENTORY_URL: 'https://jamf.example.com' },
      new Set(['inventory']),
    );
    try {
      expect(defaults.env.REDIS_URL).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
      expect(defaults.env).not.toHaveProperty('REDIS_TLS_CA_FILE');
      const client = new Redis(defaults.env.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
      expect(defaults.notes.join('\n')).toMatch(/REDIS_URL +redis:\/\/127\.0\.0\.1:\d+ — local redis-server/);
    } finally {
      await defaults.stop();
    }
  });

  it('starts nothing when REDIS_URL is set (it wins) or the devices do not run, and refuses an unknown value', async () => {
    const configured = await startEmbeddedDefaults(
      { LOCAL_REDIS: 'cluster', REDIS_URL: 'rediss://cache.example.com:6379', INVENTORY_URL: 'https://jamf.example.com' },
      new Set(['inventory']),
    );
    await configured.stop();
    expect(configured.env).toEqual({ LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION, LATEST_IOS_VERSION: DOCUMENTED_LATEST_IOS_VERSION });
    expect(configured.notes.join('\n')).toMatch(/LOCAL_REDIS +cluster ignored: REDIS_URL is set/);
    const users = await startEmbeddedDefaults({ LOCAL_REDIS: 'cluster', USERS_TABLE: 'prod-users' }, only('users'));
    await users.stop();
    expect(users.env).not.toHaveProperty('REDIS_URL');
    await expect(startEmbeddedDefaults({ LOCAL_REDIS: 'valkey' }, only())).rejects.toThrow(
      /LOCAL_REDIS must be "cluster" .* or "node" .*, got "valkey"/,
    );
  });
});
