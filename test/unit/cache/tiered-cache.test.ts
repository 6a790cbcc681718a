import { describe, expect, it } from 'vitest';
import type { ClusterTier } from '../../../lib/cache/cluster-tier.ts';
import { CacheTier, makeTieredCache, type ClusterCodec, type Stamp } from '../../../lib/cache/tiered-cache.ts';

interface Listing extends Stamp {
  numbers: number[];
}

/** Lets every promise callback already queued run (no timer, no real time). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const PENDING = Symbol('pending');
/** The promise's value if it has settled once queued callbacks ran, else PENDING. */
const settledValue = <T>(promise: Promise<T>): Promise<T | typeof PENDING> =>
  Promise.race([promise, settle().then((): typeof PENDING => PENDING)]);

/**
 * An in-process ClusterTier honouring the interface's promise (never rejects; undecodable bytes are
 * a miss; a failed write answers false). The Redis adapter itself is tested against a real
 * redis-server in test/integration/cache.
 */
const mapCluster = (now: () => number) => {
  const entries = new Map<string, { bytes: Buffer; expiresAt: number }>();
  const stats = { reads: 0, peeks: 0, writes: [] as { key: string; ttlMs: number }[] };
  let down = false;
  let failWrites = false;
  // While set, reads (or writes) wait for the test to let them go.
  let readGate: Promise<void> | undefined;
  let writeGate: Promise<void> | undefined;
  const hold = (set: (gate: Promise<void> | undefined) => void) => {
    const gate = Promise.withResolvers<void>();
    set(gate.promise);
    return () => {
      set(undefined);
      gate.resolve();
    };
  };
  const live = (key: string) => {
    const entry = entries.get(key);
    return entry === undefined || entry.expiresAt <= now() ? undefined : entry;
  };
  const tier: ClusterTier = {
    read: async (key, decode) => {
      stats.reads += 1;
      if (readGate !== undefined) await readGate;
      const entry = down ? undefined : live(key);
      if (entry === undefined) return undefined;
      try {
        const value = await decode(entry.bytes);
        return value === undefined ? undefined : { value };
      } catch {
        return undefined;
      }
    },
    peek: async (key, length, describe) => {
      stats.peeks += 1;
      const entry = down ? undefined : live(key);
      return entry === undefined ? undefined : describe(entry.bytes.subarray(0, length));
    },
    write: (key, bytes, ttlMs) => {
      stats.writes.push({ key, ttlMs });
      if (failWrites || down) return Promise.resolve(false);
      // Lands asynchronously, as over a network: after the test lets it go, if writes are held.
      return (writeGate ?? Promise.resolve()).then(() => {
        entries.set(key, { bytes, expiresAt: now() + ttlMs });
        return true;
      });
    },
    setIfAbsent: async () => 'set',
    deleteIfEqual: async () => undefined,
    close: async () => undefined,
  };
  return {
    tier,
    stats,
    put: (key: string, listing: Listing, ttlMs = 60_000) => entries.set(key, { bytes: codec.encode(listing), expiresAt: now() + ttlMs }),
    putBytes: (key: string, bytes: Buffer) => entries.set(key, { bytes, expiresAt: now() + 60_000 }),
    failWrites: () => void (failWrites = true),
    goDown: () => void (down = true),
    /** Holds every read until the returned function lets them go. */
    holdReads: () => hold((gate) => (readGate = gate)),
    /** Holds every write until the returned function lets them go. */
    holdWrites: () => hold((gate) => (writeGate = gate)),
    has: (key: string) => live(key) !== undefined,
  };
};

/** A header line (the stamp) and the numbers, like the real codec's header + payload. */
const codec: ClusterCodec<Listing> = {
  stampBytes: 64,
  encode: (listing) =>
    Buffer.from(`${JSON.stringify({ readAt: listing.readAt, id: listing.id })}\n${JSON.stringify(listing.numbers)}`, 'utf8'),
  stampOf: (prefix) => {
    const line = prefix.toString('utf8').split('\n')[0]!;
    try {
      return JSON.parse(line) as Stamp;
    } catch {
      return undefined;
    }
  },
  decode: (bytes) => {
    const [header, numbers] = bytes.toString('utf8').split('\n');
    const stamp = JSON.parse(header!) as Stamp;
    return { ...stamp, numbers: JSON.parse(numbers!) as number[] };
  },
};

const KEY = 'list';
const TTL = 60_000;
const STALE = 600_000;

