import { describe, expect, it } from 'vitest';
import { readSofaFeed } from '../../../demo/fake-sofa.ts';
import { ALL_SERVICES, startEmbeddedDefaults, type LocalService } from '../../../scripts/local/embedded-defaults.ts';
import type { Env } from '../../../scripts/local/offline-params.ts';

/** The LATEST_OS_VERSION the local stack uses when it is unset (docs/local-stack.md, docs/configuration.md). */
const DOCUMENTED_LATEST_OS_VERSION = '26.6.2';

const only = (...services: LocalService[]) => new Set(services);

/** The variables each embedded server sets when it runs; the first points the stack at it. */
const SERVER_VARIABLES = {
  inventory: ['INVENTORY_URL', 'INVENTORY_CLIENT_ID', 'INVENTORY_CLIENT_SECRET'],
  users: ['AWS_ENDPOINT_URL_DYNAMODB'],
  storage: ['AWS_ENDPOINT_URL_S3'],
  feed: ['LATEST_OS_FEED_URL'],
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
  return { inventory: started('inventory'), users: started('users'), storage: started('storage'), feed: started('feed'), values };
};

describe('startEmbeddedDefaults (each embedded server only where its variable is unset)', () => {
  it('starts all three with nothing configured, with the default table, OS reference and local credentials', async () => {
    const plan = await defaultsFor({}, ALL_SERVICES);
    expect(plan).toMatchObject({ inventory: true, users: true, storage: true });
    expect(plan.values).toEqual({
      LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION,
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
    expect(plan.values).toEqual({ LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION, IDEMPOTENCY_TABLE: 'idempotency-local' });
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
    expect(await defaultsFor({}, only())).toEqual({ inventory: false, users: false, storage: false, feed: false, values: {} });
    expect(await defaultsFor({}, only('inventory'))).toEqual({
      inventory: true,
      users: false,
      storage: false,
      feed: false,
      values: { LATEST_OS_VERSION: DOCUMENTED_LATEST_OS_VERSION },
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

  it('leaves a real feed URL alone', async () => {
    const defaults = await startEmbeddedDefaults({ INVENTORY_URL: 'https://jamf.example.com', LATEST_OS_FEED_URL: 'https://sofa.example.com/feed.json' }, new Set(['inventory']));
    try {
      expect(defaults.env).not.toHaveProperty('LATEST_OS_FEED_URL');
      expect(defaults.notes.join('\n')).not.toContain('LATEST_OS_FEED_URL');
    } finally {
      await defaults.stop();
    }
  });
});
