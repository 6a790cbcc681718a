import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { takeRefreshLock } from '../../../lib/devices/refresh-lock.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

describe('refresh lock', () => {
  let redis: RedisServer;
  let raw: Redis;
  let cluster: ClusterTier;

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = await connectRawClient(redis.url);
    cluster = makeRedisClusterTier({
      redis: { url: redis.url, cluster: 'off', tlsCaFile: undefined, password: undefined },
      logger: recordingLogger(),
      commandTimeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await cluster.close();
    raw.disconnect();
    await redis.stop();
  });

  it('takes a free lock with an expiry, finds a held one held, and is freed only by its holder', async () => {
    const first = await takeRefreshLock(cluster, 'devices:{lock}:refresh-lock', 30_000);
    expect(first.taken).toBe('acquired');
    expect(await raw.pttl('devices:{lock}:refresh-lock')).toBeGreaterThan(29_000);
    const second = await takeRefreshLock(cluster, 'devices:{lock}:refresh-lock', 30_000);
    expect(second.taken).toBe('held');
    await second.release();
    expect(await raw.exists('devices:{lock}:refresh-lock')).toBe(1);
    await first.release();
    expect(await raw.exists('devices:{lock}:refresh-lock')).toBe(0);
    expect((await takeRefreshLock(cluster, 'devices:{lock}:refresh-lock', 30_000)).taken).toBe('acquired');
  });

  it('leaves a lock that expired and was taken by another to its new holder', async () => {
    const first = await takeRefreshLock(cluster, 'devices:{expired}:refresh-lock', 30_000);
    // The expiry as the server applies it, without waiting for it.
    await raw.del('devices:{expired}:refresh-lock');
    const second = await takeRefreshLock(cluster, 'devices:{expired}:refresh-lock', 30_000);
    expect(second.taken).toBe('acquired');
    await first.release();
    expect(await raw.exists('devices:{expired}:refresh-lock')).toBe(1);
  });
});
