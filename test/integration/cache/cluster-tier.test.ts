import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeRedisClusterTier, type ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { PART_BYTES } from '../../../lib/cache/value-parts.ts';
import type { RedisConfig } from '../../../lib/config.ts';
import { connectRawClient, startRedisServer, type RedisServer } from '../../support/redis-server.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

/** REDIS_URL alone, as a single node is configured: the cluster mode asked of the server. */
const redisAt = (url: string): RedisConfig => ({ url, cluster: 'auto', tlsCaFile: undefined, password: undefined });

const asNumbers = (bytes: Buffer): number[] | undefined => {
  const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
  return Array.isArray(parsed) && parsed.every((item) => typeof item === 'number') ? parsed : undefined;
};

/**
 * The command timeout of the tier most tests use: above production's 250 ms, so a busy machine does
 * not turn an answer into a miss; the paused-server test waits it out once.
 */
const COMMAND_TIMEOUT_MS = 1_000;

const elapsed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> => {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
};

/** Polls (bounded) until the tier reads `key` again, e.g. after the server came back. */
const readsAgain = async (tier: ClusterTier, key: string): Promise<boolean> => {
  for (let attempt = 0; attempt < 60; attempt += 1) {
    if ((await tier.read(key, asNumbers)) !== undefined) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
};

describe('Redis cluster tier', () => {
  let server: RedisServer;
  let raw: Redis;
  let tier: ClusterTier;
  let logger: ReturnType<typeof recordingLogger>;

  beforeAll(async () => {
    server = await startRedisServer();
    raw = await connectRawClient(server.url);
  });
  afterAll(async () => {
    raw.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    server.resume();
    if ((await raw.ping().catch(() => 'down')) !== 'PONG') {
      await server.restart();
      await raw.ping();
    }
    await raw.flushall();
    logger = recordingLogger();
    tier = makeRedisClusterTier({ redis: redisAt(server.url), logger, commandTimeoutMs: COMMAND_TIMEOUT_MS, connectTimeoutMs: 2_000 });
  });
  afterEach(async () => {
    server.resume();
    await tier.close();
  });

  it('stores a value with SET … PX and reads it back', async () => {
    await tier.write('k', Buffer.from('[1,2]'), 30_000);
    const pttl = await raw.pttl('k');
    expect(pttl).toBeGreaterThan(29_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
    expect(await tier.read('k', asNumbers)).toEqual({ value: [1, 2] });
    expect(logger.lines).toEqual([]);
  });

  it("answers that a write landed, and peeks at a value's first bytes without reading the rest", async () => {
    expect(await tier.write('k', Buffer.from('header\n[1,2,3]'), 30_000)).toBe(true);
    expect(await tier.peek('k', 6, (prefix) => prefix.toString('utf8'))).toBe('header');
    expect(await tier.peek('absent', 6, (prefix) => prefix.toString('utf8'))).toBeUndefined();
    expect(logger.lines).toEqual([]);
  });

  it('sets an absent key with an expiry, leaves one that exists, and deletes it only while it holds the value', async () => {
    expect(await tier.setIfAbsent('lock', 'first', 30_000)).toBe('set');
    expect(await raw.pttl('lock')).toBeGreaterThan(29_000);
    expect(await tier.setIfAbsent('lock', 'second', 30_000)).toBe('exists');
    await tier.deleteIfEqual('lock', 'second');
    expect(await raw.get('lock')).toBe('first');
    await tier.deleteIfEqual('lock', 'first');
    expect(await raw.exists('lock')).toBe(0);
    expect(await tier.setIfAbsent('lock', 'second', 30_000)).toBe('set');
  });

  it('answers a set it could not ask for as unavailable, and a write that failed as false', async () => {
    server.pause();
    expect(await tier.setIfAbsent('lock', 'token', 30_000)).toBe('unavailable');
    expect(await tier.write('k', Buffer.from('[1]'), 30_000)).toBe(false);
    server.resume();
  });

  it('reads a missing key as a miss without reporting anything', async () => {
    expect(await tier.read('absent', asNumbers)).toBeUndefined();
    expect(logger.lines).toEqual([]);
  });

  it('lets Redis expire the value after its TTL', async () => {
    // Redis holds the value with the TTL given, in milliseconds...
    await tier.write('k', Buffer.from('[1]'), 10_000);
    expect((await tier.read('k', asNumbers))?.value).toEqual([1]);
    const pttl = await raw.pttl('k');
    expect(pttl).toBeGreaterThan(5_000);
    expect(pttl).toBeLessThanOrEqual(10_000);
    // ...and drops it once that has passed (a wait longer than planned only makes that surer).
    await tier.write('short', Buffer.from('[2]'), 100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await tier.read('short', asNumbers)).toBeUndefined();
    expect(await raw.exists('short')).toBe(0);
  });

  it('reads a value it did not write, without expiry, like any other', async () => {
    await raw.set('k', '[3]');
    expect(await tier.read('k', asNumbers)).toEqual({ value: [3] });
  });

  it.each([
    ['unparsable text', '[1,2'],
    ['the wrong shape', '{"numbers":[1]}'],
  ])('reads %s as a miss and reports the tier degraded once', async (_label, garbage) => {
    await raw.set('k', garbage, 'PX', 30_000);
    expect(await tier.read('k', asNumbers)).toBeUndefined();
    expect(await tier.read('k', asNumbers)).toBeUndefined();
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({ level: 'warn', fields: { cache_tier_state: 'degraded', reason: 'unreadable value' } });
  });

  it('reports recovery once when a good value replaces garbage', async () => {
    await raw.set('k', 'garbage', 'PX', 30_000);
    await tier.read('k', asNumbers);
    await tier.write('k', Buffer.from('[5]'), 30_000);
    expect((await tier.read('k', asNumbers))?.value).toEqual([5]);
    expect(logger.lines.map((line) => line.fields.cache_tier_state)).toEqual(['degraded', 'healthy']);
  });

  it('stores a value larger than one part in parts of its hash slot, reads it back whole and peeks at its header', async () => {
    const value = Buffer.concat([Buffer.from('header-line\n'), randomBytes(PART_BYTES * 2 + 12_345)]);
    expect(await tier.write('devices:v4:{abc}', value, 30_000)).toBe(true);
    const keys = (await raw.keys('*')).sort();
    expect(keys).toHaveLength(3);
    expect(keys.every((key) => key.includes('{abc}'))).toBe(true);
    for (const key of keys) expect(await raw.pttl(key)).toBeGreaterThan(29_000);
    expect((await raw.strlen('devices:v4:{abc}')) - PART_BYTES).toBeLessThan(200);
    const read = await tier.read('devices:v4:{abc}', (bytes) => bytes);
    expect(read?.value.equals(value)).toBe(true);
    expect(await tier.peek('devices:v4:{abc}', 11, (prefix) => prefix.toString('utf8'))).toBe('header-line');
    expect(logger.lines).toEqual([]);
  });

  it('lets the parts of a replaced value expire shortly, and reads the new value whole', async () => {
    const first = randomBytes(PART_BYTES * 2 + 1);
    const second = randomBytes(PART_BYTES + 7);
    await tier.write('k', first, 600_000);
    const firstParts = (await raw.keys('*:part:*')).sort();
    expect(firstParts).toHaveLength(2);
    await tier.write('k', second, 600_000);
    // A reader that read the first head just before has a few seconds to read its parts.
    for (const part of firstParts) {
      const pttl = await raw.pttl(part);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(10_000);
    }
    expect((await tier.read('k', (bytes) => bytes))?.value.equals(second)).toBe(true);
    // A value of one part replaces both and is stored as it is.
    await tier.write('k', Buffer.from('[5]'), 600_000);
    expect(await raw.get('k')).toBe('[5]');
    expect(await tier.read('k', asNumbers)).toEqual({ value: [5] });
    expect(logger.lines).toEqual([]);
  });

  it('reads a value missing one of its parts as a miss, reporting an unreadable value once, never part of it', async () => {
    await tier.write('k', randomBytes(PART_BYTES * 3), 30_000);
    const [part] = await raw.keys('*:part:*');
    await raw.del(part!);
    let decoded = 0;
    expect(await tier.read('k', (bytes) => ((decoded += 1), bytes))).toBeUndefined();
    expect(await tier.read('k', (bytes) => ((decoded += 1), bytes))).toBeUndefined();
    expect(decoded).toBe(0);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ cache_tier_name: 'cluster', reason: 'unreadable value' }),
      }),
    ]);
  });

  it.each([
    [
      'out of memory',
      async () => void (await raw.config('SET', 'maxmemory', '1')),
      async () => void (await raw.config('SET', 'maxmemory', '0')),
    ],
    ['a read-only replica', async () => void (await raw.replicaof('127.0.0.1', '1')), async () => void (await raw.replicaof('NO', 'ONE'))],
  ])('answers a write refused by a server %s as not stored, once, and keeps reading', async (_label, refuse, restore) => {
    await tier.write('k', Buffer.from('[1]'), 30_000);
    await refuse();
    try {
      expect(await tier.write('k', Buffer.from('[2]'), 30_000)).toBe(false);
      expect(await tier.write('k', randomBytes(PART_BYTES + 1), 30_000)).toBe(false);
      expect(await tier.read('k', asNumbers)).toEqual({ value: [1] });
    } finally {
      await restore();
    }
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ cache_tier_name: 'cluster writes', reason: 'write refused' }),
      }),
    ]);
    expect(await tier.write('k', Buffer.from('[3]'), 30_000)).toBe(true);
    expect(logger.lines.map((line) => line.fields.cache_tier_state)).toEqual(['degraded', 'healthy']);
  });

  it('misses fast while Redis is down, reports it once, and recovers on its own when Redis returns', async () => {
    await tier.write('k', Buffer.from('[1]'), 30_000);
    await server.kill();
    const outage = await elapsed(async () => {
      const reads = [];
      for (let attempt = 0; attempt < 10; attempt += 1) reads.push(await tier.read('k', asNumbers));
      await tier.write('k', Buffer.from('[2]'), 30_000);
      return reads;
    });
    expect(outage.result.every((read) => read === undefined)).toBe(true);
    expect(outage.ms).toBeLessThan(2_000);
    expect(logger.lines.map((line) => line.level)).toEqual(['warn']);
    await server.restart();
    await raw.ping().catch(() => undefined);
    await raw.set('k', '[7]', 'PX', 30_000);
    expect(await readsAgain(tier, 'k')).toBe(true);
    expect(logger.lines.map((line) => line.fields.cache_tier_state)).toEqual(['degraded', 'healthy']);
  });

  it('gives up on a hung Redis within the command timeout, and later lookups fail at once', async () => {
    // A longer command timeout than the other tests', so generous bounds still tell the outcomes
    // apart on a busy machine. Without the command timeout, a read on the hung connection would last
    // until ioredis's socket timeout (four command timeouts); without dropping that connection, each
    // later lookup would wait out a command timeout of its own until then (about three in all).
    const commandTimeoutMs = 1_000;
    const hung = makeRedisClusterTier({ redis: redisAt(server.url), logger, commandTimeoutMs, connectTimeoutMs: 500 });
    try {
      await hung.write('k', Buffer.from('[1]'), 30_000);
      server.pause();
      const first = await elapsed(() => hung.read('k', asNumbers));
      expect(first.result).toBeUndefined();
      expect(first.ms).toBeLessThan(3 * commandTimeoutMs);
      // The suspect connection was dropped: no further lookup waits out a timeout of its own (all six
      // together take less than one command timeout).
      const later = await elapsed(async () => {
        const reads = [];
        for (let attempt = 0; attempt < 5; attempt += 1) reads.push(await hung.read('k', asNumbers));
        await hung.write('k', Buffer.from('[2]'), 30_000);
        return reads;
      });
      expect(later.result.every((read) => read === undefined)).toBe(true);
      expect(later.ms).toBeLessThan(commandTimeoutMs);
      expect(logger.lines.map((line) => line.level)).toEqual(['warn']);
      server.resume();
      expect(await readsAgain(hung, 'k')).toBe(true);
      expect(logger.lines.map((line) => line.fields.cache_tier_state)).toEqual(['degraded', 'healthy']);
    } finally {
      server.resume();
      await hung.close();
    }
  });

  it('misses within the connect budget when nothing listens at REDIS_URL', async () => {
    const port = server.port;
    await server.kill();
    const orphan = makeRedisClusterTier({ redis: redisAt(`redis://127.0.0.1:${port}`), logger, connectTimeoutMs: 300 });
    try {
      const read = await elapsed(() => orphan.read('k', asNumbers));
      expect(read.result).toBeUndefined();
      // Generous against the 300 ms budget; a lookup waiting for the connection unbounded never ends.
      expect(read.ms).toBeLessThan(3_000);
      expect(logger.lines).toHaveLength(1);
    } finally {
      await orphan.close();
    }
  });

  it('connects on the first lookup of a new container and reads without reporting anything', async () => {
    await raw.set('k', '[4]', 'PX', 30_000);
    // Budgets well above production's: the subject is the first lookup connecting, not how fast.
    const fresh = makeRedisClusterTier({ redis: redisAt(server.url), logger, connectTimeoutMs: 10_000, commandTimeoutMs: 5_000 });
    try {
      expect((await fresh.read('k', asNumbers))?.value).toEqual([4]);
      expect(logger.lines).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe('REDIS_URL', () => {
  const logger = { warn: () => undefined, info: () => undefined };

  it('accepts redis:// and rediss:// (TLS) URLs without connecting, until the first lookup', async () => {
    // Loopback listeners, one per URL, that only count the connections they are offered.
    const sockets = new Set<Socket>();
    const listeners = await Promise.all(
      ['redis', 'rediss'].map(async (scheme) => {
        const listener = { scheme, connections: 0, server: createServer() };
        listener.server.on('connection', (socket) => {
          listener.connections += 1;
          sockets.add(socket);
          socket.on('error', () => undefined);
          socket.on('close', () => sockets.delete(socket));
        });
        await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
        return listener;
      }),
    );
    const urlOf = (listener: (typeof listeners)[number]) => {
      const { port } = listener.server.address() as AddressInfo;
      return listener.scheme === 'rediss' ? `rediss://user:secret@127.0.0.1:${port}/0` : `redis://127.0.0.1:${port}`;
    };
    const tiers = listeners.map((listener) => makeRedisClusterTier({ redis: redisAt(urlOf(listener)), logger, connectTimeoutMs: 300 }));
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(listeners.map((listener) => listener.connections)).toEqual([0, 0]);
      // The first lookup connects (the listener never answers, so it misses within the connect budget).
      for (const [index, tier] of tiers.entries()) {
        const listener = listeners[index]!;
        expect(await tier.read('k', asNumbers)).toBeUndefined();
        // Bounded: the listener may take its turn of the event loop after the lookup gave up.
        for (let attempt = 0; attempt < 100 && listener.connections === 0; attempt += 1)
          await new Promise((resolve) => setTimeout(resolve, 20));
        expect(listener.connections, listener.scheme).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all(tiers.map((tier) => tier.close()));
      for (const socket of sockets) socket.destroy();
      await Promise.all(listeners.map((listener) => new Promise((resolve) => listener.server.close(resolve))));
    }
  });
});
