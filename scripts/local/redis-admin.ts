import { Redis, type RedisOptions } from 'ioredis';
import { LOOPBACK } from './ports.ts';

const ADMIN_TIMEOUT_MS = 1_000;

export interface Admin {
  /** A connected client of the node on `port` (reused while it stays connected). */
  client: (port: number) => Promise<Redis>;
  drop: (port: number) => void;
  closeAll: () => void;
}

/** A command to the node on `port`, through an admin client; its reply as text. */
export type Ask = (port: number, ...args: [string, ...string[]]) => Promise<string>;

export const makeAdmin = (options: RedisOptions): Admin => {
  const clients = new Map<number, Promise<Redis>>();
  const drop = (port: number) => {
    const pending = clients.get(port);
    clients.delete(port);
    void pending?.then((client) => client.disconnect()).catch(() => undefined);
  };
  /** Synchronous up to `clients.set`, so a concurrent caller finds this connection rather than making another. */
  const connectNew = (port: number): Promise<Redis> => {
    const fresh = new Redis({
      ...options,
      host: LOOPBACK,
      port,
      lazyConnect: true,
      connectTimeout: ADMIN_TIMEOUT_MS,
      commandTimeout: ADMIN_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      // A lost connection is not retried: the next call makes a new one.
      retryStrategy: () => null,
    });
    fresh.on('error', () => undefined);
    const connecting = fresh.connect().then(
      () => fresh,
      (error: unknown) => {
        fresh.disconnect();
        throw error;
      },
    );
    clients.set(port, connecting);
    connecting.catch(() => {
      if (clients.get(port) === connecting) clients.delete(port);
    });
    return connecting;
  };
  const client = async (port: number): Promise<Redis> => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const pending = clients.get(port);
      if (pending === undefined) return connectNew(port);
      const existing = await pending.catch(() => undefined);
      if (existing?.status === 'ready') return existing;
      // Not replaced by a concurrent caller meanwhile: replace it.
      if (clients.get(port) === pending) {
        drop(port);
        return connectNew(port);
      }
    }
    throw new Error(`could not get a connection to node ${port}`);
  };
  return {
    client,
    drop,
    closeAll: () => {
      for (const port of [...clients.keys()]) drop(port);
    },
  };
};
