import type { Redis, RedisOptions } from 'ioredis';
import { abandonOnAbort } from '../abandon-on-abort.ts';
import { asError } from '../errors.ts';
import { reconnectDelayMs } from './reconnect-backoff.ts';
import type { HealthLogger } from '../health-logger.ts';
import { makeTierHealth, type TierHealth } from './tier-health.ts';

/** A value read from the cluster tier. */
export interface ClusterRead<T> {
  value: T;
}

/**
 * The shared tier as the tiered cache sees it. Neither method ever rejects: a failing, slow,
 * refusing or garbage-returning cluster reads as a miss and a lost write, within a bounded wait.
 */
export interface ClusterTier {
  /** `decode` gives (or resolves to) undefined, or throws, for bytes this code did not write: that is a miss. */
  read: <T>(key: string, decode: (bytes: Buffer) => T | undefined | Promise<T | undefined>) => Promise<ClusterRead<T> | undefined>;
  /** The first `length` bytes of a value, through `describe` (e.g. its header): a cheap look without the value. */
  peek: <T>(key: string, length: number, describe: (prefix: Buffer) => T | undefined) => Promise<T | undefined>;
  /** True once the cluster stored the value; false when it could not (the failure is tracked, not thrown). */
  write: (key: string, bytes: Buffer, ttlMs: number) => Promise<boolean>;
  /**
   * Takes the lock `key` for `ttlMs` unless someone holds it (SET NX PX): the expiry frees a lock
   * whose holder crashed. `unavailable` when the cluster could not be asked.
   */
  acquireLock: (key: string, token: string, ttlMs: number) => Promise<'acquired' | 'held' | 'unavailable'>;
  /** Frees the lock if `token` still holds it (a lock that expired and was taken by another stays). */
  releaseLock: (key: string, token: string) => Promise<void>;
  close: () => Promise<void>;
}

export interface RedisClusterTierOptions {
  /** `redis://` or `rediss://` (TLS), as in REDIS_URL. */
  url: string;
  logger: HealthLogger;
  /**
   * Longest wait for one command's reply before the lookup falls through to the upstream (a request
   * path); a scheduled writer of large values can afford longer.
   */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection of a container. */
  connectTimeoutMs?: number;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 250;
const DEFAULT_CONNECT_TIMEOUT_MS = 500;

/** A command the cluster did not answer within its bound. */
class ClusterTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'ClusterTimeoutError';
  }
}

/** Each command's bound (ioredis is given none of its own, so every timeout is this one, by type). */
const withinMs = async <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(new ClusterTimeoutError(what, ms)), ms);
  timer.unref();
  try {
    return await abandonOnAbort(promise, bound.signal);
  } catch (error) {
    throw asError(error);
  } finally {
    clearTimeout(timer);
  }
};

// Statuses from which a first connection may still become ready: worth a bounded wait.
const CONNECTING = new Set(['wait', 'connecting', 'connect']);

/**
 * Waits (bounded) for a connection only while the tier is believed healthy; once degraded, every
 * lookup fails at once until ioredis has reconnected in the background.
 */
const waitUntilReady = (client: Redis, health: TierHealth, budgetMs: number): Promise<void> => {
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'wait') client.connect().catch(() => undefined);
  if (health.state() === 'degraded' || !CONNECTING.has(client.status)) {
    return Promise.reject(new Error(`not connected (${client.status})`));
  }
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => settle();
    const onClose = () => settle(new Error('connection closed before it was ready'));
    const timer = setTimeout(() => settle(new Error(`no connection within ${budgetMs} ms`)), budgetMs);
    timer.unref();
    client.once('ready', onReady);
    client.once('close', onClose);
  });
};

/** Deletes a lock only if its value is still the caller's token: one atomic script on the server. */
const RELEASE_IF_OWNED = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * After a timeout the connection is suspect (a Lambda thawed with a socket that died while frozen,
 * a hung server): drop it now and let ioredis reconnect in the background, so the next lookups fail
 * at once instead of each waiting out its own timeout.
 */
const dropIfTimedOut = (client: Redis | undefined, error: unknown): void => {
  if (client?.status === 'ready' && error instanceof ClusterTimeoutError) client.disconnect(true);
};

