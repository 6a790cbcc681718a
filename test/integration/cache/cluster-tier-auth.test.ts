import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import type { RedisConfig } from '../../../lib/config.ts';
import { LOCAL_AWS_ENV } from '../../../scripts/local/local-aws.ts';
import { saveEnvironment, setEnvironment } from '../../support/environment.ts';
import { startFakeSsm, type FakeSsm } from '../../support/fake-ssm.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';

const USER = 'devices-app';
/**
 * Budgets far above the request path's (250 ms a command, 500 ms to connect): these tests are about
 * who authenticates with what, and the first lookup waits for the SDK to load and SSM to answer,
 * which on a busy machine takes longer than the production budget. The budgets have tests of their own.
 */
const AUTH_BUDGETS = { connectTimeoutMs: 10_000, commandTimeoutMs: 5_000 };
const asText = (bytes: Buffer): string => bytes.toString('utf8');

/** Polls (bounded) until the tier reads `key` again. */
const readsAgain = async (tier: ClusterTier, key: string): Promise<string | undefined> => {
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const read = await tier.read(key, asText);
    if (read !== undefined) return read.value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
};

describe('the cluster tier with an ACL user (ElastiCache RBAC)', () => {
  let server: RedisServer;
  let raw: Redis;
  let ssm: FakeSsm;
  // The fake SSM reads this object on every request: a test rotates a password by changing it.
  const parameters: Record<string, string> = {};
  let tier: ClusterTier | undefined;
  let logger: ReturnType<typeof recordingLogger>;
  let restoreEnvironment: () => void;
  let parameterName: string;
  let test = 0;

  const setPassword = async (password: string) => {
    await raw.acl('SETUSER', USER, 'on', 'resetpass', `>${password}`, '~*', '&*', '+@all');
  };
  const loggedText = () => JSON.stringify(logger.lines);

  beforeAll(async () => {
    server = await startRedisServer();
    raw = await connectRawClient(server.url);
    ssm = await startFakeSsm(parameters);
    restoreEnvironment = saveEnvironment(['AWS_ENDPOINT_URL_SSM', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', ...Object.keys(LOCAL_AWS_ENV)]);
    setEnvironment({ ...LOCAL_AWS_ENV, AWS_ENDPOINT_URL_SSM: ssm.endpoint, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined });
  });
  afterAll(async () => {
    restoreEnvironment();
    raw.disconnect();
    await ssm.close();
    await server.stop();
  });
  beforeEach(async () => {
    await raw.flushall();
    await raw.set('k', 'cached');
    logger = recordingLogger();
    // Powertools caches each parameter for the process: a name per test.
    test += 1;
    parameterName = `/cache/password-${test}`;
  });
  afterEach(async () => {
    await tier?.close();
    tier = undefined;
  });

  const ssmTier = (options: Partial<RedisConfig> = {}) =>
    makeRedisClusterTier({
      redis: {
        url: `redis://${USER}@127.0.0.1:${server.port}`,
        cluster: 'auto',
        tlsCaFile: undefined,
        password: { kind: 'ssm', parameterName, variable: 'REDIS_PASSWORD_SSM' },
        ...options,
      },
      logger,
      passwordRereadMs: 0,
      ...AUTH_BUDGETS,
    });

  it('authenticates with the user and password of REDIS_URL', async () => {
    await setPassword('url-secret-1');
    tier = makeRedisClusterTier({
      redis: { url: `redis://${USER}:url-secret-1@127.0.0.1:${server.port}`, cluster: 'auto', tlsCaFile: undefined, password: undefined },
      logger,
      ...AUTH_BUDGETS,
    });
    expect(await tier.read('k', asText)).toEqual({ value: 'cached' });
    expect(await tier.write('k', Buffer.from('written'), 30_000)).toBe(true);
    expect(logger.lines).toEqual([]);
  });

  it('degrades on a wrong password with one line that names the refusal and never the password', async () => {
    await setPassword('right-secret');
    tier = makeRedisClusterTier({
      redis: { url: `redis://${USER}:wrong-secret-2@127.0.0.1:${server.port}`, cluster: 'auto', tlsCaFile: undefined, password: undefined },
      logger,
    });
    for (let attempt = 0; attempt < 5; attempt += 1) expect(await tier.read('k', asText)).toBeUndefined();
    expect(await tier.write('k', Buffer.from('x'), 30_000)).toBe(false);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({
      level: 'warn',
      fields: { cache_tier_name: 'cluster', cache_tier_state: 'degraded', reason: 'unavailable' },
    });
    expect(String(logger.lines[0]!.fields.error)).toMatch(/WRONGPASS/);
    expect(loggedText()).not.toContain('wrong-secret-2');
    expect(loggedText()).not.toContain('right-secret');
  });

  it('reads the password from SSM once, and again when the server refuses it after a rotation', async () => {
    await setPassword('ssm-secret-a');
    parameters[parameterName] = 'ssm-secret-a';
    tier = ssmTier();
    expect(await tier.read('k', asText)).toEqual({ value: 'cached' });
    expect(await tier.read('k', asText)).toEqual({ value: 'cached' });
    expect(ssm.requests().filter((request) => request.Name === parameterName)).toHaveLength(1);
    // The rotation: the server's password and the parameter change, and the connection drops.
    await setPassword('ssm-secret-b');
    parameters[parameterName] = 'ssm-secret-b';
    await raw.client('KILL', 'USER', USER);
    expect(await readsAgain(tier, 'k')).toBe('cached');
    expect(ssm.requests().filter((request) => request.Name === parameterName)).toHaveLength(2);
    expect(loggedText()).not.toContain('ssm-secret');
  });

  it('degrades without a failed lookup when the SSM parameter cannot be read, naming the variable', async () => {
    tier = ssmTier();
    expect(await tier.read('k', asText)).toBeUndefined();
    expect(logger.lines).toHaveLength(1);
    expect(String(logger.lines[0]!.fields.error)).toContain('REDIS_PASSWORD_SSM');
  });
});