const setup = (options: { staleMs?: number; withCluster?: boolean; load?: (at: number) => Promise<Listing> } = {}) => {
  let now = 1_000_000;
  const time = { now: () => now, advance: (ms: number) => void (now += ms) };
  const cluster = mapCluster(time.now);
  let loads = 0;
  const cache = makeTieredCache<Listing, { caller: string }>({
    cluster: options.withCluster === false ? undefined : { tier: cluster.tier, codec, key: KEY },
    ttlMs: TTL,
    servableMs: TTL + (options.staleMs ?? STALE),
    now: time.now,
    load: async () => {
      loads += 1;
      return options.load ? options.load(now) : { readAt: now, id: `read-${loads}`, numbers: [loads] };
    },
  });
  const get = () => cache.get({ caller: 'test' });
  return { cache, get, cluster, time, loads: () => loads };
};

describe('tiered cache', () => {
  it('loads from upstream on the first get and answers from memory while fresh', async () => {
    const { get, loads } = setup();
    expect((await get()).tier).toBe(CacheTier.Upstream);
    const second = await get();
    expect(second.tier).toBe(CacheTier.Memory);
    expect(second.value.numbers).toEqual([1]);
    expect(loads()).toBe(1);
  });

  it('writes an upstream fill to the cluster for the rest of its servable life (TTL + stale window)', async () => {
    const { get, cluster } = setup();
    await get();
    expect(cluster.stats.writes).toEqual([{ key: KEY, ttlMs: TTL + STALE }]);
  });

  it('answers from the cluster when memory is empty (a fresh container), then from memory', async () => {
    const { get, cluster, time, loads } = setup();
    cluster.put(KEY, { readAt: time.now(), id: 'shared', numbers: [7] });
    const first = await get();
    expect([first.tier, first.value.numbers]).toEqual([CacheTier.Cluster, [7]]);
    expect((await get()).tier).toBe(CacheTier.Memory);
    expect(loads()).toBe(0);
  });

  it("counts freshness from the data's read time in every tier, so a cluster hit is not fresher than its data", async () => {
    const { get, cluster, time } = setup({ staleMs: 0 });
    cluster.put(KEY, { readAt: time.now() - (TTL - 1_000), id: 'old', numbers: [7] });
    expect((await get()).tier).toBe(CacheTier.Cluster);
    time.advance(1_001);
    // Past its TTL and no stale window: read upstream.
    expect((await get()).tier).toBe(CacheTier.Upstream);
  });

  describe('stale while revalidate', () => {
    it('serves a stale entry from memory while the cluster holds nothing newer, without reading upstream', async () => {
      const { get, time, loads, cluster } = setup();
      await get();
      time.advance(TTL + 1);
      const stale = await get();
      expect([stale.tier, stale.value.id]).toEqual([CacheTier.Memory, 'read-1']);
      expect(loads()).toBe(1);
      // It looked at the cluster's stamp only, never downloaded the value again.
      expect(cluster.stats.peeks).toBe(1);
      expect(cluster.stats.reads).toBe(1);
    });

    it('asks the cluster at most once per recheck interval while stale', async () => {
      const { get, time, cluster } = setup();
      await get();
      time.advance(TTL + 1);
      for (let request = 0; request < 5; request += 1) await get();
      expect(cluster.stats.peeks).toBe(1);
      time.advance(1_000);
      await get();
      expect(cluster.stats.peeks).toBe(2);
    });

    it('takes the newer entry a scheduled refresh wrote, as a cluster answer', async () => {
      const { get, time, cluster, loads } = setup();
      await get();
      time.advance(TTL + 1);
      cluster.put(KEY, { readAt: time.now() - 5, id: 'refreshed', numbers: [42] });
      const answer = await get();
      expect([answer.tier, answer.value.id]).toEqual([CacheTier.Cluster, 'refreshed']);
      expect((await get()).tier).toBe(CacheTier.Memory);
      expect(loads()).toBe(1);
    });

    it('keeps the held value without downloading it again when a refresh wrote the same data, fresh from the newer read', async () => {
      const { get, time, cluster, loads } = setup();
      await get();
      expect(cluster.stats.reads).toBe(1);
      time.advance(TTL + 1);
      const refreshedAt = time.now() - 5;
      cluster.put(KEY, { readAt: refreshedAt, id: 'read-1', numbers: [1] });
      const answer = await get();
      expect([answer.tier, answer.value.id]).toEqual([CacheTier.Memory, 'read-1']);
      expect([cluster.stats.peeks, cluster.stats.reads]).toEqual([1, 1]);
      // Fresh again, counted from the refresh's read: no stamp is asked for until that TTL ends.
      time.advance(TTL - 10);
      expect((await get()).tier).toBe(CacheTier.Memory);
      expect(cluster.stats.peeks).toBe(1);
      time.advance(10);
      await get();
      expect(cluster.stats.peeks).toBe(2);
      expect(loads()).toBe(1);
    });

    it('answers other requests from the stale value while one brings the newer data from the cluster', async () => {
      const { get, time, cluster } = setup();
      await get();
      time.advance(TTL + 1);
      cluster.put(KEY, { readAt: time.now() - 5, id: 'refreshed', numbers: [42] });
      const releaseReads = cluster.holdReads();
      const bringing = get();
      await settle();
      // The one request is reading the newer value from the cluster, and that read is held open.
      expect([cluster.stats.peeks, cluster.stats.reads]).toEqual([1, 2]);
      expect(await settledValue(bringing)).toBe(PENDING);
      const meanwhile = await settledValue(get());
      expect(meanwhile).toMatchObject({ tier: CacheTier.Memory, value: { id: 'read-1' } });
      expect(cluster.stats.reads).toBe(2);
      releaseReads();
      expect((await bringing).value.id).toBe('refreshed');
      const after = await get();
      expect([after.tier, after.value.id]).toEqual([CacheTier.Memory, 'refreshed']);
    });

    it('serves a stale entry from the cluster in a fresh container, without reading upstream', async () => {
      const { get, time, cluster, loads } = setup();
      cluster.put(KEY, { readAt: time.now() - TTL - 30_000, id: 'stale-shared', numbers: [3] }, 120_000);
      const answer = await get();
      expect([answer.tier, answer.value.id]).toEqual([CacheTier.Cluster, 'stale-shared']);
      expect(loads()).toBe(0);
    });

    it('reads upstream once the entry is past the stale window', async () => {
      const { get, time, loads } = setup();
      await get();
      time.advance(TTL + STALE);
      const answer = await get();
      expect([answer.tier, answer.value.id]).toEqual([CacheTier.Upstream, 'read-2']);
      expect(loads()).toBe(2);
    });

    it('serves the stale entry from memory when the cluster is down', async () => {
      const { get, time, cluster, loads } = setup();
      await get();
      cluster.goDown();
      time.advance(TTL + 1);
      expect((await get()).tier).toBe(CacheTier.Memory);
      expect(loads()).toBe(1);
    });

    it('serves stale from memory without a cluster too, within the window', async () => {
      const { get, time, loads } = setup({ withCluster: false });
      await get();
      time.advance(TTL + 1);
      expect((await get()).tier).toBe(CacheTier.Memory);
      time.advance(STALE);
      expect((await get()).tier).toBe(CacheTier.Upstream);
      expect(loads()).toBe(2);
    });
  });

  it('shares one cluster lookup and one load among ten concurrent misses', async () => {
    let release: (listing: Listing) => void = () => undefined;
    const { cache, cluster, loads } = setup({ load: () => new Promise((resolve) => (release = resolve)) });
    const pending = Array.from({ length: 10 }, () => cache.get({ caller: 'test' }));
    await new Promise((resolve) => setImmediate(resolve));
    release({ readAt: 1_000_000, id: 'once', numbers: [1] });
    const results = await Promise.all(pending);
    expect(loads()).toBe(1);
    expect(cluster.stats.reads).toBe(1);
    expect(new Set(results.map((result) => result.value))).toHaveProperty('size', 1);
  });

  it('gives every waiter the error of a failing load and keeps nothing of it', async () => {
    let fail = true;
    const { cache, loads } = setup({
      load: async (at) => {
        if (fail) throw new Error('upstream down');
        return { readAt: at, id: 'ok', numbers: [1] };
      },
    });
    const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => cache.get({ caller: 'test' })));
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    fail = false;
    expect((await cache.get({ caller: 'test' })).tier).toBe(CacheTier.Upstream);
    expect(loads()).toBe(2);
  });

  it('finishes the cluster write of an upstream fill before answering, so a frozen container loses nothing', async () => {
    const { get, cluster } = setup();
    const releaseWrites = cluster.holdWrites();
    const answer = get();
    await settle();
    expect(cluster.stats.writes).toHaveLength(1);
    // The write is under way: no answer until it has landed.
    expect(await settledValue(answer)).toBe(PENDING);
    releaseWrites();
    expect((await answer).tier).toBe(CacheTier.Upstream);
    expect(cluster.has(KEY)).toBe(true);
  });

  it('still answers an upstream fill when the cluster write fails', async () => {
    const { get, cluster } = setup();
    cluster.failWrites();
    const answer = await get();
    expect(answer.tier).toBe(CacheTier.Upstream);
    expect(cluster.has(KEY)).toBe(false);
  });

  it('reads upstream when the cluster holds bytes this code did not write', async () => {
    const { get, cluster, loads } = setup();
    cluster.putBytes(KEY, Buffer.from('not a listing'));
    expect((await get()).tier).toBe(CacheTier.Upstream);
    expect(loads()).toBe(1);
  });
});
