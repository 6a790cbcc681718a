import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_READY_TIMEOUT_MS, formCluster, startClusterNodes, USER } from './cluster-formation.ts';
import { unhealthy, waitFor } from './cluster-health.ts';
import { parseNodes, type NodeLine } from './cluster-replies.ts';
import { makeAdmin, type Admin, type Ask } from './redis-admin.ts';
import {
  describeServer,
  exited,
  installExitHook,
  liveDirs,
  STOP_TIMEOUT_MS,
  terminate,
  waitForExit,
  type ServerProcess,
} from './redis-processes.ts';
import { startServer } from './redis-server-start.ts';
import { HOST_NAME, makeThrowawayCa } from './throwaway-ca.ts';

/**
 * Real `redis-server`s on loopback for tests, benchmarks and `npm start` (no vitest imports):
 *
 * - `startLocalRedisCluster` (here): a Redis Cluster as ElastiCache (cluster mode, Serverless) runs
 *   one — TLS only (cluster bus and replication too), an ACL user with the `default` user off,
 *   replicas that authenticate to their masters — with a throw-away CA whose certificate names
 *   `localhost` only, while the cluster announces its nodes as 127.0.0.1: a client must check each
 *   node against the host name of its URL, as against ElastiCache's addresses, which its certificate
 *   does not name.
 * - `startLocalRedisNode` (redis-node.ts): one plain `redis-server` (no TLS, no password, no cluster).
 *
 * Nothing persists (`save ""`, no AOF); everything lives in one mkdtemp folder (configuration files
 * holding the password, mode 0600), removed by `stop()`, or when the process exits (only a SIGKILL of
 * this process leaves the servers and the folder behind).
 */
export interface LocalRedisCluster {
  /** rediss://<user>:<password>@localhost:<port of one master> — the name its certificates carry. */
  url: string;
  user: string;
  password: string;
  /** PEM file of the throw-away CA that signed every node's certificate. */
  caFile: string;
  /**
   * Every node, with its TLS port and current role (re-read from the cluster on each call): a running
   * node as it sees itself, a killed one as the first running node sees it. `running` says whether
   * its process is up (false between `killNode` and `restartNode`).
   */
  nodes: () => Promise<LocalRedisClusterNode[]>;
  /** The TLS port of the master currently serving `key`'s hash slot (hash tags honoured); throws while no running master serves it. */
  masterPortFor: (key: string) => Promise<number>;
  /** SIGKILL one node (by port); `restartNode` brings it back with its cluster config (it rejoins as a replica after failover). */
  killNode: (port: number) => Promise<void>;
  /** Resolves once the node answers again; `waitUntilHealthy` then waits for it to rejoin (and resync, as a replica). */
  restartNode: (port: number) => Promise<void>;
  /**
   * Resolves once every slot is served by a reachable master again (after a failover), bounded by
   * timeoutMs: every running node says `cluster_state:ok`, all of them agree which running master
   * serves each of the 16384 slots, none flags a running node as failing, and every running replica's
   * link to its master is up. Rejects with what was still wrong and the nodes' last output.
   */
  waitUntilHealthy: (timeoutMs: number) => Promise<void>;
  /** Stops every node and removes the temporary directory. */
  stop: () => Promise<void>;
}

export interface LocalRedisClusterNode {
  port: number;
  role: 'master' | 'replica';
  /** Inclusive ranges of hash slots. */
  slots: [number, number][];
  running: boolean;
}

const countOption = (value: number, name: string, least: number): number => {
  if (!Number.isInteger(value) || value < least || value > 16)
    throw new Error(`${name} must be a whole number from ${least} to 16, got ${value}`);
  return value;
};

/**
 * A Redis Cluster of `masters` masters with `replicasPerMaster` replicas each (3 + 3 by default) on
 * loopback, TLS only, as described at the top of this file. Starts in 1–2 s.
 */
