import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPortFree } from '../../../scripts/local/ports.ts';
import { startLocalRedisCluster, type LocalRedisCluster } from '../../../scripts/local/redis-cluster.ts';
import { makeThrowawayCa } from '../../../scripts/local/throwaway-ca.ts';

/** How long a failover may take with `cluster-node-timeout 1000` (it takes 2–3 s here). */
const FAILOVER_TIMEOUT_MS = 15_000;

/**
 * One connection to one node, as a client that does not know about the cluster; nothing retried.
 * A failed connection rejects with the socket's own error (ioredis's `connect()` only says "Connection is closed.").
 */
const connectNode = async (port: number, options: RedisOptions): Promise<Redis> => {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    retryStrategy: () => null,
    ...options,
  });
  let firstError: Error | undefined;
  client.on('error', (error: Error) => {
    firstError ??= error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw firstError ?? error;
  }
  return client;
};

describe('startLocalRedisCluster (a TLS Redis Cluster with an ACL user, as ElastiCache runs it)', () => {
  let cluster: LocalRedisCluster;
  let ca: Buffer;
  const clients: { quit: () => Promise<unknown>; disconnect: () => void }[] = [];
  /** The way an application must connect: the URL's host name checked on every node, whatever address the cluster announces. */
  const connectCluster = (): Cluster => {
    const url = new URL(cluster.url);
    const client = new Cluster([{ host: url.hostname, port: Number(url.port) }], {
      dnsLookup: (address, callback) => callback(null, address),
      redisOptions: { tls: { ca, servername: url.hostname }, username: cluster.user, password: cluster.password, connectTimeout: 2_000 },
      slotsRefreshTimeout: 2_000,
    });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const startedAt = Date.now();
    cluster = await startLocalRedisCluster();
    // Startup is bounded by Redis itself: a new master waits 2 s before it calls the cluster ok.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    ca = await readFile(cluster.caFile);
  });

  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await cluster?.stop();
  });

  it('has 3 masters sharing all 16384 slots and one replica each, its URL naming the user, password and a master as localhost', async () => {
    const nodes = await cluster.nodes();
    const masters = nodes.filter((node) => node.role === 'master');
    expect(masters).toHaveLength(3);
    expect(nodes.filter((node) => node.role === 'replica')).toHaveLength(3);
    expect(masters.flatMap((node) => node.slots).sort((a, b) => a[0] - b[0])).toEqual([
      [0, 5460],
      [5461, 10922],
      [10923, 16383],
    ]);
    expect(nodes.every((node) => node.running)).toBe(true);
    const url = new URL(cluster.url);
    expect(url.protocol).toBe('rediss:');
    expect(url.hostname).toBe('localhost');
    expect(decodeURIComponent(url.username)).toBe(cluster.user);
    expect(decodeURIComponent(url.password)).toBe(cluster.password);
    expect(masters.map((node) => node.port)).toContain(Number(url.port));
  });

  it('serves SET and GET to a Cluster client on every master, over TLS checked against "localhost"', async () => {
    const client = connectCluster();
    const keys = Array.from({ length: 60 }, (_, index) => `harness:${index}`);
    for (const key of keys) await client.set(key, `value of ${key}`, 'EX', 60);
    expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys.map((key) => `value of ${key}`));
    // The keys landed on all three masters, so the client verified each node it was sent to.
    const owners = new Set(await Promise.all(keys.map((key) => cluster.masterPortFor(key))));
    expect(owners.size).toBe(3);
    // Hash tags are honoured: both keys live in the slot of "{device}".
    expect(await cluster.masterPortFor('a:{device}:1')).toBe(await cluster.masterPortFor('b:{device}:2'));
    // The cluster announces its nodes as 127.0.0.1, an address its certificate does not name.
    expect(client.nodes('master').map((node) => node.options.host)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });

  it('refuses a client that checks the certificate against 127.0.0.1, the address the cluster announces (no IP SAN)', async () => {
    const [node] = await cluster.nodes();
    const attempt = connectNode(node!.port, { tls: { ca }, username: cluster.user, password: cluster.password });
    await expect(attempt).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    await expect(attempt).rejects.toThrow(/IP: 127\.0\.0\.1 is not in the cert's list/);
    // The same with the host name it names passes.
    const named = await connectNode(node!.port, {
      tls: { ca, servername: 'localhost' },
      username: cluster.user,
      password: cluster.password,
    });
    clients.push(named);
    expect(await named.ping()).toBe('PONG');
  });

  it('refuses a certificate that another CA signed', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'other-ca-'));
    try {
      const other = await makeThrowawayCa(otherDir);
      const [node] = await cluster.nodes();
      const attempt = connectNode(node!.port, {
        tls: { ca: await readFile(other.caFile), servername: 'localhost' },
        username: cluster.user,
        password: cluster.password,
      });
      await expect(attempt).rejects.toThrow(/unable to verify|self[- ]signed|certificate/i);
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  });

  it('refuses the default user (turned off) and a wrong password, as ElastiCache RBAC does', async () => {
    const [node] = await cluster.nodes();
    const tls = { ca, servername: 'localhost' };
    // ioredis 6 opens with HELLO 3 (carrying AUTH when it has credentials): without any, the
    // connection is the default user's, which is off.
    await expect(connectNode(node!.port, { tls })).rejects.toThrow(/NOAUTH/);
    await expect(connectNode(node!.port, { tls, username: 'default', password: 'anything' })).rejects.toThrow(/WRONGPASS/);
    await expect(connectNode(node!.port, { tls, username: cluster.user, password: 'not-the-password' })).rejects.toThrow(/WRONGPASS/);
    // Over RESP2 too (AUTH after connecting), as older clients do it.
    const resp2 = await connectNode(node!.port, { tls, protocol: 2 });
    clients.push(resp2);
    await expect(resp2.ping()).rejects.toThrow(/NOAUTH/);
    await expect(resp2.call('AUTH', 'default', 'anything')).rejects.toThrow(/WRONGPASS/);
    expect(await resp2.call('AUTH', cluster.user, cluster.password)).toBe('OK');
    expect(await resp2.ping()).toBe('PONG');
  });

  it("promotes the replica when the master for a key is killed, serves the key's slot again, and takes the old master back as a replica", async () => {
    const key = 'failover:{device-list}';
    const oldMaster = await cluster.masterPortFor(key);
    // Written on the master and acknowledged by its replica, so the promoted replica has it.
    const direct = await connectNode(oldMaster, {
      tls: { ca, servername: 'localhost' },
      username: cluster.user,
      password: cluster.password,
    });
    clients.push(direct);
    await direct.set(key, 'before the failover');
    expect(await direct.call('WAIT', '1', '5000')).toBe(1);
    direct.disconnect();
    const replicaPorts = (await cluster.nodes()).filter((node) => node.role === 'replica').map((node) => node.port);
    const connectedBefore = connectCluster();
    expect(await connectedBefore.get(key)).toBe('before the failover');

    const killedAt = Date.now();
    await cluster.killNode(oldMaster);
    await expect(cluster.masterPortFor(key)).rejects.toThrow(/no running master serves slot/);
    await cluster.waitUntilHealthy(FAILOVER_TIMEOUT_MS);
    expect(Date.now() - killedAt).toBeLessThan(FAILOVER_TIMEOUT_MS);

    const newMaster = await cluster.masterPortFor(key);
    expect(newMaster).not.toBe(oldMaster);
    expect(replicaPorts).toContain(newMaster);
    expect((await cluster.nodes()).find((node) => node.port === oldMaster)).toMatchObject({ running: false });
    // A client connected before the failover follows it (its connection to the old master closed,
    // so it reads the slots again); so does a new one.
    expect(await connectedBefore.get(key)).toBe('before the failover');
    const client = connectCluster();
    expect(await client.get(key)).toBe('before the failover');
    await client.set(key, 'after the failover');

    await cluster.restartNode(oldMaster);
    await cluster.waitUntilHealthy(FAILOVER_TIMEOUT_MS);
    expect((await cluster.nodes()).find((node) => node.port === oldMaster)).toEqual({
      port: oldMaster,
      role: 'replica',
      slots: [],
      running: true,
    });
    expect(await cluster.masterPortFor(key)).toBe(newMaster);
    expect(await client.get(key)).toBe('after the failover');
  });
});

describe('LocalRedisCluster.stop', () => {
  it('stops every node and removes the temporary directory', async () => {
    const cluster = await startLocalRedisCluster({ masters: 3, replicasPerMaster: 0 });
    const ports = (await cluster.nodes()).map((node) => node.port);
    expect(ports).toHaveLength(3);
    const root = dirname(dirname(cluster.caFile));
    expect(existsSync(root)).toBe(true);
    await cluster.stop();
    expect(existsSync(root)).toBe(false);
    // Nothing listens on a node's port or its cluster bus port any more.
    for (const port of ports) {
      expect(await isPortFree(port)).toBe(true);
      expect(await isPortFree(port + 10_000)).toBe(true);
    }
    await expect(cluster.nodes()).rejects.toThrow(/stopped/);
  });
});