/** The cluster tier over ioredis (ElastiCache / Valkey / Redis), one connection per container. */
export const makeRedisClusterTier = (options: RedisClusterTierOptions): ClusterTier => {
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const health = makeTierHealth('cluster', options.logger);
  // A cluster that answers but refuses writes (a read-only replica endpoint, an ACL, OOM) is tracked
  // apart from reachability; otherwise every miss would flip it between "recovered" and "degraded".
  const writes = makeTierHealth('cluster writes', options.logger);
  const redisOptions: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: connectTimeoutMs,
    // A silent socket is dropped even when no lookup is waiting on it (e.g. the ready check).
    socketTimeout: commandTimeoutMs * 4,
    retryStrategy: (attempt) => reconnectDelayMs(attempt),
  };
  // ioredis is loaded on the first lookup, not at init: it costs tens of milliseconds to load, and
  // containers without REDIS_URL never need it. The class is reached through the default export
  // (the package's `module.exports`): ioredis is CommonJS, and in the bundled functions (esbuild, ESM
  // chunks) a CommonJS module imported on demand exposes only `default`, where Node itself would add
  // the named `Redis` too.
  let connection: Promise<Redis> | undefined;
  const clientOf = (): Promise<Redis> =>
    (connection ??= import('ioredis').then(({ default: ioredis }) => {
      const client = new ioredis.Redis(options.url, redisOptions);
      // Connection errors surface through the lookups (and the one transition line); without a
      // listener ioredis would print every reconnect failure.
      client.on('error', () => undefined);
      return client;
    }));

  return {
    read: async (key, decode) => {
      let bytes: Buffer | null;
      let client: Redis | undefined;
      try {
        client = await clientOf();
        await waitUntilReady(client, health, connectTimeoutMs);
        bytes = await withinMs(client.getBuffer(key), commandTimeoutMs, 'cluster read');
      } catch (error) {
        dropIfTimedOut(client, error);
        health.failed('unavailable', error);
        return undefined;
      }
      if (bytes === null) {
        health.succeeded();
        return undefined;
      }
      let value: Awaited<ReturnType<typeof decode>>;
      try {
        value = await decode(bytes);
      } catch (error) {
        health.failed('unreadable value', error);
        return undefined;
      }
      if (value === undefined) {
        health.failed('unreadable value');
        return undefined;
      }
      health.succeeded();
      return { value };
    },
    peek: async (key, length, describe) => {
      let client: Redis | undefined;
      try {
        client = await clientOf();
        await waitUntilReady(client, health, connectTimeoutMs);
        const prefix = await withinMs(client.getrangeBuffer(key, 0, Math.max(length, 1) - 1), commandTimeoutMs, 'cluster peek');
        health.succeeded();
        return prefix.length === 0 ? undefined : describe(prefix);
      } catch (error) {
        dropIfTimedOut(client, error);
        health.failed('unavailable', error);
        return undefined;
      }
    },
    acquireLock: async (key, token, ttlMs) => {
      let client: Redis | undefined;
      try {
        client = await clientOf();
        await waitUntilReady(client, health, connectTimeoutMs);
        const reply = await withinMs(client.set(key, token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX'), commandTimeoutMs, 'cluster lock');
        health.succeeded();
        return reply === 'OK' ? 'acquired' : 'held';
      } catch (error) {
        dropIfTimedOut(client, error);
        health.failed('unavailable', error);
        return 'unavailable';
      }
    },
    releaseLock: async (key, token) => {
      let client: Redis | undefined;
      try {
        client = await clientOf();
        await waitUntilReady(client, health, connectTimeoutMs);
        await withinMs(client.eval(RELEASE_IF_OWNED, 1, key, token), commandTimeoutMs, 'cluster unlock');
      } catch (error) {
        // Not released: the lock's own expiry frees it.
        dropIfTimedOut(client, error);
        health.failed('unavailable', error);
      }
    },
    write: async (key, bytes, ttlMs) => {
      let client: Redis | undefined;
      try {
        client = await clientOf();
        await waitUntilReady(client, health, connectTimeoutMs);
        await withinMs(client.set(key, bytes, 'PX', Math.max(1, Math.round(ttlMs))), commandTimeoutMs, 'cluster write');
        health.succeeded();
        writes.succeeded();
        return true;
      } catch (error) {
        dropIfTimedOut(client, error);
        // The server's refusal (a ReplyError: read-only replica, ACL, OOM), told apart by its type's name:
        // ioredis itself is loaded on first use, so its class is not imported here.
        if (error instanceof Error && error.name === 'ReplyError') writes.failed('write refused', error);
        else health.failed('unavailable', error);
        return false;
      }
    },
    close: async () => {
      const client = await connection?.catch(() => undefined);
      if (client === undefined) return;
      try {
        if (client.status === 'ready') await withinMs(client.quit(), 500, 'cluster close');
      } catch {
        // Closing is best effort; disconnect below drops the socket regardless.
      } finally {
        client.disconnect();
      }
    },
  };
};
