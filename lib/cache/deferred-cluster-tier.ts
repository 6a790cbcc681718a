import { once } from '../async/once.ts';
import type { ClusterTier, RedisClusterTierOptions } from './cluster-tier.ts';

/**
 * The Redis cluster tier with its code (cluster-tier.ts, the connection, ioredis) loaded on the first
 * command, not at init: a function configured without REDIS_URL never loads it, and one with it loads
 * it while its first lookup waits for the connection anyway (docs/architecture.md#cold-start).
 */
export const makeDeferredClusterTier = (options: RedisClusterTierOptions): ClusterTier => {
  let loaded = false;
  const tier = once((): Promise<ClusterTier> => {
    loaded = true;
    return import('./cluster-tier.ts').then((module) => module.makeRedisClusterTier(options));
  });
  return {
    read: async <T>(key: string, decode: (bytes: Buffer) => T | undefined | Promise<T | undefined>) => (await tier()).read(key, decode),
    peek: async <T>(key: string, length: number, describe: (prefix: Buffer) => T | undefined) => (await tier()).peek(key, length, describe),
    write: async (key, bytes, ttlMs) => (await tier()).write(key, bytes, ttlMs),
    setIfAbsent: async (key, value, ttlMs) => (await tier()).setIfAbsent(key, value, ttlMs),
    deleteIfEqual: async (key, value) => (await tier()).deleteIfEqual(key, value),
    close: async () => {
      if (loaded) await (await tier()).close();
    },
  };
};
