import type { ClusterTier } from './cluster-tier.ts';
import type { MemoryTier } from './memory-tier.ts';
import { CacheTier } from './provenance.ts';

/**
 * How the loaded value travels through the cluster tier. The cluster may hold a different, more
 * general form than memory (e.g. data before a per-container decision), so a cluster hit is turned
 * into the memory form by the same `present` as an upstream fill.
 */
export interface ClusterCodec<Loaded> {
  encode: (loaded: Loaded) => Buffer;
  /** Undefined for bytes this code did not write (garbage, another format version). */
  decode: (bytes: Buffer) => Loaded | undefined;
}

export interface TieredCacheOptions<Loaded, Value, Request> {
  memory: MemoryTier<Value>;
  cluster?: { tier: ClusterTier; codec: ClusterCodec<Loaded> } | undefined;
  ttlSeconds: number;
  /** The upstream read; the request of the caller that started it (the others join it). */
  load: (key: string, request: Request) => Promise<Loaded>;
  /** Turns the loaded form into what `get` returns and memory holds. */
  present: (loaded: Loaded) => Value;
  /** The memory key for a cluster key, when memory holds a per-container variant. */
  memoryKey?: (key: string) => string;
}

export interface CacheResult<Value> {
  value: Value;
  tier: CacheTier;
}

export interface TieredCache<Value, Request> {
  get: (key: string, request: Request) => Promise<CacheResult<Value>>;
}

/**
 * Read-through cache: memory, then cluster, then `load`. An upstream fill writes both tiers (the
 * cluster write within a bounded wait, never failing the request); a cluster hit fills memory for
 * what is left of the cluster entry's life, so no tier extends another's TTL. Concurrent misses of
 * one key share one cluster lookup and one load; a failed load is not cached and every waiter
 * gets its error.
 */
export const makeTieredCache = <Loaded, Value, Request>(
  options: TieredCacheOptions<Loaded, Value, Request>,
): TieredCache<Value, Request> => {
  const { memory, cluster, load, present } = options;
  const ttlMs = options.ttlSeconds * 1000;
  const memoryKey = options.memoryKey ?? ((key: string) => key);
  const inFlight = new Map<string, Promise<CacheResult<Value>>>();
  const decodeAndPresent = cluster
    ? (bytes: Buffer): Value | undefined => {
        const loaded = cluster.codec.decode(bytes);
        return loaded === undefined ? undefined : present(loaded);
      }
    : undefined;

  // Awaited (bounded by the tier's own command timeout, never rejecting): in Lambda, work left
  // for after the response sits frozen with the container, so a background write may never land
  // and would later time out as a false "degraded" transition. Only upstream fills pay for it.
  const fillCluster = async (target: NonNullable<typeof cluster>, key: string, loaded: Loaded): Promise<void> => {
    let bytes: Buffer;
    try {
      bytes = target.codec.encode(loaded);
    } catch {
      return; // the request already has its value; only the shared copy is lost
    }
    await target.tier.write(key, bytes, ttlMs).catch(() => undefined);
  };

  const miss = async (key: string, localKey: string, request: Request): Promise<CacheResult<Value>> => {
    if (cluster && decodeAndPresent) {
      const found = await cluster.tier.read(key, decodeAndPresent);
      if (found !== undefined) {
        memory.set(localKey, found.value, Math.min(ttlMs, found.remainingTtlMs ?? ttlMs));
        return { value: found.value, tier: CacheTier.Cluster };
      }
    }
    const loaded = await load(key, request);
    const value = present(loaded);
    memory.set(localKey, value, ttlMs);
    if (cluster) await fillCluster(cluster, key, loaded);
    return { value, tier: CacheTier.Upstream };
  };

  return {
    get: (key, request) => {
      const localKey = memoryKey(key);
      const hit = memory.get(localKey);
      if (hit !== undefined) return Promise.resolve({ value: hit, tier: CacheTier.Memory });
      let flight = inFlight.get(localKey);
      if (flight === undefined) {
        flight = miss(key, localKey, request).finally(() => inFlight.delete(localKey));
        inFlight.set(localKey, flight);
      }
      return flight;
    },
  };
};
