import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The `redis-server` processes of the local Redis (redis-cluster.ts, redis-node.ts): started, watched,
 * stopped, and the exit hook that stops them if the process dies without stop().
 */

export const STOP_TIMEOUT_MS = 3_000;
/** How much of each node's output is kept for error messages. */
const OUTPUT_TAIL_CHARS = 4_000;
const OUTPUT_TAIL_LINES = 12;

const live = new Set<ChildProcess>();
export const liveDirs = new Set<string>();
let exitHookInstalled = false;
export const installExitHook = (): void => {
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
export const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null || failedToStart.has(child);

export const waitForExit = async (child: ChildProcess, timeoutMs: number): Promise<boolean> => {
  if (exited(child)) return true;
  const controller = new AbortController();
  const result = await Promise.race([
    once(child, 'exit').then(() => true),
    sleep(timeoutMs, false, { signal: controller.signal }).catch(() => false),
  ]);
  controller.abort();
  return result;
};

export const terminate = async (child: ChildProcess): Promise<void> => {
  if (exited(child)) return;
  child.kill('SIGTERM');
  if (await waitForExit(child, STOP_TIMEOUT_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, STOP_TIMEOUT_MS);
};

export interface ServerProcess {
  port: number;
  configFile: string;
  child: ChildProcess;
  /** The tail of its stdout and stderr (redis-server logs to stdout). */
  output: () => string;
}

export const spawnServer = (port: number, configFile: string): ServerProcess => {
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

export const describeServer = (server: ServerProcess): string => {
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
