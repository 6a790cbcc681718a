import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from './cluster-health.ts';
import { failing, parseNodes, SLOT_COUNT } from './cluster-replies.ts';
import { LOOPBACK } from './ports.ts';
import type { Admin, Ask } from './redis-admin.ts';
import { BUS_PORT_OFFSET } from './redis-ports.ts';
import type { ServerProcess } from './redis-processes.ts';
import { startOnFreshPort } from './redis-server-start.ts';

/** The application user of the cluster (ACL), as which the replicas authenticate to their masters too. */
export const USER = 'devices-app';
/** Fast failover for tests: a node silent this long is suspected, then failed over by a majority of masters. */
const NODE_TIMEOUT_MS = 1_000;
export const CLUSTER_READY_TIMEOUT_MS = 30_000;

const nodeConfig = (options: {
  port: number;
  dir: string;
  tls: { caFile: string; certFile: string; keyFile: string };
  password: string;
}): string => `# A node of a local Redis Cluster (scripts/local/redis-cluster.ts): throw-away, removed with it.
port 0
tls-port ${options.port}
bind ${LOOPBACK}
daemonize no
logfile ""
dir ${options.dir}
save ""
appendonly no
tls-cert-file ${options.tls.certFile}
tls-key-file ${options.tls.keyFile}
tls-ca-cert-file ${options.tls.caFile}
# Clients need present no certificate (as with ElastiCache); nodes do to each other on the bus.
tls-auth-clients no
tls-cluster yes
tls-replication yes
cluster-enabled yes
cluster-config-file ${join(options.dir, 'nodes.conf')}
cluster-node-timeout ${NODE_TIMEOUT_MS}
# A replica syncs at once rather than after the default 5 s wait for more replicas.
repl-diskless-sync yes
repl-diskless-sync-delay 0
# As ElastiCache RBAC: the default user off, one application user; replicas authenticate as it.
user default off
user ${USER} on >${options.password} ~* &* +@all
masteruser ${USER}
masterauth ${options.password}
`;

/** Inclusive slot ranges of `masters` masters, split as evenly as redis-cli splits them. */
const slotRanges = (masters: number): [number, number][] =>
  Array.from({ length: masters }, (_, index): [number, number] => [
    Math.round((index * SLOT_COUNT) / masters),
    Math.round(((index + 1) * SLOT_COUNT) / masters) - 1,
  ]);

/**
 * Starts every node at once, each on its own port pair and in its own folder; each that started is
 * added to `servers` and `releases` (for the cluster's `stop` to stop) before a failure is thrown.
 */
export const startClusterNodes = async (options: {
  admin: Admin;
  root: string;
  tls: { caFile: string; certFile: string; keyFile: string };
  password: string;
  count: number;
  servers: Map<number, ServerProcess>;
  releases: (() => void)[];
}): Promise<void> => {
  const { admin, root, tls, password, count, servers, releases } = options;
  const started = await Promise.allSettled(
    Array.from({ length: count }, () =>
      startOnFreshPort(admin, true, async (port) => {
        const dir = join(root, `node-${port}`);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const configFile = join(dir, 'redis.conf');
        await writeFile(configFile, nodeConfig({ port, dir, tls, password }), { mode: 0o600 });
        return configFile;
      }),
    ),
  );
  for (const result of started) {
    if (result.status === 'fulfilled') {
      servers.set(result.value.server.port, result.value.server);
      releases.push(result.value.release);
    }
  }
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
};

/**
 * Forms the cluster of the nodes on `ports`, the first `masters` of them masters, `replicasPerMaster`
 * replicas following each. What `redis-cli --cluster create` does, without its one-second sleeps:
 * slots to the masters, a distinct config epoch for every node, every node meets the first, then the
 * replicas follow.
 */
export const formCluster = async (options: {
  ask: Ask;
  ports: number[];
  masters: number;
  replicasPerMaster: number;
  describeAll: () => string;
}): Promise<void> => {
  const { ask, ports, masters, replicasPerMaster, describeAll } = options;
  const count = ports.length;
  const masterPorts = ports.slice(0, masters);
  const ranges = slotRanges(masters);
  await Promise.all(
    ports.map(async (port, index) => {
      const range = ranges[index];
      if (range !== undefined) await ask(port, 'CLUSTER', 'ADDSLOTSRANGE', String(range[0]), String(range[1]));
      await ask(port, 'CLUSTER', 'SET-CONFIG-EPOCH', String(index + 1));
    }),
  );
  await Promise.all(
    ports.slice(1).map((port) => ask(port, 'CLUSTER', 'MEET', LOOPBACK, String(ports[0]), String(ports[0]! + BUS_PORT_OFFSET))),
  );
  await waitFor(
    CLUSTER_READY_TIMEOUT_MS,
    'every node to know every other',
    async () => {
      for (const port of ports) {
        const view = parseNodes(await ask(port, 'CLUSTER', 'NODES'));
        if (view.length !== count || view.some(failing))
          return `node ${port} knows ${view.filter((line) => !failing(line)).length} of ${count} nodes`;
      }
      return undefined;
    },
    describeAll,
  );
  const masterIds = await Promise.all(masterPorts.map((port) => ask(port, 'CLUSTER', 'MYID')));
  await Promise.all(
    ports.slice(masters).map((port, index) => ask(port, 'CLUSTER', 'REPLICATE', masterIds[Math.floor(index / replicasPerMaster)]!)),
  );
};
