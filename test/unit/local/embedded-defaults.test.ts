import { describe, expect, it } from 'vitest';
import { ALL_SERVICES, describeConfigured, planDefaults, type LocalService } from '../../../scripts/local/embedded-defaults.ts';

const only = (...services: LocalService[]) => new Set(services);

describe('planDefaults (each embedded server only where its variable is unset)', () => {
  it('starts all three with nothing configured, with the default table, OS reference and local credentials', () => {
    const plan = planDefaults({}, ALL_SERVICES);
    expect(plan).toMatchObject({ inventory: true, users: true, storage: true });
    expect(plan.values).toEqual({
      LATEST_OS_VERSION: '26.6.2',
      USERS_TABLE: 'users-local',
      IDEMPOTENCY_TABLE: 'idempotency-local',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    });
  });

  it('uses a configured inventory instead of the demo one, and keeps its LATEST_OS_VERSION', () => {
    const plan = planDefaults({ INVENTORY_URL: 'https://jamf.example.com', LATEST_OS_VERSION: '15.7' }, ALL_SERVICES);
    expect(plan.inventory).toBe(false);
    expect(plan.values.LATEST_OS_VERSION).toBeUndefined();
  });

  it('treats USERS_TABLE without an endpoint as a real table: no local store, no fake credentials for it', () => {
    const plan = planDefaults({ USERS_TABLE: 'prod-users', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' }, ALL_SERVICES);
    expect(plan.users).toBe(false);
    expect(plan.storage).toBe(false);
    expect(plan.values).toEqual({ LATEST_OS_VERSION: '26.6.2', IDEMPOTENCY_TABLE: 'idempotency-local' });
  });

  it('treats IDEMPOTENCY_TABLE without an endpoint as a real table too', () => {
    const plan = planDefaults({ IDEMPOTENCY_TABLE: 'prod-keys' }, only('users'));
    expect(plan.users).toBe(false);
    expect(plan.values).toEqual({ USERS_TABLE: 'users-local' });
  });

  it('uses a configured DynamoDB endpoint with the default table name', () => {
    const plan = planDefaults({ AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' }, only('users'));
    expect(plan.users).toBe(false);
    expect(plan.values).toMatchObject({ USERS_TABLE: 'users-local', IDEMPOTENCY_TABLE: 'idempotency-local' });
  });

  it('lets the global AWS_ENDPOINT_URL replace both local stores', () => {
    const plan = planDefaults({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }, ALL_SERVICES);
    expect(plan).toMatchObject({ users: false, storage: false });
  });

  it('keeps configured AWS credentials and region', () => {
    const plan = planDefaults({ AWS_PROFILE: 'dev', AWS_REGION: 'eu-west-1' }, only('storage'));
    expect(plan.storage).toBe(true);
    expect(plan.values).toEqual({});
  });

  it('starts only what the invoked function needs', () => {
    expect(planDefaults({}, only())).toEqual({ inventory: false, users: false, storage: false, feed: false, values: {} });
    expect(planDefaults({}, only('inventory'))).toEqual({ inventory: true, users: false, storage: false, feed: false, values: { LATEST_OS_VERSION: '26.6.2' } });
  });

  it('counts a blank variable as unset', () => {
    expect(planDefaults({ INVENTORY_URL: ' ' }, only('inventory')).inventory).toBe(true);
  });
});

describe('describeConfigured (the banner lines for variables from the environment)', () => {
  it('shows non-secret values and only "(set)" for secrets', () => {
    const lines = describeConfigured(
      { INVENTORY_URL: 'https://jamf.example.com', INVENTORY_CLIENT_SECRET: 'hunter2', TICKETING_PASSWORD: 'pw' },
      ['INVENTORY_URL', 'INVENTORY_CLIENT_SECRET', 'TICKETING_PASSWORD', 'REDIS_URL'],
    );
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toContain('https://jamf.example.com');
    expect(lines.join('\n')).not.toMatch(/hunter2|\bpw\b/);
  });

  it('shows a URL without the credentials it carries (user:password@, a ?token=)', () => {
    const lines = describeConfigured(
      { REDIS_URL: 'redis://:cluster-pw@127.0.0.1:6390', LATEST_OS_FEED_URL: 'https://sofa.example.com/feed.json?token=feed-secret', INVENTORY_URL: 'demo-not-a-url' },
      ['REDIS_URL', 'LATEST_OS_FEED_URL', 'INVENTORY_URL'],
    ).join('\n');
    expect(lines).not.toMatch(/cluster-pw|feed-secret/);
    expect(lines).toContain('redis://127.0.0.1:6390');
    expect(lines).toContain('https://sofa.example.com/feed.json?token=redacted');
    expect(lines).toContain('demo-not-a-url');
  });

  it('serves the demo latest-OS feed only when LATEST_OS_FEED_URL asks for it and the devices run', () => {
    expect(planDefaults({ LATEST_OS_FEED_URL: 'demo' }, ALL_SERVICES).feed).toBe(true);
    expect(planDefaults({ LATEST_OS_FEED_URL: ' demo ' }, only('inventory')).feed).toBe(true);
    expect(planDefaults({ LATEST_OS_FEED_URL: 'demo' }, only('users')).feed).toBe(false);
    expect(planDefaults({ LATEST_OS_FEED_URL: 'https://sofa.example.com/v1/macos_data_feed.json' }, ALL_SERVICES).feed).toBe(false);
    expect(planDefaults({}, ALL_SERVICES).feed).toBe(false);
  });
});
