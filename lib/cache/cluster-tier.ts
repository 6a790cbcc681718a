import { randomBytes } from 'node:crypto';
import { withinMs } from '../async/abandon-on-abort.ts';
import type { RedisConfig } from '../config.ts';
import type { SecretRef } from '../runtime/secrets.ts';
import { asError } from '../errors.ts';
import type { HealthLogger } from '../runtime/logger.ts';
import { resolveSecret } from '../runtime/secrets.ts';
import { makeRedisConnection, replyErrorKind, type RedisClient } from './redis-connection.ts';
import { makeTierHealth, type TierHealth } from './tier-health.ts';
import { joinParts, MANIFEST_MAX_BYTES, partKey, readManifest, splitValue, valuePrefix } from './value-parts.ts';

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
   * Sets `key` to `value` for `ttlMs` unless it exists (SET NX PX): `exists` when it does,
   * `unavailable` when the cluster could not be asked or refused the write.
   */
  setIfAbsent: (key: string, value: string, ttlMs: number) => Promise<'set' | 'exists' | 'unavailable'>;
  /** Deletes `key` if it still holds `value`, in one step on the server; a failure is tracked, not thrown. */
  deleteIfEqual: (key: string, value: string) => Promise<void>;
  close: () => Promise<void>;
}

export interface RedisClusterTierOptions {
  /** REDIS_URL and its companions: cluster mode, TLS CA file, the password in SSM. */
  redis: RedisConfig;
  /** Reads the ACL password kept in SSM; `fresh` after the server refused the one it had (default: lib/runtime/secrets.ts). */
  readSecret?: (ref: SecretRef, options: { fresh: boolean }) => Promise<string>;
  logger: HealthLogger;
  /**
   * Longest wait for one command's reply before the lookup falls through to the upstream (a request
   * path); a scheduled writer of large values can afford longer.
   */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection of a container. */
  connectTimeoutMs?: number;
  /** How often at most a password the server refused is read again from SSM (default 30 s). */
  passwordRereadMs?: number;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 250;
const DEFAULT_CONNECT_TIMEOUT_MS = 500;
/** A replaced value's parts stay this long, for a reader that read the old head just before. */
const REPLACED_PARTS_GRACE_MS = 10_000;

/** A command the cluster did not answer within its bound. */
class ClusterTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'ClusterTimeoutError';
  }
}

/** No connection to use yet, and none refused: the connection is still being made (or remade). */
class NotConnectedError extends Error {
  constructor(status: string) {
    super(`not connected (${status})`);
    this.name = 'NotConnectedError';
  }
}

/** Errors that say the tier was slow or not yet connected, not why: tier-health waits for the cause. */
const saysOnlyNotYet = (error: unknown): boolean => error instanceof ClusterTimeoutError || error instanceof NotConnectedError;

/** Each command's bound (ioredis is given none of its own, so every timeout is this one, by type). */
const boundedMs = async <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  try {
    return await withinMs(promise, ms, () => new ClusterTimeoutError(what, ms));
  } catch (error) {
    throw asError(error);
  }
};

// Statuses from which a connection may still become ready: worth a bounded wait.
const CONNECTING = new Set(['wait', 'connecting', 'connect']);

/** Waits (bounded) for the client to be ready; at once when the tier is degraded. */
const waitUntilReady = (client: RedisClient, health: TierHealth, budgetMs: number): Promise<void> => {
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'wait') client.connect().catch(() => undefined);
  if (health.state() === 'degraded' || !CONNECTING.has(client.status)) {
    return Promise.reject(new NotConnectedError(client.status));
  }
  let onReady = (): void => undefined;
  let onClose = (): void => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    onClose = () => reject(new Error('connection closed before it was ready'));
    client.once('ready', onReady);
    client.once('close', onClose);
  });
  return withinMs(ready, budgetMs, () => new ClusterTimeoutError('connecting', budgetMs)).finally(() => {
    client.off('ready', onReady);
    client.off('close', onClose);
  });
};

/** Deletes a key only if it still holds the caller's value: one atomic script on the server. */
const DELETE_IF_EQUAL = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** What the cluster said of a write: stored, refused (its reply), or not reached. */
class WriteRefusedError extends Error {
  constructor(cause: unknown) {
    super('the server refused the write', { cause });
    this.name = 'WriteRefusedError';
  }
}

/** A write's promise, with the server's refusal (any reply error) told apart from an outage. */
const refusedAsWrite = <T>(write: Promise<T>): Promise<T> =>
  write.catch((error: unknown) => {
    throw replyErrorKind(error) === undefined ? error : new WriteRefusedError(error);
  });

/** A transaction's replies: the first error among them, thrown. */
const execOrThrow = async (transaction: ReturnType<RedisClient['multi']>): Promise<void> => {
  const replies = await transaction.exec();
  if (replies === null) throw new Error('the transaction was discarded');
  const failed = replies.find(([error]) => error !== null);
  if (failed) throw failed[0] as Error;
};

/**
 * The cluster tier over ioredis (ElastiCache / Valkey / Redis, a single node or a Redis Cluster),
 * one connection per container (lib/cache/redis-connection.ts). Values larger than one part are
 * stored in parts in their key's hash slot and read back whole or not at all (value-parts.ts).
 */