export const startLocalRedisCluster = async (
  options: { masters?: number; replicasPerMaster?: number } = {},
): Promise<LocalRedisCluster> => {
  const masters = countOption(options.masters ?? 3, 'masters', 1);
  const replicasPerMaster = countOption(options.replicasPerMaster ?? 1, 'replicasPerMaster', 0);
  installExitHook();
  const root = await mkdtemp(join(tmpdir(), 'local-redis-cluster-'));
  liveDirs.add(root);
  const password = randomBytes(16).toString('hex');
  const servers = new Map<number, ServerProcess>();
  const releases: (() => void)[] = [];
  let admin: Admin | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      admin?.closeAll();
      await Promise.all([...servers.values()].map((server) => terminate(server.child)));
      for (const release of releases.splice(0)) release();
      await rm(root, { recursive: true, force: true });
      liveDirs.delete(root);
    })());

  try {
    const tls = await makeThrowawayCa(join(root, 'tls'));
    const ca = await readFile(tls.caFile);
    const clusterAdmin = (admin = makeAdmin({ username: USER, password, tls: { ca, servername: HOST_NAME } }));
    const running = (): ServerProcess[] => [...servers.values()].filter((server) => !exited(server.child));
    const serverOn = (port: number): ServerProcess => {
      const server = servers.get(port);
      if (server === undefined) throw new Error(`no node of this cluster has port ${port} (ports: ${[...servers.keys()].join(', ')})`);
      return server;
    };
    const describeAll = () => [...servers.values()].map(describeServer).join('\n');
    const alive = () => {
      if (stopped) throw new Error('the local Redis Cluster is stopped');
    };
    const ask: Ask = async (port, ...args) => {
      const reply = await (await clusterAdmin.client(port)).call(...args);
      return String(reply);
    };

    await startClusterNodes({
      admin: clusterAdmin,
      root,
      tls,
      password,
      count: masters * (1 + replicasPerMaster),
      servers,
      releases,
    });
    const ports = [...servers.keys()];
    const masterPorts = ports.slice(0, masters);

    await formCluster({ ask, ports, masters, replicasPerMaster, describeAll });

    const waitUntilHealthy = async (timeoutMs: number): Promise<void> => {
      alive();
      await waitFor(timeoutMs, 'the local Redis Cluster to be healthy', () => unhealthy(running(), ask), describeAll);
    };
    await waitUntilHealthy(CLUSTER_READY_TIMEOUT_MS);

    const nodes = async (): Promise<LocalRedisClusterNode[]> => {
      alive();
      const up = running();
      const views = new Map<number, NodeLine[]>();
      await Promise.all(
        up.map(async ({ port }) => {
          try {
            views.set(port, parseNodes(await ask(port, 'CLUSTER', 'NODES')));
          } catch {
            // A node that just restarted may not answer yet: the others' view of it is used.
          }
        }),
      );
      if (views.size === 0) throw new Error(`no node of the local Redis Cluster answers:\n${describeAll()}`);
      const others = [...views.values()];
      return ports.map((port) => {
        const own = views.get(port)?.find((line) => line.flags.includes('myself'));
        const line = own ?? others.map((view) => view.find((candidate) => candidate.port === port)).find((found) => found !== undefined);
        const isRunning = !exited(serverOn(port).child);
        return { port, role: line?.role ?? 'master', slots: line?.slots ?? [], running: isRunning };
      });
    };

    const anyRunningPort = (): number => {
      const up = running();
      if (up.length === 0) throw new Error('no node of the local Redis Cluster is running');
      return up[0]!.port;
    };

    const cluster: LocalRedisCluster = {
      url: `rediss://${USER}:${password}@${HOST_NAME}:${masterPorts[0]}`,
      user: USER,
      password,
      caFile: tls.caFile,
      nodes,
      masterPortFor: async (key) => {
        alive();
        const slot = Number(await (await clusterAdmin.client(anyRunningPort())).call('CLUSTER', 'KEYSLOT', key));
        const owner = (await nodes()).find(
          (node) => node.running && node.role === 'master' && node.slots.some(([start, end]) => slot >= start && slot <= end),
        );
        if (owner === undefined)
          throw new Error(`no running master serves slot ${slot} (of key "${key}") yet: wait with waitUntilHealthy after a kill`);
        return owner.port;
      },
      killNode: async (port) => {
        alive();
        const server = serverOn(port);
        clusterAdmin.drop(port);
        if (exited(server.child)) return;
        server.child.kill('SIGKILL');
        if (!(await waitForExit(server.child, STOP_TIMEOUT_MS))) throw new Error(`node ${port} did not exit after SIGKILL`);
      },
      restartNode: async (port) => {
        alive();
        const server = serverOn(port);
        if (!exited(server.child)) throw new Error(`node ${port} is running: kill it first`);
        clusterAdmin.drop(port);
        // Same configuration file, so the same nodes.conf: the same node id, slots and epoch.
        servers.set(port, await startServer(port, server.configFile, clusterAdmin));
      },
      waitUntilHealthy,
      stop,
    };
    return cluster;
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
};
