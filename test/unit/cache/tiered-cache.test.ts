import { describe, expect, it } from 'vitest';
import type { ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { makeMemoryTier } from '../../../lib/cache/memory-tier.ts';
import { CacheTier } from '../../../lib/cache/provenance.ts';
import { makeTieredCache, type ClusterCodec } from '../../../lib/cache/tiered-cache.ts';

/**
 * An in-process ClusterTier honouring the interface's promise (never rejects; undecodable text is a
 * miss). The Redis adapter itself is tested against a real redis-server in test/integration/cache.
 */
const mapCluster = (now: () => number) => {
  const entries = new Map<string, { bytes: Buffer; expiresAt: number }>();
  const stats = { reads: 0, writes: [] as { key: string; text: string; ttlMs: number }[] };
  let failWrites = false;
  let writeDelayMs = 0;
  const tier: ClusterTier = {
    read: async (key, decode) => {
      stats.reads += 1;
      const entry = entries.get(key);
      if (entry === undefined || entry.expiresAt <= now()) return undefined;
      try {
        const value = decode(entry.bytes);
        return value === undefined ? undefined : { value, remainingTtlMs: entry.expiresAt - now() };
      } catch {
        return undefined;
      }
    },
    write: (key, bytes, ttlMs) => {
      stats.writes.push({ key, text: bytes.toString('utf8'), ttlMs });
      if (failWrites) return Promise.reject(new Error('cluster write refused'));
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          entries.set(key, { bytes, expiresAt: now() + ttlMs });
          resolve();
        }, writeDelayMs),
      );
    },
    close: async () => undefined,
  };
  return {
    tier,
    stats,
    put: (key: string, value: string | Buffer, ttlMs: number) =>
      entries.set(key, { bytes: Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'), expiresAt: now() + ttlMs }),
    failWrites: () => void (failWrites = true),
    delayWrites: (ms: number) => void (writeDelayMs = ms),
    has: (key: string) => entries.has(key),
  };
};

const codec: ClusterCodec<number[]> = {
  encode: (numbers) => Buffer.from(JSON.stringify({ v: 1, numbers }), 'utf8'),
  decode: (bytes) => {
    const parsed = JSON.parse(bytes.toString('utf8')) as { v?: unknown; numbers?: unknown };
    return parsed.v === 1 && Array.isArray(parsed.numbers) ? (parsed.numbers as number[]) : undefined;
  },
};

const setup = (options: { ttlSeconds?: number; withCluster?: boolean; load?: () => Promise<number[]> } = {}) => {
  let now = 10_000;
  const time = { now: () => now, advance: (ms: number) => void (now += ms) };
  const memory = makeMemoryTier<string>({ maxEntries: 4, now: time.now });
  const cluster = mapCluster(time.now);
  let loads = 0;
  const cache = makeTieredCache<number[], string, { caller: string }>({
    memory,
    cluster: options.withCluster === false ? undefined : { tier: cluster.tier, codec },
    ttlSeconds: options.ttlSeconds ?? 60,
    load: async () => {
      loads += 1;
      return options.load ? options.load() : [1, 2, 3];
    },
    present: (numbers) => numbers.join('+'),
  });
  return { cache, memory, cluster, time, loads: () => loads };
};

const request = { caller: 'test' };

describe('tiered cache', () => {
  it('loads from upstream on the first get and answers from memory on the second', async () => {
    const { cache, loads } = setup();
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Upstream });
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Memory });
    expect(loads()).toBe(1);
  });

  it('writes the loaded form to the cluster with the TTL in milliseconds on an upstream fill', async () => {
    const { cache, cluster } = setup({ ttlSeconds: 7 });
    await cache.get('k', request);
    expect(cluster.stats.writes).toEqual([{ key: 'k', text: '{"v":1,"numbers":[1,2,3]}', ttlMs: 7_000 }]);
  });

  it('answers from the cluster when memory misses, then fills memory from it', async () => {
    const { cache, cluster, loads } = setup();
    cluster.put('k', codec.encode([4, 5]), 60_000);
    expect(await cache.get('k', request)).toEqual({ value: '4+5', tier: CacheTier.Cluster });
    expect(await cache.get('k', request)).toEqual({ value: '4+5', tier: CacheTier.Memory });
    expect(loads()).toBe(0);
    expect(cluster.stats.reads).toBe(1);
    expect(cluster.stats.writes).toEqual([]);
  });

  it('keeps a cluster hit in memory only for what is left of the cluster entry, not a fresh TTL', async () => {
    const { cache, cluster, time, loads } = setup({ ttlSeconds: 60 });
    cluster.put('k', codec.encode([4, 5]), 5_000);
    expect((await cache.get('k', request)).tier).toBe(CacheTier.Cluster);
    time.advance(4_999);
    expect((await cache.get('k', request)).tier).toBe(CacheTier.Memory);
    time.advance(1);
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Upstream });
    expect(loads()).toBe(1);
  });

  it('reads upstream again once the TTL has passed in both tiers', async () => {
    const { cache, time, loads } = setup({ ttlSeconds: 1 });
    await cache.get('k', request);
    time.advance(1_000);
    expect((await cache.get('k', request)).tier).toBe(CacheTier.Upstream);
    expect(loads()).toBe(2);
  });

  it('works with memory alone when there is no cluster tier', async () => {
    const { cache, cluster, loads } = setup({ withCluster: false });
    expect((await cache.get('k', request)).tier).toBe(CacheTier.Upstream);
    expect((await cache.get('k', request)).tier).toBe(CacheTier.Memory);
    expect(loads()).toBe(1);
    expect(cluster.stats.reads + cluster.stats.writes.length).toBe(0);
  });

  it('shares one cluster lookup and one load among ten concurrent misses', async () => {
    let release: (numbers: number[]) => void = () => undefined;
    const gate = new Promise<number[]>((resolve) => (release = resolve));
    const { cache, cluster, loads } = setup({ load: () => gate });
    const pending = Array.from({ length: 10 }, () => cache.get('k', request));
    await new Promise((resolve) => setImmediate(resolve));
    release([9]);
    const results = await Promise.all(pending);
    expect(loads()).toBe(1);
    expect(cluster.stats.reads).toBe(1);
    expect(cluster.stats.writes).toHaveLength(1);
    expect(results.every((result) => result.value === '9' && result.tier === CacheTier.Upstream)).toBe(true);
  });

  it('gives every waiter the error of a failing load and caches nothing of it', async () => {
    let fail = true;
    const { cache, cluster, memory, loads } = setup({
      load: async () => {
        if (fail) throw new Error('upstream down');
        return [7];
      },
    });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => cache.get('k', request)));
    expect(outcomes.every((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).message === 'upstream down')).toBe(true);
    expect(loads()).toBe(1);
    expect(memory.size()).toBe(0);
    expect(cluster.stats.writes).toEqual([]);
    fail = false;
    expect(await cache.get('k', request)).toEqual({ value: '7', tier: CacheTier.Upstream });
    expect(loads()).toBe(2);
  });

  it.each([
    ['text that is not JSON', '{"v":1,"numb'],
    ['another format version', '{"v":2,"numbers":[4]}'],
    ['the wrong shape', '{"v":1,"numbers":"4"}'],
  ])('treats %s in the cluster as a miss and overwrites it from upstream', async (_label, garbage) => {
    const { cache, cluster, loads } = setup();
    cluster.put('k', garbage, 60_000);
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Upstream });
    expect(loads()).toBe(1);
    expect(cluster.stats.writes.map((write) => write.text)).toEqual([codec.encode([1, 2, 3]).toString('utf8')]);
  });

  it('finishes the cluster write of an upstream fill before answering, so a frozen container loses nothing', async () => {
    const { cache, cluster } = setup();
    cluster.delayWrites(30);
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Upstream });
    expect(cluster.has('k')).toBe(true);
  });

  it('still answers an upstream fill when the cluster write fails', async () => {
    const { cache, cluster } = setup();
    cluster.failWrites();
    expect(await cache.get('k', request)).toEqual({ value: '1+2+3', tier: CacheTier.Upstream });
    expect(cluster.stats.writes).toHaveLength(1);
    expect(cluster.has('k')).toBe(false);
  });

  it('keeps per-container variants apart in memory through memoryKey while sharing the cluster entry', async () => {
    const now = () => 0;
    const memory = makeMemoryTier<string>({ maxEntries: 4, now });
    const cluster = mapCluster(now);
    let loads = 0;
    const make = (separator: string) =>
      makeTieredCache<number[], string, undefined>({
        memory,
        cluster: { tier: cluster.tier, codec },
        ttlSeconds: 60,
        load: async () => {
          loads += 1;
          return [1, 2];
        },
        present: (numbers) => numbers.join(separator),
        memoryKey: (key) => `${key}|${separator}`,
      });
    expect(await make('+').get('k', undefined)).toEqual({ value: '1+2', tier: CacheTier.Upstream });
    expect(await make('-').get('k', undefined)).toEqual({ value: '1-2', tier: CacheTier.Cluster });
    expect(loads).toBe(1);
  });
});