export const makeRedisClusterTier = (options: RedisClusterTierOptions): ClusterTier => {
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const health = makeTierHealth('cluster', options.logger, { unexplained: saysOnlyNotYet });
  // A cluster that answers but refuses writes (a read-only replica endpoint, an ACL, OOM) is tracked
  // apart from reachability; otherwise every miss would flip it between "recovered" and "degraded".
  const writes = makeTierHealth('cluster writes', options.logger);
  const connection = makeRedisConnection({
    config: options.redis,
    connectTimeoutMs,
    // A silent socket is dropped even when no lookup is waiting on it (e.g. the ready check).
    socketTimeoutMs: commandTimeoutMs * 4,
    readSecret: options.readSecret ?? ((ref, fresh) => resolveSecret(ref, undefined, fresh)),
    passwordRereadMs: options.passwordRereadMs,
    // A degradation logged while the connection was still being made learns its cause here.
    onError: (error) => {
      if (health.state() === 'degraded') health.failed('unavailable', error);
    },
  });

  /**
   * One operation on a ready client, within the connect and command bounds. A connection that could
   * not be had is reported with what the connection itself last met (a refused password, a
   * certificate, a refused connection), which says more than the wait that ran out. After a
   * timeout the connection is suspect (a Lambda thawed with a socket that died while frozen, a hung
   * server): it is dropped, so the next lookups fail at once instead of each waiting out its own.
   */
  const run = async <T>(what: string, work: (client: RedisClient) => Promise<T>): Promise<T> => {
    let client: RedisClient;
    try {
      // Degraded: a connection still being built is not waited for.
      client = await boundedMs(connection.client(), health.state() === 'degraded' ? 0 : connectTimeoutMs, 'connecting');
      await waitUntilReady(client, health, connectTimeoutMs);
    } catch (error) {
      throw connection.lastError() ?? error;
    }
    try {
      return await boundedMs(work(client), commandTimeoutMs, what);
    } catch (error) {
      if (error instanceof ClusterTimeoutError && client.status === 'ready') connection.drop();
      throw error;
    }
  };

  /** The whole value at `key`, its head first and then its other parts, or null when absent. */
  const readWhole = async (client: RedisClient, key: string): Promise<Buffer | null | 'unreadable'> => {
    // Twice at most: a writer may replace the value between the head and its parts.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const head = await client.getBuffer(key);
      if (head === null) return null;
      const found = readManifest(head);
      if (found === undefined) return head;
      if (found === 'malformed') return 'unreadable';
      const keys = Array.from({ length: found.manifest.parts - 1 }, (_, offset) => partKey(key, found.manifest.gen, offset + 1));
      const whole = joinParts(head, found, await client.mgetBuffer(...keys));
      if (whole !== undefined) return whole;
    }
    return 'unreadable';
  };

  const writeWhole = async (client: RedisClient, key: string, bytes: Buffer, ttlMs: number): Promise<void> => {
    const px = Math.max(1, Math.round(ttlMs));
    const split = splitValue(bytes, randomBytes(6).toString('hex'));
    const replaced = readManifest(await client.getrangeBuffer(key, 0, MANIFEST_MAX_BYTES + 15));
    const replacedParts =
      replaced === undefined || replaced === 'malformed'
        ? []
        : Array.from({ length: replaced.manifest.parts - 1 }, (_, offset) => partKey(key, replaced.manifest.gen, offset + 1));
    if (split.manifest === undefined && replacedParts.length === 0) {
      await client.set(key, split.head, 'PX', px);
      return;
    }
    // One transaction in one hash slot: the parts, then the head that names them, and the replaced
    // value's parts left to expire shortly, all at once or not at all.
    const transaction = client.multi();
    for (const part of split.rest) transaction.set(partKey(key, split.manifest!.gen, part.index), part.bytes, 'PX', px);
    transaction.set(key, split.head, 'PX', px);
    for (const stale of replacedParts) transaction.pexpire(stale, REPLACED_PARTS_GRACE_MS);
    await execOrThrow(transaction);
  };

  /** A write's failure, tracked where it belongs: the server's refusal (a read-only replica, an ACL, OOM) is not an outage. */
  const failedWrite = (error: unknown): void => {
    if (error instanceof WriteRefusedError) writes.failed('write refused', error.cause);
    else health.failed('unavailable', error);
  };

  return {
    read: async (key, decode) => {
      let bytes: Buffer | null | 'unreadable';
      try {
        bytes = await run('cluster read', (client) => readWhole(client, key));
      } catch (error) {
        health.failed('unavailable', error);
        return undefined;
      }
      if (bytes === null) {
        health.succeeded();
        return undefined;
      }
      if (bytes === 'unreadable') {
        health.failed('unreadable value');
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
      try {
        const head = await run('cluster peek', (client) => client.getrangeBuffer(key, 0, Math.max(length, 1) + MANIFEST_MAX_BYTES + 15));
        health.succeeded();
        const prefix = head.length === 0 ? undefined : valuePrefix(head, Math.max(length, 1));
        return prefix === undefined || prefix.length === 0 ? undefined : describe(prefix);
      } catch (error) {
        health.failed('unavailable', error);
        return undefined;
      }
    },
    setIfAbsent: async (key, value, ttlMs) => {
      try {
        const reply = await run('cluster set if absent', (client) =>
          refusedAsWrite(client.set(key, value, 'PX', Math.max(1, Math.round(ttlMs)), 'NX')),
        );
        health.succeeded();
        return reply === 'OK' ? 'set' : 'exists';
      } catch (error) {
        failedWrite(error);
        return 'unavailable';
      }
    },
    deleteIfEqual: async (key, value) => {
      try {
        await run('cluster delete if equal', (client) => client.eval(DELETE_IF_EQUAL, 1, key, value));
      } catch (error) {
        health.failed('unavailable', error);
      }
    },
    write: async (key, bytes, ttlMs) => {
      try {
        await run('cluster write', (client) => refusedAsWrite(writeWhole(client, key, bytes, ttlMs)));
        health.succeeded();
        writes.succeeded();
        return true;
      } catch (error) {
        failedWrite(error);
        return false;
      }
    },
    close: () => connection.close(),
  };
};
