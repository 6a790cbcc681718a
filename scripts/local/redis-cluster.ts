import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { isPortFree, LOOPBACK } from './ports.ts';

/**
 * Real `redis-server`s on loopback for tests, benchmarks and `npm start` (no vitest imports):
 *
 * - `startLocalRedisCluster`: a Redis Cluster as ElastiCache (cluster mode, Serverless) runs one —
 *   TLS only (cluster bus and replication too), an ACL user with the `default` user off, replicas
 *   that authenticate to their masters — with a throw-away CA whose certificate names `localhost`
 *   only, while the cluster announces its nodes as 127.0.0.1: a client must check each node against
 *   the host name of its URL, as against ElastiCache's addresses, which its certificate does not name.
 * - `startLocalRedisNode`: one plain `redis-server` (no TLS, no password, no cluster).
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

export interface LocalRedisNode {
  /** redis://127.0.0.1:<port>, without TLS or password. */
  url: string;
  port: number;
  stop: () => Promise<void>;
}

const USER = 'devices-app';
const HOST_NAME = 'localhost';
const SLOT_COUNT = 16_384;
/** Fast failover for tests: a node silent this long is suspected, then failed over by a majority of masters. */
const NODE_TIMEOUT_MS = 1_000;
/** Redis's cluster bus listens on the client (here TLS) port + 10000. */
const BUS_PORT_OFFSET = 10_000;
const NODE_READY_TIMEOUT_MS = 10_000;
const CLUSTER_READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 3_000;
const OPENSSL_TIMEOUT_MS = 15_000;
const POLL_MS = 50;
const ADMIN_TIMEOUT_MS = 1_000;
/** How much of each node's output is kept for error messages. */
const OUTPUT_TAIL_CHARS = 4_000;
const OUTPUT_TAIL_LINES = 12;

// ——— processes, and the exit hook that stops them if the process dies without stop() ———

const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHookInstalled = false;
const installExitHook = (): void => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Exit handlers must be synchronous: kill, then remove the folders the servers wrote into.
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  });
};

/** Children that never started (no such executable): no 'exit' event is sure to follow their 'error'. */
const failedToStart = new WeakSet<ChildProcess>();
const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null || failedToStart.has(child);

const waitForExit = async (child: ChildProcess, timeoutMs: number): Promise<boolean> => {
  if (exited(child)) return true;
  const controller = new AbortController();
  const result = await Promise.race([
    once(child, 'exit').then(() => true),
    sleep(timeoutMs, false, { signal: controller.signal }).catch(() => false),
  ]);
  controller.abort();
  return result;
};

const terminate = async (child: ChildProcess): Promise<void> => {
  if (exited(child)) return;
  child.kill('SIGTERM');
  if (await waitForExit(child, STOP_TIMEOUT_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, STOP_TIMEOUT_MS);
};

interface ServerProcess {
  port: number;
  configFile: string;
  child: ChildProcess;
  /** The tail of its stdout and stderr (redis-server logs to stdout). */
  output: () => string;
}

const spawnServer = (port: number, configFile: string): ServerProcess => {
  // The password is in the configuration file (0600), never on a command line.
  const child = spawn('redis-server', [configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let output = '';
  const keep = (chunk: Buffer | string) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('error', (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) {
      failedToStart.add(child);
      live.delete(child);
    }
    keep(
      error.code === 'ENOENT'
        ? 'redis-server is not installed (not on PATH): on Debian, apt-get install redis-server\n'
        : `${String(error)}\n`,
    );
  });
  return { port, configFile, child, output: () => output };
};

const describeServer = (server: ServerProcess): string => {
  const state = failedToStart.has(server.child)
    ? 'did not start'
    : exited(server.child)
      ? `exited (${server.child.exitCode ?? server.child.signalCode})`
      : `pid ${server.child.pid}`;
  const lines = server
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-OUTPUT_TAIL_LINES)
    .map((line) => `    ${line}`);
  return [`  node ${server.port} (${state}):`, ...(lines.length > 0 ? lines : ['    (no output)'])].join('\n');
};

// ——— ports ———

/** The first port of the kernel's range for outgoing connections (Linux), so a listener stays below it. */
const ephemeralLow = (): number => {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
};

/** Ports this process has handed out and not released (several clusters may start at once). */
const claimed = new Set<number>();

/**
 * A free port P (with `busPort`, P + 10000, its cluster bus, free too), below the range the OS picks
 * outgoing connections' ports from (so no connection takes one between the check and the bind), and
 * claimed in this process until `release`. The OS cannot pick such a pair for us, hence the random
 * tries; a port taken after the check shows as the node failing to start (the caller tries again).
 */
const claimPorts = async (busPort: boolean): Promise<{ port: number; release: () => void }> => {
  const low = 10_000;
  const high = Math.max(ephemeralLow(), low + BUS_PORT_OFFSET + 2_000) - BUS_PORT_OFFSET - 1;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = randomInt(low, Math.min(high, 65_535 - BUS_PORT_OFFSET) + 1);
    const pair = busPort ? [port, port + BUS_PORT_OFFSET] : [port];
    if (pair.some((candidate) => claimed.has(candidate))) continue;
    for (const candidate of pair) claimed.add(candidate);
    const release = () => {
      for (const candidate of pair) claimed.delete(candidate);
    };
    if ((await isPortFree(port)) && (!busPort || (await isPortFree(port + BUS_PORT_OFFSET)))) return { port, release };
    release();
  }
  throw new Error(`found no free loopback port${busPort ? ` P with P + ${BUS_PORT_OFFSET} free too` : ''} after 200 tries`);
};

