import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { PART_BYTES } from '../../../lib/cache/value-parts.ts';
import type { RedisClusterMode, RedisConfig } from '../../../lib/config.ts';
import { startLocalRedisCluster, type LocalRedisCluster } from '../../../scripts/local/redis-cluster.ts';
import { startLocalRedisNode, type LocalRedisNode } from '../../../scripts/local/redis-node.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

const asText = (bytes: Buffer): string => bytes.toString('utf8');
/** Keys whose hash slots lie on different masters of a three-master cluster ({a}, {b}, {c} hash apart). */
const SPREAD_KEYS = ['{a}:k', '{b}:k', '{c}:k', '{d}:k', '{e}:k', '{f}:k'];

describe('the cluster tier on a TLS Redis Cluster with an ACL user', () => {
  let cluster: LocalRedisCluster;
  let node: LocalRedisNode;
  let logger: ReturnType<typeof recordingLogger>;
  const tiers: ClusterTier[] = [];
  const tierOf = (redis: Partial<RedisConfig> & { url: string }): ClusterTier => {
    const tier = makeRedisClusterTier({
      redis: { cluster: 'auto', tlsCaFile: cluster.caFile, password: undefined, ...redis },
      logger,
      connectTimeoutMs: 2_000,
      commandTimeoutMs: 2_000,
    });
    tiers.push(tier);
    return tier;
  };

  beforeAll(async () => {
    [cluster, node] = await Promise.all([startLocalRedisCluster(), startLocalRedisNode()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([cluster?.stop(), node?.stop()]);
  });
  beforeEach(() => {
    logger = recordingLogger();
  });
  afterEach(async () => {
    await Promise.all(tiers.splice(0).map((tier) => tier.close()));
  });

  it.each<RedisClusterMode>(['auto', 'on'])(
    'with REDIS_CLUSTER=%s, reads and writes keys of every shard, values in parts included',
    async (mode) => {
      const tier = tierOf({ url: cluster.url, cluster: mode });
      for (const key of SPREAD_KEYS) expect(await tier.write(`${mode}:${key}`, Buffer.from(key), 30_000)).toBe(true);
      for (const key of SPREAD_KEYS) expect(await tier.read(`${mode}:${key}`, asText)).toEqual({ value: key });
      const large = randomBytes(PART_BYTES * 2 + 99);
      expect(await tier.write(`${mode}:devices:v4:{abc}`, large, 30_000)).toBe(true);
      expect((await tier.read(`${mode}:devices:v4:{abc}`, (bytes) => bytes))?.value.equals(large)).toBe(true);
      expect(await tier.peek(`${mode}:devices:v4:{abc}`, 4, (prefix) => prefix.equals(large.subarray(0, 4)))).toBe(true);
      expect(logger.lines).toEqual([]);
    },
  );

  it('sets if absent and deletes if equal through the cluster, beside the value a lock guards', async () => {
    const tier = tierOf({ url: cluster.url });
    expect(await tier.setIfAbsent('devices:v4:{abc}:refresh-lock', 'first', 30_000)).toBe('set');
    expect(await tier.setIfAbsent('devices:v4:{abc}:refresh-lock', 'second', 30_000)).toBe('exists');
    await tier.deleteIfEqual('devices:v4:{abc}:refresh-lock', 'second');
    expect(await tier.setIfAbsent('devices:v4:{abc}:refresh-lock', 'third', 30_000)).toBe('exists');
    await tier.deleteIfEqual('devices:v4:{abc}:refresh-lock', 'first');
    expect(await tier.setIfAbsent('devices:v4:{abc}:refresh-lock', 'third', 30_000)).toBe('set');
    expect(logger.lines).toEqual([]);
  });

  it('with REDIS_CLUSTER=off, a plain connection to a cluster misses the keys of other shards (MOVED) and degrades, never throwing', async () => {
    const tier = tierOf({ url: cluster.url, cluster: 'off' });
    const writes = await Promise.all(SPREAD_KEYS.map((key) => tier.write(`off:${key}`, Buffer.from(key), 30_000)));
    expect(writes).toContain(false);
    expect(logger.lines.some((line) => line.level === 'warn')).toBe(true);
  });

  it('with REDIS_CLUSTER=on, a single node that is no cluster degrades with one line, never throwing', async () => {
    const tier = makeRedisClusterTier({
      redis: { url: node.url, cluster: 'on', tlsCaFile: undefined, password: undefined },
      logger,
      connectTimeoutMs: 500,
    });
    tiers.push(tier);
    expect(await tier.write('k', Buffer.from('v'), 30_000)).toBe(false);
    expect(await tier.read('k', asText)).toBeUndefined();
    expect(logger.lines).toHaveLength(1);
  });

  it('with REDIS_CLUSTER=auto, uses a plain connection on a single node', async () => {
    const tier = makeRedisClusterTier({
      redis: { url: node.url, cluster: 'auto', tlsCaFile: undefined, password: undefined },
      logger,
      // Budgets well above production's: the subject is which connection is made, not how fast.
      connectTimeoutMs: 10_000,
      commandTimeoutMs: 5_000,
    });
    tiers.push(tier);
    expect(await tier.write('k', randomBytes(PART_BYTES + 1), 30_000)).toBe(true);
    expect((await tier.read('k', (bytes) => bytes))?.value.length).toBe(PART_BYTES + 1);
    expect(logger.lines).toEqual([]);
  });
});
