import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { freePort } from './free-port.ts';

/**
 * A real `redis-server` on a free loopback port, without persistence, for tests and benchmarks
 * (no vitest imports). `pause`/`resume` freeze it (SIGSTOP/SIGCONT: connections stay open and
 * hang), `kill` drops it (SIGKILL), `restart` brings it back empty on the same port.
 */
export interface RedisServer {
  url: string;
  port: number;
  stop: () => Promise<void>;
  pause: () => void;
  resume: () => void;
  kill: () => Promise<void>;
  restart: () => Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One PING over a raw socket: true when the server answers +PONG within `timeoutMs`. */
const pings = (port: number, timeoutMs = 500): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
  });

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

const waitForExit = async (child: ChildProcess, timeoutMs: number): Promise<boolean> => {
  if (exited(child)) return true;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const result = await Promise.race([once(child, 'exit').then(() => true), timedOut]);
  clearTimeout(timer);
  return result;
};

const spawnRedis = (port: number): ChildProcess =>
  spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir(), '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
const installExitHook = () => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test run that dies without its teardown must not leave servers behind.
  process.on('exit', () => {
    for (const child of live) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  });
};

const startOn = async (port: number): Promise<ChildProcess> => {
  const child = spawnRedis(port);
  live.add(child);
  child.once('exit', () => live.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.once('error', (error) => {
    stderr += String(error);
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let attempt = 0; Date.now() < deadline && attempt < 200; attempt += 1) {
    if (exited(child)) break;
    if (await pings(port)) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  await waitForExit(child, STOP_TIMEOUT_MS);
  throw new Error(`redis-server did not become ready on port ${port}: ${stderr.trim() || 'no output'}`);
};

const terminate = async (child: ChildProcess): Promise<void> => {
  if (exited(child)) return;
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  if (await waitForExit(child, STOP_TIMEOUT_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, STOP_TIMEOUT_MS);
};

export const startRedisServer = async (): Promise<RedisServer> => {
  installExitHook();
  let port = 0;
  let child: ChildProcess | undefined;
  // The free port can be taken between probing and binding; a few fresh ports settle that.
  for (let attempt = 0; attempt < 3 && child === undefined; attempt += 1) {
    port = await freePort();
    try {
      child = await startOn(port);
    } catch (error) {
      if (attempt === 2) throw error;
    }
  }
  let current = child!;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => terminate(current),
    pause: () => {
      current.kill('SIGSTOP');
    },
    resume: () => {
      current.kill('SIGCONT');
    },
    kill: async () => {
      if (exited(current)) return;
      current.kill('SIGKILL');
      await waitForExit(current, STOP_TIMEOUT_MS);
    },
    restart: async () => {
      await terminate(current);
      current = await startOn(port);
    },
  };
};

/**
 * A plain client of `url` for a test to look at or change the server's data beside the code under
 * test: connected, one retry per command, its connection errors (a paused or killed server) ignored.
 */
export const connectRawClient = async (url: string): Promise<Redis> => {
  const raw = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  raw.on('error', () => undefined);
  await raw.connect();
  return raw;
};