// ——— certificates ———

const run = (command: string, args: string[], timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args[0]} failed: ${String(stderr).trim() || error.message}`));
      else resolve();
    });
  });

const OPENSSL_CONFIG = (caName: string): string => `# Throw-away certificates for a local Redis; made by scripts/local/redis-cluster.ts.
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${caName}
[ca_ext]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
# clientAuth too: a node presents the same certificate to the others on the cluster bus.
extendedKeyUsage = serverAuth,clientAuth
# The name only, no IP: nodes are announced as 127.0.0.1, which the certificate does not name.
subjectAltName = DNS:${HOST_NAME}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

/**
 * A throw-away CA (EC P-256, valid for a day) and a server certificate signed by it for DNS name
 * `localhost` only (no IP SAN), made by `openssl` in `dir` (created if missing). The CA's key is
 * deleted once it has signed, so nothing else can be signed by it.
 */
export const makeThrowawayCa = async (dir: string): Promise<{ caFile: string; certFile: string; keyFile: string }> => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(dir, name);
  const [config, caKey, caFile, csr, certFile, keyFile] = [
    'openssl.cnf',
    'ca-key.pem',
    'ca.pem',
    'server.csr',
    'server.pem',
    'server-key.pem',
  ].map(file) as [string, string, string, string, string, string];
  await writeFile(config, OPENSSL_CONFIG(`local throw-away CA ${randomBytes(4).toString('hex')}`), { mode: 0o600 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  try {
    await run(
      'openssl',
      ['req', '-x509', ...ec, '-keyout', caKey, '-out', caFile, '-days', '1', '-config', config, '-extensions', 'ca_ext'],
      OPENSSL_TIMEOUT_MS,
    );
    await run(
      'openssl',
      ['req', '-new', ...ec, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${HOST_NAME}`, '-config', config],
      OPENSSL_TIMEOUT_MS,
    );
    await run(
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caFile,
        '-CAkey',
        caKey,
        '-set_serial',
        `0x${randomBytes(12).toString('hex')}`,
        '-days',
        '1',
        '-extfile',
        config,
        '-extensions',
        'server_ext',
        '-out',
        certFile,
      ],
      OPENSSL_TIMEOUT_MS,
    );
    await chmod(keyFile, 0o600);
  } finally {
    await Promise.all([caKey, csr, config].map((path) => rm(path, { force: true })));
  }
  return { caFile, certFile, keyFile };
};

// ——— CLUSTER NODES ———

interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  role: 'master' | 'replica';
  /** The id of the master of a replica. */
  masterId: string | undefined;
  slots: [number, number][];
}

/** One line of CLUSTER NODES: `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>…`. */
const parseNodeLine = (line: string): NodeLine | undefined => {
  const fields = line.trim().split(' ');
  if (fields.length < 8) return undefined;
  const [id, address, flagText, master] = fields as [string, string, string, string];
  const port = Number(/:(\d+)@/.exec(address)?.[1]);
  if (!Number.isInteger(port)) return undefined;
  const flags = flagText.split(',');
  const slots = fields
    .slice(8)
    // `[slot->-id]` / `[slot-<-id]`: a slot being migrated, not one served.
    .filter((field) => !field.startsWith('['))
    .map((field): [number, number] => {
      const [start, end] = field.split('-').map(Number) as [number, number | undefined];
      return [start, end ?? start];
    });
  return { id, port, flags, role: flags.includes('slave') ? 'replica' : 'master', masterId: master === '-' ? undefined : master, slots };
};

const parseNodes = (text: string): NodeLine[] =>
  text
    .split('\n')
    .map(parseNodeLine)
    .filter((line) => line !== undefined);

const failing = (line: NodeLine): boolean =>
  line.flags.includes('fail') || line.flags.includes('fail?') || line.flags.includes('handshake') || line.flags.includes('noaddr');

/** Which port serves each slot, in one node's view, as text to compare views: `0-5460:P1 5461-10922:P2 …`. */
const slotMap = (view: NodeLine[]): { text: string; covered: number; owners: Set<number> } => {
  const ranges = view
    .filter((line) => line.role === 'master')
    .flatMap((line) => line.slots.map(([start, end]) => ({ start, end, port: line.port })))
    .sort((a, b) => a.start - b.start);
  return {
    text: ranges.map(({ start, end, port }) => `${start}-${end}:${port}`).join(' '),
    covered: ranges.reduce((sum, { start, end }) => sum + end - start + 1, 0),
    owners: new Set(ranges.map(({ port }) => port)),
  };
};

const infoField = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();

// ——— the shared machinery of both kinds of server ———

interface Admin {
  /** A connected client of the node on `port` (reused while it stays connected). */
  client: (port: number) => Promise<Redis>;
  drop: (port: number) => void;
  closeAll: () => void;
}

const makeAdmin = (options: RedisOptions): Admin => {
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

/** Starts one server on `port` from its configuration file and waits until it answers PING (with auth, over TLS where configured). */
const startServer = async (port: number, configFile: string, admin: Admin): Promise<ServerProcess> => {
  const server = spawnServer(port, configFile);
  const deadline = Date.now() + NODE_READY_TIMEOUT_MS;
  let lastError = 'no answer yet';
  for (let attempt = 0; attempt < NODE_READY_TIMEOUT_MS / 25 && Date.now() < deadline && !exited(server.child); attempt += 1) {
    try {
      const client = await admin.client(port);
      if ((await client.ping()) === 'PONG') return server;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await sleep(25);
  }
  admin.drop(port);
  server.child.kill('SIGKILL');
  await waitForExit(server.child, STOP_TIMEOUT_MS);
  throw new Error(`redis-server on port ${port} did not become ready (${lastError}):\n${describeServer(server)}`);
};

/**
 * Starts a server on a fresh port (pair) from the configuration `configFor` writes, trying another
 * port when one was taken between the check and the bind.
 */
const startOnFreshPort = async (
  admin: Admin,
  busPort: boolean,
  configFor: (port: number) => Promise<string>,
): Promise<{ server: ServerProcess; release: () => void }> => {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const { port, release } = await claimPorts(busPort);
    try {
      return { server: await startServer(port, await configFor(port), admin), release };
    } catch (error) {
      release();
      lastError = error;
    }
  }
  throw lastError;
};

const countOption = (value: number, name: string, least: number): number => {
  if (!Number.isInteger(value) || value < least || value > 16)
    throw new Error(`${name} must be a whole number from ${least} to 16, got ${value}`);
  return value;
};

/**
 * Polls `check` (undefined: done; a string: what is still missing) every POLL_MS until it is done,
 * bounded by `timeoutMs` and a number of attempts; a check that throws counts as not done.
 */
const waitFor = async (
  timeoutMs: number,
  what: string,
  check: () => Promise<string | undefined>,
  describe: () => string,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  const maxAttempts = Math.ceil(timeoutMs / POLL_MS) + 1;
  let last = 'not checked yet';
  for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
    try {
      const missing = await check();
      if (missing === undefined) return;
      last = missing;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() >= deadline) break;
    await sleep(POLL_MS);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${last}\n${describe()}`);
};

// ——— the cluster ———

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
    const ask = async (port: number, ...args: [string, ...string[]]): Promise<string> => {
      const reply = await (await clusterAdmin.client(port)).call(...args);
      return String(reply);
    };

    // Every node at once, each on its own port pair and in its own folder.
    const count = masters * (1 + replicasPerMaster);
    const started = await Promise.allSettled(
      Array.from({ length: count }, () =>
        startOnFreshPort(clusterAdmin, true, async (port) => {
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
    const ports = [...servers.keys()];
    const masterPorts = ports.slice(0, masters);

    // What `redis-cli --cluster create` does, without its one-second sleeps: slots to the masters, a
    // distinct config epoch for every node, every node meets the first, then the replicas follow.
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

    /** undefined when healthy, else what is not (see `waitUntilHealthy`). */
    const unhealthy = async (): Promise<string | undefined> => {
      const up = running();
      if (up.length === 0) return 'no node is running';
      const upPorts = new Set(up.map((server) => server.port));
      let agreed: string | undefined;
      for (const { port } of up) {
        const [info, nodesText] = await Promise.all([ask(port, 'CLUSTER', 'INFO'), ask(port, 'CLUSTER', 'NODES')]);
        if (infoField(info, 'cluster_state') !== 'ok') return `node ${port} says cluster_state:${infoField(info, 'cluster_state')}`;
        const view = parseNodes(nodesText);
        const flagged = view.find((line) => upPorts.has(line.port) && failing(line));
        if (flagged) return `node ${port} flags node ${flagged.port} as ${flagged.flags.join(',')}`;
        const map = slotMap(view);
        if (map.covered !== SLOT_COUNT) return `node ${port} sees ${map.covered} of ${SLOT_COUNT} slots served`;
        const gone = [...map.owners].find((owner) => !upPorts.has(owner));
        if (gone !== undefined) return `node ${port} still routes slots to node ${gone}, which is down`;
        if (agreed !== undefined && map.text !== agreed) return `nodes disagree on the slots: ${agreed} / ${map.text}`;
        agreed = map.text;
        const myself = view.find((line) => line.flags.includes('myself'));
        if (myself?.role === 'replica') {
          const link = infoField(await ask(port, 'INFO', 'replication'), 'master_link_status');
          if (link !== 'up') return `replica ${port}'s link to its master is ${link ?? 'unknown'}`;
        }
      }
      return undefined;
    };
    const waitUntilHealthy = async (timeoutMs: number): Promise<void> => {
      alive();
      await waitFor(timeoutMs, 'the local Redis Cluster to be healthy', unhealthy, describeAll);
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

// ——— one plain node ———

/** One plain `redis-server` on a free loopback port: no TLS, no password, no cluster, nothing persisted. */
export const startLocalRedisNode = async (): Promise<LocalRedisNode> => {
  installExitHook();
  const root = await mkdtemp(join(tmpdir(), 'local-redis-'));
  liveDirs.add(root);
  const admin = makeAdmin({});
  let started: { server: ServerProcess; release: () => void } | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      admin.closeAll();
      if (started) await terminate(started.server.child);
      started?.release();
      await rm(root, { recursive: true, force: true });
      liveDirs.delete(root);
    })());
  try {
    started = await startOnFreshPort(admin, false, async (port) => {
      const configFile = join(root, `redis-${port}.conf`);
      const config = [
        'port ' + String(port),
        `bind ${LOOPBACK}`,
        'daemonize no',
        'logfile ""',
        `dir ${root}`,
        'save ""',
        'appendonly no',
        '',
      ].join('\n');
      await writeFile(configFile, config, { mode: 0o600 });
      return configFile;
    });
    admin.closeAll();
    return { url: `redis://${LOOPBACK}:${started.server.port}`, port: started.server.port, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
};
