import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { RedisConfig } from '../config.ts';
import type { SecretRef } from '../runtime/secrets.ts';
import { withinMs } from '../async/abandon-on-abort.ts';
import { reconnectDelayMs } from './reconnect-backoff.ts';

/** Either client: both speak the commands the cluster tier uses. */
export type RedisClient = Redis | Cluster;

/** Where REDIS_URL points, and who it says to be there. */
export interface RedisTarget {
  host: string;
  port: number;
  tls: boolean;
  username: string | undefined;
  password: string | undefined;
  db: number;
}

export const redisTarget = (url: string): RedisTarget => {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.replace(/^\//, '') || '0');
  return {
    // An IPv6 literal comes bracketed in a URL, and bare to a socket.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    tls: parsed.protocol === 'rediss:',
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    db: Number.isSafeInteger(db) ? db : 0,
  };
};

/**
 * The error kind of a server's reply: by the protocol, its first word (`WRONGPASS`, `NOAUTH`,
 * `OOM`, `READONLY`, `MOVED`…). ioredis gives replies the type name ReplyError; it is loaded on
 * first use, so its class is not imported here.
 */
export const replyErrorKind = (error: unknown): string | undefined =>
  error instanceof Error && error.name === 'ReplyError' ? /^[A-Z]+/.exec(error.message)?.[0] : undefined;

const AUTH_REFUSED = new Set(['WRONGPASS', 'NOAUTH']);

export interface RedisConnectionOptions {
  config: RedisConfig;
  /** Longest wait for a first connection. */
  connectTimeoutMs: number;
  /** A silent socket is dropped after this long. */
  socketTimeoutMs: number;
  /** The ACL password kept in SSM; `fresh` reads past any cache. */
  readSecret: (ref: SecretRef, options: { fresh: boolean }) => Promise<string>;
  /** Reads REDIS_TLS_CA_FILE. */
  readCaFile?: (path: string) => Promise<Buffer>;
  /** A refused SSM password is read again at most this often, however many lookups meet the refusal. */
  passwordRereadMs?: number;
  /** Told of each error the connection meets, as it meets it (a lookup may have stopped waiting already). */
  onError?: (error: unknown) => void;
}

export interface RedisConnection {
  /**
   * This connection's client, once it is built (the password read, the server asked whether it is
   * a cluster); the same promise for every caller until `drop`.
   */
  client: () => Promise<RedisClient>;
  /** The last error the connection itself met (refused password, certificate, network), for the one log line. */
  lastError: () => unknown;
  /** Forgets the client (closing it): the next `client()` builds a new connection. */
  drop: () => void;
  close: () => Promise<void>;
}

const PASSWORD_REREAD_MS = 30_000;

const clusterEnabled = (info: string): boolean => /^cluster_enabled:1\s*$/m.test(info);

/**
 * One connection to the cluster tier's server, as REDIS_URL and its companions describe it
 * (docs/architecture.md#the-cluster-tiers-connection): a single node, or a Redis Cluster through
 * ioredis' cluster client (REDIS_CLUSTER forces it, or `auto` asks the server once per connection);
 * TLS verified against the URL's host name, even for the node addresses a cluster announces; an
 * ACL user and password from the URL or SSM, the SSM one read again when the server refuses it.
 */
export const makeRedisConnection = (options: RedisConnectionOptions): RedisConnection => {
  const { config } = options;
  const target = redisTarget(config.url);
  const readCaFile = options.readCaFile ?? ((path: string) => readFile(path));
  const passwordRereadMs = options.passwordRereadMs ?? PASSWORD_REREAD_MS;
  let current: { client: Promise<RedisClient>; built: RedisClient[] } | undefined;
  let lastError: unknown;
  let refusedAt: number | undefined;
  let passwordReadAt = 0;
  /** Node addresses the cluster announced: a rebuilt cluster client starts from these as well. */
  let knownNodes: { host: string; port: number }[] = [];

  const password = async (): Promise<string | undefined> => {
    if (config.password === undefined) return target.password;
    const fresh = refusedAt !== undefined;
    passwordReadAt = Date.now();
    refusedAt = undefined;
    return options.readSecret(config.password, { fresh });
  };

  const watch = (client: RedisClient): void => {
    const note = (error: unknown) => {
      lastError = error;
      if (AUTH_REFUSED.has(replyErrorKind(error) ?? '')) refusedAt ??= Date.now();
      options.onError?.(error);
    };
    // Errors surface through the lookups and the one transition line; without listeners ioredis
    // would print every reconnect failure.
    client.on('error', note);
    client.on('node error', note);
    client.on('ready', () => {
      lastError = undefined;
      refusedAt = undefined;
    });
  };

  const build = async (built: RedisClient[]): Promise<RedisClient> => {
    const [secret, ca] = await Promise.all([password(), config.tlsCaFile === undefined ? undefined : readCaFile(config.tlsCaFile)]);
    const { default: ioredis } = await import('ioredis');
    // The name the certificates must carry: the URL's, not a node address the cluster announces
    // (ElastiCache announces IP addresses its certificate does not name). Never an IP as SNI.
    const tls = target.tls
      ? { ...(isIP(target.host) === 0 ? { servername: target.host } : {}), ...(ca === undefined ? {} : { ca }) }
      : undefined;
    const nodeOptions = {
      username: target.username,
      password: secret,
      tls,
      connectTimeout: options.connectTimeoutMs,
      socketTimeout: options.socketTimeoutMs,
      maxRetriesPerRequest: 0,
    } satisfies RedisOptions;
    const single = (lazyConnect: boolean): Redis => {
      const client = new ioredis.Redis({
        ...nodeOptions,
        host: target.host,
        port: target.port,
        db: target.db,
        lazyConnect,
        enableOfflineQueue: false,
        retryStrategy: (attempt) => reconnectDelayMs(attempt),
      });
      built.push(client);
      watch(client);
      return client;
    };
    const cluster = (): Cluster => {
      const clusterOptions: ClusterOptions = {
        lazyConnect: true,
        enableOfflineQueue: false,
        // The announced addresses are used as they are: resolving them again would lose the TLS name.
        dnsLookup: (address, callback) => callback(null, address),
        redisOptions: nodeOptions,
        clusterRetryStrategy: (attempt) => reconnectDelayMs(attempt),
        slotsRefreshTimeout: options.connectTimeoutMs,
        slotsRefreshInterval: 5_000,
      };
      const startupNodes = [
        { host: target.host, port: target.port },
        ...knownNodes.filter((node) => node.host !== target.host || node.port !== target.port),
      ];
      const client = new ioredis.Cluster(startupNodes, clusterOptions);
      built.push(client);
      watch(client);
      client.on('ready', () => {
        knownNodes = client
          .nodes('all')
          .map((node) => ({ host: node.options.host ?? target.host, port: node.options.port ?? target.port }));
      });
      return client;
    };
    if (config.cluster === 'off') return single(true);
    if (config.cluster === 'on') return cluster();
    // `auto`: one question to the server, on a connection that keeps retrying in the background
    // until it is answered; lookups wait for it only within their own budgets.
    const probe = single(false);
    await new Promise<void>((resolve, reject) => {
      if (probe.status === 'ready') resolve();
      probe.once('ready', resolve);
      probe.once('end', () => reject(new Error('the connection ended before the server said whether it is a cluster')));
    });
    if (!clusterEnabled(await probe.info('cluster'))) return probe;
    probe.disconnect();
    return cluster();
  };

  const dropCurrent = (): void => {
    const dropped = current;
    current = undefined;
    for (const client of dropped?.built ?? []) client.disconnect();
  };

  return {
    client: () => {
      // A password the server refused is read again (bounded in rate) on a new connection.
      if (
        current !== undefined &&
        refusedAt !== undefined &&
        config.password !== undefined &&
        Date.now() - passwordReadAt >= passwordRereadMs
      ) {
        dropCurrent();
      }
      if (current === undefined) {
        const built: RedisClient[] = [];
        const client = build(built);
        current = { client, built };
        // A connection that could not be built is built anew by the next lookup.
        client.catch((error: unknown) => {
          lastError = error;
          if (current?.client === client) dropCurrent();
        });
      }
      return current.client;
    },
    lastError: () => lastError,
    drop: dropCurrent,
    close: async () => {
      const closing = current;
      current = undefined;
      await Promise.all(
        (closing?.built ?? []).map(async (client) => {
          try {
            if (client.status === 'ready') await withinMs(client.quit(), 500, () => new Error('QUIT took longer than 500 ms'));
          } catch {
            // Closing is best effort; disconnect below drops the socket regardless.
          } finally {
            client.disconnect();
          }
        }),
      );
    },
  };
};
