import { singleFlight } from '../async/once.ts';
import type { ClusterTier } from './cluster-tier.ts';

/** Which tier answered a cached read: an integer enumeration in code, a name on the log line. */
export const CacheTier = { Upstream: 0, Memory: 1, Cluster: 2 } as const;
export type CacheTier = (typeof CacheTier)[keyof typeof CacheTier];

const NAMES = ['upstream', 'memory', 'cluster'] as const;
export type CacheTierName = (typeof NAMES)[number];

export const cacheTierName = (tier: CacheTier): CacheTierName => NAMES[tier];

/** What every cached value carries: when its data was read upstream, and what identifies that data. */
export interface Stamp {
  /** Milliseconds since the epoch; freshness is counted from here in every tier. */
  readonly readAt: number;
  /** Equal for equal data, whoever read it: a newer entry with the held value's id is not downloaded again. */
  readonly id: string;
}

/** How a value travels through the cluster tier. */
export interface ClusterCodec<Value extends Stamp> {
  encode: (value: Value) => Buffer;
  /** Undefined (or a throw) for bytes this code did not write: that is a miss. May work off the main thread. */
  decode: (bytes: Buffer) => Value | undefined | Promise<Value | undefined>;
  /** The stamp of an encoded value from its first `stampBytes` bytes, without decoding the rest. */
  stampOf: (prefix: Buffer) => Stamp | undefined;
  readonly stampBytes: number;
}

export interface TieredCacheOptions<Value extends Stamp, Request> {
  /** The shared tier and the one key this cache's value lives under; without it, memory alone. */
  cluster?: { tier: ClusterTier; codec: ClusterCodec<Value>; key: string } | undefined;
  /** A value is fresh this long after its `readAt`. */
  ttlMs: number;
  /** ...and still served, while a scheduled refresh brings a new one, until this long after it (at least `ttlMs`). */
  servableMs: number;
  /** The upstream read; the request of the caller that started it (the others join it). */
  load: (request: Request) => Promise<Value>;
  /** Milliseconds clock; injectable so tests control time. */
  now?: () => number;
  /** How often a container holding a stale value asks the cluster whether a newer one exists. */
  recheckMs?: number;
}

export interface CacheResult<Value> {
  value: Value;
  tier: CacheTier;
}

/** The default of `recheckMs`: one small cluster read per second per container, at most, while stale. */
const RECHECK_MS = 1_000;

/**
 * Read-through cache of one value: the container's memory, then the cluster, then `load`; fresh for
 * `ttlMs` after its data was read, servable until `servableMs` while a scheduled refresh brings a newer
 * one, which a stale container learns of from its stamp alone. One flight per container; the cluster
 * never fails a lookup, it degrades to a miss. The rules: docs/architecture.md#the-read-through-cache.
 */
export const makeTieredCache = <Value extends Stamp, Request>(options: TieredCacheOptions<Value, Request>) => {
  const { cluster, ttlMs, servableMs, load } = options;
  const now = options.now ?? Date.now;
  const recheckMs = options.recheckMs ?? RECHECK_MS;
  // `readAt` is the value's own, or that of a newer cluster entry found to hold the same data.
  let held: { value: Value; readAt: number; checkedAt: number } | undefined;

  const fresh = (readAt: number, at: number): boolean => at < readAt + ttlMs;
  const servable = (readAt: number, at: number): boolean => at < readAt + servableMs;

  const fromCluster = async (target: NonNullable<typeof cluster>, newerThan: number | undefined): Promise<Value | undefined> => {
    const found = await target.tier.read(target.key, target.codec.decode);
    if (found === undefined || !servable(found.value.readAt, now())) return undefined;
    if (newerThan !== undefined && found.value.readAt <= newerThan) return undefined;
    return found.value;
  };

  // Awaited (bounded by the tier's own command timeout, never rejecting): in Lambda, work left for
  // after the response sits frozen with the container, so a background write may never land.
  const fillCluster = async (target: NonNullable<typeof cluster>, value: Value): Promise<void> => {
    let bytes: Buffer;
    try {
      bytes = target.codec.encode(value);
    } catch {
      return; // the request already has its value; only the shared copy is lost
    }
    await target.tier.write(target.key, bytes, value.readAt + servableMs - now()).catch(() => undefined);
  };

  const keep = (value: Value): Value => {
    held = { value, readAt: value.readAt, checkedAt: now() };
    return value;
  };

  const lookUp = async (request: Request): Promise<CacheResult<Value>> => {
    const stale = held !== undefined && servable(held.readAt, now()) ? held : undefined;
    if (cluster && stale) {
      if (now() - stale.checkedAt < recheckMs) return { value: stale.value, tier: CacheTier.Memory };
      stale.checkedAt = now();
      const stamp = await cluster.tier.peek(cluster.key, cluster.codec.stampBytes, cluster.codec.stampOf);
      if (stamp === undefined || stamp.readAt <= stale.readAt || !servable(stamp.readAt, now()))
        return { value: stale.value, tier: CacheTier.Memory };
      if (stamp.id === stale.value.id) {
        // The same data read again: memory still answers, fresh from the newer read.
        stale.readAt = stamp.readAt;
        return { value: stale.value, tier: CacheTier.Memory };
      }
      const newer = await fromCluster(cluster, stale.readAt);
      return newer === undefined ? { value: stale.value, tier: CacheTier.Memory } : { value: keep(newer), tier: CacheTier.Cluster };
    }
    if (cluster) {
      const shared = await fromCluster(cluster, undefined);
      if (shared !== undefined) return { value: keep(shared), tier: CacheTier.Cluster };
    } else if (stale) {
      return { value: stale.value, tier: CacheTier.Memory };
    }
    const value = keep(await load(request));
    if (cluster) await fillCluster(cluster, value);
    return { value, tier: CacheTier.Upstream };
  };

  const flight = singleFlight(lookUp);

  return {
    get: (request: Request): Promise<CacheResult<Value>> => {
      if (held !== undefined && fresh(held.readAt, now())) return Promise.resolve({ value: held.value, tier: CacheTier.Memory });
      // While one request brings newer data from the cluster, the others keep the stale value.
      if (flight.running() && held !== undefined && servable(held.readAt, now()))
        return Promise.resolve({ value: held.value, tier: CacheTier.Memory });
      return flight.run(request);
    },
  };
};
